// What every part of the Worker works with, the Durable Objects included: the database, the blocks'
// context, the clock. Built from the few bindings it needs, so an object can build it without the
// request-side Deps (deps.ts) and without an import of the Worker's whole env.
import type { BlockContext } from "./blocks/types";
import { getDb, type Db } from "./db/client";
import type { RequestSessions } from "./db/sessions";
import { CONTROL_SHARD, placeWorkspace, shardBinding, type LogShardEnv } from "./logs/shards";
import { blockContextFor, type BlockSettings } from "./services/block-context";

export interface BaseEnv extends BlockSettings, LogShardEnv {
  DB: D1Database;
}

export interface BaseDeps {
  /** The control database: workspaces, keys, prompts, datasets, everything but request logs and spans. */
  readonly db: Db;
  /**
   * The log database holding the workspace's request logs, their side rows and spans (the shard map,
   * src/logs/shards.ts): placed on first use, then known for the rest of the request or job.
   */
  logs(workspaceId: number): Promise<Db>;
  /** The log database bound as `shard` (a LOG_SHARDS binding, or the control database's "DB"). */
  logsOn(shard: string): Db;
  /** The binding a log database handle of logs() or logsOn() was opened from: where a log written through it lives. */
  shardOf(logs: Db): string;
  /** What the caller already knows of a workspace's shard (the key lookup reads it): saves a lookup. */
  knowShard(workspaceId: number, shard: string | null, placed?: (shard: string) => void): void;
  /** What blocks (LLM calls, endpoints, stored prompts) run with, for one workspace. */
  blocks(workspaceId: number): BlockContext;
  now(): number;
}

/** `sessions`: a request's D1 sessions (src/db/sessions.ts); jobs and objects use the bindings as they are. */
export function buildBaseDeps(env: BaseEnv, sessions?: RequestSessions): BaseDeps {
  const open = (name: string, d1: D1Database) => getDb(sessions ? sessions.open(name, d1) : d1);
  let db: Db | undefined;
  const logDbs = new Map<string, Db>();
  const shards = new Map<number, Promise<string>>();
  const placedHooks = new Map<number, (shard: string) => void>();
  const shardOfHandle = new WeakMap<Db, string>();
  const dbOfShard = (shard: string): Db => {
    let handle = shard === CONTROL_SHARD ? deps.db : logDbs.get(shard);
    if (!handle) logDbs.set(shard, (handle = open(shard, shardBinding(env, shard))));
    shardOfHandle.set(handle, shard);
    return handle;
  };
  const deps: BaseDeps = {
    // Made on first use: the hottest routes touch it once, health checks never.
    get db() {
      return (db ??= open("DB", env.DB));
    },
    async logs(workspaceId) {
      let shard = shards.get(workspaceId);
      if (!shard) {
        shard = placeWorkspace(deps.db, env, workspaceId).then((s) => {
          placedHooks.get(workspaceId)?.(s);
          return s;
        });
        shards.set(workspaceId, shard);
        // A failed lookup is not remembered: the next call tries again.
        shard.catch(() => shards.delete(workspaceId));
      }
      return dbOfShard(await shard);
    },
    logsOn: dbOfShard,
    shardOf(logs) {
      const shard = shardOfHandle.get(logs);
      if (!shard) throw new Error("shardOf: not a log database handle of these deps");
      return shard;
    },
    knowShard(workspaceId, shard, placed) {
      if (shard) shards.set(workspaceId, Promise.resolve(shard));
      else if (placed) placedHooks.set(workspaceId, placed);
    },
    blocks: (workspaceId) => blockContextFor(env, deps.db, workspaceId),
    now: () => Date.now(),
  };
  return deps;
}
