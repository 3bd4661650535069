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
 * How long an isolate gathers the logs its requests write before announcing them in one message: a
 * message (and a queue operation, and a delivery) per window rather than per log.
 */
export const ANNOUNCE_WINDOW_MS = 50;

/** Logs written in this isolate and not announced yet, by queue and log database. */
const gathering = new Map<Queue, Map<string, number[]>>();

/**
 * Announces logs the request wrote (to `logs`, the log database they live in) to the index queue,
 * after the answer: a slow or failing queue neither delays nor fails the write (src/logs/indexing.ts).
 * The first request of a window waits ANNOUNCE_WINDOW_MS after its answer and sends what the window
 * gathered, its own logs and those of the requests that came meanwhile; those add their ids and are
 * done. No request waits on another: if the isolate goes before the send, the logs are written and
 * marked unindexed, and the cron's sweeper indexes them.
 */
export function indexAfterAnswer(c: Context<AppEnv>, logs: Db, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return Promise.resolve();
  const deps = c.var.deps;
  const queue = deps.indexQueue;
  const shard = deps.shardOf(logs);
  const byShard = gathering.get(queue) ?? new Map<string, number[]>();
  gathering.set(queue, byShard);
  const window = byShard.get(shard);
  if (window) {
    window.push(...ids);
    return Promise.resolve();
  }
  byShard.set(shard, [...ids]);
  const send = async () => {
    await new Promise((resolve) => setTimeout(resolve, ANNOUNCE_WINDOW_MS));
    const all = byShard.get(shard) ?? [];
    byShard.delete(shard);
    await announceUnindexed(queue, shard, all);
  };
  return afterAnswer(c, send());
}
