// What every part of the Worker works with, the Durable Objects included: the database, the blocks'
// context, the clock. Built from the few bindings it needs, so an object can build it without the
// request-side Deps (deps.ts) and without an import of the Worker's whole env.
import { and, eq, isNull, type SQL } from "drizzle-orm";
import { createLlmProviders, DEFAULT_ENDPOINT_POLICY, providerSettings, type BlockContext, type BlockSettings, type LlmProviders, type PromptRef, type ResolvedPrompt } from "./blocks";
import { getDb, type Db } from "./db/client";
import { envVars } from "./db/schema";
import { open } from "./lib/secret-box";
import type { RequestSessions } from "./db/sessions";
import { promisesByKey } from "./lib/collections";
import { CONTROL_SHARD, ensureIdRange, idRangeFor, openPeriod, recordedPlacement, shardBinding, workspacePlacement, WorkspaceLogs, type LogPeriod, type LogShardEnv, type Placement } from "./logs";
import { findPromptVersion } from "./prompts";

export interface BaseEnv extends BlockSettings, LogShardEnv {
  DB: D1Database;
  /** Opens the workspaces' environment variables (their provider keys among them). */
  ENV_VARS_KEY?: string;
}

export interface BaseDeps {
  /** The control database: workspaces, keys, prompts, datasets, everything but request logs and spans. */
  readonly db: Db;
  /**
   * The workspace's request logs, their side rows, groups and spans: the log store's door
   * (src/logs/periods.ts). The workspace is placed on first use (src/logs/shards.ts); when its
   * current database was measured full, a new period begins on another. Each database numbers new
   * logs and groups in its own id range (src/logs/id-ranges.ts). Known for the rest of the request or job.
   */
  logs(workspaceId: number): Promise<WorkspaceLogs>;
  /**
   * The log database bound as `shard` (a LOG_SHARDS binding, or the control database's "DB"), for work
   * over every database that writes no new log or group (the indexer, the cron's sweeps): it is not
   * moved into its id range first, as a database logs() hands out is.
   */
  logsOn(shard: string): Db;
  /** The binding a log database handle of logs() or logsOn() was opened from: where a log written through it lives. */
  shardOf(logs: Db): string;
  /**
   * What the caller already knows of a workspace's placement (the key lookup reads it): saves a
   * lookup. `placed` hears of a placement this request makes (a first one, or a new period).
   */
  knowPlacement(workspaceId: number, placement: Placement | null, placed?: (placement: Placement) => void): void;
  /** What blocks (LLM calls, endpoints, stored prompts) run with, for one workspace. */
  blocks(workspaceId: number): BlockContext;
  now(): number;
}

/** `sessions`: a request's D1 sessions (src/db/sessions.ts); jobs and objects use the bindings as they are. */
export function buildBaseDeps(env: BaseEnv, sessions?: RequestSessions): BaseDeps {
  const open = (name: string, d1: D1Database) => getDb(sessions ? sessions.open(name, d1) : d1);
  let db: Db | undefined;
  const logDbs = new Map<string, Db>();
  const known = new Map<number, Placement>();
  // A failed lookup is not remembered: the next call tries again.
  const stores = promisesByKey<number, WorkspaceLogs>();
  const placedHooks = new Map<number, (placement: Placement) => void>();
  const shardOfHandle = new WeakMap<Db, string>();
  const handleOf = (shard: string): Db => {
    let handle = shard === CONTROL_SHARD ? deps.db : logDbs.get(shard);
    if (!handle) logDbs.set(shard, (handle = open(shard, shardBinding(env, shard))));
    shardOfHandle.set(handle, shard);
    return handle;
  };
  // A database is handed out once it numbers new logs and groups in its own id range (once per isolate).
  const dbOfShard = async (shard: string): Promise<Db> => {
    await ensureIdRange(env, shard, shard === CONTROL_SHARD ? env.DB : shardBinding(env, shard));
    return handleOf(shard);
  };
  const periodsOf = (placement: Placement): Promise<LogPeriod[]> =>
    Promise.all(placement.periods.map(async (shard) => ({ shard, db: await dbOfShard(shard), range: await idRangeFor(env.DB, shard) })));
  const storeOf = async (workspaceId: number): Promise<WorkspaceLogs> => {
    let placement = known.get(workspaceId);
    let changed = false;
    if (!placement) [placement, changed] = [await workspacePlacement(deps.db, env, workspaceId), true];
    if (placement.full) {
      const moved = await openPeriod(deps.db, env, workspaceId, placement);
      [placement, changed] = [moved, changed || moved.shard !== placement.shard];
    }
    if (changed) placedHooks.get(workspaceId)?.(placement);
    // An id of a period opened since (by another isolate) is looked up at the primary.
    const reload = async () => periodsOf((await recordedPlacement(getDb(env.DB), workspaceId)) ?? placement);
    return new WorkspaceLogs(workspaceId, await periodsOf(placement), reload, deps.db);
  };
  const deps: BaseDeps = {
    // Made on first use: the hottest routes touch it once, health checks never.
    get db() {
      return (db ??= open("DB", env.DB));
    },
    logs: (workspaceId) => stores(workspaceId, () => storeOf(workspaceId)),
    logsOn: handleOf,
    shardOf(logs) {
      const shard = shardOfHandle.get(logs);
      if (!shard) throw new Error("shardOf: not a log database handle of these deps");
      return shard;
    },
    knowPlacement(workspaceId, placement, placed) {
      if (placement) known.set(workspaceId, placement);
      if (placed) placedHooks.set(workspaceId, placed);
    },
    blocks: (workspaceId) => blockContextFor(env, deps.db, workspaceId),
    now: () => Date.now(),
  };
  return deps;
}

