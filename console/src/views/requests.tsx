// Requests: search (filter builder, free text, sort, paging) and one request's detail.
import { useEffect, useState } from "preact/hooks";
import type { ComponentChildren } from "preact";
import { get, post, type BodyOf } from "../api";
import { suggestions } from "../suggestions";
import { FIELDS, hint, isGroup, MAX_DEPTH, needsKey, newRow, operatorsOf, takesValue, toGroup, type FilterGroupDraft, type FilterRow, type SuggestField } from "../filters";
import { href } from "../router";
import { ErrorBox, fmt, Json, Loading, Pager, Section, Status, Tag, useAsync } from "../ui";
import { Conversation } from "./conversation";
import { traceHref } from "./traces";
import { DatasetFromSearch, RequestActions } from "./request-actions";
import { SignalVerdicts } from "./signals";

type SortBy = NonNullable<BodyOf<"POST /api/public/v2/requests/search">["sort_by"]>;

interface SearchState {
  group: FilterGroupDraft;
  q: string;
  sortBy: SortBy;
  sortOrder: "asc" | "desc";
  perPage: number;
  page: number;
}

// Kept while the tab lives, so going back from a request's detail finds the same search.
let remembered: SearchState = { group: { logic: "AND", items: [] }, q: "", sortBy: "request_start_time", sortOrder: "desc", perPage: 25, page: 1 };

const SORTS: Record<SortBy, string> = {
  request_start_time: "Time",
  latency_ms: "Latency",
  cost: "Cost",
  input_tokens: "Input tokens",
  output_tokens: "Output tokens",
  status: "Status",
};

function Suggest({ id, field, metadataKey, active }: { id: string; field?: SuggestField; metadataKey?: string; active: boolean }) {
  const [values, setValues] = useState<string[]>([]);
  useEffect(() => {
    if (!active || !field) return;
    let live = true;
    suggestions(field, metadataKey).then((v) => live && setValues(v));
    return () => {
      live = false;
    };
  }, [field, metadataKey, active]);
  return (
    <datalist id={id}>
      {values.map((v) => (
        <option value={v} key={v} />
      ))}
    </datalist>
  );
}

let nextListId = 0;

function FilterRowEditor({ row, onChange, onRemove }: { row: FilterRow; onChange: (r: FilterRow) => void; onRemove: () => void }) {
  const spec = FIELDS[row.field];
  const [focused, setFocused] = useState<"key" | "value" | null>(null);
  const [listId] = useState(() => `sugg-${++nextListId}`);
  const keyListId = `${listId}-key`;
  return (
    <div class="filter-row" data-testid="filter-row">
      <select
        aria-label="Field"
        value={row.field}
        onChange={(e) => onChange(newRow((e.target as HTMLSelectElement).value))}
      >
        {Object.entries(FIELDS).map(([name, f]) => (
          <option value={name} key={name}>
            {f.label}
          </option>
        ))}
      </select>
      {needsKey(row.field) ? (
        <>
          <input
            aria-label="Key"
            placeholder={spec.kind === "score" ? "score name" : spec.kind === "signal" ? "signal name" : "key"}
            value={row.nested_key}
            list={spec.keys ? keyListId : undefined}
            onFocus={() => setFocused("key")}
            onInput={(e) => onChange({ ...row, nested_key: (e.target as HTMLInputElement).value })}
          />
          <Suggest id={keyListId} field={spec.keys} active={focused === "key"} />
        </>
      ) : null}
      <select aria-label="Operator" value={row.operator} onChange={(e) => onChange({ ...row, operator: (e.target as HTMLSelectElement).value })}>
        {operatorsOf(row.field).map((op) => (
          <option value={op} key={op}>
            {op.replace(/_/g, " ")}
          </option>
        ))}
      </select>
      {takesValue(row.operator) ? (
        spec.kind === "enum" && !row.operator.endsWith("in") ? (
          <select aria-label="Value" value={row.value} onChange={(e) => onChange({ ...row, value: (e.target as HTMLSelectElement).value })}>
            <option value="">choose…</option>
            {spec.values!.map((v) => (
              <option value={v} key={v}>
                {v}
              </option>
            ))}
          </select>
        ) : (
          <>
            <input
              aria-label="Value"
              placeholder={hint(row)}
              value={row.value}
              list={spec.suggest ? listId : undefined}
              onFocus={() => setFocused("value")}
              onInput={(e) => onChange({ ...row, value: (e.target as HTMLInputElement).value })}
            />
            <Suggest
              id={listId}
              field={spec.suggest}
              metadataKey={spec.kind === "nested" ? row.nested_key.trim() || undefined : undefined}
              active={focused === "value" && (spec.kind !== "nested" || row.nested_key.trim() !== "")}
            />
          </>
        )
      ) : null}
      <button type="button" class="icon" aria-label="Remove filter" onClick={onRemove}>
        ×
      </button>
    </div>
  );
}

const sortOf = (value: string): SortBy => (Object.keys(SORTS) as SortBy[]).find((k) => k === value) ?? "request_start_time";

