// Traces: spans as received (OTLP or spans-bulk), one row per (workspace, trace id, span id); the log
// records of traces (OTLP logs), one row per (workspace, trace id, record identity); and the traces
// closed to further spans.
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";

export const spans = sqliteTable(
  "spans",
  {
    workspaceId: integer("workspace_id").notNull(),
    /** 32 lowercase hex digits. */
    traceId: text("trace_id").notNull(),
    /** 16 lowercase hex digits. */
    spanId: text("span_id").notNull(),
    parentSpanId: text("parent_span_id"),
    name: text("name").notNull(),
    /** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
    kind: integer("kind").notNull().default(0),
    /** Epoch milliseconds (fractional: span times are nanoseconds). */
    startTime: real("start_time").notNull(),
    endTime: real("end_time").notNull(),
    /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
    statusCode: integer("status_code").notNull().default(0),
    statusMessage: text("status_message"),
    attributes: text("attributes", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    events: text("events", { mode: "json" }).notNull().$type<unknown[]>(),
    links: text("links", { mode: "json" }).notNull().$type<unknown[]>(),
    resource: text("resource", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    scope: text("scope", { mode: "json" }).$type<{ name: string; version: string | null } | null>(),
    /** The request log the span made (an LLM span, or a span sent with log_request). */
    requestLogId: integer("request_log_id"),
    /**
     * The span's log was made from the span itself (its GenAI attributes and events), so the span's
     * log records complete it; not a log sent with log_request nor one logged earlier and linked.
     */
    logFromSpan: integer("log_from_span", { mode: "boolean" }).notNull().default(false),
    /**
     * For a log made from the span: how many values each redaction detector replaced in what the span
     * itself gave the log (its log records' findings are added when they join it). NULL: none.
     */
    redactions: text("redactions", { mode: "json" }).$type<Record<string, number>>(),
    /** The ingestion that stored the span (an id per request): a span sent again keeps its first one. */
    ingestId: text("ingest_id").notNull(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.traceId, t.spanId] }),
    index("spans_workspace_start").on(t.workspaceId, t.startTime),
    // A span's children as one index seek: trace analytics walks parent chains (a trace's depth) one
    // level at a time, and add-trace reads a span's direct children.
    index("spans_workspace_parent").on(t.workspaceId, t.traceId, t.parentSpanId),
    // An ingestion's write finds its own spans by ingest id (the log links, the facet guard): without
    // this index each of those statements read every span of the workspace.
    index("spans_workspace_ingest").on(t.workspaceId, t.ingestId),
  ],
);

export type SpanRow = typeof spans.$inferSelect;

/** OTLP log records of traces: kept with their trace (in the log database its spans are in). */
export const traceLogRecords = sqliteTable(
  "trace_log_records",
  {
    /** Arrival order: records of one instant keep the order they were sent in. */
    id: integer("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull(),
    /** 32 lowercase hex digits. */
    traceId: text("trace_id").notNull(),
    /** 16 lowercase hex digits; null for a record of the trace outside any span. */
    spanId: text("span_id"),
    /** The record's identity (a hash of its fields, src/traces/otlp-logs.ts): sent again, it is stored once. */
    recordKey: text("record_key").notNull(),
    /** Epoch milliseconds (fractional): the record's time, else its observed time, else its arrival. */
    time: real("time").notNull(),
    observedTime: real("observed_time"),
    /** OTLP SeverityNumber: 0 unspecified, 1-4 trace, 5-8 debug, 9-12 info, 13-16 warn, 17-20 error, 21-24 fatal. */
    severityNumber: integer("severity_number").notNull().default(0),
    severityText: text("severity_text"),
    /** The LogRecord's event_name, else its event.name attribute. */
    eventName: text("event_name"),
    body: text("body", { mode: "json" }).$type<unknown>(),
    attributes: text("attributes", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    resource: text("resource", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    scope: text("scope", { mode: "json" }).$type<{ name: string; version: string | null } | null>(),
    flags: integer("flags").notNull().default(0),
    /** How many values each redaction detector replaced in the record (NULL: none); added to its span's log when it joins it. */
    redactions: text("redactions", { mode: "json" }).$type<Record<string, number>>(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("trace_log_records_key").on(t.workspaceId, t.traceId, t.recordKey),
    // A span's records in time order (the join to its log), a trace's all (its read).
    index("trace_log_records_span").on(t.workspaceId, t.traceId, t.spanId, t.time),
  ],
);

export type TraceLogRecordRow = typeof traceLogRecords.$inferSelect;

export const traceClosures = sqliteTable(
  "trace_closures",
  {
    id: text("id").notNull(),
    workspaceId: integer("workspace_id").notNull(),
    traceId: text("trace_id").notNull(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.traceId] })],
);
