// Middleware every request passes: a request id and one structured log line; API-key auth; body limits.
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv, AuthContext } from "../env";
import { CONTROL_SHARD, placementOf } from "../logs";
import { AuthCache, authenticateHash, hashKey, plausibleKey, UnknownKeyCache } from "../services/workspace";
import { ApiError, UNKNOWN_KEY } from "../lib/errors";
import { msSetting } from "../lib/time";
import { drainBody } from "../lib/drain";
import { capStream } from "../lib/read-body";
import { presentedKey } from "./body-key";
import { grants, type Scope } from "../lib/scopes";

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
  const started = performance.now();
  const incoming = c.req.header("x-request-id");
  const requestId = incoming && INCOMING_ID.test(incoming) ? incoming : crypto.randomUUID();
  c.set("requestId", requestId);
  await next();
  // An answer given before the body was read (a bad path parameter, a missing key, an unknown route)
  // leaves the body on the connection: locally the runtime then drops other requests in flight
  // ("worker restarted mid-request"). What no one read is drained first.
  const raw = c.req.raw;
  if (raw.body && !raw.bodyUsed) await drainBody(raw.body.getReader());
  c.res.headers.set("X-Request-Id", requestId);
  // API answers are not to be sniffed into another type nor kept by any cache; the pages and files of
  // /docs and /console (which carry their own Content-Security-Policy) keep the assets' caching.
  c.res.headers.set("X-Content-Type-Options", "nosniff");
  if (!c.res.headers.has("Content-Security-Policy")) c.res.headers.set("Cache-Control", "no-store");
  const auth = c.get("auth");
  console.log(
    JSON.stringify({
      level: c.res.status >= 500 ? "error" : "info",
      msg: "request",
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      request_id: requestId,
      workspace_id: auth?.workspaceId ?? null,
    }),
  );
};

interface Verified {
  keyHash: string;
  /** True when the key came from the isolate's cache rather than from D1 just now. */
  fromCache: boolean;
}

const authCache = new AuthCache();
const unknownKeys = new UnknownKeyCache();
/** How long every route trusts a verified key (AUTH_KEY_CACHE_MS): the most a revocation waits. */
const DEFAULT_AUTH_KEY_CACHE_MS = 5_000;
/**
 * How long POST /log-request trusts one (AUTH_CACHE_TTL_MS) for a workspace logging into the control
 * database, whose trigger refuses a revoked key's writes at once. Log databases have no keys to check
 * against: there it trusts a key as long as every route does.
 */
const DEFAULT_AUTH_CACHE_TTL_MS = 60_000;

/** The key's context from the isolate's cache when verified less than `maxAgeMs` ago, else from D1. */
async function verifyKey(c: Context<AppEnv>, maxAgeMs: number | ((auth: AuthContext) => number)): Promise<Verified> {
  const key = presentedKey(c);
  if (!plausibleKey(key)) throw new ApiError("unauthorized", UNKNOWN_KEY);
  const keyHash = await hashKey(key);
  if (unknownKeys.has(keyHash)) throw new ApiError("unauthorized", UNKNOWN_KEY);
  const cached = authCache.get(keyHash, maxAgeMs);
  if (cached) {
    useAuth(c, cached);
    return { keyHash, fromCache: true };
  }
  const auth = await authenticateHash(c.var.deps.db, keyHash);
  if (!auth) {
    authCache.delete(keyHash);
    unknownKeys.add(keyHash, msSetting(c.env.AUTH_KEY_CACHE_MS, DEFAULT_AUTH_KEY_CACHE_MS));
    throw new ApiError("unauthorized", UNKNOWN_KEY);
  }
  // Kept as long as the longest reader wants it; each reader checks its own age.
  const keep = Math.max(msSetting(c.env.AUTH_KEY_CACHE_MS, DEFAULT_AUTH_KEY_CACHE_MS), msSetting(c.env.AUTH_CACHE_TTL_MS, DEFAULT_AUTH_CACHE_TTL_MS));
  authCache.set(keyHash, auth, keep);
  useAuth(c, auth);
  return { keyHash, fromCache: false };
}

/**
 * The request's caller, and its workspace's log databases as the lookup found them. A workspace placed
 * (or moved to a new period) by this request updates the cached context too, so later requests skip
 * the placement's read.
 */
function useAuth(c: Context<AppEnv>, auth: AuthContext): void {
  c.set("auth", auth);
  c.var.deps.knowPlacement(auth.workspaceId, auth.logShard ? placementOf({ shard: auth.logShard, periods: auth.logPeriods, full: auth.logShardFull }) : null, (placed) => {
    auth.logShard = placed.shard;
    auth.logPeriods = placed.periods;
    auth.logShardFull = placed.full;
  });
}

/**
 * Every authenticated route: a key verified less than AUTH_KEY_CACHE_MS ago (5 s by default) in
 * this isolate is trusted without a D1 lookup, so a read costs one round trip (its own work). The
 * cache is per isolate and nothing is shared, so a revoked key is refused by every isolate at most
 * AUTH_KEY_CACHE_MS after the revocation (each one verifies it again once its entry is that old).
 */
