// The tracking calls: a named score, metadata, a prompt link or a group added to a stored request log,
// and request groups. Two families over one service (logs/tracking.ts): the official SDK's paths
// (/library-track-*, /create-group, /track-group; the key may be `api_key` in the body) and the REST
// twins of PromptLayer's document (/rest/track-*; X-API-KEY). All answer 200: the SDK counts any
// other status as a failure.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { indexAfterAnswer } from "../../http/after-answer";
import { IDEMPOTENCY_DOC, IdempotencyKeyHeaders, answerIdempotently } from "../../http/idempotency";
import { createGroup, trackGroup, trackMetadata, trackPrompt, trackScore, type RecordAnswer } from "../../logs";
import { trackRequest } from "../../services/ingest";
import { convertProviderCall } from "../../converters";
import {
  CreateGroupBody,
  CreateGroupResponse,
  LibraryTrackGroupBody,
  LibraryTrackMetadataBody,
  LibraryTrackPromptBody,
  LibraryTrackScoreBody,
  TrackGroupBody,
  TrackMetadataBody,
  TrackPromptBody,
  TrackResponse,
  TrackRequestBody,
  TrackRequestResponse,
  TrackScoreBody,
} from "./schemas";

const BODY_KEY =
  " The key may be sent as `api_key` in the JSON body instead of the X-API-KEY header (the SDK does); when both are sent they must be the same key (else 401). ";
const ISOLATION = " A request id, group id or prompt name of another workspace is a 404 and changes nothing.";

const what = {
  score:
    "Sets one named score (0 to 100) of a request log; a log keeps every named score (`scores` in GET /api/public/v2/requests/{id}, " +
    "filter field `scores` with the name as nested_key). No name, or `default`, also sets the log's `score`; a name sent again takes the new value.",
  metadata:
    "Merges string metadata into a request log's: new keys are added, a key sent again takes the new value, others stay. " +
    "Search filters and autocomplete suggestions see the new keys and values at once.",
  prompt:
    "Links a request log to a prompt version: the template by name, with `version` or a release `label` (neither: the latest version; both: 400). " +
    "The log's prompt_id, prompt_version_number and prompt_version_id then name it; `prompt_input_variables`, when given, replace the log's.",
  group: "Puts a request log in a request group (from POST /create-group). A log is in at most one group; tracking another moves it. Search filters on `group_id`.",
};

const jsonBody = <T extends z.ZodType>(schema: T) => ({ body: { required: true, content: { "application/json": { schema } } } });
const ok = <T extends z.ZodType>(schema: T, description: string) => ({ 200: { description, content: { "application/json": { schema } } } });

function routes<T extends z.ZodType, L extends z.ZodType>(kind: keyof typeof what, summary: string, rest: T, library: L, libraryPath: string) {
  return {
    rest: defineRoute({
      method: "post",
      path: `/rest/track-${kind}`,
      scope: "logs:write",
      tags: ["tracking"],
      summary,
      description: what[kind] + ISOLATION,
      errors: [404],
      request: jsonBody(rest),
      responses: ok(TrackResponse, "Tracked"),
    }),
    library: defineRoute({
      method: "post",
      path: libraryPath,
      scope: "logs:write",
      tags: ["tracking"],
      summary: `${summary} (the SDK's path)`,
      description: what[kind] + BODY_KEY + ISOLATION + ` Same as POST /rest/track-${kind}.`,
      errors: [404],
      bodyKey: true,
      request: jsonBody(library),
      responses: ok(TrackResponse, "Tracked"),
    }),
  };
}

const score = routes("score", "Track a score", TrackScoreBody, LibraryTrackScoreBody, "/library-track-score");
const metadata = routes("metadata", "Track metadata", TrackMetadataBody, LibraryTrackMetadataBody, "/library-track-metadata");
const prompt = routes("prompt", "Track a prompt", TrackPromptBody, LibraryTrackPromptBody, "/library-track-prompt");
const group = routes("group", "Track a group", TrackGroupBody, LibraryTrackGroupBody, "/track-group");

