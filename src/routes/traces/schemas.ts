// Traces: the spans-bulk body (the SDK's tracing exporter's shape), trace ids, and the answers.
import { z } from "@hono/zod-openapi";
import { Uuid } from "../../lib/schemas";
import { depthRule, MAX_ATTRIBUTE_DEPTH, tooDeepAt } from "../../lib/json-depth";

const HEX = /^[0-9a-f]+$/;
/** A trace or span id: OpenTelemetry's hex ids (any case, kept lowercase), or another id of up to 64 safe characters. */
const Id = (what: string) =>
  z
    .string({ error: `must be a ${what} id string` })
    .min(1, "must not be empty")
    .max(64, "must be at most 64 characters")
    .regex(/^[0-9A-Za-z._:-]+$/, "may hold only letters, digits and . _ : -")
    .transform((v) => (HEX.test(v.toLowerCase()) ? v.toLowerCase() : v));

export const TraceIdParam = z.object({
  trace_id: Id("trace").openapi({ param: { name: "trace_id", in: "path" }, example: "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6" }),
});

const KINDS = { "SpanKind.INTERNAL": 1, "SpanKind.SERVER": 2, "SpanKind.CLIENT": 3, "SpanKind.PRODUCER": 4, "SpanKind.CONSUMER": 5 } as const;
const STATUS_CODES = { "StatusCode.UNSET": 0, "StatusCode.OK": 1, "StatusCode.ERROR": 2 } as const;

/** Nanoseconds since the epoch, as an integer or its decimal digits (the SDK sends strings), to epoch milliseconds. */
const Nanos = z.union([z.int().min(0), z.string().regex(/^\d{1,20}$/, "must be nanoseconds since the epoch")], { error: "must be nanoseconds since the epoch" }).transform((v) =>
  typeof v === "string" ? Number(BigInt(v) / 1000n) / 1000 : v / 1e6,
);

/** Free-form attributes: each value nests at most MAX_ATTRIBUTE_DEPTH levels, the rule OTLP's attribute values follow. */
const Attributes = z
  .record(z.string(), z.any())
  .superRefine((attrs, ctx) => {
    for (const [key, value] of Object.entries(attrs)) {
      const at = tooDeepAt(value, MAX_ATTRIBUTE_DEPTH);
      if (at) ctx.addIssue({ code: "custom", path: [key, ...at], message: `an attribute value ${depthRule(MAX_ATTRIBUTE_DEPTH)}, as on /v1/traces` });
    }
  })
  .default({});

export const BulkSpanSchema = z
  .object({
    name: z.string().max(1024, "must be at most 1024 characters"),
    context: z.object({ trace_id: Id("trace"), span_id: Id("span"), trace_state: z.string().nullish() }),
    kind: z
      .union([z.enum(Object.keys(KINDS) as [keyof typeof KINDS]), z.int().min(0).max(5)], { error: `must be one of ${Object.keys(KINDS).join(", ")}` })
      .transform((k) => (typeof k === "number" ? k : KINDS[k])),
    parent_id: Id("span").nullish(),
    start_time: Nanos,
    end_time: Nanos,
    status: z.object({
      status_code: z
        .union([z.enum(Object.keys(STATUS_CODES) as [keyof typeof STATUS_CODES]), z.int().min(0).max(2)], { error: `must be one of ${Object.keys(STATUS_CODES).join(", ")}` })
        .transform((k) => (typeof k === "number" ? k : STATUS_CODES[k])),
      description: z.string().nullish(),
    }),
    attributes: Attributes,
    events: z
      .array(z.object({ name: z.string(), timestamp: Nanos.nullish(), attributes: Attributes }))
      .max(1000, "must have at most 1000 items")
      .default([]),
    links: z.array(z.unknown()).max(1000, "must have at most 1000 items").default([]),
    resource: z.object({ attributes: Attributes, schema_url: z.string().nullish() }).default({ attributes: {} }),
    log_request: z.record(z.string(), z.unknown()).nullish().openapi({
      description: "A request log to make with the span (the fields of POST /log-request); its request times default to the span's.",
    }),
  })
  .superRefine((s, ctx) => {
    if (s.end_time < s.start_time) ctx.addIssue({ code: "custom", path: ["end_time"], message: "must not be before start_time" });
    if (s.parent_id != null && s.parent_id === s.context.span_id) ctx.addIssue({ code: "custom", path: ["parent_id"], message: "must not be the span's own id" });
  });

export const SPANS_PER_REQUEST = 1000;

export const SpansBulkBody = z
  .object({
    spans: z.array(BulkSpanSchema).min(1, "must have at least 1 item").max(SPANS_PER_REQUEST, `must have at most ${SPANS_PER_REQUEST} items`),
    close_after: z.boolean().default(false),
  })
  .openapi("CreateSpansBulk");

export const SpansBulkResponse = z
  .object({
    success: z.literal(true),
    spans: z.array(z.object({ id: z.string(), name: z.string(), span_id: z.string(), trace_id: z.string(), created: z.boolean() })),
    request_logs: z.array(z.object({ id: z.int(), span_id: z.string(), trace_id: z.string() })),
    rejected_span_ids: z.array(z.string()).optional(),
    rejected_trace_ids: z.array(z.string()).optional(),
    rejection_reason: z.literal("trace_closed").optional(),
  })
  .openapi("CreateSpansBulkResponse");