export const requireAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { keyHash } = await verifyKey(c, msSetting(c.env.AUTH_KEY_CACHE_MS, DEFAULT_AUTH_KEY_CACHE_MS));
  await next();
  if (c.res.status === 401) authCache.delete(keyHash);
};

/**
 * ONLY for routes whose every write is refused by the database for a revoked key (today
 * POST /log-request, guarded by the request_logs_key_guard trigger of the control database): a
 * verified key of a workspace logging there is trusted for AUTH_CACHE_TTL_MS (60 s), so the success
 * path costs no key lookup; one logging into a log database, for AUTH_KEY_CACHE_MS like every
 * route. Any other answer given on a cached key (a 400, say) is re-checked against D1 first, so a
 * revoked key always sees 401.
 */
export const requireCachedAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const guarded = msSetting(c.env.AUTH_CACHE_TTL_MS, DEFAULT_AUTH_CACHE_TTL_MS);
  const everyRoute = msSetting(c.env.AUTH_KEY_CACHE_MS, DEFAULT_AUTH_KEY_CACHE_MS);
  const { keyHash, fromCache } = await verifyKey(c, (auth) => (auth.logShard === CONTROL_SHARD ? guarded : everyRoute));
  await next();
  if (fromCache && c.res.status >= 400 && c.res.status !== 401) {
    if (!(await authenticateHash(c.var.deps.db, keyHash))) {
      authCache.delete(keyHash);
      throw new ApiError("unauthorized", UNKNOWN_KEY);
    }
  }
  if (c.res.status === 401) authCache.delete(keyHash);
};

/**
 * After auth: the key must hold `scope` (or one that includes it, lib/scopes.ts), else 403 naming the
 * scope, before the body is read or anything is done.
 */
export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    assertScope(c, scope);
    await next();
  };
}

/**
 * The same 403, from a handler: for a scope that what the body asks for needs (a sheet imported from
 * request logs needs logs:read), `why` saying which part of the body asked for it.
 */
export function assertScope(c: Context<AppEnv>, scope: Scope, why = ""): void {
  const held = c.get("auth").scopes ?? [];
  if (!grants(held, scope)) {
    throw new ApiError("forbidden", `this API key lacks the scope ${scope} that ${c.req.method} ${c.req.path}${why ? ` ${why}` : ""} needs (it has ${held.length > 0 ? held.join(", ") : "none"})`, {
      details: [{ field: "X-API-KEY", rule: `needs scope ${scope}` }],
    });
  }
}

/** Every key of the workspace is looked up again on its next request (its policy or scopes changed). */
export function forgetWorkspaceKeys(workspaceId: number): void {
  authCache.forgetWorkspace(workspaceId);
}

const DEFAULT_MAX_BYTES = 1_048_576;

/** The env vars that name a body size in bytes. */
export type BodyLimitVar = "LOG_REQUEST_MAX_BYTES" | "JSON_MAX_BYTES" | "SKILL_JSON_MAX_BYTES" | "SKILL_UPLOAD_MAX_BYTES" | "TRACES_MAX_BYTES";

function bytesFrom(value: string | undefined): number {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_MAX_BYTES;
}

/** The byte limit an env var sets (1 MiB when unset or not a positive number). */
export function maxBytesOf(env: AppEnv["Bindings"], envVar: BodyLimitVar | "SKILL_VERSION_MAX_BYTES"): number {
  return bytesFrom(env[envVar]);
}

const isMultipartRequest = (c: Context<AppEnv>) => /^multipart\/form-data\s*(;|$)/i.test(c.req.header("content-type") ?? "");

/**
 * Caps a request body at the size named by an env var (checked on Content-Length and while streaming).
 * A multipart body, when the route takes one, gets its own cap: only Content-Length is checked here,
 * because hono's bodyLimit would buffer the stream; the route's streaming reader counts the rest.
 */
export function limitBody(envVar: BodyLimitVar, multipartVar?: BodyLimitVar): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (multipartVar && isMultipartRequest(c)) {
      const maxSize = maxBytesOf(c.env, multipartVar);
      const declared = Number(c.req.header("content-length") ?? 0);
      if (declared > maxSize) throw new ApiError("payload_too_large", `request body is larger than ${maxSize} bytes`);
      return next();
    }
    const maxSize = maxBytesOf(c.env, envVar);
    const tooLarge = () => new ApiError("payload_too_large", `request body is larger than ${maxSize} bytes`);
    const body = c.req.raw.body;
    if (!body) return next();
    const declared = c.req.header("content-length");
    if (declared !== undefined && Number(declared) > maxSize) {
      await drainBody(body.getReader());
      throw tooLarge();
    }
    // A declared length within the cap is all the body there is (the runtime holds a body to its
    // Content-Length): nothing to count.
    if (declared !== undefined && /^\d+$/.test(declared)) return next();
    // A body without one is read through a counter: past the cap it stops, the rest is drained, and
    // the answer is a 413 whatever the handler made of the cut body.
    const counted = capStream(body, maxSize, tooLarge);
    c.req.raw = new Request(c.req.raw, { body: counted.stream, duplex: "half" } as RequestInit);
    await next();
    if (counted.exceeded()) throw tooLarge();
  };
}

