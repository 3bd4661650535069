// Requests: search (filter builder, free text, time range, sort, paging; the search kept in the URL,
// so it can be shared and survives a reload) and one request's detail.
import { useEffect, useState } from "preact/hooks";
import type { ComponentChildren } from "preact";
import { get, post, type BodyOf } from "../api";
import type { StructuredFilter, StructuredFilterGroup } from "../api.gen";
import { suggestions } from "../suggestions";
import { FIELDS, hint, isGroup, MAX_DEPTH, needsKey, newRow, operatorsOf, takesValue, toGroup, type FilterGroupDraft, type FilterRow, type SuggestField } from "../filters";
import { go, href } from "../router";
import { EmptyState, fmt, Json, Loading, PageError, Pager, Section, Status, Tag, useAsync } from "../ui";
import { Conversation } from "./conversation";
import { traceHref } from "./traces";
import { DatasetFromSearch, RequestActions } from "./request-actions";
import { SignalVerdicts } from "./signals";

type SortBy = NonNullable<BodyOf<"POST /api/public/v2/requests/search">["sort_by"]>;

/** The time range of a search: none, the last hour, day or week, or from and to (local date-times). */
export type Range = "" | "1h" | "24h" | "7d" | "custom";
const RANGES: Record<Range, string> = { "": "any time", "1h": "last hour", "24h": "last 24 hours", "7d": "last 7 days", custom: "custom range" };
const RANGE_MS: Partial<Record<Range, number>> = { "1h": 3_600_000, "24h": 86_400_000, "7d": 7 * 86_400_000 };

export interface SearchState {
  group: FilterGroupDraft;
  q: string;
  sortBy: SortBy;
  sortOrder: "asc" | "desc";
  perPage: number;
  page: number;
  range: Range;
  /** A custom range's bounds, as a datetime-local box holds them ("2026-11-28T09:00"), in the browser's zone. */
  from: string;
  to: string;
}

const FRESH: SearchState = { group: { logic: "AND", items: [] }, q: "", sortBy: "request_start_time", sortOrder: "desc", perPage: 25, page: 1, range: "", from: "", to: "" };

/** The search a URL holds (#/requests?s=…), or the fresh one when it holds none or one that does not read. */
function searchOf(param: string | null): SearchState {
  if (!param) return FRESH;
  try {
    const s = JSON.parse(param) as Partial<SearchState>;
    return { ...FRESH, ...s, group: s.group && Array.isArray(s.group.items) ? s.group : FRESH.group };
  } catch {
    return FRESH;
  }
}

/** The URL of a search: what a person shares, and what a reload reads back. */
export const searchHref = (s: SearchState) => `#/requests?s=${encodeURIComponent(JSON.stringify(s))}`;

// The last search's URL, so a request's page leads back to the same results.
let lastSearch = "#/requests";

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

/** The time range as request_start_time filters (after, and before for a custom range's end). */
function rangeFilters(s: SearchState, now: number): StructuredFilter[] {
  const iso = (local: string) => (local ? new Date(local).toISOString() : null);
  const span = RANGE_MS[s.range];
  if (span) return [{ field: "request_start_time", operator: "after", value: new Date(now - span).toISOString() }];
  if (s.range !== "custom") return [];
  const from = iso(s.from);
  const to = iso(s.to);
  return [
    ...(from ? [{ field: "request_start_time" as const, operator: "after" as const, value: from }] : []),
    ...(to ? [{ field: "request_start_time" as const, operator: "before" as const, value: to }] : []),
  ];
}

/** The search's filter group: the builder's, AND the time range. */
export function filterGroupOf(s: SearchState, now = Date.now()): StructuredFilterGroup | undefined {
  const built = toGroup(s.group);
  const range = rangeFilters(s, now);
  if (!range.length) return built ?? undefined;
  return { logic: "AND", filters: [...(built ? [built] : []), ...range] };
}

