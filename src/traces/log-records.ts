// Pure: an OTLP log record as the store keeps it, and the records of a span read as that span's own
// events, so the GenAI instrumentations that put message content in log records (event name in the
// LogRecord's event_name, or its `event.name` attribute; body an AnyValue map) complete the span's
// request log through the same readers as span events (span-messages.ts).
import type { AttrValue, SpanEvent } from "./span-input";

export interface LogRecordInput {
  /** 32 lowercase hex digits: a record is kept with its trace. */
  traceId: string;
  /** 16 lowercase hex digits; null for a record of the trace outside any span. */
  spanId: string | null;
  /** Epoch milliseconds: the record's time, else its observed time, else when it was received. */
  timeMs: number;
  observedTimeMs: number | null;
  /** OTLP SeverityNumber, 0 (unspecified) to 24. */
  severityNumber: number;
  severityText: string | null;
  /** The LogRecord's event_name, else its `event.name` attribute. */
  eventName: string | null;
  body: AttrValue;
  attributes: Record<string, AttrValue>;
  /** Resource attributes of the export the record came in. */
  resource: Record<string, AttrValue>;
  scope: { name: string; version: string | null } | null;
  flags: number;
  /** The record's identity (a hash of its fields): sent again, it is the same record. */
  key: string;
}

/** A record that could not be taken, and why (said in the export's partial success). */
export interface RejectedRecord {
  traceId: string | null;
  spanId: string | null;
  reason: string;
}

type Obj = Record<string, AttrValue>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The fields a body carries, read as event attributes: a map as it is; JSON text of an object parsed; other text as `content`. */
function bodyFields(body: AttrValue): Obj {
  if (isObj(body)) return body;
  if (typeof body !== "string") return {};
  if (/^\s*\{/.test(body)) {
    try {
      const parsed: unknown = JSON.parse(body);
      if (isObj(parsed)) return parsed;
    } catch {
      // Not JSON: the text is the content.
    }
  }
  return { content: body };
}

/** A stored record as the span event it stands for: its name, its time, its attributes with its body's fields over them. */
export function recordEvent(r: Pick<LogRecordInput, "eventName" | "timeMs" | "body" | "attributes">): SpanEvent {
  return { name: r.eventName ?? "", timeMs: r.timeMs, attributes: { ...(isObj(r.attributes) ? r.attributes : {}), ...bodyFields(r.body) } };
}
