// GET /api/public/v2/requests/{request_id}: one stored log, defaults applied.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { getDb } from "../../db/client";
import { REQUEST_STATUSES } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import { defineRoute } from "../../lib/openapi";
import { IdParam } from "../../lib/schemas";
import { getRequestLog, requestLogView } from "../../services/request-logs";

const RequestLogDetail = z
  .object({
    success: z.literal(true),
    request_id: z.int(),
    prompt_blueprint: z.record(z.string(), z.unknown()),
    provider: z.string(),
    model: z.string(),
    api_type: z.string().nullable(),
    input: z.record(z.string(), z.unknown()),
    output: z.record(z.string(), z.unknown()),
    parameters: z.record(z.string(), z.unknown()),
    tags: z.array(z.string()),
    metadata: z.record(z.string(), z.string()),
    prompt_name: z.string().nullable(),
    prompt_id: z.int().nullable(),
    prompt_version_number: z.int().nullable(),
    prompt_version_id: z.int().nullable(),
    prompt_input_variables: z.record(z.string(), z.unknown()),
    input_tokens: z.int(),
    output_tokens: z.int(),
    tokens: z.int(),
    price: z.number(),
    function_name: z.string(),
    score: z.int(),
    score_name: z.string().nullable(),
    status: z.enum(REQUEST_STATUSES),
    error_type: z.string().nullable(),
    error_message: z.string().nullable(),
    request_start_time: z.string(),
    request_end_time: z.string(),
    latency_ms: z.number(),
    trace_id: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("RequestLogDetail");

const getRequest = defineRoute({
  method: "get",
  path: "/api/public/v2/requests/{request_id}",
  tags: ["request logs"],
  summary: "Get a logged request",
  errors: [404],
  request: { params: z.object({ request_id: IdParam("request_id") }) },
  responses: {
    200: { description: "The stored log", content: { "application/json": { schema: RequestLogDetail } } },
  },
});

export function registerRequestRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(getRequest, async (c) => {
    const { request_id } = c.req.valid("param");
    const row = await getRequestLog(getDb(c.env.DB), c.get("auth").workspaceId, request_id);
    if (!row) throw ApiError.notFound("request log");
    return c.json(requestLogView(row), 200);
  });
}