function searchBody(s: SearchState) {
  return {
    filter_group: filterGroupOf(s),
    q: s.q.trim() || undefined,
    sort_by: s.sortBy,
    sort_order: s.sortOrder,
    page: s.page,
    per_page: s.perPage,
    include_prompt_name: true,
    include_previews: true,
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

export function RequestsView({ params }: { params: URLSearchParams }) {
  const param = params.get("s");
  const applied = searchOf(param);
  const [draft, setDraft] = useState<SearchState>(applied);
  useEffect(() => {
    setDraft(applied);
    lastSearch = param ? searchHref(applied) : "#/requests";
  }, [param]);
  const result = useAsync(() => post("/api/public/v2/requests/search", searchBody(applied)), [param]);
  const apply = (next: SearchState) => {
    location.hash = searchHref(next);
  };
  const run = (next: Partial<SearchState> = {}) => apply({ ...draft, page: 1, ...next });
  const [making, setMaking] = useState(false);
  const filtered = Boolean(toGroup(applied.group) || applied.q.trim() || applied.range);

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
            <select aria-label="Time range" value={draft.range} onChange={(e) => run({ range: (e.target as HTMLSelectElement).value as Range })}>
              {Object.entries(RANGES).map(([k, v]) => (
                <option value={k} key={k}>
                  {v}
                </option>
              ))}
            </select>
            {draft.range === "custom" ? (
              <>
                <label class="inline">
                  from
                  <input type="datetime-local" aria-label="From" value={draft.from} onInput={(e) => setDraft({ ...draft, from: (e.target as HTMLInputElement).value })} />
                </label>
                <label class="inline">
                  to
                  <input type="datetime-local" aria-label="To" value={draft.to} onInput={(e) => setDraft({ ...draft, to: (e.target as HTMLInputElement).value })} />
                </label>
              </>
            ) : null}
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
      {making ? <DatasetFromSearch search={{ filter_group: filterGroupOf(applied), q: applied.q.trim() }} onClose={() => setMaking(false)} /> : null}
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
        {result.error ? <PageError error={result.error} back={{ href: "#/requests", label: "A new search" }} retry={result.reload} /> : null}
        {result.loading && !result.data ? <Loading /> : null}
        {result.data ? (
          result.data.items.length === 0 ? (
            filtered ? (
              <EmptyState text="No request matches this search." action={<a class="button" href="#/requests">Clear the search</a>} />
            ) : (
              <EmptyState
                text="No request is logged yet: send one to POST /log-request, or run a prompt in a template's playground."
                action={<a class="button" href={href("prompts")}>Open the prompts</a>}
              />
            )
          ) : (
            <>
              <div class="scroll-x">
                <table class="grid requests clickable" data-testid="request-results">
                  <thead>
                    <tr>
                      <th>id</th>
                      <th>time</th>
                      <th>input</th>
                      <th>output</th>
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
                      <tr
                        key={r.id}
                        data-id={r.id}
                        onClick={(e) => {
                          // A link in the row (its id) works as a link; anywhere else opens the request.
                          if (!(e.target as HTMLElement).closest("a")) go("requests", r.id);
                        }}
                      >
                        <td class="id">
                          <a href={href("requests", r.id)}>#{r.id}</a>
                        </td>
                        <td class="nowrap" title={fmt.time(r.request_start_time)}>
                          {fmt.shortTime(r.request_start_time)}
                        </td>
                        <td class="preview" data-testid="input-preview">
                          {r.input_preview ?? ""}
                        </td>
                        <td class="preview" data-testid="output-preview">
                          {r.status === "ERROR" && !r.output_preview ? <span class="bad">{r.error_type ?? "error"}</span> : (r.output_preview ?? "")}
                        </td>
                        <td class="clip" title={r.prompt_name ?? undefined}>
                          {r.prompt_name ? `${r.prompt_name}${r.prompt_version_number ? ` v${r.prompt_version_number}` : ""}` : ""}
                        </td>
                        <td class="nowrap">{r.engine}</td>
                        <td>
                          <Status value={r.status} />
                        </td>
                        <td class="num">{fmt.num(r.input_tokens + r.output_tokens)}</td>
                        <td class="num" data-testid="cost">
                          {fmt.cost(r.price, r.engine)}
                        </td>
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
              </div>
              <Pager
                page={result.data.page}
                pages={result.data.pages}
                total={result.data.total}
                estimate={result.data.total_is_estimate}
                onPage={(page) => apply({ ...applied, page })}
              />
            </>
          )
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

/** Where "Open in playground" leads: the template's version that made the log, its variables filled from it. */
const playgroundHref = (promptId: number, version: number | null, requestId: number | string) =>
  `${href("prompts", promptId)}?${new URLSearchParams({ ...(version ? { v: String(version) } : {}), tab: "playground", from: String(requestId) })}`;

export function RequestDetail({ id }: { id: string }) {
  const r = useAsync(() => get("/api/public/v2/requests/{request_id}", { request_id: id }), [id]);
  if (r.error) return <PageError error={r.error} back={{ href: lastSearch, label: "Back to the search" }} retry={r.reload} />;
  if (!r.data) return <Loading />;
  const d = r.data;
  const scores = Object.entries(d.scores ?? {});
  const failed = d.status === "ERROR" || Boolean(d.error_message);
  const outputMessages = Array.isArray((d.output as { messages?: unknown } | null)?.messages) ? ((d.output as { messages: unknown[] }).messages.length) : 1;
  return (
    <div class="detail" data-testid="request-detail">
      <p class="back-line">
        <a href={lastSearch}>‹ Back to the search</a>
        {d.prompt_id ? (
          <a class="button primary" href={playgroundHref(d.prompt_id, d.prompt_version_number ?? null, d.request_id)} data-testid="open-in-playground">
            Open in playground
          </a>
        ) : null}
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
          <Field name="Cost">{fmt.cost(d.price, d.model)}</Field>
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
          {failed ? (
            <div class="callout bad" role="alert" data-testid="request-error">
              <b>{d.error_type ?? "The call failed"}</b>
              {d.error_message ? <p class="text">{d.error_message}</p> : null}
            </div>
          ) : null}
          {failed && outputMessages === 0 ? null : <Conversation blueprint={d.output} />}
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