function searchBody(s: SearchState) {
  return {
    filter_group: toGroup(s.group) ?? undefined,
    q: s.q.trim() || undefined,
    sort_by: s.sortBy,
    sort_order: s.sortOrder,
    page: s.page,
    per_page: s.perPage,
    include_prompt_name: true,
  };
}

/** A group's rows and subgroups, with its AND/OR; subgroups nest down to the API's limit of 5 levels. */
function GroupEditor(props: { group: FilterGroupDraft; depth: number; onChange: (g: FilterGroupDraft) => void; onRemove?: () => void }) {
  const { group, depth, onChange } = props;
  const setItems = (items: FilterGroupDraft["items"]) => onChange({ ...group, items });
  const replace = (i: number, n: FilterRow | FilterGroupDraft) => setItems(group.items.map((x, j) => (j === i ? n : x)));
  const remove = (i: number) => setItems(group.items.filter((_, j) => j !== i));
  return (
    <div class={depth > 1 ? "filter-group nested" : "filter-group"} data-testid="filter-group">
      {group.items.length > 1 || depth > 1 ? (
        <label class="logic">
          Match
          <select aria-label="Match" value={group.logic} onChange={(e) => onChange({ ...group, logic: (e.target as HTMLSelectElement).value as "AND" | "OR" })}>
            <option value="AND">all of these</option>
            <option value="OR">any of these</option>
          </select>
        </label>
      ) : null}
      {group.items.map((n, i) =>
        isGroup(n) ? (
          <GroupEditor key={i} group={n} depth={depth + 1} onChange={(g) => replace(i, g)} onRemove={() => remove(i)} />
        ) : (
          <FilterRowEditor key={i} row={n} onChange={(r) => replace(i, r)} onRemove={() => remove(i)} />
        ),
      )}
      <div class="filter-actions">
        <button type="button" onClick={() => setItems([...group.items, newRow()])}>
          + Add filter
        </button>
        {depth < MAX_DEPTH ? (
          <button type="button" onClick={() => setItems([...group.items, { logic: "OR", items: [newRow()] }])}>
            + Add group
          </button>
        ) : null}
        {props.onRemove ? (
          <button type="button" onClick={props.onRemove}>
            Remove group
          </button>
        ) : group.items.length ? (
          <button type="button" onClick={() => setItems([])}>
            Clear filters
          </button>
        ) : null}
      </div>
    </div>
  );
}

