// The Hono app: request id and log line, the one error handler and validation hook, route mounting,
// /openapi.json, /docs and /console.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "./env";
import { buildDeps } from "./deps";
import { signalMatcher } from "./services/signals";
import { BOOKMARK_HEADER, parseBookmarks, RequestSessions } from "./db/sessions";
import { ApiError, errorBody } from "./lib/errors";
import { toApiError } from "./http/api-error";
import { requestContext } from "./http/middleware";
import { dispatchEmittedEvents } from "./http/event-dispatch";
import { validationHook } from "./lib/validation";
import { allowedMethodsLookup, shadowingMethodsLookup } from "./lib/allowed-methods";
import { registerDocsRoutes } from "./routes/docs";
import { registerConsoleRoutes } from "./routes/console";
import { registerHealthRoutes } from "./routes/health";
import { registerLogRequestRoutes } from "./routes/log-request";
import { registerRequestRoutes } from "./routes/requests";
import { registerFolderRoutes } from "./routes/folders";
import { registerPromptTemplateRoutes } from "./routes/prompt-templates";
import { registerLabelChangeRoutes } from "./routes/prompt-templates/label-changes";
import { registerAbTestRoutes } from "./routes/ab-tests";
import { registerPromptRunRoutes } from "./routes/prompt-runs";
import { registerToolRegistryRoutes } from "./routes/tool-registry";
import { registerWorkflowRoutes } from "./routes/workflows";
import { registerDatasetRoutes } from "./routes/datasets";
import { registerSkillCollectionRoutes } from "./routes/skill-collections";
import { registerSheetRoutes } from "./routes/sheets";
import { registerTableRoutes } from "./routes/tables";
import { registerSheetDataRoutes } from "./routes/sheet-data";
import { registerSheetScoreRoutes } from "./routes/sheet-data/score";
import { registerSheetScorecardRoutes } from "./routes/sheet-data/scorecard";
import { registerSheetVersionRoutes } from "./routes/sheet-data/versions";
import { registerWebhookRoutes } from "./routes/webhooks";
import { registerEvaluationRoutes } from "./routes/evaluations";
import { registerEnvVarRoutes } from "./routes/env-vars";
import { registerAnalyticsRoutes } from "./routes/analytics";
import { registerTrackingRoutes } from "./routes/tracking";
import { registerRealtimeRoutes } from "./routes/realtime";
import { registerTraceRoutes } from "./routes/traces";
import { registerWorkspaceRoutes } from "./routes/workspace";
import { registerSignalRoutes } from "./routes/signals";
import { registerApiKeyRoutes } from "./routes/api-keys";
import { registerAuditLogRoutes } from "./routes/audit-log";
import { registerRedactionPolicyRoutes } from "./routes/redaction-policy";
import { registerMcpRoutes } from "./routes/mcp";

function respondWithError(err: unknown, c: Context<AppEnv>): Response {
  const requestId = c.get("requestId") ?? crypto.randomUUID();
  const apiErr = toApiError(err, requestId, c.get("bodyTypes"));
  const res = c.json(errorBody(apiErr), apiErr.status as ContentfulStatusCode);
  for (const [k, v] of Object.entries(apiErr.headers ?? {})) res.headers.set(k, v);
  res.headers.set("X-Request-Id", requestId);
  return res;
}

const methodNotAllowed = (method: string, path: string, allow: string[]) =>
  new ApiError("method_not_allowed", `${path} does not take ${method}; it takes ${allow.join(", ")}`, { headers: { Allow: allow.join(", ") } });

export function createApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use("*", requestContext);
  // A path that names a route (a literal segment) asked with a method that route does not take is a
  // 405, before a less specific route (a placeholder there) can read the literal as an id.
  const shadowing = shadowingMethodsLookup(() => app.routes);
  app.use("*", async (c, next) => {
    const allow = shadowing(c.req.method, c.req.path);
    if (allow) throw methodNotAllowed(c.req.method, c.req.path, allow);
    await next();
  });
  app.use("*", async (c, next) => {
    // Reads may come from a read replica, as new as the bookmarks the client sends; writes start at
    // the primary. The response hands back the bookmarks, advanced (src/db/sessions.ts).
    const sent = parseBookmarks(c.req.header(BOOKMARK_HEADER));
    if (typeof sent === "string") throw new ApiError("validation_error", `${BOOKMARK_HEADER}: ${sent}`);
    const sessions = new RequestSessions(c.req.method === "GET" || c.req.method === "HEAD" ? "first-unconstrained" : "first-primary", sent);
    const deps = buildDeps(c.env, sessions);
    // Logs a snapshot indexes before the index queue reaches them are matched against Signals' hooks as the queue's would be.
    deps.indexExtension = signalMatcher(deps);
    c.set("deps", deps);
    await next();
    const bookmarks = sessions.header();
    if (bookmarks) c.res.headers.set(BOOKMARK_HEADER, bookmarks);
  });
  app.use("*", dispatchEmittedEvents);
  app.onError(respondWithError);
  const methodsOf = allowedMethodsLookup(() => app.routes);
  app.notFound((c) => {
    const allow = methodsOf(c.req.path);
    if (allow.length > 0) return respondWithError(methodNotAllowed(c.req.method, c.req.path, allow), c);
    return respondWithError(new ApiError("not_found", `no route for ${c.req.method} ${c.req.path}`), c);
  });

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyAuth", {
    type: "apiKey",
    in: "header",
    name: "X-API-KEY",
  });

  registerHealthRoutes(app);
  registerLogRequestRoutes(app);
  registerRequestRoutes(app);
  registerPromptTemplateRoutes(app);
  registerLabelChangeRoutes(app);
  registerAbTestRoutes(app);
  registerPromptRunRoutes(app);
  registerFolderRoutes(app);
  registerToolRegistryRoutes(app);
  registerWorkflowRoutes(app);
  registerDatasetRoutes(app);
  registerSkillCollectionRoutes(app);
  registerTableRoutes(app);
  registerSheetRoutes(app);
  registerSheetDataRoutes(app);
  // Score first: its /versions/score-history must not be read as a version id.
  registerSheetScoreRoutes(app);
  registerSheetVersionRoutes(app);
  registerSheetScorecardRoutes(app);
  registerWebhookRoutes(app);
  registerEvaluationRoutes(app);
  registerEnvVarRoutes(app);
  registerAnalyticsRoutes(app);
  registerTrackingRoutes(app);
  registerTraceRoutes(app);
  registerWorkspaceRoutes(app);
  registerSignalRoutes(app);
  registerApiKeyRoutes(app);
  registerAuditLogRoutes(app);
  registerRedactionPolicyRoutes(app);
  registerRealtimeRoutes(app);
  registerMcpRoutes(app);
  registerDocsRoutes(app);
  registerConsoleRoutes(app);
  return app;
}
