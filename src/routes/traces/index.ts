// Traces: OTLP/HTTP ingestion (POST /v1/traces, and the log records of traces: POST /v1/logs in
// otlp-logs.ts), the SDK's spans (POST /spans-bulk), a trace read back whole, closing a trace, a
// trace's request logs into a draft dataset, custom charts over traces (analytics.ts) and the search
// over traces (search.ts).
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute, defineStreamingRoute, type StreamingRouteOptions } from "../../http/openapi";
import { indexAfterAnswer } from "../../http/after-answer";
import { ApiError } from "../../lib/errors";
import { QueryBool, readQueryBool } from "../../lib/query";
import { validationError } from "../../lib/validation";
import { addRequestLog } from "../../services/datasets";
import { addTraceToSheet, closeTraceOf, getTrace, ingestOtlp, ingestSpansBulk, TRACE_MAX_LOG_RECORDS, TRACE_MAX_SPANS, traceRequestLogIds, type MappedLog } from "../../services/ingest";
import { decodeExport, encodeResponse, MAX_ATTRIBUTE_DEPTH, MAX_SPAN_BYTES } from "../../traces";
import { otlpAnswer, otlpRequestBody, otlpResponses, readOtlpExport } from "./otlp-body";
import { LogRequestBody } from "../log-request/schemas";
import { registerTraceAnalyticsRoutes } from "./analytics";
import { registerOtlpLogsRoute } from "./otlp-logs";
import { registerTraceSearchRoute } from "./search";
import { AddTraceBody, AddTraceResponse, AddTraceToSheetResponse, CloseResponse, SPANS_PER_REQUEST, SpansBulkBody, SpansBulkResponse, TraceIdParam, TraceResponse } from "./schemas";

const tags = ["traces"];

const otlpRoute = {
  method: "post",
  path: "/v1/traces",
  scope: "logs:write",
  tags,
  summary: "Ingest traces (OTLP/HTTP)",
  description:
    "An OTLP `ExportTraceServiceRequest`, as `application/x-protobuf` or `application/json` (OTLP's JSON mapping: hex ids, enums as " +
    "integers, 64-bit integers as strings), optionally `Content-Encoding: gzip`; the key in `X-API-KEY`. Point an OpenTelemetry " +
    "exporter's traces endpoint here. The answer is an `ExportTraceServiceResponse` in the request's encoding; `partialSuccess` " +
    "counts the spans refused and says why (a malformed id, an end before the start, attributes nested deeper than " +
    `${MAX_ATTRIBUTE_DEPTH} levels or over ${MAX_SPAN_BYTES} bytes, a closed trace), the rest being stored. A span sent again ` +
    "(same trace and span id) is stored once. Spans with GenAI attributes (gen_ai.*, OpenLLMetry, OpenInference, the Vercel AI SDK) " +
    "each make one request log, linked to its trace (docs/traces.md). `close_after=true` closes every trace of the export once " +
    "stored. The body may be at most TRACES_MAX_BYTES (5 MiB) as received and again once gunzipped: 413. Another content type: 415; " +
    "a body that is not an export (truncated protobuf, invalid JSON, bad gzip): 400, nothing stored.",
  request: {
    query: z.object({ close_after: QueryBool.optional().openapi({ description: "Close every trace of the export after storing it." }) }),
    body: otlpRequestBody("ExportTraceServiceRequest"),
  },
  responses: otlpResponses("ExportTraceServiceResponse", "rejectedSpans"),
} satisfies StreamingRouteOptions;

const bulkRoute = defineRoute({
  method: "post",
  path: "/spans-bulk",
  scope: "logs:write",
  tags,
  summary: "Create spans in bulk",
  description:
    `Up to ${SPANS_PER_REQUEST} spans in the shape the SDK's tracing (enableTracing) sends: ids in \`context\`, times in nanoseconds ` +
    "(integers or decimal strings), kind and status as `SpanKind.*` / `StatusCode.*` (or their integers). A span with `log_request` " +
    "makes that request log (the fields of POST /log-request; its times default to the span's; an invalid one is a 400 naming the " +
    "span); one without makes a log when its attributes describe an LLM call, as on /v1/traces. A span sent again is stored once " +
    "(`created: false`). Spans of a closed trace are not stored: `rejected_span_ids`, `rejected_trace_ids` and `rejection_reason: " +
    "trace_closed` say so. `close_after: true` closes every trace of the batch once stored. Body at most TRACES_MAX_BYTES (5 MiB).",
  bodyLimit: "TRACES_MAX_BYTES",
  request: { body: { required: true, content: { "application/json": { schema: SpansBulkBody } } } },
  responses: { 201: { description: "Stored", content: { "application/json": { schema: SpansBulkResponse } } } },
});

const getRoute = defineRoute({
  method: "get",
  path: "/api/public/v2/traces/{trace_id}",
  scope: "logs:read",
  tags,
  summary: "Get a trace",
  description:
    "Every span of the trace, by start time: parent link (`parent_id`), times (ISO and epoch ms), duration, status, attributes, events, " +
    "links, resource and scope, and `request_log_id` for spans that made a request log. At most the first " +
    `${TRACE_MAX_SPANS} spans (by start time); \`truncated\` is true when the trace holds more. \`logs\`: the trace's OTLP log records ` +
    `(POST /v1/logs) by time, each with its \`span_id\` (null outside any span), at most the first ${TRACE_MAX_LOG_RECORDS} (\`logs_truncated\`). ` +
    "A trace with neither spans nor log records in the workspace: 404.",
  errors: [404],
  request: { params: TraceIdParam },
  responses: { 200: { description: "The trace", content: { "application/json": { schema: TraceResponse } } } },
});

