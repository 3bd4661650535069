// POST /api/public/v2/prompt-runs: the playground's run of a template version or an unsaved draft
// (services/ingest/prompt-runs.ts), answered as JSON or streamed as server-sent events.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import type { AppEnv } from "../../env";
import { indexAfterAnswer } from "../../http/after-answer";
import { defineRoute } from "../../http/openapi";
import { toApiError } from "../../http/api-error";
import { errorBody } from "../../lib/errors";
import { executeRun, prepareRun } from "../../services/ingest";
import { PromptRunBody, PromptRunResult } from "./schemas";

const run = defineRoute({
  method: "post",
  path: "/api/public/v2/prompt-runs",
  scope: "prompts:write",
  tags: ["prompt runs"],
  summary: "Run a prompt template version or a draft",
  description:
    "Fills the template (a stored version, or the draft in prompt_version) with input_variables (snippets filled first), " +
    "calls the provider its metadata.model names (or model overrides), and logs the run as a request " +
    "linked to the version (a draft's log names its template, when given, without a version). The provider's key is taken as every LLM " +
    "call takes it: the workspace's environment variable (OPENAI_API_KEY for openai and OpenAI-compatible servers, ANTHROPIC_API_KEY; " +
    "set on the console's Settings page or by POST /api/public/v2/env-vars) first, then the Worker's secret of the same name. " +
    "OPENAI_BASE_URL / ANTHROPIC_BASE_URL as workspace variables send a workspace key to another server (checked like an ENDPOINT " +
    "block's URL), else the deployment's; the Worker's key only ever goes to the deployment's base URL. No key at all is a 422 " +
    "provider_not_configured naming the variable and where to set it; a variable without a value, an unknown template or version, or a provider other than openai and anthropic is a " +
    "4xx, and nothing is sent or logged. A provider that fails is not an HTTP failure: the run is logged with status ERROR and answered " +
    "with its message. With stream: true the answer is text/event-stream (server-sent events): `delta` events carry {text} as the " +
    "provider streams it, then one `done` event carries the same JSON as the non-streamed answer.",
  errors: [404, 422],
  request: { body: { required: true, content: { "application/json": { schema: PromptRunBody } } } },
  responses: {
    200: {
      description: "The run: JSON, or with stream: true server-sent events (delta {text}… then done with this JSON)",
      content: {
        "application/json": { schema: PromptRunResult },
        "text/event-stream": { schema: z.string().openapi({ description: "event: delta / data: {\"text\": …}, …, then event: done / data: the run's JSON" }) },
      },
    },
  },
});

export function registerPromptRunRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(run, async (c) => {
    const body = c.req.valid("json");
    const auth = c.get("auth");
    const { db, env } = c.var.deps;
    const prepared = await prepareRun(db, env, auth, body);
    const logs = await c.var.deps.logs(auth.workspaceId);
    if (!body.stream) {
      const result = await executeRun(db, logs, auth, prepared);
      await indexAfterAnswer(c, logs, [result.request_id]);
      return c.json(result, 200);
    }
    return streamSSE(c, async (sse) => {
      const result = await executeRun(db, logs, auth, prepared, (text) => sse.writeSSE({ event: "delta", data: JSON.stringify({ text }) }));
      await indexAfterAnswer(c, logs, [result.request_id]);
      await sse.writeSSE({ event: "done", data: JSON.stringify(result) });
    }, async (err, sse) => {
      // Past the first byte the status is sent: a failure ends the stream with an error event whose
      // data is the error body the status would have carried (an unknown error is logged by toApiError).
      await sse.writeSSE({ event: "error", data: JSON.stringify(errorBody(toApiError(err, c.get("requestId")))) });
    }) as never;
  });
}
