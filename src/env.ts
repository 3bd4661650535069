// The Worker's bindings (wrangler.toml) and the per-request values the Hono app carries.
import type { SheetObject } from "./sheets";
import type { RealtimeHub } from "./realtime/hub-object";
import type { BlockSettings } from "./blocks";
import type { BaseDeps } from "./base-deps";
import type { AuthContext } from "./lib/auth-context";
import type { PromptCache } from "./prompts";
import type { IndexExtension } from "./logs";

export type { AuthContext };

/** The Worker's bindings and settings; the LLM providers' and ENDPOINT block's settings are BlockSettings. */
export interface Env extends BlockSettings {
  DB: D1Database;
  BLOBS: R2Bucket;
  JOBS: Queue;
  /** The index queue: logs just written, for the indexer (src/logs/indexing.ts). */
  INDEX: Queue;
  /** The signals queue: judgements to make (src/services/signals/). */
  SIGNALS: Queue;
  SHEETS: DurableObjectNamespace<SheetObject>;
  /** The realtime channels of workflow runs (runWorkflow's WebSocket). */
  REALTIME: DurableObjectNamespace<RealtimeHub>;
  SUGGESTIONS_LIMITER: RateLimit;
  /** The static assets (wrangler.toml [assets]): the reference's script and the console's build. */
  ASSETS?: Fetcher;
  LOG_REQUEST_MAX_BYTES?: string;
  /** Largest trace export (OTLP, before and after gunzip) or spans-bulk body. */
  TRACES_MAX_BYTES?: string;
  JSON_MAX_BYTES?: string;
  AUTH_CACHE_TTL_MS?: string;
  AUTH_KEY_CACHE_MS?: string;
  /** How long a template read by label or latest may be answered from the edge cache, in ms (src/prompts/cache.ts). */
  PROMPT_CACHE_TTL_MS?: string;
  /** The log databases (src/logs/shards.ts): bindings in placement order, and a shard's size when full. */
  LOG_SHARDS?: string;
  LOG_SHARD_MAX_BYTES?: string;
  SKILL_JSON_MAX_BYTES?: string;
  SKILL_UPLOAD_MAX_BYTES?: string;
  SKILL_VERSION_MAX_BYTES?: string;
  IMPORT_MAX_FILE_BYTES?: string;
  IMPORT_PART_BYTES?: string;
  // Webhooks: time per delivery attempt, attempts before a delivery fails, first retry delay.
  WEBHOOK_TIMEOUT_MS?: string;
  WEBHOOK_MAX_ATTEMPTS?: string;
  WEBHOOK_RETRY_BASE_SECONDS?: string;
  /** The job sweeper: how old a running job's heartbeat may get (ms), and re-queues before it fails. */
  JOB_LEASE_MS?: string;
  JOB_MAX_REDRIVES?: string;
  /** How long one delivery of a long job works before it queues its continuation, and a workspace's turn in a batch (ms; src/queue/turns.ts). */
  JOB_SLICE_MS?: string;
  /** The log archive job (src/logs/archive.ts): logs and NDJSON bytes per file at most, files per cron run. */
  ARCHIVE_FILE_MAX_LOGS?: string;
  ARCHIVE_FILE_MAX_BYTES?: string;
  ARCHIVE_RUN_MAX_FILES?: string;
  /** Secret (32+ characters) that encrypts environment variables at rest. */
  /** How long a realtime WebSocket may stay open without a valid connect, in ms (default 5000). */
  REALTIME_CONNECT_TIMEOUT_MS?: string;
  ENV_VARS_KEY?: string;
  /** Sandbox for tool code (test-execute) and its limits. */
  LOADER?: WorkerLoader;
  TOOL_EXECUTION_TIMEOUT_MS?: string;
  TOOL_EXECUTION_CPU_MS?: string;
  /** Signals: seconds before the first retry of a judge call the provider refused for now (doubled per retry, at most 5 minutes). */
  SIGNAL_RETRY_BASE_SECONDS?: string;
}

/**
 * What a request, a queue job or a Durable Object works with, built once from the env (deps.ts):
 * handlers take it from the request's context and hand services the part they need.
 */
export interface Deps extends BaseDeps {
  /** The settings (limits, timeouts, secrets) as the deployment sets them. */
  readonly env: Env;
  readonly blobs: R2Bucket;
  readonly jobs: Queue;
  /** Where new logs are announced for indexing (announceUnindexed). */
  readonly indexQueue: Queue;
  /** Where judgements are announced (src/services/signals/). */
  readonly signalsQueue: Queue;
  /**
   * Work added to indexing that logs() hands on to the indexing a snapshot does itself: Signals'
   * matcher, set by the request's wiring (app.ts); the queue and the cron pass it to their indexing.
   */
  indexExtension?: IndexExtension;
  /** The Durable Object that owns a sheet. */
  sheet(sheetId: string): DurableObjectStub<SheetObject>;
  /** The edge cache of template reads, in this data centre. */
  readonly prompts: PromptCache;
}

export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** The request's services, built once before any route runs. */
    deps: Deps;
    auth: AuthContext;
    /** The body's api_key, on the routes that take the key there (http/body-key.ts). */
    bodyApiKey?: string;
    /** Set on the routes that take the key from the body too. */
    acceptsBodyKey?: boolean;
    /** The body types the matched route declares, named in its 415 answer. */
    bodyTypes?: string[];
  };
};
