// POST /api/public/v2/traces/search: the workspace's traces matching a trace filter group (the one trace
// compiler, src/filters/traces.ts), newest first (or oldest first), by pages or by cursor, each with
// its summary (name, times, duration, status, span and LLM-call counts, tokens, cost, models).
//
// Traces have no row of their own: a trace is its spans, and its values are computed from them by the
// CTEs trace analytics uses (traceRowCtes), so both agree. A trace's key is (trace_start, trace_id), and
// trace_start is the start of its first span, so the spans read in key order (start_time, trace_id) on
// their (workspace_id, start_time) index meet each trace's first span in the trace's own order. A scan
// reads a window of spans past the last key, computes the rows of the traces they belong to, and keeps
// those whose key falls within the window: a trace with earlier spans waits for the window that holds
// its first span. The windows are bounded (WINDOW_SPANS spans each, MAX_SCAN_SPANS a request), so a
// request costs the same whatever the workspace holds; what the bound leaves unread the answer says.
// A workspace over several log databases (periods) has a scan per database, merged in key order
// (merged-scan.ts): a trace lives in the database where it began.
import { getTableName } from "drizzle-orm";
import { d1Of } from "../db/client";
import { spans } from "../db/schema";
import { columnNames } from "../db/sql";
import { SqlParams } from "../filters";
import { compileTraceFilter, fieldsOfGroup, traceStartBounds, type TraceFilterGroup } from "../filters/traces";
import { decodeCursor, encodeCursor } from "../lib/cursor";
import { sha256Hex } from "../lib/crypto";
import { ApiError } from "../lib/errors";
import { toIso } from "../lib/time";
import { MergedScan, type ScanKey as Key } from "./merged-scan";
import type { WorkspaceLogs } from "./periods";
import { traceRowCtes } from "./trace-analytics";

export interface TraceSearchLimits {
  /** Spans read by one window (one pair of statements). */
  windowSpans: number;
  /** Spans read by one request at most, over all its windows. */
  maxScanSpans: number;
}
export const TRACE_SEARCH_LIMITS: TraceSearchLimits = { windowSpans: 2_000, maxScanSpans: 20_000 };
export const TRACE_SEARCH_PAGE = { default: 20, max: 100 } as const;

export type TraceSearchInput = {
  filter_group?: TraceFilterGroup | null;
  sort_order: "asc" | "desc";
} & ({ mode: "page"; page: number; per_page: number } | { mode: "cursor"; cursor?: string; limit: number });


interface TraceRow {
  trace_id: string;
  trace_name: string | null;
  trace_start: number;
  trace_end: number;
  trace_duration_ms: number;
  trace_status: "ok" | "error";
  trace_span_count: number;
  trace_llm_calls: number;
  trace_error_spans: number;
  trace_input_tokens: number;
  trace_output_tokens: number;
  trace_total_tokens: number;
  trace_total_cost_usd: number;
  models: string;
}

export function traceSummary(r: TraceRow) {
  return {
    trace_id: r.trace_id,
    trace_name: r.trace_name,
    trace_start: toIso(r.trace_start)!,
    trace_end: toIso(r.trace_end)!,
    trace_duration_ms: r.trace_duration_ms,
    trace_status: r.trace_status,
    trace_span_count: r.trace_span_count,
    trace_llm_calls: r.trace_llm_calls,
    trace_error_spans: r.trace_error_spans,
    trace_input_tokens: r.trace_input_tokens,
    trace_output_tokens: r.trace_output_tokens,
    trace_total_tokens: r.trace_total_tokens,
    trace_total_cost_usd: r.trace_total_cost_usd,
    trace_models_used: (JSON.parse(r.models) as string[]).sort(),
  };
}

const S = columnNames(spans);

/** One window's statements: the spans past `after`, and the rows of the traces whose first span they hold. */
export function windowSpansQuery(workspaceId: number, order: "asc" | "desc", after: Key | null, range: { from: number | null; to: number | null }, size: number) {
  const p = new SqlParams();
  const where = [`${S.workspaceId} = ${p.add(workspaceId)}`];
  if (range.from !== null) where.push(`${S.startTime} >= ${p.add(range.from)}`);
  if (range.to !== null) where.push(`${S.startTime} <= ${p.add(range.to)}`);
  if (after) where.push(keyPast(S.startTime, S.traceId, order, after, p));
  const dir = order === "desc" ? "DESC" : "ASC";
  return { sql: `SELECT ${S.traceId}, ${S.startTime} FROM ${getTableName(spans)} WHERE ${where.join(" AND ")} ORDER BY ${S.startTime} ${dir}, ${S.traceId} ${dir} LIMIT ${size}`, params: p.values };
}

