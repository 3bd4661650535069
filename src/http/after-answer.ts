// Work a request starts for after its answer: the runtime keeps it alive (waitUntil) once the
// response has gone. Webhook dispatch (event-dispatch.ts) and the announcement of new logs to the
// indexer use it.
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { WorkspaceLogs } from "../logs";
import { chainForLog } from "../lib/error-text";
import { announceUnindexed } from "../lib/jobs";

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
const ANNOUNCE_WINDOW_MS = 50;

/** Logs written in this isolate and not announced yet, by queue and log database (weakly: a binding the runtime drops takes its entry along). */
const gathering = new WeakMap<Queue, Map<string, number[]>>();

/**
 * Announces logs the request wrote to the index queue, each in the message of the log database that
 * holds it (found by its id's range: a span's log may go to the database where its trace began, not
 * the current one), after the answer: a slow or failing queue neither delays nor fails the write
 * (src/logs/indexing.ts). The first request of a window waits ANNOUNCE_WINDOW_MS after its answer and
 * sends what the window gathered, its own logs and those of the requests that came meanwhile; those
 * add their ids and are done. No request waits on another: if the isolate goes before the send, the
 * logs are written and marked unindexed, and the cron's sweeper indexes them.
 */
export async function indexAfterAnswer(c: Context<AppEnv>, logs: WorkspaceLogs, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const deps = c.var.deps;
  const queue = deps.indexQueue;
  const byShard = gathering.get(queue) ?? new Map<string, number[]>();
  gathering.set(queue, byShard);
  const sends: Promise<void>[] = [];
  let byDatabase: [shard: string, ids: number[]][];
  try {
    byDatabase = [...(await logs.byDatabase(ids))].map(([db, held]) => [deps.shardOf(db), held]);
  } catch (err) {
    // The logs are written and marked: the sweeper indexes them. The write's answer stands.
    console.error(JSON.stringify({ level: "warn", msg: "index announcement failed; the sweeper will index these logs", logs: ids.length, error: chainForLog(err) }));
    return;
  }
  for (const [shard, held] of byDatabase) {
    const window = byShard.get(shard);
    if (window) {
      window.push(...held);
      continue;
    }
    byShard.set(shard, [...held]);
    const send = async () => {
      await new Promise((resolve) => setTimeout(resolve, ANNOUNCE_WINDOW_MS));
      const all = byShard.get(shard) ?? [];
      byShard.delete(shard);
      await announceUnindexed(queue, shard, all);
    };
    sends.push(afterAnswer(c, send()));
  }
  await Promise.all(sends);
}
