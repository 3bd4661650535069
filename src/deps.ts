// Builds what a request or a queue job works with (the Deps of env.ts) once from the Worker's env:
// handlers and jobs take their database, blobs, queue and sheet objects from it, and nothing else
// reads bindings.
import { buildBaseDeps } from "./base-deps";
import type { Deps, Env } from "./env";

export function buildDeps(env: Env): Deps {
  const base = buildBaseDeps(env);
  return {
    env,
    get db() {
      return base.db;
    },
    blocks: base.blocks,
    now: base.now,
    blobs: env.BLOBS,
    jobs: env.JOBS,
    sheet: (sheetId) => env.SHEETS.get(env.SHEETS.idFromName(sheetId)),
  };
}
