// The Worker's bindings (wrangler.toml) and the per-request values the Hono app carries.
import type { SheetObject } from "./sheets/sheet-object";
import type { RealtimeHub } from "./realtime/hub-object";
import type { BlockContext } from "./blocks/types";
import type { Db } from "./db/client";

export interface Env {
  DB: D1Database;
  BLOBS: R2Bucket;
  JOBS: Queue;
  SHEETS: DurableObjectNamespace<SheetObject>;
  /** The realtime channels of workflow runs (runWorkflow's WebSocket). */
  REALTIME: DurableObjectNamespace<RealtimeHub>;
  SUGGESTIONS_LIMITER: RateLimit;
  LOG_REQUEST_MAX_BYTES?: string;
  JSON_MAX_BYTES?: string;
  AUTH_CACHE_TTL_MS?: string;
  AUTH_KEY_CACHE_MS?: string;
  // Blocks (issue 5): LLM providers by secret (base URL + key), and the ENDPOINT block's limits.
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  ANTHROPIC_API_KEY?: string;
  LLM_DEFAULT_PROVIDER?: string;
  LLM_DEFAULT_MODEL?: string;
  LLM_TIMEOUT_MS?: string;
  ENDPOINT_TIMEOUT_MS?: string;
  /** "true" lets ENDPOINT blocks call loopback/private addresses: local development only. */
  ENDPOINT_ALLOW_PRIVATE_ADDRESSES?: string;
  SKILL_JSON_MAX_BYTES?: string;
  SKILL_UPLOAD_MAX_BYTES?: string;
  SKILL_VERSION_MAX_BYTES?: string;
  IMPORT_MAX_FILE_BYTES?: string;
  IMPORT_PART_BYTES?: string;
  // Webhooks (issue 9): time per delivery attempt, attempts before a delivery fails, first retry delay.
  WEBHOOK_TIMEOUT_MS?: string;
  WEBHOOK_MAX_ATTEMPTS?: string;
  WEBHOOK_RETRY_BASE_SECONDS?: string;
  /** Secret (32+ characters) that encrypts environment variables at rest. */
  ENV_VARS_KEY?: string;
  /** Sandbox for tool code (test-execute) and its limits. */
  LOADER?: WorkerLoader;
  TOOL_EXECUTION_TIMEOUT_MS?: string;
  TOOL_EXECUTION_CPU_MS?: string;
}

/**
 * What a request, a queue job or a Durable Object works with, built once from the env (deps.ts):
 * handlers take it from the request's context and hand services the part they need.
 */
export interface Deps {
  /** The settings (limits, timeouts, secrets) as the deployment sets them. */
  readonly env: Env;
  readonly db: Db;
  readonly blobs: R2Bucket;
  readonly jobs: Queue;
  /** The Durable Object that owns a sheet. */
  sheet(sheetId: string): DurableObjectStub<SheetObject>;
  /** What blocks (LLM calls, endpoints, stored prompts) run with, for one workspace. */
  blocks(workspaceId: number): BlockContext;
  now(): number;
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
    /** The request's services, built once before any route runs. */
    deps: Deps;
    auth: AuthContext;
    /** The body's api_key, on the routes that take the key there (lib/body-key.ts). */
    bodyApiKey?: string;
    /** Set on the routes that take the key from the body too. */
    acceptsBodyKey?: boolean;
    /** The body types the matched route declares, named in its 415 answer. */
    bodyTypes?: string[];
  };
};
