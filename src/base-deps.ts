// What every part of the Worker works with, the Durable Objects included: the database, the blocks'
// context, the clock. Built from the few bindings it needs, so an object can build it without the
// request-side Deps (deps.ts) and without an import of the Worker's whole env.
import type { BlockContext } from "./blocks/types";
import { getDb, type Db } from "./db/client";
import type { RequestSessions } from "./db/sessions";
import { ensureIdRange } from "./logs/id-ranges";
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
   * src/logs/shards.ts): placed on first use, then known for the rest of the request or job. It
   * numbers new logs and groups in its own id range (src/logs/id-ranges.ts).
   */
  logs(workspaceId: number): Promise<Db>;
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
  // A database is handed out once it numbers new logs and groups in its own id range (once per isolate).
  const dbOfShard = async (shard: string): Promise<Db> => {
    const binding = shard === CONTROL_SHARD ? env.DB : shardBinding(env, shard);
    await ensureIdRange(env, shard, binding);
    if (shard === CONTROL_SHARD) return deps.db;
    let handle = logDbs.get(shard);
    if (!handle) logDbs.set(shard, (handle = open(shard, binding)));
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
    knowShard(workspaceId, shard, placed) {
      if (shard) shards.set(workspaceId, Promise.resolve(shard));
      else if (placed) placedHooks.set(workspaceId, placed);
    },
    blocks: (workspaceId) => blockContextFor(env, deps.db, workspaceId),
    now: () => Date.now(),
  };
  return deps;
}
