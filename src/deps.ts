// Builds what a request or a queue job works with (the Deps of env.ts) once from the Worker's env:
// handlers and jobs take their database, blobs, queue and sheet objects from it, and nothing else
// reads bindings.
import { buildBaseDeps } from "./base-deps";
import type { RequestSessions } from "./db/sessions";
import type { Deps, Env } from "./env";
import { msSetting } from "./lib/time";
import { DEFAULT_PROMPT_CACHE_TTL_MS, PromptCache } from "./prompts";

/** The control database's binding name, as the request's sessions know it. */
const CONTROL_DB = "DB";

/** `sessions`: the request's D1 sessions (src/db/sessions.ts); queue jobs and the cron pass none. */
export function buildDeps(env: Env, sessions?: RequestSessions): Deps {
  const base = buildBaseDeps(env, sessions);
  let prompts: PromptCache | undefined;
  const deps: Deps = {
    env,
    get db() {
      return base.db;
    },
    async logs(workspaceId) {
      const logs = await base.logs(workspaceId);
      if (deps.indexExtension) logs.indexExtension = deps.indexExtension;
      return logs;
    },
    logsOn: base.logsOn,
    shardOf: base.shardOf,
    knowPlacement: base.knowPlacement,
    blocks: base.blocks,
    now: base.now,
    blobs: env.BLOBS,
    jobs: env.JOBS,
    indexQueue: env.INDEX,
    signalsQueue: env.SIGNALS,
    sheet: (sheetId) => env.SHEETS.get(env.SHEETS.idFromName(sheetId)),
    get prompts() {
      return (prompts ??= new PromptCache({
        cache: typeof caches === "undefined" ? null : caches.default,
        ttlMs: msSetting(env.PROMPT_CACHE_TTL_MS, DEFAULT_PROMPT_CACHE_TTL_MS),
        now: base.now,
        bookmarks: {
          sent: () => sessions?.sentFor(CONTROL_DB) ?? null,
          current: () => sessions?.latest(CONTROL_DB) ?? null,
          adopt: (bookmark) => sessions?.adopt(CONTROL_DB, bookmark),
        },
      }));
    },
  };
  return deps;
}