/**
 * Keys past `k` in the order, written so the start's bound is a plain range on the start_time index
 * (the id decides only among equal starts).
 */
function keyPast(start: string, id: string, order: "asc" | "desc", k: Key, p: SqlParams): string {
  const s = p.add(k.start);
  const i = p.add(k.id);
  return order === "desc" ? `${start} <= ${s} AND (${start} < ${s} OR ${id} < ${i})` : `${start} >= ${s} AND (${start} > ${s} OR ${id} > ${i})`;
}

/** Keys not past `k` (`k` itself included): the far end of a window. */
function keyUpTo(start: string, id: string, order: "asc" | "desc", k: Key, p: SqlParams): string {
  const s = p.add(k.start);
  const i = p.add(k.id);
  return order === "desc" ? `(${start} > ${s} OR (${start} = ${s} AND ${id} >= ${i}))` : `(${start} < ${s} OR (${start} = ${s} AND ${id} <= ${i}))`;
}

export function windowRowsQuery(workspaceId: number, group: TraceFilterGroup | null, order: "asc" | "desc", traceIds: string[], after: Key | null, last: Key | null) {
  const p = new SqlParams();
  const ws = p.add(workspaceId);
  const win = p.add(JSON.stringify(traceIds));
  const filter = compileTraceFilter(group, "trace", p);
  const ctes = traceRowCtes(ws, win, filter, fieldsOfGroup(group).has("trace_depth"));
  const where = [filter.where];
  if (after) where.push(keyPast("t.trace_start", "t.trace_id", order, after, p));
  if (last) where.push(keyUpTo("t.trace_start", "t.trace_id", order, last, p));
  const dir = order === "desc" ? "DESC" : "ASC";
  const sql = `WITH RECURSIVE ${ctes.join(",\n")}
    SELECT t.trace_id, t.trace_name, t.trace_start, t.trace_end, t.trace_duration_ms, t.trace_status, t.trace_span_count, t.trace_llm_calls,
      t.trace_error_spans, t.trace_input_tokens, t.trace_output_tokens, t.trace_total_tokens, t.trace_total_cost_usd,
      (SELECT json_group_array(DISTINCT s.span_model) FROM sp AS s WHERE s.trace_id = t.trace_id AND s.span_model IS NOT NULL) AS models
    FROM tr AS t WHERE ${where.join(" AND ")} ORDER BY t.trace_start ${dir}, t.trace_id ${dir}`;
  return { sql, params: p.values };
}

/** The matching traces in order, a window at a time, within the request's bound. */
class TraceScan {
  private readonly queue: TraceRow[] = [];
  private spansRead = 0;
  /** Every span past the start was read: nothing matches past what was handed out. */
  private exhausted = false;
  /** Where the next window starts (exclusive): the last span key read. */
  private scanned: Key | null;

  constructor(
    private readonly d1: D1Database,
    private readonly workspaceId: number,
    private readonly group: TraceFilterGroup | null,
    private readonly order: "asc" | "desc",
    start: Key | null,
    private readonly limits: TraceSearchLimits,
  ) {
    this.scanned = start;
  }

  /** The bound stopped the scan before the end: more may match past `scanned`. */
  get capped(): boolean {
    return this.queue.length === 0 && !this.exhausted;
  }

  /** Where a cursor resumes when every row read was handed out: past every span read, so nothing is read twice. */
  get resume(): Key | null {
    return this.scanned;
  }

  async next(): Promise<TraceRow | null> {
    while (this.queue.length === 0 && !this.exhausted && this.spansRead < this.limits.maxScanSpans) await this.readWindow();
    return this.queue.shift() ?? null;
  }

