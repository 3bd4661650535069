// What the ingestion paths (OTLP and spans-bulk) hand the log store: a span, and an OTLP log record, ids in lowercase hex, times in
// epoch milliseconds, attribute values unwrapped from OTLP's AnyValue.
export type AttrValue = string | number | boolean | null | AttrValue[] | { [k: string]: AttrValue };

export interface SpanEvent {
  name: string;
  timeMs: number;
  attributes: Record<string, AttrValue>;
}

export interface SpanInput {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startTimeMs: number;
  endTimeMs: number;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string | null };
  attributes: Record<string, AttrValue>;
  events: SpanEvent[];
  /** Resource attributes of the export the span came in. */
  resource: Record<string, AttrValue>;
}

/** Stored beside a span, not read by the mapping to logs. */
export interface SpanExtras {
  links: unknown[];
  scope: { name: string; version: string | null } | null;
}

/** A span that could not be taken, and why (said per span in the answers). */
export interface RejectedSpan {
  traceId: string | null;
  spanId: string | null;
  reason: string;
}

/** An OTLP log record as the store keeps it. */
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

/** A record that could not be taken, and why (said in the export's partial success): the same shape as a span's. */
export type RejectedRecord = RejectedSpan;
