// The pure parts of the trace view: the flat span list of GET /api/public/v2/traces/{id} turned into
// a tree (rows in depth-first order, each with its depth), the waterfall's geometry (each span's bar
// as percentages of the trace's time window), and the small readings the view shows (kind and status
// names, events, attribute values). No DOM, no Preact: unit tested in test/console/.
import { recordOf } from "./json";

/** What the tree and the layout read of a span (the API sends more; the view keeps the whole span). */
export interface SpanLike {
  span_id: string;
  parent_id: string | null;
  name: string;
  start_time_unix_ms: number;
  end_time_unix_ms: number;
  status?: { code: number; message?: string | null } | null;
}

export interface SpanRow<S extends SpanLike = SpanLike> {
  span: S;
  /** Position in the full list (a stable key, even should a span id repeat). */
  index: number;
  /** 0 for a root. */
  depth: number;
  /** Index of the parent's row in the list, -1 for a root. */
  parent: number;
  /** Direct children and all descendants shown under this row. */
  children: number;
  descendants: number;
  /** Descendants whose status is an error (the row itself not counted). */
  errorsBelow: number;
  /** A root only because its parent never arrived (a trace still coming in, or cut short). */
  parentMissing: boolean;
  /** A root only to break a loop of parent links (spans naming each other as parents). */
  cycle: boolean;
}

export const isError = (s: SpanLike) => s.status?.code === 2;

const startOf = (s: SpanLike) => (Number.isFinite(s.start_time_unix_ms) ? s.start_time_unix_ms : Number.POSITIVE_INFINITY);

/**
 * Rows in depth-first order: roots by start time, each span followed by its children by start time
 * (ties keep the API's order). A span whose parent is not in the list is a root marked
 * `parentMissing`; spans caught in a loop of parent links are still shown, the earliest of the loop
 * taken as a root marked `cycle`. Every span appears exactly once. Iterative, so a chain of
 * thousands of spans does not exhaust the stack.
 */
export function buildTree<S extends SpanLike>(spans: readonly S[]): SpanRow<S>[] {
  const order = spans.map((s, i) => ({ s, i }));
  order.sort((a, b) => startOf(a.s) - startOf(b.s) || a.i - b.i);
  const ids = new Set(spans.map((s) => s.span_id));
  const kids = new Map<string, S[]>();
  const roots: S[] = [];
  const missing = new Set<S>();
  for (const { s } of order) {
    const p = s.parent_id;
    if (p === null || p === undefined || p === "" || p === s.span_id) roots.push(s);
    else if (!ids.has(p)) {
      roots.push(s);
      missing.add(s);
    } else {
      const list = kids.get(p);
      if (list) list.push(s);
      else kids.set(p, [s]);
    }
  }

  const rows: SpanRow<S>[] = [];
  const placed = new Set<S>();
  // Span ids are unique in a trace; should one repeat, the children of that id hang under its first span.
  const expanded = new Set<string>();
  const walk = (root: S, cycle: boolean) => {
    const stack: { span: S; depth: number; parent: number }[] = [{ span: root, depth: 0, parent: -1 }];
    while (stack.length) {
      const { span, depth, parent } = stack.pop()!;
      if (placed.has(span)) continue;
      placed.add(span);
      const index = rows.length;
      rows.push({ span, index, depth, parent, children: 0, descendants: 0, errorsBelow: 0, parentMissing: missing.has(span), cycle: cycle && span === root });
      if (parent >= 0) rows[parent].children++;
      if (expanded.has(span.span_id)) continue;
      expanded.add(span.span_id);
      const children = kids.get(span.span_id) ?? [];
      for (let k = children.length - 1; k >= 0; k--) if (!placed.has(children[k])) stack.push({ span: children[k], depth: depth + 1, parent: index });
    }
  };
  for (const r of roots) walk(r, false);
  // What is left hangs off a loop: take the earliest as a root, until nothing is left.
  for (const { s } of order) if (!placed.has(s)) walk(s, true);

  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i];
    if (row.parent < 0) continue;
    const up = rows[row.parent];
    up.descendants += 1 + row.descendants;
    up.errorsBelow += (isError(row.span) ? 1 : 0) + row.errorsBelow;
  }
  return rows;
}

/** The rows left once the subtrees under `collapsed` span ids are folded away (the collapsed row stays). */
export function visibleRows<S extends SpanLike>(rows: readonly SpanRow<S>[], collapsed: ReadonlySet<string>): SpanRow<S>[] {
  const out: SpanRow<S>[] = [];
  let foldDepth = -1;
  for (const row of rows) {
    if (foldDepth >= 0) {
      if (row.depth > foldDepth) continue;
      foldDepth = -1;
    }
    out.push(row);
    if (row.children > 0 && collapsed.has(row.span.span_id)) foldDepth = row.depth;
  }
  return out;
}

/** The trace's time window: its earliest start to its latest end, in epoch milliseconds. */
export interface TraceWindow {
  start: number;
  end: number;
  duration: number;
}

export function traceWindow(spans: readonly SpanLike[]): TraceWindow {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const s of spans) {
    for (const t of [s.start_time_unix_ms, s.end_time_unix_ms]) {
      if (!Number.isFinite(t)) continue;
      if (t < start) start = t;
      if (t > end) end = t;
    }
  }
  if (start === Number.POSITIVE_INFINITY) return { start: 0, end: 0, duration: 0 };
  return { start, end, duration: end - start };
}

