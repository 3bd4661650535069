// runWorkflow's realtime channel: the token request (POST /ws-token-request-library) and the
// Centrifugo-protocol WebSocket (GET /connection/websocket), served by the RealtimeHub object.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { AppEnv } from "../../env";
import { workflowExecutions } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import { defineRoute } from "../../http/openapi";
import { executionOfCapability, signToken } from "../../realtime/protocol";

/** How long a token admits a connection (an open connection stays open past it). */
export const REALTIME_TOKEN_TTL_MS = 10 * 60 * 1000;

const tokenRoute = defineRoute({
  method: "post",
  path: "/ws-token-request-library",
  tags: ["workflows"],
  summary: "A token for a workflow run's realtime channel",
  description:
    "What the SDK's runWorkflow asks for after starting a run: `capability` is `workflow_updates:<execution id>` of a run of the key's workspace " +
    "(another workspace's or an unknown one is a 404). The token admits one WebSocket connection to GET /connection/websocket (Centrifugo's JSON " +
    `protocol) for ${REALTIME_TOKEN_TTL_MS / 60000} minutes, to that run's channel only; it is signed with a key derived from the ENV_VARS_KEY secret. ` +
    "When the run ends, its subscribers get a SET_WORKFLOW_COMPLETE publication sending them to GET /workflow-version-execution-results for the outputs.",
  errors: [404],
  request: { query: z.object({ capability: z.string().max(100).openapi({ example: "workflow_updates:42" }) }) },
  responses: {
    200: {
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
    "Speaks the part of Centrifugo's JSON protocol the SDK uses: `connect` with the token from POST /ws-token-request-library (an invalid token " +
    "closes the connection with 3500; an expired one answers error 109 first), `subscribe` to the token's channel only (another channel is error " +
    "103), then a publication when the run ends. No API key: the token is the credential. A request without a WebSocket upgrade is a 426.",
  public: true,
  responses: { 101: { description: "Switching protocols" } },
});

export function registerRealtimeRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(tokenRoute, async (c) => {
    const executionId = executionOfCapability(c.req.valid("query").capability);
    if (executionId === null) throw new ApiError("validation_error", "capability: must be workflow_updates:<execution id>");
    const workspaceId = c.get("auth").workspaceId;
    const [exec] = await c.var.deps.db
      .select({ id: workflowExecutions.id })
      .from(workflowExecutions)
      .where(and(eq(workflowExecutions.id, executionId), eq(workflowExecutions.workspaceId, workspaceId)))
      .limit(1);
    if (!exec) throw ApiError.notFound(`workflow version execution ${executionId}`);
    if (!c.var.deps.env.ENV_VARS_KEY || c.var.deps.env.ENV_VARS_KEY.length < 32) {
      throw new ApiError("internal_error", "this deployment has no ENV_VARS_KEY secret (32 characters or more), so it cannot sign realtime tokens");
    }
    const exp = Date.now() + REALTIME_TOKEN_TTL_MS;
    const token = await signToken(c.var.deps.env.ENV_VARS_KEY, { workspaceId, executionId, exp });
    return c.json({ success: true as const, messaging_backend: "centrifugo" as const, token_details: { token, expires_at: new Date(exp).toISOString() } }, 200);
  });

  // Upgrades are routed to the hub before the app (src/index.ts); what reaches the app is not one.
  app.openapi(socketRoute, async (c) => c.json({ success: false, message: "expected a WebSocket upgrade (Centrifugo protocol)", error: "validation_error" }, 426 as never));
}
