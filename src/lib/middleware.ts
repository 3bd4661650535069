// Middleware every request passes: a request id and one structured log line; API-key auth; body limits.
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../env";
import { getDb } from "../db/client";
import { AuthCache, authenticateHash, hashKey, plausibleKey, UNKNOWN_KEY } from "../services/auth";
import { ApiError } from "./errors";
import { presentedKey } from "./body-key";

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
  const started = performance.now();
  const incoming = c.req.header("x-request-id");
  const requestId = incoming && INCOMING_ID.test(incoming) ? incoming : crypto.randomUUID();
  c.set("requestId", requestId);
  await next();
  c.res.headers.set("X-Request-Id", requestId);
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

async function verifyKey(c: Context<AppEnv>, cache?: AuthCache): Promise<Verified> {
  const key = presentedKey(c);
  if (!plausibleKey(key)) throw new ApiError("unauthorized", UNKNOWN_KEY);
  const keyHash = await hashKey(key);
  const cached = cache?.get(keyHash);
  if (cached) {
    c.set("auth", cached);
    return { keyHash, fromCache: true };
  }
  const auth = await authenticateHash(getDb(c.env.DB), keyHash);
  if (!auth) throw new ApiError("unauthorized", UNKNOWN_KEY);
  cache?.set(keyHash, auth, ttlFrom(c.env.AUTH_CACHE_TTL_MS));
  c.set("auth", auth);
  return { keyHash, fromCache: false };
}

/** Every request: the key is looked up in D1, so a revoked key is refused at once. */
export const requireAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  await verifyKey(c);
  await next();
};

const authCache = new AuthCache();
const DEFAULT_AUTH_CACHE_TTL_MS = 60_000;

function ttlFrom(value: string | undefined): number {
  const n = Number(value ?? DEFAULT_AUTH_CACHE_TTL_MS);
  return Number.isFinite(n) && n >= 0 ? n : DEFAULT_AUTH_CACHE_TTL_MS;
}

/**
 * ONLY for routes whose every write is refused by the database for a revoked key (today
 * POST /log-request, guarded by the request_logs_key_guard trigger): a verified key is cached in the
 * isolate for AUTH_CACHE_TTL_MS, so the success path costs no key lookup. Any other answer given on
 * a cached key (a 400, say) is re-checked against D1 first, so a revoked key always sees 401.
 */
export const requireCachedAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { keyHash, fromCache } = await verifyKey(c, authCache);
  await next();
  if (fromCache && c.res.status >= 400 && c.res.status !== 401) {
    if (!(await authenticateHash(getDb(c.env.DB), keyHash))) {
      authCache.delete(keyHash);
      throw new ApiError("unauthorized", UNKNOWN_KEY);
    }
  }
  if (c.res.status === 401) authCache.delete(keyHash);
};

const DEFAULT_MAX_BYTES = 1_048_576;

/** The env vars that name a body size in bytes. */
export type BodyLimitVar = "LOG_REQUEST_MAX_BYTES" | "JSON_MAX_BYTES" | "SKILL_JSON_MAX_BYTES" | "SKILL_UPLOAD_MAX_BYTES";

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
    return bodyLimit({
      maxSize,
      onError: () => {
        throw new ApiError("payload_too_large", `request body is larger than ${maxSize} bytes`);
      },
    })(c, next);
  };
}
