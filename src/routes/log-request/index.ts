// POST /log-request: log an LLM call made outside the managed run APIs.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { createRequestLog } from "../../logs";
import { indexAfterAnswer } from "../../http/after-answer";
import { LogRequestBody, LogRequestResponse } from "./schemas";

const logRequest = defineRoute({
  method: "post",
  path: "/log-request",
  tags: ["request logs"],
  summary: "Log a request",
  description:
    "Stores an LLM call made outside the managed run APIs. The log is stored when this answers: readable by id, and open to " +
    "the tracking calls and add-request-log, at once. Search, suggestions and analytics find it within seconds (its search " +
    "rows are written after the answer, many logs at a time). " +
    "`prompt_version` is the linked version when prompt_id (or prompt_name) and prompt_version_number name one in the workspace.",
  bodyLimit: "LOG_REQUEST_MAX_BYTES",
  cachedAuth: true,
  request: { body: { required: true, content: { "application/json": { schema: LogRequestBody } } } },
  responses: {
    201: { description: "Logged", content: { "application/json": { schema: LogRequestResponse } } },
  },
});

export function registerLogRequestRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(logRequest, async (c) => {
    const body = c.req.valid("json");
    const logs = await c.var.deps.logs(c.get("auth").workspaceId);
    const logged = await createRequestLog(c.var.deps.db, logs, c.get("auth"), body);
    await indexAfterAnswer(c, logs, [logged.id]);
    return c.json(
      {
        id: logged.id,
        prompt_version: logged.promptVersion,
        status: body.status,
        error_type: body.error_type ?? null,
        error_message: body.error_message ?? null,
      },
      201,
    );
  });
}
