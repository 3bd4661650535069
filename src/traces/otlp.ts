// OTLP/HTTP trace exports, both encodings: protobuf is decoded by the OpenTelemetry project's own code
// generated from the official OTLP .proto files (protobufjs, static code: no eval, which Workers
// forbid); JSON follows OTLP's JSON mapping (hex ids, enums as integers, 64-bit integers as strings).
// Both become the same SpanInput list; a span that breaks a rule is set aside with its reason and the
// rest are taken, as OTLP's partial success has it. The walk over an export's items (readItems) and
// the readers of ids, times and AnyValues here are shared with the logs exports (otlp-logs.ts).
import type { Writer } from "protobufjs/minimal";
import type { AttrValue, RejectedSpan, SpanExtras, SpanInput } from "../logs";
import { MAX_ATTRIBUTE_DEPTH } from "../lib/json-depth";

// The generated module's typings name only protobufjs's Root; these are the messages used here.
export interface Codec {
  decode(body: Uint8Array): unknown;
  encode(message: unknown, writer?: Writer): { finish(): Uint8Array };
  fromObject(object: unknown): unknown;
}
export interface Collectors {
  trace: { v1: { ExportTraceServiceRequest: Codec; ExportTraceServiceResponse: Codec } };
  logs: { v1: { ExportLogsServiceRequest: Codec; ExportLogsServiceResponse: Codec } };
}
type GeneratedRoot = { opentelemetry: { proto: { collector: Collectors } } };

let collectors: Collectors | null = null;
let writerClass: (new () => Writer) | null = null;

/**
 * The generated code (about 850 KB) is loaded on first use: nothing but a protobuf export needs it.
 * The package is held at the last release whose module still holds the logs service beside the trace
 * one (docs/decisions.md).
 */
export async function protobuf(): Promise<Collectors> {
  if (!collectors) {
    const mod = (await import("@opentelemetry/otlp-transformer/build/src/generated/root")) as unknown as GeneratedRoot & { default?: GeneratedRoot };
    collectors = (mod.default ?? mod).opentelemetry.proto.collector;
    writerClass = (await import("protobufjs/minimal")).Writer;
  }
  return collectors;
}

/**
 * Encodes with protobufjs's plain writer: the one it picks where a Buffer exists hands strings of 40
 * bytes or more to Buffer#utf8Write, which workerd's Buffer refuses (an answer naming why spans were
 * refused would fail).
 */
function encodeMessage(codec: Codec, message: unknown): Uint8Array {
  return codec.encode(message, new writerClass!()).finish();
}

export type OtlpEncoding = "protobuf" | "json";

/** The whole body is not an export (it is answered 400; nothing is stored). */
export class OtlpFormatError extends Error {}

export interface DecodedSpan {
  span: SpanInput;
  extras: SpanExtras;
}

export interface DecodedExport {
  spans: DecodedSpan[];
  rejected: RejectedSpan[];
}

/** Attribute values nest at most MAX_ATTRIBUTE_DEPTH deep (a kvlist in an array in a kvlist…); deeper, the span is refused. */
export { MAX_ATTRIBUTE_DEPTH };
/** One span's attributes, events and links, as stored JSON, at most this many bytes. */
export const MAX_SPAN_BYTES = 512 * 1024;

