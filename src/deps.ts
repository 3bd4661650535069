// Builds what a request or a queue job works with (the Deps of env.ts) once from the Worker's env:
// handlers and jobs take their database, blobs, queue and sheet objects from it, and nothing else
// reads bindings.
import { buildBaseDeps } from "./base-deps";
import type { RequestSessions } from "./db/sessions";
import type { Deps, Env } from "./env";

/** `sessions`: the request's D1 sessions (src/db/sessions.ts); queue jobs and the cron pass none. */
export function buildDeps(env: Env, sessions?: RequestSessions): Deps {
  const base = buildBaseDeps(env, sessions);
  return {
    env,
    get db() {
      return base.db;
    },
    logs: base.logs,
    logsOn: base.logsOn,
    shardOf: base.shardOf,
    knowShard: base.knowShard,
    blocks: base.blocks,
    now: base.now,
    blobs: env.BLOBS,
    jobs: env.JOBS,
    indexQueue: env.INDEX,
    sheet: (sheetId) => env.SHEETS.get(env.SHEETS.idFromName(sheetId)),
  };
}