const closeRoute = defineRoute({
  method: "post",
  path: "/api/public/v2/traces/{trace_id}/close",
  scope: "logs:write",
  tags,
  summary: "Close a trace",
  description:
    "Closes a trace of the workspace to further spans: later spans of it are refused on /v1/traces (counted in partialSuccess) and " +
    "/spans-bulk (`rejection_reason: trace_closed`). 201 with the closure; closed already: 409; no span of it in the workspace: 404.",
  errors: [404, 409],
  request: { params: TraceIdParam },
  responses: { 201: { description: "Closed", content: { "application/json": { schema: CloseResponse } } } },
});

const addTraceRoute = defineRoute({
  method: "post",
  path: "/api/public/v2/dataset-versions/add-trace",
  scope: "datasets:write",
  alsoScope: "logs:read",
  tags: ["datasets"],
  summary: "Add a trace to a draft dataset, or as a row of a sheet",
  description:
    "With `dataset_group_id`: adds each request log of the trace (with `span_id`: of that span and its direct children) to the group's " +
    "draft, as add-request-log does for one log, oldest first; a log already in the draft is not added twice; a trace whose spans made no " +
    "log is a 400, a draft being filled a 409. With `sheet_id` and `smart_table_id` instead (what the Python SDK's evaluate() sends): adds " +
    "one row to that sheet holding the trace's span tree (with `span_id`: that span and everything under it; each span with its name, " +
    "times, status, attributes, `input` / `output` from its function_input / function_output attributes, `request_log_id` and " +
    "`children`) in the sheet's TEXT column titled \"Trace\", when it has one; the answer carries the row (`row`, `row_index`) so its " +
    "other cells can be filled. A tree over a cell's size is a 413 and adds nothing. `mode` is `trace` or `span`. Another workspace's " +
    "group, table or sheet, an unknown trace or span: 404. `metadata` is taken and not stored.",
  errors: [404, 409, 413],
  request: { body: { required: true, content: { "application/json": { schema: AddTraceBody } } } },
  responses: { 201: { description: "Added", content: { "application/json": { schema: z.union([AddTraceResponse, AddTraceToSheetResponse]) } } } },
});

export function registerTraceRoutes(app: OpenAPIHono<AppEnv>) {
  registerTraceAnalyticsRoutes(app);
  registerTraceSearchRoute(app);
  // The body is read by hand (gzip, protobuf, a cap on both sides of the gunzip), and validated
  // after reading, not by the JSON validator.
  defineStreamingRoute(app, otlpRoute, async (c) => {
    const closeAfterText = c.req.query("close_after");
    const closeAfter = closeAfterText === undefined ? false : readQueryBool(closeAfterText);
    const { encoding, decoded } = await readOtlpExport(c, decodeExport, () => {
      if (closeAfter === null) throw new ApiError("validation_error", "close_after: must be true or false");
    });
    const logs = await c.var.deps.logs(c.get("auth").workspaceId);
    const outcome = await ingestOtlp(c.var.deps.db, logs, c.get("auth"), decoded, closeAfter === true);
    await indexAfterAnswer(c, logs, outcome.logIds);
    return otlpAnswer(c, await encodeResponse(encoding, outcome.rejectedSpans, outcome.errorMessage));
  });
  registerOtlpLogsRoute(app);

  app.openapi(bulkRoute, async (c) => {
    const body = c.req.valid("json");
    // Each span's log_request is a POST /log-request body whose times default to the span's.
    const logs: (MappedLog | null)[] = body.spans.map((s, i) => {
      if (s.log_request == null) return null;
      const given = s.log_request;
      const parsed = LogRequestBody.safeParse({ ...given, request_start_time: given.request_start_time ?? s.start_time, request_end_time: given.request_end_time ?? s.end_time });
      if (!parsed.success) throw validationError(parsed.error.issues.map((iss) => ({ ...iss, path: ["spans", i, "log_request", ...iss.path] })), { target: "json" });
      return parsed.data as MappedLog;
    });
    const store = await c.var.deps.logs(c.get("auth").workspaceId);
    const out = await ingestSpansBulk(c.var.deps.db, store, c.get("auth"), { spans: body.spans, logs, close_after: body.close_after });
    await indexAfterAnswer(c, store, out.request_logs.map((l) => l.id));
    return c.json(out, 201);
  });

  app.openapi(getRoute, async (c) => {
    const { trace_id } = c.req.valid("param");
    return c.json(await getTrace(await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth").workspaceId, trace_id), 200);
  });

  app.openapi(closeRoute, async (c) => {
    const { trace_id } = c.req.valid("param");
    return c.json(await closeTraceOf(await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth").workspaceId, trace_id), 201);
  });

  app.openapi(addTraceRoute, async (c) => {
    const body = c.req.valid("json");
    const auth = c.get("auth");
    const spanId = body.span_id ?? null;
    const logs = await c.var.deps.logs(auth.workspaceId);
    if (body.sheet_id != null) {
      const added = await addTraceToSheet(c.var.deps, logs, auth.workspaceId, { tableId: body.smart_table_id!, sheetId: body.sheet_id }, body.trace_id, spanId);
      return c.json({ success: true as const, ...added }, 201);
    }
    const ids = await traceRequestLogIds(logs, auth.workspaceId, body.trace_id, spanId);
    let draftId = 0;
    for (const id of ids) draftId = (await addRequestLog(c.var.deps.db, logs, auth, { dataset_group_id: body.dataset_group_id!, request_log_id: id })).draftDatasetId;
    return c.json({ success: true as const, draft_dataset_id: draftId, mode: spanId ? ("span" as const) : ("trace" as const), request_log_ids: ids }, 201);
  });
}