export const SpanView = z
  .object({
    id: z.string(),
    trace_id: z.string(),
    span_id: z.string(),
    parent_id: z.string().nullable(),
    name: z.string(),
    kind: z.int(),
    start_time: z.string(),
    end_time: z.string(),
    start_time_unix_ms: z.number(),
    end_time_unix_ms: z.number(),
    duration_ms: z.number(),
    status: z.object({ code: z.int(), message: z.string().nullable() }),
    attributes: z.record(z.string(), z.unknown()),
    events: z.array(z.unknown()),
    links: z.array(z.unknown()),
    resource: z.record(z.string(), z.unknown()),
    scope: z.object({ name: z.string(), version: z.string().nullable() }).nullable(),
    request_log_id: z.int().nullable(),
  })
  .openapi("TraceSpan");

export const LogRecordView = z
  .object({
    span_id: z.string().nullable().openapi({ description: "The span the record was emitted in; null for a record of the trace outside any span." }),
    time: z.string().openapi({ description: "The record's time (ISO 8601), else its observed time, else when it was received." }),
    time_unix_ms: z.number(),
    observed_time: z.string().nullable(),
    severity_number: z.int().openapi({ description: "OTLP SeverityNumber: 0 unspecified, 1-4 trace, 5-8 debug, 9-12 info, 13-16 warn, 17-20 error, 21-24 fatal." }),
    severity_text: z.string().nullable(),
    event_name: z.string().nullable().openapi({ description: "The LogRecord's event_name, else its `event.name` attribute (gen_ai.user.message, gen_ai.choice, …)." }),
    body: z.unknown().openapi({ description: "The body, an AnyValue unwrapped: a string, number, boolean, list or map (null when absent)." }),
    attributes: z.record(z.string(), z.unknown()),
    resource: z.record(z.string(), z.unknown()),
    scope: z.object({ name: z.string(), version: z.string().nullable() }).nullable(),
    flags: z.int(),
  })
  .openapi("TraceLogRecord");

export const TraceResponse = z
  .object({
    success: z.literal(true),
    trace_id: z.string(),
    spans: z.array(SpanView),
    truncated: z.boolean(),
    logs: z.array(LogRecordView).openapi({ description: "The trace's OTLP log records (POST /v1/logs), by time then arrival, each naming its span." }),
    logs_truncated: z.boolean(),
  })
  .openapi("TraceDetailResponse");

export const CloseResponse = z
  .object({
    success: z.literal(true),
    closure: z.object({ id: z.string(), workspace_id: z.int(), trace_id: z.string(), status: z.literal("closed"), created_at: z.string(), updated_at: z.string() }),
  })
  .openapi("TraceClosure");

export const AddTraceBody = z
  .object({
    dataset_group_id: z.int({ error: "must be a whole number" }).min(1, "must be >= 1").nullish().openapi({ description: "The dataset group whose draft gets the trace's request logs." }),
    sheet_id: Uuid.nullish().openapi({ type: "string", format: "uuid", description: "Instead of a dataset group: the sheet (of `smart_table_id`) that gets one row made from the trace." }),
    smart_table_id: Uuid.nullish().openapi({ type: "string", format: "uuid", description: "The table of `sheet_id`." }),
    trace_id: Id("trace"),
    span_id: Id("span").nullish(),
    metadata: z
      .record(z.string(), z.unknown(), { error: "must be an object" })
      .nullish()
      .openapi({ description: "Taken for the SDKs (evaluate() sends {eval_name}); not stored." }),
  })
  .superRefine((b, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message, input: undefined });
    if (b.dataset_group_id != null && b.sheet_id != null) issue("sheet_id", "give dataset_group_id or sheet_id, not both");
    else if (b.dataset_group_id == null && b.sheet_id == null) issue("dataset_group_id", "is required (or sheet_id with smart_table_id)");
    else if (b.sheet_id != null && b.smart_table_id == null) issue("smart_table_id", "is required with sheet_id");
  })
  .openapi("AddTraceToDatasetRequest");

export const AddTraceResponse = z
  .object({ success: z.literal(true), draft_dataset_id: z.int(), mode: z.enum(["trace", "span"]), request_log_ids: z.array(z.int()) })
  .openapi("AddTraceToDatasetResponse");

export const AddTraceToSheetResponse = z
  .object({
    success: z.literal(true),
    mode: z.enum(["trace", "span"]),
    row_index: z.int(),
    row: z.object({ row_index: z.int(), cells: z.record(z.string(), z.unknown()) }),
    request_log_ids: z.array(z.int()),
  })
  .openapi("AddTraceToSheetResponse");

/** One trace of POST /api/public/v2/traces/search (kept here so the console can take its type). */
export const TraceSummary = z
  .object({
    trace_id: z.string(),
    trace_name: z.string().nullable().openapi({ description: "The root span's name (the earliest span without a parent); null while the root has not arrived." }),
    trace_start: z.string().openapi({ description: "The first span's start (ISO 8601)." }),
    trace_end: z.string().openapi({ description: "The last span's end (ISO 8601)." }),
    trace_duration_ms: z.number(),
    trace_status: z.enum(["ok", "error"]).openapi({ description: "error when any span's status is error." }),
    trace_span_count: z.int(),
    trace_llm_calls: z.int().openapi({ description: "Spans that made a request log (LLM calls)." }),
    trace_error_spans: z.int(),
    trace_input_tokens: z.int(),
    trace_output_tokens: z.int(),
    trace_total_tokens: z.int(),
    trace_total_cost_usd: z.number(),
    trace_models_used: z.array(z.string()),
  })
  .openapi("TraceSummary", { description: "A trace's values, named as the filter fields that read them; the spans themselves: GET /api/public/v2/traces/{trace_id}." });