const KINDS: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
const STATUS_CODES: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const own = (o: Obj, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** One item of an export (a span, a log record) breaks a rule: it is set aside with this reason. */
export class ItemRejection extends Error {}

export function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

function base64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** An id of `size` bytes: bytes (protobuf) or hex digits (JSON); all zeros is no id. */
export function idOf(value: unknown, size: number, field: string, required: boolean): string | null {
  let id: string | null = null;
  if (value instanceof Uint8Array) {
    if (value.length === 0) id = null;
    else if (value.length !== size) throw new ItemRejection(`${field} must be ${size} bytes, not ${value.length}`);
    else id = hex(value);
  } else if (typeof value === "string") {
    if (value === "") id = null;
    else if (!new RegExp(`^[0-9a-fA-F]{${size * 2}}$`).test(value)) throw new ItemRejection(`${field} must be ${size * 2} hex digits`);
    else id = value.toLowerCase();
  } else if (value !== undefined && value !== null) {
    throw new ItemRejection(`${field} must be ${size * 2} hex digits`);
  }
  if (id !== null && /^0+$/.test(id)) id = null;
  if (required && id === null) throw new ItemRejection(`${field} is missing or all zeros`);
  return id;
}

/** Nanoseconds since the epoch (a number, a Long-like object, or a decimal string) as epoch milliseconds. */
export function msOf(value: unknown, field: string): number {
  if (typeof value === "string" && /^\d{1,20}$/.test(value)) {
    const ns = BigInt(value);
    return Number(ns / 1000n) / 1000;
  }
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value / 1e6;
  if (isObj(value) && typeof value.low === "number" && typeof value.high === "number") {
    return ((value.high >>> 0) * 4294967296 + (value.low >>> 0)) / 1e6;
  }
  throw new ItemRejection(`${field} must be a count of nanoseconds since the epoch`);
}

/** An integer attribute: a number while it is exact, else its decimal digits. */
function intOf(value: unknown): AttrValue {
  if (typeof value === "number") return value;
  if (typeof value === "string" && /^-?\d+$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  if (isObj(value) && typeof value.low === "number" && typeof value.high === "number") {
    const big = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
    const signed = value.unsigned === true ? big : BigInt.asIntN(64, big);
    const n = Number(signed);
    return Number.isSafeInteger(n) ? n : signed.toString();
  }
  return null;
}

/** OTLP's AnyValue, unwrapped. */
export function valueOf(v: unknown, depth: number): AttrValue {
  if (depth > MAX_ATTRIBUTE_DEPTH) throw new ItemRejection(`an attribute value nests deeper than ${MAX_ATTRIBUTE_DEPTH} levels`);
  if (!isObj(v)) return null;
  if (own(v, "stringValue")) return typeof v.stringValue === "string" ? v.stringValue : String(v.stringValue);
  if (own(v, "boolValue")) return Boolean(v.boolValue);
  if (own(v, "intValue")) return intOf(v.intValue);
  if (own(v, "doubleValue")) {
    const d = typeof v.doubleValue === "string" ? Number(v.doubleValue) : v.doubleValue;
    // JSON has no NaN or Infinity; OTLP's JSON mapping writes them as strings.
    return typeof d === "number" && Number.isFinite(d) ? d : String(v.doubleValue);
  }
  if (own(v, "arrayValue")) return list(isObj(v.arrayValue) ? v.arrayValue.values : null).map((x) => valueOf(x, depth + 1));
  if (own(v, "kvlistValue")) return attributesOf(isObj(v.kvlistValue) ? v.kvlistValue.values : null, depth + 1);
  if (own(v, "bytesValue")) return v.bytesValue instanceof Uint8Array ? base64(v.bytesValue) : typeof v.bytesValue === "string" ? v.bytesValue : null;
  return null;
}

export function attributesOf(kvs: unknown, depth = 0): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of list(kvs)) {
    if (!isObj(kv) || typeof kv.key !== "string") continue;
    out[kv.key] = valueOf(kv.value, depth);
  }
  return out;
}

export function enumOf(value: unknown, names: Record<string, number>, max: number): number {
  if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= max) return value;
  if (typeof value === "string" && value in names) return names[value];
  return 0;
}

function spanOf(s: Obj, resource: Record<string, AttrValue>, scope: SpanExtras["scope"]): DecodedSpan {
  const traceId = idOf(s.traceId, 16, "traceId", true)!;
  const spanId = idOf(s.spanId, 8, "spanId", true)!;
  const parentSpanId = idOf(s.parentSpanId, 8, "parentSpanId", false);
  if (parentSpanId === spanId) throw new ItemRejection("parentSpanId is the span's own id");
  const startTimeMs = msOf(s.startTimeUnixNano, "startTimeUnixNano");
  const endTimeMs = msOf(s.endTimeUnixNano, "endTimeUnixNano");
  if (endTimeMs < startTimeMs) throw new ItemRejection("endTimeUnixNano is before startTimeUnixNano");
  const status = isObj(s.status) ? s.status : {};
  const span: SpanInput = {
    traceId,
    spanId,
    parentSpanId,
    name: typeof s.name === "string" ? s.name : "",
    kind: enumOf(s.kind, KINDS, 5),
    startTimeMs,
    endTimeMs,
    status: { code: enumOf(status.code, STATUS_CODES, 2), message: typeof status.message === "string" && status.message !== "" ? status.message : null },
    attributes: attributesOf(s.attributes),
    events: list(s.events)
      .filter(isObj)
      .map((e) => ({ name: typeof e.name === "string" ? e.name : "", timeMs: msOf(e.timeUnixNano ?? "0", "events.timeUnixNano"), attributes: attributesOf(e.attributes) })),
    resource,
  };
  const links = list(s.links)
    .filter(isObj)
    .map((l) => ({ trace_id: idOf(l.traceId, 16, "links.traceId", false), span_id: idOf(l.spanId, 8, "links.spanId", false), attributes: attributesOf(l.attributes) }));
  const size = JSON.stringify(span.attributes).length + JSON.stringify(span.events).length + JSON.stringify(links).length;
  if (size > MAX_SPAN_BYTES) throw new ItemRejection(`the span's attributes, events and links take ${size} bytes, over the ${MAX_SPAN_BYTES} a span may hold`);
  return { span, extras: { links, scope } };
}

/** An item's id as it came (hex text or bytes), to name a refused item; null when there is none. */
const sentId = (v: unknown) => (typeof v === "string" && v !== "" ? v : v instanceof Uint8Array && v.length > 0 ? hex(v) : null);