/** Where a moment falls in the window, 0 to 100 (clamped; an empty window puts everything at 0). */
export function percentAt(t: number, win: TraceWindow): number {
  if (!(win.duration > 0) || !Number.isFinite(t)) return 0;
  return Math.min(100, Math.max(0, ((t - win.start) / win.duration) * 100));
}

/**
 * A span's bar: `left` and `width` in percent of the window. A bar is never thinner than `minWidth`
 * (so an instant span stays visible) and never runs past 100.
 */
export function barOf(span: SpanLike, win: TraceWindow, minWidth = 0.4): { left: number; width: number } {
  const from = percentAt(span.start_time_unix_ms, win);
  const to = Math.max(from, percentAt(span.end_time_unix_ms, win));
  const width = Math.min(100, Math.max(minWidth, to - from));
  const left = Math.min(from, 100 - width);
  return { left: round(left), width: round(width) };
}

const round = (v: number) => Math.round(v * 1000) / 1000;

/** Milliseconds since the trace began. */
export const offsetMs = (t: number, win: TraceWindow) => (Number.isFinite(t) ? t - win.start : 0);

/** `count + 1` evenly spaced marks across the window for the time axis: percent and milliseconds from the start. */
export function axisMarks(win: TraceWindow, count = 4): { percent: number; ms: number }[] {
  const marks: { percent: number; ms: number }[] = [];
  for (let i = 0; i <= count; i++) marks.push({ percent: (i / count) * 100, ms: (win.duration * i) / count });
  return marks;
}

/** A duration as the waterfall labels it: µs under a millisecond, ms under a second, then seconds. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "";
  if (ms === 0) return "0 ms";
  if (ms < 1) return `${Math.round(ms * 1000)} µs`;
  if (ms < 1000) return `${Number(ms.toFixed(ms < 10 ? 2 : ms < 100 ? 1 : 0))} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(2))} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms - m * 60_000) / 1000)} s`;
}

const KINDS = ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"];
export const kindName = (kind: unknown) => (typeof kind === "number" && KINDS[kind] ? KINDS[kind] : "UNSPECIFIED");

const STATUSES = ["UNSET", "OK", "ERROR"];
export const statusName = (code: unknown) => (typeof code === "number" && STATUSES[code] ? STATUSES[code] : "UNSET");

export interface SpanEvent {
  name: string;
  timeMs: number | null;
  attributes: Record<string, unknown>;
}

/** The span's events as the API stores them (`{name, timeMs, attributes}`), anything malformed read as far as it goes. */
export function eventsOf(events: unknown): SpanEvent[] {
  if (!Array.isArray(events)) return [];
  return events.map((e) => {
    const o = recordOf(e);
    const t = o.timeMs ?? o.time_unix_ms ?? o.timestamp;
    return {
      name: typeof o.name === "string" ? o.name : "",
      timeMs: typeof t === "number" && Number.isFinite(t) ? t : null,
      attributes: recordOf(o.attributes),
    };
  });
}

/**
 * An attribute value as text: a string as it is, unless it holds a JSON object or array (as
 * `gen_ai.input.messages` does), which is re-indented; anything else as JSON. `block` says whether
 * it reads better on lines of its own.
 */
export function attributeText(value: unknown): { text: string; block: boolean } {
  if (typeof value === "string") {
    const t = value.trim();
    if ((t.startsWith("{") && t.endsWith("}")) || (t.startsWith("[") && t.endsWith("]"))) {
      try {
        return { text: JSON.stringify(JSON.parse(t), null, 2), block: true };
      } catch {
        /* not JSON after all: shown as sent */
      }
    }
    return { text: value, block: value.includes("\n") };
  }
  if (value === null || value === undefined) return { text: String(value), block: false };
  if (typeof value === "object") return { text: JSON.stringify(value, null, 2), block: true };
  return { text: String(value), block: false };
}

/**
 * A trace id typed into the search box, as the API takes it (up to 64 letters, digits and `. _ : -`;
 * hex kept lowercase), or null when it cannot be one.
 */
export function normalizeTraceId(raw: string): string | null {
  const v = raw.trim();
  if (!/^[0-9A-Za-z._:-]{1,64}$/.test(v)) return null;
  return /^[0-9a-fA-F]+$/.test(v) ? v.toLowerCase() : v;
}

/** What the view reads of a trace's log record (GET /api/public/v2/traces/{id}, `logs`). */
export interface LogRecordLike {
  span_id: string | null;
  severity_number: number;
  severity_text: string | null;
}

const SEVERITIES = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"];

/** A record's severity as a word: its own text, else the range its number falls in (1-4 TRACE … 21-24 FATAL), else none. */
export function severityName(r: Pick<LogRecordLike, "severity_number" | "severity_text">): string | null {
  if (r.severity_text) return r.severity_text;
  const n = r.severity_number;
  return Number.isInteger(n) && n >= 1 && n <= 24 ? SEVERITIES[Math.floor((n - 1) / 4)] : null;
}

/** The records of each span shown, in their order, and those of no span here (outside any span, or of a span that has not arrived). */
export function recordsBySpan<R extends LogRecordLike>(records: readonly R[], spanIds: ReadonlySet<string>): { bySpan: Map<string, R[]>; outside: R[] } {
  const bySpan = new Map<string, R[]>();
  const outside: R[] = [];
  for (const r of records) {
    if (r.span_id === null || !spanIds.has(r.span_id)) {
      outside.push(r);
      continue;
    }
    const list = bySpan.get(r.span_id);
    if (list) list.push(r);
    else bySpan.set(r.span_id, [r]);
  }
  return { bySpan, outside };
}
