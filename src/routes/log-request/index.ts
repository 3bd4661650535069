// POST /log-request: log an LLM call made outside the managed run APIs.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { IDEMPOTENCY_DOC, IdempotencyKeyHeaders, answerIdempotently } from "../../http/idempotency";
import { createRequestLog, type RequestLogInput } from "../../logs";
import { priceOfLog } from "../../converters/pricing";
import { indexAfterAnswer } from "../../http/after-answer";
import type { PromptVersionView } from "../../prompts";
import { LogRequestBody, LogRequestResponse } from "./schemas";

const logRequest = defineRoute({
  method: "post",
  path: "/log-request",
  scope: "logs:write",
  tags: ["request logs"],
  summary: "Log a request",
  description:
    "Stores an LLM call made outside the managed run APIs. The log is stored when this answers: readable by id, and open to " +
    "the tracking calls and add-request-log, at once. Search, suggestions and analytics find it within seconds (its search " +
    "rows are written after the answer, many logs at a time). " +
    "`prompt_version` is the linked version when prompt_id (or prompt_name) and prompt_version_number name one in the workspace. " +
    "A log sent with tokens and no price (or price 0, what the SDKs send by default) is priced from the service's price table " +
    "for its model, as logs from the SDKs' provider calls and OTLP spans are; a model the table does not list stays at 0." +
    IDEMPOTENCY_DOC,
  errors: [409],
  bodyLimit: "LOG_REQUEST_MAX_BYTES",
  cachedAuth: true,
  request: { headers: IdempotencyKeyHeaders, body: { required: true, content: { "application/json": { schema: LogRequestBody } } } },
  responses: {
    201: { description: "Logged", content: { "application/json": { schema: LogRequestResponse } } },
  },
});

export function registerLogRequestRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(logRequest, async (c) => {
    const body = c.req.valid("json");
    const auth = c.get("auth");
    const logs = await c.var.deps.logs(auth.workspaceId);
    // The error message as stored (redacted by the workspace's policy, if any): an answer echoes nothing the log does not keep.
    const answer = (id: number, promptVersion: PromptVersionView | null, stored: RequestLogInput) => ({
      id,
      prompt_version: promptVersion,
      status: body.status,
      error_type: body.error_type ?? null,
      error_message: stored.error_message ?? null,
    });
    // A replayed answer is the stored JSON text, hence the untyped Response.
    return answerIdempotently(c, logs, 201, async (record) => {
      // Sent tokens without a price: priced from the one table the SDK and OTLP paths use.
      const logged = await createRequestLog(c.var.deps.db, logs, auth, { ...body, price: priceOfLog(body) }, record && ((logId, promptVersion, stored) => record(answer(0, promptVersion, stored), "id", logId)));
      await indexAfterAnswer(c, logs, [logged.id]);
      return answer(logged.id, logged.promptVersion, logged.stored);
    }) as never;
  });
}
