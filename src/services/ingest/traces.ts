// Traces: spans in from OTLP exports and from spans-bulk (the SDK's tracing), each LLM span (or span
// sent with a log_request) making one request log; OTLP log records kept with their traces, the GenAI
// ones completing their span's log; a trace read back whole; traces closed to more spans; a trace's
// logs into a draft dataset.
import type { Db } from "../../db/client";
import type { SpanRow } from "../../db/schema";
import type { AuthContext, Deps } from "../../env";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { closeTrace, storeLogRecords, storeSpans, traceHasSpan, traceLogIds, traceLogRecordRows, traceSpans, type LogContentOf, type SpanPromptRef, type SpanToStore, type StoredSpans } from "../../logs";
import type { TraceLogRecordRow } from "../../db/schema";
import type { RequestLogInput } from "../../logs";
import { ERROR_TYPE_STATUSES } from "../../db/schema";
import type { AttrValue, RejectedRecord, RejectedSpan, SpanInput } from "../../logs";
import { recordEvent, spanToLog, spanTree, treeRequestLogIds, type DecodedExport, type DecodedLogs } from "../../traces";
import { liveSheet, unwrap } from "../tables";
import type { WorkspaceLogs } from "../../logs";

export type MappedLog = Omit<RequestLogInput, "group_id">;

/** The prompt a log names, as a reference to resolve (a label only through the span's attributes). */
function promptRefOf(log: MappedLog, label: string | null): SpanPromptRef | null {
  const ref = { name: log.prompt_name ?? null, id: log.prompt_id ?? null, version: log.prompt_version_number ?? null, label };
  return ref.name !== null || ref.id !== null ? ref : null;
}

/**
 * The mapped log's error_type, kept to the values logs take: a span's own error type (an exception
 * class, an HTTP status) becomes the fitting one (a rate limit, quota, timeout or auth failure, else
 * PROVIDER_ERROR for a failed call), and leads the error message so it is not lost.
 */
function fitErrorType(log: MappedLog): MappedLog {
  if (!log.error_type) return log;
  const allowed = (ERROR_TYPE_STATUSES as Record<string, readonly string[]>)[log.error_type];
  if (allowed && allowed.includes(log.status)) return log;
  const raw = log.error_type;
  const message = log.error_message && log.error_message.includes(raw) ? log.error_message : `${raw}${log.error_message ? `: ${log.error_message}` : ""}`;
  const fitting = ERROR_KINDS.find(([re]) => re.test(`${raw} ${log.error_message ?? ""}`))?.[1] ?? (log.status === "ERROR" ? "PROVIDER_ERROR" : "UNKNOWN_ERROR");
  return { ...log, error_type: fitting, error_message: message.slice(0, 1024) };
}

/** What a span's own error type or message says, in the error types logs take (first match wins). */
const ERROR_KINDS: [RegExp, string][] = [
  [/rate.?limit|\b429\b|too many requests/i, "PROVIDER_RATE_LIMIT"],
  [/quota|insufficient.?credit/i, "PROVIDER_QUOTA_LIMIT"],
  [/time.?out|timed out|deadline/i, "PROVIDER_TIMEOUT"],
  [/auth|\b401\b|\b403\b|api.?key|permission/i, "PROVIDER_AUTH_ERROR"],
];

function fromSpan(span: SpanInput): Pick<SpanToStore, "log" | "prompt" | "logFromSpan"> {
  const mapped = spanToLog(span);
  if (!mapped) return { log: null, prompt: null };
  const log = fitErrorType(mapped.log);
  return { log, prompt: promptRefOf(log, mapped.promptLabel), logFromSpan: true };
}

/** A span's log content with its GenAI log records read in as the span's events (the span's own attributes winning). */
const logContentOf: LogContentOf = (span, records) => {
  const mapped = spanToLog(span, records.map(recordEvent));
  return mapped ? { input: mapped.log.input, output: mapped.log.output } : null;
};

export interface OtlpOutcome {
  rejectedSpans: number;
  errorMessage: string | null;
  /** The logs of the spans taken (made now or before): for the indexer. */
  logIds: number[];
}

/** Takes an OTLP export's spans; the answer counts every span refused, saying why. */
export async function ingestOtlp(db: Db, logs: WorkspaceLogs, auth: AuthContext, decoded: DecodedExport, closeAfter: boolean): Promise<OtlpOutcome> {
  const items: SpanToStore[] = decoded.spans.map(({ span, extras }) => ({ span, extras, ...fromSpan(span) }));
  const stored = items.length > 0 ? await storeSpans(db, logs, auth, items, { ingestId: crypto.randomUUID(), closeAfter, contentOf: logContentOf }) : null;
  const rejected: RejectedSpan[] = [...decoded.rejected, ...(stored?.rejected ?? []).map((r) => ({ traceId: r.trace_id, spanId: r.span_id, reason: `trace ${r.trace_id} is closed` }))];
  return { rejectedSpans: rejected.length, errorMessage: rejected.length > 0 ? describeRejections(rejected, "span") : null, logIds: (stored?.requestLogs ?? []).map((l) => l.id) };
}