/**
 * The items of an export (spans, log records), walked the same way for both: `groups` the export's
 * resourceSpans / resourceLogs, each holding scopes under `scopesKey`, each holding items under
 * `itemsKey`. Each item is `read` with its resource's attributes and its scope; an item that breaks a
 * rule (ItemRejection), or every item under a resource that does, is set aside with its reason
 * (`noun` names an item that is not an object) and the rest are taken.
 */
export function readItems<T>(
  groups: unknown,
  scopesKey: string,
  itemsKey: string,
  noun: string,
  read: (item: Obj, resource: Record<string, AttrValue>, scope: SpanExtras["scope"]) => T,
): { items: T[]; rejected: RejectedSpan[] } {
  const items: T[] = [];
  const rejected: RejectedSpan[] = [];
  for (const group of list(groups).filter(isObj)) {
    const scopes = list(group[scopesKey]).filter(isObj);
    let resource: Record<string, AttrValue>;
    try {
      resource = attributesOf(isObj(group.resource) ? group.resource.attributes : null);
    } catch (err) {
      if (!(err instanceof ItemRejection)) throw err;
      for (const sc of scopes) for (const _ of list(sc[itemsKey])) rejected.push({ traceId: null, spanId: null, reason: `resource: ${err.message}` });
      continue;
    }
    for (const sc of scopes) {
      const s = isObj(sc.scope) ? sc.scope : null;
      const scope = s && typeof s.name === "string" ? { name: s.name, version: typeof s.version === "string" && s.version !== "" ? s.version : null } : null;
      for (const item of list(sc[itemsKey])) {
        if (!isObj(item)) {
          rejected.push({ traceId: null, spanId: null, reason: `${noun} is not an object` });
          continue;
        }
        try {
          items.push(read(item, resource, scope));
        } catch (err) {
          if (!(err instanceof ItemRejection)) throw err;
          rejected.push({ traceId: sentId(item.traceId), spanId: sentId(item.spanId), reason: err.message });
        }
      }
    }
  }
  return { items, rejected };
}

/** Every span of an export (decoded protobuf or parsed JSON; the field names are the same). */
function spansOf(request: unknown): DecodedExport {
  if (!isObj(request)) throw new OtlpFormatError("the body is not an ExportTraceServiceRequest object");
  const { items, rejected } = readItems(request.resourceSpans, "scopeSpans", "spans", "a span", spanOf);
  return { spans: items, rejected };
}

/**
 * An export body (already decompressed) as the plain object both encodings give: protobuf decoded by
 * `codec` (named `message` in errors), JSON parsed. Throws OtlpFormatError when the body is not one.
 */
export async function readExport(body: Uint8Array, encoding: OtlpEncoding, codec: (c: Collectors) => Codec, message: string): Promise<unknown> {
  if (encoding === "protobuf") {
    const c = codec(await protobuf());
    try {
      return c.decode(body);
    } catch (err) {
      throw new OtlpFormatError(`the body is not a protobuf ${message}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
  } catch (err) {
    throw new OtlpFormatError(`the body is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Decodes a trace export body (already decompressed). Throws OtlpFormatError when the body is not one. */
export async function decodeExport(body: Uint8Array, encoding: OtlpEncoding): Promise<DecodedExport> {
  return spansOf(await readExport(body, encoding, (c) => c.trace.v1.ExportTraceServiceRequest, "ExportTraceServiceRequest"));
}

/**
 * An export's answer in the request's encoding: partialSuccess (its count under `countField`, e.g.
 * rejectedSpans) only when items were rejected; JSON writes the 64-bit count as a string.
 */
export async function encodeAnswer(encoding: OtlpEncoding, codec: (c: Collectors) => Codec, countField: string, rejected: number, errorMessage: string | null): Promise<Uint8Array | Obj> {
  const partialSuccess = rejected > 0 ? { [countField]: rejected, errorMessage: errorMessage ?? "" } : null;
  if (encoding === "json") return { partialSuccess: partialSuccess ? { [countField]: String(rejected), errorMessage: partialSuccess.errorMessage } : null };
  return encodeMessage(codec(await protobuf()), partialSuccess ? { partialSuccess } : {});
}

/** The ExportTraceServiceResponse: partialSuccess only when spans were rejected. */
export function encodeResponse(encoding: OtlpEncoding, rejectedSpans: number, errorMessage: string | null): Promise<Uint8Array | Obj> {
  return encodeAnswer(encoding, (c) => c.trace.v1.ExportTraceServiceResponse, "rejectedSpans", rejectedSpans, errorMessage);
}

/** Encodes a request with `codec` (for tests and the bench: what an exporter sends). */
export async function encodeWith(codec: (c: Collectors) => Codec, request: Obj): Promise<Uint8Array> {
  const c = codec(await protobuf());
  return encodeMessage(c, c.fromObject(request));
}

/** Encodes a trace export request (for tests and the bench: what an exporter sends). */
export function encodeRequest(request: Obj): Promise<Uint8Array> {
  return encodeWith((c) => c.trace.v1.ExportTraceServiceRequest, request);
}
