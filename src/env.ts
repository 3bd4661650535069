// The Worker's bindings (wrangler.toml) and the per-request values the Hono app carries.
import type { SheetObject } from "./sheets/sheet-object";

export interface Env {
  DB: D1Database;
  BLOBS: R2Bucket;
  JOBS: Queue;
  SHEETS: DurableObjectNamespace<SheetObject>;
  SUGGESTIONS_LIMITER: RateLimit;
  LOG_REQUEST_MAX_BYTES?: string;
  JSON_MAX_BYTES?: string;
  AUTH_CACHE_TTL_MS?: string;
  SKILL_JSON_MAX_BYTES?: string;
  SKILL_UPLOAD_MAX_BYTES?: string;
  SKILL_VERSION_MAX_BYTES?: string;
}

/** Who is calling: resolved from X-API-KEY by the auth middleware. */
export interface AuthContext {
  workspaceId: number;
  userId: number;
  userEmail: string;
  apiKeyId: number;
}

export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    auth: AuthContext;
  };
};