export interface OtlpLogsOutcome {
  rejectedLogRecords: number;
  errorMessage: string | null;
}

/** Takes an OTLP logs export's records (each kept once, with its trace); the GenAI ones complete their spans' logs. */
export async function ingestOtlpLogs(logs: WorkspaceLogs, auth: AuthContext, decoded: DecodedLogs): Promise<OtlpLogsOutcome> {
  if (decoded.records.length > 0) await storeLogRecords(logs, auth, decoded.records, logContentOf);
  const rejected: RejectedRecord[] = decoded.rejected;
  return { rejectedLogRecords: rejected.length, errorMessage: rejected.length > 0 ? describeRejections(rejected, "log record") : null };
}

/** One message for OTLP's partialSuccess: the count, then each distinct reason with the items it hit (a few named by span id). */
function describeRejections(rejected: (RejectedSpan | RejectedRecord)[], noun: "span" | "log record"): string {
  const byReason = new Map<string, string[]>();
  for (const r of rejected) {
    const ids = byReason.get(r.reason) ?? [];
    if (r.spanId) ids.push(r.spanId);
    byReason.set(r.reason, ids);
  }
  const parts = [...byReason].slice(0, 5).map(([reason, ids]) => (ids.length > 0 ? `${reason} (span ${ids.slice(0, 3).join(", ")}${ids.length > 3 ? `, +${ids.length - 3}` : ""})` : reason));
  if (byReason.size > 5) parts.push(`and ${byReason.size - 5} more reasons`);
  return `${rejected.length} ${noun}${rejected.length === 1 ? "" : "s"} rejected: ${parts.join("; ")}`;
}

// ---- spans-bulk ----

export interface BulkSpan {
  name: string;
  context: { trace_id: string; span_id: string; trace_state?: string | null };
  kind: number;
  parent_id?: string | null;
  start_time: number;
  end_time: number;
  status: { status_code: number; description?: string | null };
  attributes: Record<string, AttrValue>;
  events: { name: string; timestamp?: number | null; attributes: Record<string, AttrValue> }[];
  links: unknown[];
  resource: { attributes: Record<string, AttrValue>; schema_url?: string | null };
}

/**
 * Takes the SDK's spans. A span sent with its log (`logs[i]`, validated by the route, its times
 * defaulting to the span's) makes that log; one without makes a log when its attributes describe an
 * LLM call, as an OTLP span does.
 */
export async function ingestSpansBulk(db: Db, logs: WorkspaceLogs, auth: AuthContext, body: { spans: BulkSpan[]; logs: (MappedLog | null)[]; close_after: boolean }) {
  const items: SpanToStore[] = body.spans.map((s, i) => {
    const span: SpanInput = {
      traceId: s.context.trace_id,
      spanId: s.context.span_id,
      parentSpanId: s.parent_id ?? null,
      name: s.name,
      kind: s.kind,
      startTimeMs: s.start_time,
      endTimeMs: s.end_time,
      status: { code: s.status.status_code, message: s.status.description ?? null },
      attributes: s.attributes,
      events: s.events.map((e) => ({ name: e.name, timeMs: e.timestamp ?? s.start_time, attributes: e.attributes })),
      resource: s.resource.attributes,
    };
    const extras = { links: s.links, scope: null };
    const log = body.logs[i];
    if (!log) return { span, extras, ...fromSpan(span) };
    return { span, extras, log, prompt: promptRefOf(log, null) };
  });
  const stored = await storeSpans(db, logs, auth, items, { ingestId: crypto.randomUUID(), closeAfter: body.close_after, contentOf: logContentOf });
  return bulkAnswer(stored);
}

function bulkAnswer(stored: StoredSpans) {
  const rejectedIds = stored.rejected.map((r) => r.span_id);
  return {
    success: true as const,
    spans: stored.spans.map((s) => ({ id: s.id, name: s.name, span_id: s.span_id, trace_id: s.trace_id, created: s.created })),
    request_logs: stored.requestLogs,
    ...(rejectedIds.length > 0 ? { rejected_span_ids: rejectedIds, rejected_trace_ids: stored.closedTraceIds, rejection_reason: "trace_closed" as const } : {}),
  };
}

// ---- reading and closing ----

function spanView(s: SpanRow) {
  return {
    id: `${s.traceId}-${s.spanId}`,
    trace_id: s.traceId,
    span_id: s.spanId,
    parent_id: s.parentSpanId,
    name: s.name,
    kind: s.kind,
    start_time: toIso(Math.floor(s.startTime)),
    end_time: toIso(Math.floor(s.endTime)),
    start_time_unix_ms: s.startTime,
    end_time_unix_ms: s.endTime,
    duration_ms: Math.max(0, s.endTime - s.startTime),
    status: { code: s.statusCode, message: s.statusMessage },
    attributes: s.attributes,
    events: s.events,
    links: s.links,
    resource: s.resource,
    scope: s.scope ?? null,
    request_log_id: s.requestLogId,
  };
}