const createGroupRoute = defineRoute({
  method: "post",
  path: "/create-group",
  scope: "logs:write",
  tags: ["tracking"],
  summary: "Create a request group",
  description: "A new, empty request group of the workspace; its `id` goes to POST /track-group (or /rest/track-group, or run()'s groupId)." + BODY_KEY,
  bodyKey: true,
  request: { body: { required: false, content: { "application/json": { schema: CreateGroupBody } } } },
  responses: ok(CreateGroupResponse, "Created (200, as the SDK expects)"),
});

const trackRequestRoute = defineRoute({
  method: "post",
  path: "/track-request",
  scope: "logs:write",
  tags: ["tracking"],
  summary: "Log a provider call (run() and the SDK's provider wrappers)",
  description:
    "Turns the provider's own request (`function_name`, `provider_type`, `kwargs`) and response (`request_response`) into a request log " +
    "through the provider converters (OpenAI chat and responses, Anthropic, Google, Bedrock converse, Mistral and their Azure/Bedrock variants): " +
    "prompt blueprints, tokens, price where known, status. Times, tags, metadata, the prompt link (`prompt_id`, `prompt_version`), `group_id` " +
    "and `score` are added. A call the converters cannot read is a 400, except a failed call reported with `status: ERROR`, which is logged as is. " +
    "Times default to the moment of the call." +
    BODY_KEY +
    " A prompt id, prompt version or group id of another workspace is a 404 and nothing is logged." +
    IDEMPOTENCY_DOC,
  errors: [404, 409],
  bodyKey: true,
  bodyLimit: "LOG_REQUEST_MAX_BYTES",
  request: { headers: IdempotencyKeyHeaders, ...jsonBody(TrackRequestBody) },
  responses: ok(TrackRequestResponse, "Logged (200, as the SDK expects)"),
});

export function registerTrackingRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(trackRequestRoute, async (c) => {
    const { request_start_time, request_end_time, ...body } = c.req.valid("json");
    const now = Date.now();
    const end = request_end_time ?? now;
    const logs = await c.var.deps.logs(c.get("auth").workspaceId);
    // A replayed answer is the stored JSON text, hence the untyped Response.
    return answerIdempotently(c, logs, 200, async (record) => {
      const input = { ...body, request_start_time: request_start_time ?? end, request_end_time: end };
      const recordWithSuccess: RecordAnswer | undefined = record && ((answer, idField, logId) => record({ success: true, ...answer }, idField, logId));
      const tracked = await trackRequest(c.var.deps.db, logs, c.get("auth"), input, convertProviderCall, recordWithSuccess);
      await indexAfterAnswer(c, logs, [tracked.request_id]);
      return { success: true as const, ...tracked };
    }) as never;
  });

  for (const r of [score.rest, score.library] as const) {
    app.openapi(r, async (c) => {
      const body = c.req.valid("json");
      await trackScore(await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth"), body);
      return c.json({ success: true as const, message: "Score tracked successfully" }, 200);
    });
  }
  for (const r of [metadata.rest, metadata.library] as const) {
    app.openapi(r, async (c) => {
      const body = c.req.valid("json");
      await trackMetadata(await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth"), body);
      return c.json({ success: true as const, message: "Metadata tracked successfully" }, 200);
    });
  }
  for (const r of [prompt.rest, prompt.library] as const) {
    app.openapi(r, async (c) => {
      const body = c.req.valid("json");
      await trackPrompt(c.var.deps.db, await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth"), body);
      return c.json({ success: true as const, message: "Prompt tracked successfully" }, 200);
    });
  }
  for (const r of [group.rest, group.library] as const) {
    app.openapi(r, async (c) => {
      const body = c.req.valid("json");
      await trackGroup(await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth"), body);
      return c.json({ success: true as const, message: "Group tracked successfully" }, 200);
    });
  }
  app.openapi(createGroupRoute, async (c) => {
    const { id } = await createGroup(await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth"));
    return c.json({ success: true as const, id }, 200);
  });
}
