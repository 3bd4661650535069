// Work a request starts for after its answer: the runtime keeps it alive (waitUntil) once the
// response has gone. Webhook dispatch (event-dispatch.ts) and the announcement of new logs to the
// indexer use it.
import type { Context } from "hono";
import type { Db } from "../db/client";
import type { AppEnv } from "../env";
import { announceUnindexed } from "../queue/messages";

/** Runs `work` after the answer; without an execution context (a bare app.fetch in a test), before it. */
export async function afterAnswer(c: Context<AppEnv>, work: Promise<unknown>): Promise<void> {
  let ctx: ExecutionContext | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    // No execution context: run it now.
  }
  if (ctx) ctx.waitUntil(work);
  else await work;
}

/**
 * Announces logs the request wrote (to `logs`, the log database they live in) to the index queue,
 * after the answer: a slow or failing queue neither delays nor fails the write (src/logs/indexing.ts).
 */
export function indexAfterAnswer(c: Context<AppEnv>, logs: Db, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return Promise.resolve();
  const deps = c.var.deps;
  return afterAnswer(c, announceUnindexed(deps.indexQueue, deps.shardOf(logs), ids));
}
