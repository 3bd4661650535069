// Builds what a request, a queue job or a Durable Object works with (the Deps of env.ts) once from
// the Worker's env: nothing else reads bindings.
import { getDb, type Db } from "./db/client";
import type { Deps, Env } from "./env";
import { blockContextFor } from "./services/block-context";

export function buildDeps(env: Env): Deps {
  let db: Db | undefined;
  const deps: Deps = {
    env,
    // Made on first use: the hottest routes touch it once, health checks never.
    get db() {
      return (db ??= getDb(env.DB));
    },
    blobs: env.BLOBS,
    jobs: env.JOBS,
    sheet: (sheetId) => env.SHEETS.get(env.SHEETS.idFromName(sheetId)),
    blocks: (workspaceId) => blockContextFor(env, deps.db, workspaceId),
    now: () => Date.now(),
  };
  return deps;
}