/**
 * The context blocks run with inside the Worker: LLM providers from the workspace's variables, then
 * the Worker's secrets (read on the first LLM call only), the ENDPOINT policy from vars, and the
 * workspace's prompt registry. Workflow runs, evaluation batches and sheet recalculation chunks each
 * make one; within it a stored prompt is looked up once, however many cells or rows name it.
 */
export function blockContextFor(env: BaseEnv, db: Db, workspaceId: number): BlockContext {
  const timeout = Number(env.ENDPOINT_TIMEOUT_MS);
  let llm: Promise<LlmProviders> | undefined;
  return {
    fetch: (input, init) => fetch(input, init),
    llm: () => (llm ??= workspaceLlm(env, db, workspaceId)),
    endpoint: {
      timeoutMs: timeout > 0 ? timeout : DEFAULT_ENDPOINT_POLICY.timeoutMs,
      allowPrivateAddresses: env.ENDPOINT_ALLOW_PRIVATE_ADDRESSES === "true",
    },
    // A label wins over a version number, then the latest; a prompt is found by its exact name.
    resolvePrompt: oncePerRef(async (ref) => {
      const found = await findPromptVersion(db, workspaceId, {
        name: ref.name,
        ...(ref.label ? { label: ref.label } : ref.version_number ? { version: ref.version_number } : { latest: true as const }),
      });
      return found ? { prompt_template: found.version.promptTemplate, metadata: found.version.metadata ?? null } : null;
    }),
  };
}

/**
 * The LLM providers of one workspace, in the one order (blocks/llm.ts providerSettings): its own
 * variables, then the Worker's secrets. A redirect is the provider's failure, never followed, so a
 * base URL cannot lead a key elsewhere.
 */
export async function workspaceLlm(env: BlockSettings & { ENV_VARS_KEY?: string }, db: Db, workspaceId: number): Promise<LlmProviders> {
  const vars = await envForRun(db, env.ENV_VARS_KEY, workspaceId);
  const { settings, problems } = providerSettings(vars, env, env.ENDPOINT_ALLOW_PRIVATE_ADDRESSES === "true");
  return createLlmProviders(settings, (url, init) => fetch(url, { ...init, redirect: "manual" }), problems);
}

/** Where an environment variable lives: the workspace, or one tool of it. */
export interface EnvScope {
  workspaceId: number;
  toolId: number | null;
}

/** The additional data of a sealed value: a value only opens in the row it was written for. */
export const envVarContext = (scope: EnvScope, key: string) => `env:${scope.workspaceId}:${scope.toolId ?? 0}:${key}`;

export const envVarScope = (scope: EnvScope): SQL =>
  and(eq(envVars.workspaceId, scope.workspaceId), scope.toolId == null ? isNull(envVars.toolId) : eq(envVars.toolId, scope.toolId))!;

/**
 * The variables a run sees, decrypted: the workspace's, overlaid by the tool's when a tool runs.
 * Placeholders (never given a value) are left out. With `only`, just those keys (a stored tool
 * version gets the variables its execution declares, nothing else). The only place that hands
 * decrypted values on.
 */
export async function envForRun(
  db: Db,
  secret: string | undefined,
  workspaceId: number,
  toolId: number | null = null,
  only?: readonly string[],
  /** Variables never handed on: (key, whether it is the tool's own) → true to leave it out. */
  withheld?: (key: string, ofTool: boolean) => boolean,
): Promise<Record<string, string>> {
  if (only && only.length === 0) return {};
  const scopes: EnvScope[] = [{ workspaceId, toolId: null }, ...(toolId == null ? [] : [{ workspaceId, toolId }])];
  const wanted = only ? new Set(only) : null;
  const out: Record<string, string> = {};
  for (const scope of scopes) {
    const rows = await db.select().from(envVars).where(envVarScope(scope));
    for (const row of rows) {
      if (!row.hasValue || (wanted && !wanted.has(row.key)) || withheld?.(row.key, scope.toolId != null)) continue;
      out[row.key] = await open(secret, row.sealedValue, envVarContext(scope, row.key));
    }
  }
  return out;
}

/** Memoizes a prompt lookup by (name, version, label); a failed lookup is not kept, so the next call tries again. */
function oncePerRef(resolve: (ref: PromptRef) => Promise<ResolvedPrompt | null>): (ref: PromptRef) => Promise<ResolvedPrompt | null> {
  const seen = promisesByKey<string, ResolvedPrompt | null>();
  return (ref) => seen(JSON.stringify([ref.name, ref.version_number ?? null, ref.label ?? null]), () => resolve(ref));
}
