// Middleware every request passes: a request id and one structured log line; API-key auth; body limits.
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../env";
import { getDb } from "../db/client";
import { authenticate } from "../services/auth";
import { ApiError } from "./errors";

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

export const requireAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header("x-api-key");
  if (!key) throw new ApiError("unauthorized", "X-API-KEY header is missing");
  const auth = await authenticate(getDb(c.env.DB), key);
  if (!auth) throw new ApiError("unauthorized", "X-API-KEY is unknown or revoked");
  c.set("auth", auth);
  await next();
};

const DEFAULT_MAX_BYTES = 1_048_576;

function bytesFrom(value: string | undefined): number {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_MAX_BYTES;
}

/** Caps a request body at the size named by an env var (checked on Content-Length and while streaming). */
export function limitBody(envVar: "LOG_REQUEST_MAX_BYTES" | "JSON_MAX_BYTES"): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const maxSize = bytesFrom(c.env[envVar]);
    return bodyLimit({
      maxSize,
      onError: () => {
        throw new ApiError("payload_too_large", `request body is larger than ${maxSize} bytes`);
      },
    })(c, next);
  };
}