function logRecordView(r: TraceLogRecordRow) {
  return {
    span_id: r.spanId,
    time: toIso(Math.floor(r.time)),
    time_unix_ms: r.time,
    observed_time: r.observedTime === null ? null : toIso(Math.floor(r.observedTime)),
    severity_number: r.severityNumber,
    severity_text: r.severityText,
    event_name: r.eventName,
    body: r.body ?? null,
    attributes: r.attributes,
    resource: r.resource,
    scope: r.scope ?? null,
    flags: r.flags,
  };
}

/** A trace answers at most this many spans (the earliest); `truncated` says when it holds more. */
export const TRACE_MAX_SPANS = 5000;
/** A trace answers at most this many log records (the earliest); `logs_truncated` says when it holds more. */
export const TRACE_MAX_LOG_RECORDS = 5000;

/** A trace's spans and log records; a trace with neither in the workspace is a 404. */
export async function getTrace(logs: WorkspaceLogs, workspaceId: number, traceId: string) {
  const [rows, records] = await Promise.all([traceSpans(logs, workspaceId, traceId, TRACE_MAX_SPANS + 1), traceLogRecordRows(logs, workspaceId, traceId, TRACE_MAX_LOG_RECORDS + 1)]);
  if (rows.length === 0 && records.length === 0) throw ApiError.notFound("trace");
  return {
    success: true as const,
    trace_id: traceId,
    spans: rows.slice(0, TRACE_MAX_SPANS).map(spanView),
    truncated: rows.length > TRACE_MAX_SPANS,
    logs: records.slice(0, TRACE_MAX_LOG_RECORDS).map(logRecordView),
    logs_truncated: records.length > TRACE_MAX_LOG_RECORDS,
  };
}

/** Closes a trace of the workspace (one with at least one span); 409 when it is closed already. */
export async function closeTraceOf(logs: WorkspaceLogs, workspaceId: number, traceId: string) {
  if (!(await traceHasSpan(logs, workspaceId, traceId))) throw ApiError.notFound("trace");
  const closed = await closeTrace(logs, workspaceId, traceId);
  if (!closed) throw new ApiError("conflict", "trace is already closed");
  const at = toIso(closed.createdAt);
  return { success: true as const, closure: { id: closed.id, workspace_id: workspaceId, trace_id: traceId, status: "closed" as const, created_at: at, updated_at: at } };
}

/** The request logs of a trace (or of a span and its direct children): none is a 404. */
export async function traceRequestLogIds(logs: WorkspaceLogs, workspaceId: number, traceId: string, spanId: string | null): Promise<number[]> {
  if (!(await traceHasSpan(logs, workspaceId, traceId))) throw ApiError.notFound("trace");
  if (spanId && !(await traceHasSpan(logs, workspaceId, traceId, spanId))) throw ApiError.notFound("span");
  const ids = await traceLogIds(logs, workspaceId, traceId, spanId);
  if (ids.length === 0) throw new ApiError("validation_error", spanId ? "span_id: the span and its children made no request logs" : "trace_id: the trace made no request logs");
  return ids;
}

/** The title of the sheet column a trace's row keeps the trace in (what evaluate() makes and reads). */
export const TRACE_COLUMN_TITLE = "Trace";

/**
 * A trace (or one span and everything under it) as a new row of a sheet: its span tree (span-tree.ts)
 * in the sheet's TEXT column titled "Trace" when it has one, the other cells empty or STALE as for
 * any new row. Another workspace's table or sheet, an unknown trace or span: 404. A tree over a
 * cell's size is the sheet's 413, and no row is added.
 */
export async function addTraceToSheet(
  deps: Pick<Deps, "db" | "sheet">,
  logs: WorkspaceLogs,
  workspaceId: number,
  target: { tableId: string; sheetId: string },
  traceId: string,
  spanId: string | null,
) {
  const { stub, access } = await liveSheet(deps, workspaceId, target.tableId, target.sheetId);
  const spans = (await traceSpans(logs, workspaceId, traceId, TRACE_MAX_SPANS + 1)).slice(0, TRACE_MAX_SPANS);
  if (spans.length === 0) throw ApiError.notFound("trace");
  if (spanId && !spans.some((x) => x.spanId === spanId)) throw ApiError.notFound("span");
  const tree = spanTree(traceId, spans, spanId);
  const { columns } = unwrap(await stub.columnsFor(access));
  const traceColumn = columns.find((c) => c.type === "TEXT" && c.title.toLowerCase() === TRACE_COLUMN_TITLE.toLowerCase());
  const added = unwrap(await stub.addRows(access, { count: 1, values: traceColumn ? [{ [traceColumn.id]: tree }] : null }));
  return { mode: spanId ? ("span" as const) : ("trace" as const), row_index: added.row_indices[0], row: added.rows[0], request_log_ids: treeRequestLogIds(tree) };
}
