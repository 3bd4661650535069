// OTLP/HTTP logs exports (ExportLogsServiceRequest), both encodings, read with the trace exports'
// machinery (otlp.ts: the OpenTelemetry project's generated protobuf code, OTLP's JSON mapping, the
// same walk over an export's items and readers of ids, times and AnyValues). Each record becomes a LogRecordInput with its identity;
// a record that breaks a rule is set aside with its reason and the rest are taken, as OTLP's partial
// success has it. An export of more than MAX_RECORDS_PER_EXPORT records is refused whole.
import type { AttrValue, LogRecordInput, RejectedRecord } from "../logs";
import { attributesOf, encodeAnswer, encodeWith, enumOf, hex, idOf, isObj, ItemRejection, list, msOf, OtlpFormatError, readExport, readItems, valueOf, type Obj, type OtlpEncoding } from "./otlp";

/** Records taken from one export at most; more is a 413 (split the export). */
export const MAX_RECORDS_PER_EXPORT = 10_000;
/** One record's body and attributes, as stored JSON, at most this many bytes; more and the record is refused. */
export const MAX_RECORD_BYTES = 256 * 1024;

/** The export holds more records than one export may (answered 413; nothing is stored). */
export class OtlpTooManyRecords extends Error {}

export interface DecodedLogs {
  records: LogRecordInput[];
  rejected: RejectedRecord[];
}

const SEVERITY_LEVELS = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"];
const SEVERITY_NUMBERS: Record<string, number> = {
  SEVERITY_NUMBER_UNSPECIFIED: 0,
  ...Object.fromEntries(SEVERITY_LEVELS.flatMap((level, i) => ["", "2", "3", "4"].map((n, j) => [`SEVERITY_NUMBER_${level}${n}`, i * 4 + j + 1]))),
};

/** Nanoseconds as exact decimal text (for the record's identity), whatever form they came in. */
function nanosText(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  if (isObj(v) && typeof v.low === "number" && typeof v.high === "number") return ((BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0)).toString();
  return "0";
}

/** A time field: epoch milliseconds, or null when unset (0). */
function timeOf(v: unknown, field: string): number | null {
  if (v === undefined || v === null) return null;
  const ms = msOf(v, field);
  return ms > 0 ? ms : null;
}

interface Pending {
  record: Omit<LogRecordInput, "key">;
  /** What the record's identity is made of. */
  identity: string;
}

function recordOf(r: Obj, resource: Record<string, AttrValue>, scope: LogRecordInput["scope"], receivedMs: number): Pending {
  const traceId = idOf(r.traceId, 16, "traceId", false);
  if (traceId === null) throw new ItemRejection("a log record without a trace id is not kept (this endpoint keeps the records of traces)");
  const spanId = idOf(r.spanId, 8, "spanId", false);
  const time = timeOf(r.timeUnixNano, "timeUnixNano");
  const observed = timeOf(r.observedTimeUnixNano, "observedTimeUnixNano");
  const attributes = attributesOf(r.attributes);
  const body = valueOf(r.body, 0);
  const size = JSON.stringify(body ?? null).length + JSON.stringify(attributes).length;
  if (size > MAX_RECORD_BYTES) throw new ItemRejection(`a log record's body and attributes take ${size} bytes, over the ${MAX_RECORD_BYTES} a record may hold`);
  const named = typeof r.eventName === "string" && r.eventName !== "" ? r.eventName : typeof attributes["event.name"] === "string" ? attributes["event.name"] : null;
  const record = {
    traceId,
    spanId,
    timeMs: time ?? observed ?? receivedMs,
    observedTimeMs: observed,
    severityNumber: enumOf(r.severityNumber, SEVERITY_NUMBERS, 24),
    severityText: typeof r.severityText === "string" && r.severityText !== "" ? r.severityText : null,
    eventName: named,
    body,
    attributes,
    resource,
    scope,
    flags: typeof r.flags === "number" && Number.isInteger(r.flags) ? r.flags >>> 0 : 0,
  };
  // The resource and scope are left out: a record is the same record whichever way it was sent.
  const identity = JSON.stringify([traceId, spanId, nanosText(r.timeUnixNano), nanosText(r.observedTimeUnixNano), record.severityNumber, record.severityText, named, body, attributes, record.flags]);
  return { record, identity };
}

async function sha256(text: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

/** Every record of an export (decoded protobuf or parsed JSON; the field names are the same). */
async function recordsOf(request: unknown, receivedMs: number): Promise<DecodedLogs> {
  if (!isObj(request)) throw new OtlpFormatError("the body is not an ExportLogsServiceRequest object");
  const total = list(request.resourceLogs)
    .filter(isObj)
    .reduce((n, rl) => n + list(rl.scopeLogs).filter(isObj).reduce((m, sl) => m + list(sl.logRecords).length, 0), 0);
  if (total > MAX_RECORDS_PER_EXPORT) throw new OtlpTooManyRecords(`the export holds ${total} log records, over the ${MAX_RECORDS_PER_EXPORT} one export may: send them in smaller exports`);
  const { items: pending, rejected } = readItems(request.resourceLogs, "scopeLogs", "logRecords", "a log record", (r, resource, scope) => recordOf(r, resource, scope, receivedMs));
  // Records alike in every field (two identical messages of one call, emitted in the same instant) are
  // told apart by their place among their likes, so an export sent again maps onto the same keys.
  const seen = new Map<string, number>();
  const records: LogRecordInput[] = [];
  for (const p of pending) {
    const hash = await sha256(p.identity);
    const nth = seen.get(hash) ?? 0;
    seen.set(hash, nth + 1);
    records.push({ ...p.record, key: nth === 0 ? hash : `${hash}:${nth}` });
  }
  return { records, rejected };
}

/**
 * Decodes a logs export body (already decompressed); `receivedMs` dates records that carry no time.
 * Throws OtlpFormatError when the body is not an export, OtlpTooManyRecords when it holds too many.
 */
export async function decodeLogsExport(body: Uint8Array, encoding: OtlpEncoding, receivedMs: number): Promise<DecodedLogs> {
  return recordsOf(await readExport(body, encoding, (c) => c.logs.v1.ExportLogsServiceRequest, "ExportLogsServiceRequest"), receivedMs);
}

/** The ExportLogsServiceResponse: partialSuccess only when records were rejected. */
export function encodeLogsResponse(encoding: OtlpEncoding, rejectedRecords: number, errorMessage: string | null): Promise<Uint8Array | Obj> {
  return encodeAnswer(encoding, (c) => c.logs.v1.ExportLogsServiceResponse, "rejectedLogRecords", rejectedRecords, errorMessage);
}

/** Encodes a logs export request (for tests: what an exporter sends). */
export function encodeLogsRequest(request: Obj): Promise<Uint8Array> {
  return encodeWith((c) => c.logs.v1.ExportLogsServiceRequest, request);
}
