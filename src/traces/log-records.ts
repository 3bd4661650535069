// Pure: the log records of a span (their shape, LogRecordInput, is the store's: logs/span-input.ts)
// read as that span's own events, so the GenAI instrumentations that put message content in log records (event name in the
// LogRecord's event_name, or its `event.name` attribute; body an AnyValue map) complete the span's
// request log through the same readers as span events (span-mapping.ts).
import type { AttrValue, LogRecordInput, SpanEvent } from "../logs";

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