export function RequestsView() {
  const [draft, setDraft] = useState<SearchState>(remembered);
  const [applied, setApplied] = useState<SearchState>(remembered);
  useEffect(() => {
    remembered = applied;
  }, [applied]);
  const result = useAsync(() => post("/api/public/v2/requests/search", searchBody(applied)), [JSON.stringify(applied)]);
  const run = (next: Partial<SearchState> = {}) => setApplied({ ...draft, page: 1, ...next });
  const [making, setMaking] = useState(false);

  return (
    <div>
      <Section title="Search requests">
        <form
          class="search"
          onSubmit={(e) => {
            e.preventDefault();
            run();
          }}
        >
          <div class="search-line">
            <input
              type="search"
              aria-label="Free text"
              placeholder="Free text in inputs and outputs"
              value={draft.q}
              onInput={(e) => setDraft({ ...draft, q: (e.target as HTMLInputElement).value })}
            />
            <select aria-label="Sort by" value={draft.sortBy} onChange={(e) => setDraft({ ...draft, sortBy: sortOf((e.target as HTMLSelectElement).value) })}>
              {Object.entries(SORTS).map(([k, v]) => (
                <option value={k} key={k}>
                  {v}
                </option>
              ))}
            </select>
            <select
              aria-label="Order"
              value={draft.sortOrder}
              onChange={(e) => setDraft({ ...draft, sortOrder: (e.target as HTMLSelectElement).value as "asc" | "desc" })}
            >
              <option value="desc">descending</option>
              <option value="asc">ascending</option>
            </select>
            <select
              aria-label="Per page"
              value={String(draft.perPage)}
              onChange={(e) => setDraft({ ...draft, perPage: Number((e.target as HTMLSelectElement).value) })}
            >
              {[10, 25, 50, 100].map((n) => (
                <option value={String(n)} key={n}>
                  {n} a page
                </option>
              ))}
            </select>
            <button type="submit" class="primary">
              Search
            </button>
          </div>
          <div class="filters">
            <GroupEditor group={draft.group} depth={1} onChange={(group) => setDraft({ ...draft, group })} />
          </div>
        </form>
      </Section>
      {making ? <DatasetFromSearch search={{ filter_group: toGroup(applied.group) ?? undefined, q: applied.q.trim() }} onClose={() => setMaking(false)} /> : null}
      <Section
        title="Results"
        actions={
          making ? null : (
            <button type="button" onClick={() => setMaking(true)}>
              Make a dataset from these results
            </button>
          )
        }
      >
        <ErrorBox error={result.error} />
        {result.loading && !result.data ? <Loading /> : null}
        {result.data ? (
          <>
            <table class="grid requests" data-testid="request-results">
              <thead>
                <tr>
                  <th>id</th>
                  <th>time</th>
                  <th>prompt</th>
                  <th>model</th>
                  <th>status</th>
                  <th class="num">tokens</th>
                  <th class="num">cost</th>
                  <th class="num">latency</th>
                  <th>tags</th>
                </tr>
              </thead>
              <tbody>
                {result.data.items.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <a href={href("requests", r.id)}>#{r.id}</a>
                    </td>
                    <td>{fmt.time(r.request_start_time)}</td>
                    <td>{r.prompt_name ? `${r.prompt_name}${r.prompt_version_number ? ` v${r.prompt_version_number}` : ""}` : ""}</td>
                    <td>{r.engine}</td>
                    <td>
                      <Status value={r.status} />
                    </td>
                    <td class="num">{fmt.num(r.input_tokens + r.output_tokens)}</td>
                    <td class="num">{fmt.cost(r.price)}</td>
                    <td class="num">{fmt.ms(r.latency_ms)}</td>
                    <td>
                      {(r.tags_array ?? []).map((t: string) => (
                        <Tag key={t}>{t}</Tag>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {result.data.items.length === 0 ? <p class="muted">No request matches.</p> : null}
            <Pager
              page={result.data.page}
              pages={result.data.pages}
              total={result.data.total}
              estimate={result.data.total_is_estimate}
              onPage={(page) => setApplied({ ...applied, page })}
            />
          </>
        ) : null}
      </Section>
    </div>
  );
}

function Field({ name, children }: { name: string; children: ComponentChildren }) {
  return (
    <div class="field">
      <dt>{name}</dt>
      <dd>{children}</dd>
    </div>
  );
}

export function RequestDetail({ id }: { id: string }) {
  const r = useAsync(() => get("/api/public/v2/requests/{request_id}", { request_id: id }), [id]);
  if (r.error) return <ErrorBox error={r.error} />;
  if (!r.data) return <Loading />;
  const d = r.data;
  const scores = Object.entries(d.scores ?? {});
  return (
    <div class="detail" data-testid="request-detail">
      <p>
        <a href={href("requests")}>‹ Back to the search</a>
      </p>
      <Section title={`Request #${d.request_id}`} actions={<Status value={d.status} />}>
        <dl class="fields">
          <Field name="Model">
            {d.provider} · {d.model}
          </Field>
          <Field name="Started">{fmt.time(d.request_start_time)}</Field>
          <Field name="Latency">{fmt.ms(d.latency_ms)}</Field>
          <Field name="Tokens">
            {fmt.num(d.input_tokens)} in · {fmt.num(d.output_tokens)} out · {fmt.num(d.tokens)} total
          </Field>
          <Field name="Cost">{fmt.cost(d.price)}</Field>
          <Field name="Prompt">
            {d.prompt_id ? (
              <a href={`${href("prompts", d.prompt_id)}?v=${d.prompt_version_number ?? ""}`}>
                {d.prompt_name ?? `#${d.prompt_id}`}
                {d.prompt_version_number ? ` v${d.prompt_version_number}` : ""}
              </a>
            ) : (
              d.prompt_name ?? "none"
            )}
          </Field>
          {d.error_type || d.error_message ? (
            <Field name="Error">
              {d.error_type} {d.error_message}
            </Field>
          ) : null}
          {d.group_id ? <Field name="Group">{d.group_id}</Field> : null}
          {d.trace_id ? (
            <Field name="Trace">
              <a href={traceHref(d.trace_id, d.span_id)} data-testid="request-trace-link">
                {d.trace_id}
              </a>
              {d.span_id ? <span class="muted"> · span {d.span_id}</span> : null}
            </Field>
          ) : null}
          <Field name="Tags">
            {(d.tags ?? []).length ? (d.tags as string[]).map((t) => <Tag key={t}>{t}</Tag>) : <span class="muted">none</span>}
          </Field>
          <Field name="Signals">
            <SignalVerdicts verdicts={d.signals ?? []} />
          </Field>
          <Field name="Scores">
            {scores.length ? (
              scores.map(([name, value]) => (
                <Tag key={name}>
                  {name}: {String(value)}
                </Tag>
              ))
            ) : (
              <span class="muted">none</span>
            )}
          </Field>
        </dl>
      </Section>
      <div class="two">
        <Section title="Input">
          <Conversation blueprint={d.input} />
        </Section>
        <Section title="Output">
          <Conversation blueprint={d.output} />
        </Section>
      </div>
      <div class="two">
        <Section title="Metadata">
          {Object.keys(d.metadata ?? {}).length ? (
            <table class="kv">
              <tbody>
                {Object.entries(d.metadata ?? {}).map(([k, v]) => (
                  <tr key={k}>
                    <th>{k}</th>
                    <td>{fmt.value(v)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="muted">none</p>
          )}
        </Section>
        <Section title="Input variables and parameters">
          <Json value={{ prompt_input_variables: d.prompt_input_variables, parameters: d.parameters }} />
        </Section>
      </div>
      <RequestActions requestId={Number(d.request_id)} onChange={r.reload} />
    </div>
  );
}