  private async readWindow(): Promise<void> {
    const size = Math.min(this.limits.windowSpans, this.limits.maxScanSpans - this.spansRead);
    const spansQ = windowSpansQuery(this.workspaceId, this.order, this.scanned, traceStartBounds(this.group), size);
    const { results: spans } = await this.d1
      .prepare(spansQ.sql)
      .bind(...spansQ.params)
      .all<{ trace_id: string; start_time: number }>();
    this.spansRead += spans.length;
    if (spans.length < size) this.exhausted = true;
    if (spans.length === 0) return;
    const end = spans[spans.length - 1];
    // A full window may have cut a trace's spans short: it keeps the traces that start within it, up
    // to its last span's key; a trace with earlier spans is kept by the window holding its first one.
    const last: Key | null = this.exhausted ? null : { start: end.start_time, id: end.trace_id };
    const rowsQ = windowRowsQuery(this.workspaceId, this.group, this.order, [...new Set(spans.map((s) => s.trace_id))], this.scanned, last);
    const { results } = await this.d1
      .prepare(rowsQ.sql)
      .bind(...rowsQ.params)
      .all<TraceRow>();
    this.queue.push(...results);
    this.scanned = { start: end.start_time, id: end.trace_id };
  }
}

/** A fingerprint of what a cursor is valid for: the filters and the order. */
async function filterPrint(group: TraceFilterGroup | null | undefined, order: string): Promise<string> {
  return (await sha256Hex(JSON.stringify({ g: group ?? null, o: order }))).slice(0, 16);
}

export async function searchTraces(logs: WorkspaceLogs, workspaceId: number, input: TraceSearchInput, limits: TraceSearchLimits = TRACE_SEARCH_LIMITS) {
  const group = input.filter_group ?? null;
  const print = await filterPrint(group, input.sort_order);
  const cursorOf = (k: Key | null) => (k ? encodeCursor({ o: input.sort_order, k: k.start, s: k.id, f: print }) : null);
  let start: Key | null = null;
  if (input.mode === "cursor" && input.cursor !== undefined) {
    const pos = decodeCursor(input.cursor, input.sort_order, { fractional: true, filter: print });
    if (pos.s === undefined) throw new ApiError("validation_error", "cursor: is not a cursor from a previous response", { details: [{ field: "cursor", rule: "is not a cursor from a previous response" }] });
    start = { start: pos.k, id: pos.s };
  }
  // The request's bound is shared by the databases: one bound a request, whatever the workspace spans.
  const periods = logs.periods;
  const share: TraceSearchLimits = { ...limits, maxScanSpans: Math.max(limits.windowSpans, Math.ceil(limits.maxScanSpans / periods.length)) };
  const scans = periods.map((p) => new TraceScan(d1Of(p.db), workspaceId, group, input.sort_order, start, periods.length === 1 ? limits : share));
  const scan = scans.length === 1 ? scans[0] : new MergedScan(scans, (r) => ({ start: r.trace_start, id: r.trace_id }), input.sort_order);

  const keyOf = (r: TraceRow): Key => ({ start: r.trace_start, id: r.trace_id });

  if (input.mode === "cursor") {
    const rows: TraceRow[] = [];
    while (rows.length < input.limit) {
      const row = await scan.next();
      if (!row) break;
      rows.push(row);
    }
    // A full page with one more match after it, or a scan the bound stopped, has a next page (the
    // latter possibly empty: then its has_more is the last word).
    const full = rows.length === input.limit;
    const more = full ? (await scan.next()) !== null || scan.capped : scan.capped;
    return {
      success: true as const,
      items: rows.map(traceSummary),
      next_cursor: more ? cursorOf(full ? keyOf(rows[rows.length - 1]) : scan.resume) : null,
      has_more: more,
      limit: input.limit,
    };
  }

  const skip = (input.page - 1) * input.per_page;
  const rows: TraceRow[] = [];
  let matched = 0;
  for (let row = await scan.next(); row; row = await scan.next()) {
    if (matched >= skip && matched < skip + input.per_page) rows.push(row);
    matched++;
  }
  // Stopped by the bound: the count is a lower bound, and more may match.
  const estimate = scan.capped;
  const pastPage = matched > skip + input.per_page;
  const hasNext = pastPage || estimate;
  return {
    success: true as const,
    items: rows.map(traceSummary),
    page: input.page,
    per_page: input.per_page,
    pages: Math.ceil(matched / input.per_page) + (estimate ? 1 : 0),
    total: matched,
    total_is_estimate: estimate,
    has_next: hasNext,
    has_prev: input.page > 1,
    next_num: hasNext ? input.page + 1 : null,
    prev_num: input.page > 1 ? input.page - 1 : null,
    next_cursor: hasNext ? cursorOf(pastPage && rows.length > 0 ? keyOf(rows[rows.length - 1]) : scan.resume) : null,
  };
}
