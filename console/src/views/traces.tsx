// Traces: open one by id, see its spans as a tree with a waterfall of their timings, and read the
// selected span (attributes, events, times, its OTLP log records, the request log it made); records of
// no span shown are listed under the trace. Span names, attributes and record bodies are whatever the
// instrumentation sent: rendered as text only. The bars are SVG drawn with attributes, never inline
// styles, so the console's `style-src 'self'` holds.
import { Fragment } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { get, post } from "../api";
import type { TraceLogRecord, TraceSpan } from "../api.gen";
import { NO_TRACE_FILTERS, toTraceGroup, type TraceListFilters } from "../filters";
import { go, href } from "../router";
import { suggestions } from "../suggestions";
import {
  attributeText,
  axisMarks,
  barOf,
  buildTree,
  eventsOf,
  formatDuration,
  isError,
  kindName,
  normalizeTraceId,
  offsetMs,
  percentAt,
  recordsBySpan,
  severityName,
  statusName,
  traceWindow,
  visibleRows,
  type SpanRow,
  type TraceWindow,
} from "../trace-tree";
import { ErrorBox, fmt, Json, ListTable, Loading, onText, Section, useAsync } from "../ui";

type Span = TraceSpan;
/** A log record of the trace (POST /v1/logs), as GET /api/public/v2/traces/{id} lists them. */
type LogRecord = TraceLogRecord;

/** Past this depth the tree stops indenting further and says the depth instead. */
const MAX_INDENT = 24;

export const traceHref = (traceId: string, spanId?: string | null) =>
  `${href("traces", traceId)}${spanId ? `?span=${encodeURIComponent(spanId)}` : ""}`;

function TraceSearch({ current }: { current?: string }) {
  const [value, setValue] = useState(current ?? "");
  const [error, setError] = useState<string | null>(null);
  const [ids, setIds] = useState<string[]>([]);
  const [asked, setAsked] = useState(false);
  useEffect(() => setValue(current ?? ""), [current]);
  return (
    <form
      class="search-line"
      onSubmit={(e) => {
        e.preventDefault();
        const id = normalizeTraceId(value);
        if (!id) {
          setError("A trace id is 1 to 64 letters, digits and . _ : - (OpenTelemetry's are 32 hex digits).");
          return;
        }
        setError(null);
        go("traces", id);
      }}
    >
      <input
        type="search"
        class="trace-id"
        aria-label="Trace id"
        placeholder="Trace id, e.g. 4bf92f3577b34da6a3ce929d0e0e4736"
        value={value}
        list="trace-id-suggestions"
        onFocus={() => {
          // The suggestions endpoint is rate limited: asked once per tab (the requests view shares the cache).
          if (asked) return;
          setAsked(true);
          suggestions("trace_id").then(setIds);
        }}
        onInput={(e) => setValue((e.target as HTMLInputElement).value)}
      />
      <datalist id="trace-id-suggestions">
        {ids.map((v) => (
          <option value={v} key={v} />
        ))}
      </datalist>
      <button type="submit" class="primary">
        Open trace
      </button>
      {error ? (
        <span class="error" role="alert">
          {error}
        </span>
      ) : null}
    </form>
  );
}

export function TracesView() {
  return (
    <>
      <Section title="Open a trace">
        <TraceSearch />
        <p class="muted">
          Spans arrive through <code>POST /v1/traces</code> (OTLP) or <code>/spans-bulk</code>. A request log made from a span links to its trace from
          the request's page, and the trace's spans link back to their requests.
        </p>
      </Section>
      <RecentTraces />
    </>
  );
}

// Kept while the tab lives, so going back from a trace finds the same list.
let rememberedTraceFilters: TraceListFilters = NO_TRACE_FILTERS;

