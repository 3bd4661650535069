// POST /v1/logs: OTLP/HTTP logs exports, read as /v1/traces reads trace exports (the same key, body
// caps, encodings and answers). Records are kept with their traces; the GenAI events among them
// complete the request logs their spans made (docs/traces.md).
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineStreamingRoute, type StreamingRouteOptions } from "../../http/openapi";
import { ingestOtlpLogs } from "../../services/ingest";
import { decodeLogsExport, encodeLogsResponse, MAX_ATTRIBUTE_DEPTH, MAX_RECORD_BYTES, MAX_RECORDS_PER_EXPORT } from "../../traces";
import { JOIN_LIMITS } from "../../logs";
import { otlpAnswer, otlpRequestBody, otlpResponses, readOtlpExport } from "./otlp-body";

const logsRoute = {
  method: "post",
  path: "/v1/logs",
  scope: "logs:write",
  tags: ["traces"],
  summary: "Ingest log records of traces (OTLP/HTTP)",
  description:
    "An OTLP `ExportLogsServiceRequest`, as `application/x-protobuf` or `application/json` (OTLP's JSON mapping), optionally " +
    "`Content-Encoding: gzip`; the key in `X-API-KEY`. Point an OpenTelemetry exporter's logs endpoint here. Each record is kept with its " +
    "trace (GET /api/public/v2/traces/{trace_id} lists them under `logs`), once: a record sent again (the same fields, time included) " +
    "changes nothing. The GenAI events among them (`gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`, " +
    "`gen_ai.tool.message`, `gen_ai.choice`, `gen_ai.client.inference.operation.details`; the name in the record's event_name or its " +
    "`event.name` attribute) complete the request log their span made, whichever arrives first, as if the span had carried them as " +
    "events; the span's own message attributes win (docs/traces.md). `partialSuccess` counts the records refused and says why: no trace " +
    `id (only the records of traces are kept), a malformed span id, a body and attributes over ${MAX_RECORD_BYTES} bytes or nested deeper ` +
    `than ${MAX_ATTRIBUTE_DEPTH} levels; the rest are stored. A log takes in at most ${JOIN_LIMITS.records} records and ` +
    `${JOIN_LIMITS.bytes} bytes of them per span, oldest first. An export of more than ${MAX_RECORDS_PER_EXPORT} records: 413, nothing ` +
    "stored. The body may be at most TRACES_MAX_BYTES (5 MiB) as received and again once gunzipped: 413. Another content type: 415; a " +
    "body that is not an export (truncated protobuf, invalid JSON, bad gzip): 400, nothing stored.",
  request: { body: otlpRequestBody("ExportLogsServiceRequest") },
  responses: otlpResponses("ExportLogsServiceResponse", "rejectedLogRecords"),
} satisfies StreamingRouteOptions;

export function registerOtlpLogsRoute(app: OpenAPIHono<AppEnv>) {
  // Read by hand as /v1/traces is, validated after reading.
  defineStreamingRoute(app, logsRoute, async (c) => {
    const { encoding, decoded } = await readOtlpExport(c, (body, enc) => decodeLogsExport(body, enc, Date.now()));
    const outcome = await ingestOtlpLogs(await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth"), decoded);
    return otlpAnswer(c, await encodeLogsResponse(encoding, outcome.rejectedLogRecords, outcome.errorMessage));
  });
}
