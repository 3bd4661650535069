// defineRoute: the one way routes are declared. It adds API-key auth (unless public), a body limit
// for routes with a body, and the error responses in the error shape, so /openapi.json stays complete.
// defineStreamingRoute declares and mounts, through it, a route whose handler reads the body itself.
import { createRoute, type OpenAPIHono, type RouteConfig, type z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { limitBody, requireAuth, requireCachedAuth, requireScope, type BodyLimitVar } from "./middleware";
import { describeScope, type Scope } from "../lib/scopes";
import { captureBodyApiKey } from "./body-key";
import { nameIgnoredFields } from "./ignored-fields";
import { rateLimitByKey, type RateLimitRule } from "./rate-limit";
import { limitJsonDepth } from "./json-depth";
import { codeForStatus, type ErrorCode } from "../lib/errors";
import { ErrorSchema } from "../lib/schemas";
import { validationError } from "../lib/validation";

const ERROR_DESCRIPTIONS: Partial<Record<ErrorCode, string>> = {
  validation_error: "malformed JSON or a field that breaks a rule; the message names the field and the rule",
  unauthorized: "X-API-KEY missing, unknown or revoked",
  forbidden: "the key lacks the scope this operation needs; the message names it",
  not_found: "unknown id, or an id of another workspace",
  method_not_allowed: "the path exists but not with this method; the Allow header lists the methods it takes",
  conflict: "a uniqueness rule would be broken",
  payload_too_large: "the body is over the documented limit",
  unsupported_media_type: "the endpoint does not take this content type",
  provider_not_configured: "neither the workspace (environment variable) nor the Worker (secret) has a key for the provider the call needs; the message names the variable and where to set it",
  rate_limited: "over the rate limit; see the Retry-After header",
  internal_error: "a bug; the request id is logged",
};

function errorResponse(status: number) {
  const code = codeForStatus(status) as ErrorCode;
  return { description: `${code}: ${ERROR_DESCRIPTIONS[code]}`, content: { "application/json": { schema: ErrorSchema } } };
}

/**
 * Who may call a route: `public` (no API key: health, docs), or the scope a key needs (lib/scopes.ts).
 * Every route says one or the other, so a new route cannot forget it (test/http/scopes.test.ts reads
 * them all back from /openapi.json).
 */
type Access =
  | { public: true; scope?: never; alsoScope?: never }
  | {
      public?: false;
      scope: Scope;
      /** A second scope the key must hold too: a route of one area that reads another's data (a dataset made from logs needs logs:read). */
      alsoScope?: Scope;
    };

interface RouteExtras {
  /** Extra error statuses this route can answer besides the common ones. */
  errors?: number[];
  /** Which env var caps the body (default JSON_MAX_BYTES); false: the handler streams and caps the body itself. */
  bodyLimit?: BodyLimitVar | false;
  /** Which env var caps a multipart/form-data body; the route must then read it as a stream and count it. */
  multipartLimit?: BodyLimitVar;
  /** Cache verified keys (only for routes whose writes the database guards against revoked keys). */
  cachedAuth?: boolean;
  /** A per-key rate limit, checked before auth and before any database work. */
  rateLimit?: RateLimitRule;
  /** The key may come as `api_key` in the JSON body (the SDK's tracking calls); the body is capped first. */
  bodyKey?: boolean;
}

type RouteOptions = RouteConfig & Access & RouteExtras;

export function defineRoute<R extends RouteOptions>(options: R) {
  const { public: isPublic, scope, alsoScope, errors = [], bodyLimit, multipartLimit, rateLimit, cachedAuth, bodyKey, middleware, ...route } = options;
  const hasBody = Boolean(route.request?.body);
  const statuses = new Set<number>([500, ...errors]);
  if (rateLimit) statuses.add(429);
  if (!isPublic) {
    statuses.add(401);
    statuses.add(403);
  }
  if (!isPublic || route.request) statuses.add(400);
  if (hasBody) {
    statuses.add(413);
    statuses.add(415);
  }
  const errorResponses = Object.fromEntries([...statuses].sort().map((s) => [s, errorResponse(s)]));
  const mw: MiddlewareHandler<AppEnv>[] = [];
  const jsonSchema = (route.request?.body as { content?: Record<string, { schema?: z.ZodType }> } | undefined)?.content?.["application/json"]?.schema;
  // A body the JSON validator reads: the fields it ignored are named in a header of the answer.
  if (jsonSchema && bodyLimit !== false) mw.push(nameIgnoredFields(jsonSchema));
  const bodyTypes = Object.keys((route.request?.body as { content?: Record<string, unknown> } | undefined)?.content ?? {});
  if (bodyTypes.length > 0) {
    mw.push(async (c, next) => {
      c.set("bodyTypes", bodyTypes);
      await next();
    });
  }
  if (rateLimit) mw.push(rateLimitByKey(rateLimit));
  const capBody = hasBody && bodyLimit !== false ? limitBody(bodyLimit ?? "JSON_MAX_BYTES", multipartLimit) : null;
  // A key read from the body needs the body read before auth, so the cap comes first there.
  if (bodyKey) mw.push(...(capBody ? [capBody] : []), captureBodyApiKey);
  if (!isPublic) mw.push(cachedAuth ? requireCachedAuth : requireAuth, requireScope(scope!), ...(alsoScope ? [requireScope(alsoScope)] : []));
  if (capBody && !bodyKey) mw.push(capBody);
  // A streaming route (bodyLimit false) reads its body itself, and holds its own depth rule (OTLP).
  if (capBody && bodyTypes.some((t) => t.includes("json"))) mw.push(limitJsonDepth);
  if (middleware) mw.push(...((Array.isArray(middleware) ? middleware : [middleware]) as MiddlewareHandler<AppEnv>[]));
  const scopeDoc = isPublic
    ? {}
    : {
        "x-scope": scope,
        ...(alsoScope ? { "x-also-scope": alsoScope } : {}),
        description: `${route.description ?? ""}\n\n**Scope:** \`${scope}\` (${describeScope(scope!)})${alsoScope ? ` and \`${alsoScope}\` (${describeScope(alsoScope)}), or scopes that include them.` : ", or a scope that includes it."}`.trim(),
      };
  return createRoute({
    ...route,
    ...scopeDoc,
    security: isPublic ? [] : [{ ApiKeyAuth: [] }],
    middleware: mw,
    responses: { ...errorResponses, ...route.responses },
  } as unknown as Omit<R, "public" | "scope" | "alsoScope" | "errors" | "bodyLimit" | "multipartLimit" | "rateLimit" | "cachedAuth" | "bodyKey">);
}

/** What defineStreamingRoute takes: defineRoute's options without the body cap (the handler caps the body). */
export type StreamingRouteOptions = RouteConfig & Access & Omit<RouteExtras, "bodyLimit" | "multipartLimit" | "bodyKey">;

/** The checked path parameters of a route (none: an empty object). */
type ParamsOf<R extends StreamingRouteOptions> = R["request"] extends { params: infer P extends z.ZodType } ? z.output<P> : Record<never, never>;

/**
 * A route whose body the handler reads as a stream (a file streamed to R2, an OTLP export, gzip or
 * protobuf): in /openapi.json as declared, like every route, with the same auth, rate limit and error
 * responses (413 and 415 included), but no JSON validator and no cap before the handler, which caps
 * the body itself (bodyLimit false). Path parameters are checked after the middleware and before the
 * handler, with the 400 the validation hook gives; the query is the handler's to read.
 */
export function defineStreamingRoute<R extends StreamingRouteOptions>(
  app: OpenAPIHono<AppEnv>,
  options: R,
  handler: (c: Context<AppEnv>, params: ParamsOf<R>) => Promise<Response>,
): void {
  const route = defineRoute({ ...options, bodyLimit: false });
  const { middleware, ...doc } = route as typeof route & { middleware: MiddlewareHandler<AppEnv>[] };
  app.openAPIRegistry.registerPath(doc);
  const params = options.request?.params as z.ZodType | undefined;
  app.on([options.method.toUpperCase()], [route.getRoutingPath()], ...middleware, async (c) => {
    if (!params) return handler(c, {} as ParamsOf<R>);
    const parsed = params.safeParse(c.req.param());
    if (!parsed.success) throw validationError(parsed.error.issues, { target: "param" });
    return handler(c, parsed.data as ParamsOf<R>);
  });
}