/** The workspace's traces, newest first (POST /api/public/v2/traces/search by cursor), with filters. */
function RecentTraces() {
  const [draft, setDraft] = useState<TraceListFilters>(rememberedTraceFilters);
  const [applied, setApplied] = useState<{ filters: TraceListFilters; order: "desc" | "asc"; cursors: (string | null)[] }>({ filters: rememberedTraceFilters, order: "desc", cursors: [null] });
  const cursor = applied.cursors[applied.cursors.length - 1];
  const list = useAsync(
    () => post("/api/public/v2/traces/search", { filter_group: toTraceGroup(applied.filters), sort_order: applied.order, limit: 25, ...(cursor ? { cursor } : {}) }),
    [JSON.stringify(applied)],
  );
  const field = (name: keyof TraceListFilters, label: string, placeholder: string) => (
    <label>
      {label}
      <input aria-label={label} placeholder={placeholder} value={draft[name]} onInput={onText((v) => setDraft({ ...draft, [name]: v }))} />
    </label>
  );
  return (
    <Section title="Recent traces">
      <form
        class="form-line"
        data-testid="trace-filters"
        onSubmit={(e) => {
          e.preventDefault();
          rememberedTraceFilters = draft;
          setApplied({ ...applied, filters: draft, cursors: [null] });
        }}
      >
        <label>
          Status
          <select aria-label="Trace status" value={draft.status} onChange={onText((v) => setDraft({ ...draft, status: v === "ok" || v === "error" ? v : "" }))}>
            <option value="">any</option>
            <option value="error">with an error</option>
            <option value="ok">without errors</option>
          </select>
        </label>
        {field("name", "Trace name", "contains")}
        {field("spanName", "Span name", "some span's name contains")}
        {field("model", "Model", "e.g. gpt-4o")}
        {field("minDurationMs", "Slower than (ms)", "e.g. 500")}
        <label>
          Order
          <select aria-label="Trace order" value={applied.order} onChange={onText((v) => setApplied({ ...applied, order: v === "asc" ? "asc" : "desc", cursors: [null] }))}>
            <option value="desc">newest first</option>
            <option value="asc">oldest first</option>
          </select>
        </label>
        <button type="submit" class="primary">
          Filter
        </button>
      </form>
      <ListTable
        list={list}
        items={(d) => d.items}
        columns={[{ title: "trace" }, { title: "started" }, { title: "duration", num: true }, { title: "spans", num: true }, { title: "LLM calls", num: true }, { title: "status" }, { title: "tokens", num: true }, { title: "cost", num: true }, { title: "models" }]}
        empty="No trace matches."
        row={(t) => (
          <tr key={t.trace_id} data-testid="trace-row" data-trace-id={t.trace_id}>
            <td>
              <a href={traceHref(t.trace_id)}>{t.trace_name ?? t.trace_id}</a>
            </td>
            <td>{fmt.time(t.trace_start)}</td>
            <td class="num">{formatDuration(t.trace_duration_ms)}</td>
            <td class="num">{t.trace_span_count}</td>
            <td class="num">{t.trace_llm_calls}</td>
            <td>
              <span class={`badge status-${t.trace_status}`}>{t.trace_status === "error" ? `${t.trace_error_spans} error${t.trace_error_spans === 1 ? "" : "s"}` : "ok"}</span>
            </td>
            <td class="num">{fmt.num(t.trace_total_tokens)}</td>
            <td class="num">{fmt.cost(t.trace_total_cost_usd)}</td>
            <td>{t.trace_models_used.join(", ")}</td>
          </tr>
        )}
        // Asked by cursor, the search answers a cursor page (`has_more`), never a numbered one.
        footer={(d) => (
          <div class="pager">
            {applied.cursors.length > 1 ? (
              <button type="button" onClick={() => setApplied({ ...applied, cursors: applied.cursors.slice(0, -1) })}>
                ‹ Newer
              </button>
            ) : null}
            {"has_more" in d && d.has_more && d.next_cursor ? (
              <button type="button" onClick={() => setApplied({ ...applied, cursors: [...applied.cursors, d.next_cursor] })}>
                More ›
              </button>
            ) : null}
          </div>
        )}
      />
    </Section>
  );
}

function StatusBadge({ code }: { code: number }) {
  const name = statusName(code);
  return <span class={`badge status-${name.toLowerCase()}`}>{name}</span>;
}

function SpanBar({ span, win }: { span: Span; win: TraceWindow }) {
  const { left, width } = barOf(span, win);
  const events = eventsOf(span.events).filter((e) => e.timeMs !== null);
  const tone = isError(span) ? "bar-error" : span.request_log_id !== null ? "bar-llm" : "bar-ok";
  return (
    <svg class="waterfall-bar" viewBox="0 0 100 12" preserveAspectRatio="none" aria-hidden="true" data-left={left} data-width={width}>
      <title>{`${span.name}: ${formatDuration(span.duration_ms)}, from +${formatDuration(offsetMs(span.start_time_unix_ms, win))}`}</title>
      <rect class={`bar ${tone}`} x={left} y={2} width={width} height={8} />
      {events.map((e, i) => {
        const x = percentAt(e.timeMs!, win);
        return <line key={i} class="bar-event" x1={x} x2={x} y1={0} y2={12} />;
      })}
    </svg>
  );
}

