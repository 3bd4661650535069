// The SDKs' realtime channel of workflow runs: the token request (POST /ws-token-request-library) and the
// Centrifugo-protocol WebSocket (GET /connection/websocket), served by the RealtimeHub object.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { AppEnv } from "../../env";
import { workflowExecutions, workflows } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import { defineRoute } from "../../http/openapi";
import { channelOfCapability, FINAL_OUTPUT_MAX_BYTES, parseCapability, signToken } from "../../realtime/protocol";

/** How long a token admits a connection (an open connection stays open past it). */
export const REALTIME_TOKEN_TTL_MS = 10 * 60 * 1000;

const tokenRoute = defineRoute({
  method: "post",
  path: "/ws-token-request-library",
  scope: "workflows:read",
  tags: ["workflows"],
  summary: "A token for a workflow run's realtime channel",
  description:
    "The token the SDKs' run workflow calls listen with. `capability` names one channel: `workflow_updates:<execution id>` (the JavaScript SDK, " +
    "after starting a run: the execution must be of the key's workspace) or `workflows:<workflow id>:run:<suffix>` (the Python SDK, before the " +
    "run, which it then starts with that `channel_name_suffix`: the workflow must be of the key's workspace; the suffix is 1 to 64 letters, digits, " +
    "`_` or `-`). Another workspace's execution or workflow, or none, is a 404; any other capability a 400. The token admits one WebSocket " +
    `connection to GET /connection/websocket (Centrifugo's JSON protocol) for ${REALTIME_TOKEN_TTL_MS / 60000} minutes, to that channel only, while ` +
    "the API key that asked for it is not revoked (a revoked key's tokens admit no connection, and its open connections are told nothing more); it is " +
    "signed with a key derived from the ENV_VARS_KEY secret. When the run ends, the channel gets a SET_WORKFLOW_COMPLETE publication whose `data` " +
    "(JSON text) holds `workflow_version_execution_id`, `result_code` and `final_output`: the outputs as the run's `return_all_outputs` asked, or, " +
    `over ${FINAL_OUTPUT_MAX_BYTES / 1024} KiB, result code EXCEEDS_SIZE_LIMIT, which sends the SDK to GET /workflow-version-execution-results.`,
  errors: [404],
  request: { query: z.object({ capability: z.string().max(120).openapi({ example: "workflows:42:run:9f86d081884c7d659a2feaa0c55ad015" }) }) },
  responses: {
    201: {
      description: "The token",
      content: {
        "application/json": {
          schema: z.object({
            success: z.literal(true),
            messaging_backend: z.literal("centrifugo"),
            token_details: z.object({ token: z.string(), expires_at: z.string() }),
          }),
        },
      },
    },
  },
});

const socketRoute = defineRoute({
  method: "get",
  path: "/connection/websocket",
  tags: ["workflows"],
  summary: "The realtime WebSocket of workflow runs",
  description:
    "Speaks the part of Centrifugo's JSON protocol the SDKs use: `connect` with the token from POST /ws-token-request-library, in the first frame " +
    "(an invalid token, or one of a revoked key, closes the connection with 3500; an expired one answers error 109 first; no valid connect " +
    "within 5 s (REALTIME_CONNECT_TIMEOUT_MS) closes it with 3502), `subscribe` to the token's channel only (another channel is error 103), then " +
    "the SET_WORKFLOW_COMPLETE publication when the run ends (at once, on subscribing, when it already has). A frame carries at most 16 commands " +
    "and 16 KiB (more closes the connection with 3501). No API key: the token is the credential. A request without a WebSocket upgrade is a 426.",
  public: true,
  responses: { 101: { description: "Switching protocols" } },
});

export function registerRealtimeRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(tokenRoute, async (c) => {
    const capability = parseCapability(c.req.valid("query").capability);
    if (!capability) throw new ApiError("validation_error", "capability: must be workflow_updates:<execution id> or workflows:<workflow id>:run:<suffix>");
    const workspaceId = c.get("auth").workspaceId;
    const db = c.var.deps.db;
    if (capability.kind === "execution") {
      const e = workflowExecutions;
      const [exec] = await db.select({ id: e.id }).from(e).where(and(eq(e.id, capability.executionId), eq(e.workspaceId, workspaceId))).limit(1);
      if (!exec) throw ApiError.notFound(`workflow version execution ${capability.executionId}`);
    } else {
      const w = workflows;
      const [wf] = await db.select({ id: w.id }).from(w).where(and(eq(w.id, capability.workflowId), eq(w.workspaceId, workspaceId))).limit(1);
      if (!wf) throw ApiError.notFound(`workflow ${capability.workflowId}`);
    }
    if (!c.var.deps.env.ENV_VARS_KEY || c.var.deps.env.ENV_VARS_KEY.length < 32) {
      throw new ApiError("internal_error", "this deployment has no ENV_VARS_KEY secret (32 characters or more), so it cannot sign realtime tokens");
    }
    const exp = Date.now() + REALTIME_TOKEN_TTL_MS;
    const token = await signToken(c.var.deps.env.ENV_VARS_KEY, { workspaceId, channel: channelOfCapability(capability), exp, keyId: c.get("auth").apiKeyId });
    return c.json({ success: true as const, messaging_backend: "centrifugo" as const, token_details: { token, expires_at: new Date(exp).toISOString() } }, 201);
  });

  // Upgrades are routed to the hub before the app (src/index.ts); what reaches the app is not one.
  app.openapi(socketRoute, async (c) => c.json({ success: false, message: "expected a WebSocket upgrade (Centrifugo protocol)", error: "validation_error" }, 426 as never));
}
