// What every part of the Worker works with, the Durable Objects included: the database, the blocks'
// context, the clock. Built from the few bindings it needs, so an object can build it without the
// request-side Deps (deps.ts) and without an import of the Worker's whole env.
import type { BlockContext } from "./blocks/types";
import { getDb, type Db } from "./db/client";
import { blockContextFor, type BlockSettings } from "./services/block-context";

export interface BaseEnv extends BlockSettings {
  DB: D1Database;
}

export interface BaseDeps {
  readonly db: Db;
  /** What blocks (LLM calls, endpoints, stored prompts) run with, for one workspace. */
  blocks(workspaceId: number): BlockContext;
  now(): number;
}

export function buildBaseDeps(env: BaseEnv): BaseDeps {
  let db: Db | undefined;
  const deps: BaseDeps = {
    // Made on first use: the hottest routes touch it once, health checks never.
    get db() {
      return (db ??= getDb(env.DB));
    },
    blocks: (workspaceId) => blockContextFor(env, deps.db, workspaceId),
    now: () => Date.now(),
  };
  return deps;
}