function Waterfall(props: { traceId: string; rows: SpanRow<Span>[]; win: TraceWindow; selected: string | null; logCounts: Map<string, number> }) {
  const { traceId, rows, win, selected, logCounts } = props;
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set());
  const shown = useMemo(() => visibleRows(rows, collapsed), [rows, collapsed]);
  const selectedRow = useRef<HTMLTableRowElement>(null);
  useEffect(() => selectedRow.current?.scrollIntoView({ block: "nearest" }), [selected]);
  const toggle = (id: string) =>
    setCollapsed((c) => {
      const next = new Set(c);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  return (
    <div class="scroll">
      <table class="grid waterfall" data-testid="span-tree">
        <thead>
          <tr>
            <th>span</th>
            <th class="num">duration</th>
            <th>
              <div class="axis">
                {axisMarks(win).map((m) => (
                  <span key={m.percent}>{m.percent === 0 ? "0" : `+${formatDuration(m.ms)}`}</span>
                ))}
              </div>
            </th>
          </tr>
        </thead>
        <tbody>
          {shown.map((row) => {
            const s = row.span;
            const folded = row.children > 0 && collapsed.has(s.span_id);
            const isSelected = s.span_id === selected;
            const cls = [isSelected ? "selected" : "", isError(s) ? "span-failed" : ""].filter(Boolean).join(" ");
            return (
              <tr key={row.index} ref={isSelected ? selectedRow : undefined} class={cls} data-testid="span-row" data-span-id={s.span_id} data-depth={row.depth}>
                <td class="span-name">
                  <span class="span-line">
                    {Array.from({ length: Math.min(row.depth, MAX_INDENT) }, (_, i) => (
                      <span class="indent" key={i} />
                    ))}
                    {row.depth > MAX_INDENT ? <span class="muted">↳{row.depth} </span> : null}
                    {row.children > 0 ? (
                      <button
                        type="button"
                        class="toggle"
                        aria-expanded={!folded}
                        aria-label={`${folded ? "Expand" : "Collapse"} ${s.name}`}
                        onClick={() => toggle(s.span_id)}
                      >
                        {folded ? "▸" : "▾"}
                      </button>
                    ) : (
                      <span class="toggle" />
                    )}
                    <span class="span-main">
                      <span class="span-head">
                        <a href={traceHref(traceId, s.span_id)} title={s.name} aria-current={isSelected ? "true" : undefined}>
                          {s.name || "(unnamed)"}
                        </a>
                        <span class="badge kind">{kindName(s.kind)}</span>
                        {isError(s) ? <StatusBadge code={s.status.code} /> : null}
                        {s.request_log_id !== null ? <span class="badge llm">LLM #{s.request_log_id}</span> : null}
                        {logCounts.get(s.span_id) ? (
                          <span class="badge records" data-testid="span-log-count">
                            {logCounts.get(s.span_id)} log{logCounts.get(s.span_id) === 1 ? "" : "s"}
                          </span>
                        ) : null}
                        {folded ? <span class="muted">{row.descendants} hidden</span> : null}
                        {folded && row.errorsBelow ? (
                          <span class="badge status-error">
                            {row.errorsBelow} error{row.errorsBelow === 1 ? "" : "s"} inside
                          </span>
                        ) : null}
                      </span>
                      {isError(s) && s.status.message ? (
                        <span class="span-note failed" title={s.status.message}>
                          {s.status.message}
                        </span>
                      ) : null}
                      {row.parentMissing ? <span class="span-note">parent {s.parent_id} not received</span> : null}
                      {row.cycle ? <span class="span-note">its parent links loop</span> : null}
                    </span>
                  </span>
                </td>
                <td class="num">{formatDuration(s.duration_ms)}</td>
                <td class="bar-cell">
                  <SpanBar span={s} win={win} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** Keys in order, each value beside its key, or under it when it takes lines of its own (JSON, messages). */
function KeyValues({ values, testid }: { values: Record<string, unknown>; testid?: string }) {
  const keys = Object.keys(values).sort();
  if (!keys.length) return <p class="muted">none</p>;
  return (
    <table class="kv attributes" data-testid={testid}>
      <colgroup>
        <col class="key" />
        <col />
      </colgroup>
      <tbody>
        {keys.map((k) => {
          const { text, block } = attributeText(values[k]);
          return block ? (
            <Fragment key={k}>
              <tr>
                <th colSpan={2}>{k}</th>
              </tr>
              <tr>
                <td colSpan={2}>
                  <pre class="json">{text}</pre>
                </td>
              </tr>
            </Fragment>
          ) : (
            <tr key={k}>
              <th>{k}</th>
              <td class="text">{text}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** When a record was, against the trace's spans (or as a date when the trace has none). */
function recordWhen(r: LogRecord, win: TraceWindow | null): string {
  if (!win) return fmt.time(r.time);
  const offset = offsetMs(r.time_unix_ms, win);
  return offset < 0 ? `${formatDuration(-offset)} before the trace` : `+${formatDuration(offset)} into the trace`;
}

/** Log records, oldest first: event name, severity, time, the body (text as text, a map as JSON) and the attributes. */
function LogRecords({ records, win, testid, showSpan }: { records: LogRecord[]; win: TraceWindow | null; testid: string; showSpan?: boolean }) {
  if (!records.length) return <p class="muted">none</p>;
  return (
    <ol class="events records" data-testid={testid}>
      {records.map((r, i) => {
        const severity = severityName(r);
        const body = attributeText(r.body);
        return (
          <li key={i} data-testid="log-record">
            <b class="text">{r.event_name || "(log record)"}</b> {severity ? <span class={`badge severity-${severity.toLowerCase()}`}>{severity}</span> : null}
            <span class="muted"> {recordWhen(r, win)}</span>
            {showSpan ? <span class="muted"> · {r.span_id ? <code>{r.span_id}</code> : "no span"}</span> : null}
            {r.body === null || r.body === undefined ? null : body.block ? <pre class="json">{body.text}</pre> : <p class="text">{body.text}</p>}
            {Object.keys(r.attributes ?? {}).length ? (
              <details>
                <summary>attributes</summary>
                <KeyValues values={r.attributes} />
              </details>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}

function SpanPanel({ traceId, row, win, byId, records }: { traceId: string; row: SpanRow<Span>; win: TraceWindow; byId: Map<string, Span>; records: LogRecord[] }) {
  const s = row.span;
  const parent = s.parent_id ? byId.get(s.parent_id) : undefined;
  const events = eventsOf(s.events);
  return (
    <section class="card span-panel" data-testid="span-detail">
      <header class="card-head">
        <h2 class="text">{s.name || "(unnamed)"}</h2>
        <span>
          <span class="badge kind">{kindName(s.kind)}</span> <StatusBadge code={s.status.code} />
        </span>
      </header>
      {isError(s) ? (
        <p class="error" data-testid="span-error">
          {s.status.message || "The span's status is ERROR (no message)."}
        </p>
      ) : null}
      <table class="kv">
        <tbody>
          <tr>
            <th>span id</th>
            <td>
              <code>{s.span_id}</code>
            </td>
          </tr>
          <tr>
            <th>parent</th>
            <td>
              {parent ? (
                <a href={traceHref(traceId, parent.span_id)}>{parent.name || parent.span_id}</a>
              ) : s.parent_id ? (
                <span class="muted">
                  <code>{s.parent_id}</code> (not received)
                </span>
              ) : (
                <span class="muted">none: a root span</span>
              )}
            </td>
          </tr>
          <tr>
            <th>started</th>
            <td>
              {fmt.time(s.start_time)} <span class="muted">(+{formatDuration(offsetMs(s.start_time_unix_ms, win))} into the trace)</span>
            </td>
          </tr>
          <tr>
            <th>ended</th>
            <td>{fmt.time(s.end_time)}</td>
          </tr>
          <tr>
            <th>duration</th>
            <td>{formatDuration(s.duration_ms)}</td>
          </tr>
          <tr>
            <th>request log</th>
            <td>
              {s.request_log_id !== null ? (
                <a href={href("requests", s.request_log_id)} data-testid="span-request-link">
                  Request #{s.request_log_id}
                </a>
              ) : (
                <span class="muted">none (not an LLM call)</span>
              )}
            </td>
          </tr>
          {s.scope ? (
            <tr>
              <th>scope</th>
              <td>
                {s.scope.name}
                {s.scope.version ? ` ${s.scope.version}` : ""}
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <h3>Attributes</h3>
      <KeyValues values={s.attributes ?? {}} testid="span-attributes" />
      <h3>Events</h3>
      {events.length ? (
        <ol class="events" data-testid="span-events">
          {events.map((e, i) => (
            <li key={i}>
              <b class="text">{e.name || "(unnamed)"}</b>
              {e.timeMs !== null ? <span class="muted"> +{formatDuration(offsetMs(e.timeMs, win))} into the trace</span> : null}
              <KeyValues values={e.attributes} />
            </li>
          ))}
        </ol>
      ) : (
        <p class="muted">none</p>
      )}
      <h3>Log records</h3>
      <LogRecords records={records} win={win} testid="span-logs" />
      {Array.isArray(s.links) && s.links.length ? (
        <>
          <h3>Links</h3>
          <Json value={s.links} />
        </>
      ) : null}
      <details>
        <summary>Resource</summary>
        <KeyValues values={s.resource ?? {}} />
      </details>
    </section>
  );
}

export function TraceDetail({ traceId, spanId }: { traceId: string; spanId: string | null }) {
  const r = useAsync(() => get("/api/public/v2/traces/{trace_id}", { trace_id: traceId }), [traceId]);
  const spans = r.data?.spans ?? [];
  const rows = useMemo(() => buildTree(spans), [r.data]);
  const win = useMemo(() => traceWindow(spans), [r.data]);
  const byId = useMemo(() => new Map(spans.map((s) => [s.span_id, s] as const)), [r.data]);
  const records = useMemo(() => recordsBySpan(r.data?.logs ?? [], new Set(byId.keys())), [r.data]);
  const logCounts = useMemo(() => new Map([...records.bySpan].map(([id, list]) => [id, list.length] as const)), [records]);
  const head = (
    <Section title="Trace">
      <TraceSearch current={traceId} />
    </Section>
  );
  if (r.error)
    return (
      <div>
        {head}
        <ErrorBox error={r.error} />
      </div>
    );
  if (!r.data) return <Loading />;
  const selectedRow = rows.find((row) => row.span.span_id === spanId) ?? rows[0];
  const errors = rows.filter((row) => isError(row.span));
  const calls = rows.filter((row) => row.span.request_log_id !== null).length;
  return (
    <div class="detail" data-testid="trace-detail">
      {head}
      <section class="card">
        <dl class="fields" data-testid="trace-summary">
          <div class="field">
            <dt>Trace id</dt>
            <dd>
              <code>{r.data.trace_id}</code>
            </dd>
          </div>
          <div class="field">
            <dt>Started</dt>
            <dd>{rows.length ? fmt.time(new Date(win.start).toISOString()) : ""}</dd>
          </div>
          <div class="field">
            <dt>Duration</dt>
            <dd>{formatDuration(win.duration)}</dd>
          </div>
          <div class="field">
            <dt>Spans</dt>
            <dd>
              {rows.length} · {calls} LLM call{calls === 1 ? "" : "s"} ·{" "}
              <span class={errors.length ? "failed-count" : ""} data-testid="trace-errors">
                {errors.length} error{errors.length === 1 ? "" : "s"}
              </span>
            </dd>
          </div>
          <div class="field">
            <dt>Log records</dt>
            <dd data-testid="trace-log-count">
              {r.data.logs.length}
              {r.data.logs_truncated ? " (the first; more were sent)" : ""}
            </dd>
          </div>
        </dl>
        {errors.length ? (
          <ul class="trace-errors">
            {errors.map((row) => (
              <li key={row.span.span_id}>
                <StatusBadge code={2} /> <a href={traceHref(traceId, row.span.span_id)}>{row.span.name || "(unnamed)"}</a>
                {row.span.status.message ? <span class="muted">: {row.span.status.message}</span> : null}
              </li>
            ))}
          </ul>
        ) : null}
      </section>
      {spanId && selectedRow?.span.span_id !== spanId ? <p class="muted">Span {spanId} is not in this trace; showing its first span.</p> : null}
      <div class="trace-layout">
        <section class="card">
          <Waterfall key={traceId} traceId={traceId} rows={rows} win={win} selected={selectedRow?.span.span_id ?? null} logCounts={logCounts} />
        </section>
        {selectedRow ? <SpanPanel traceId={traceId} row={selectedRow} win={win} byId={byId} records={records.bySpan.get(selectedRow.span.span_id) ?? []} /> : null}
      </div>
      {records.outside.length ? (
        <section class="card">
          <h2>Log records of no span shown</h2>
          <p class="muted">Records sent outside any span, or for a span that has not arrived.</p>
          <LogRecords records={records.outside} win={rows.length ? win : null} testid="trace-logs" showSpan />
        </section>
      ) : null}
    </div>
  );
}
