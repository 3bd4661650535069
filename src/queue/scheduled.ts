// What the cron trigger runs every minute: the webhook sweep, the job sweep, the log archive job, the
// sweep of idempotency keys past their day, and the log databases' measurement (a full one sends its
// workspaces' new logs elsewhere).
// Events a given-up job writes (an evaluation run's report_finished) are dispatched at once, as the queue consumer does.
import type { Deps } from "../env";
import { chainForLog } from "../lib/error-text";
import { getDb } from "../db/client";
import { archiveOldLogs, archiveSettings, CONTROL_SHARD, configuredShards, measureLogDatabases, sweepIdempotencyKeys } from "../logs";
import { shardBinding } from "../logs/shards";
import { inEventScope } from "../services/events";
import { sweepJobs } from "../services/job-sweeper";
import { dispatchQuietly, sweepWebhooks } from "../services/webhook-delivery";

export async function runScheduled(deps: Deps, now = Date.now()): Promise<void> {
  const emitted = new Set<number>();
  try {
    await inEventScope(emitted, async () => {
      const jobs = await sweepJobs(deps, now);
      if (Object.keys(jobs.requeued).length || Object.keys(jobs.failed).length) {
        console.log(JSON.stringify({ level: "info", msg: "job sweep", requeued: jobs.requeued, failed: jobs.failed }));
      }
    });
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "job sweep failed", error: chainForLog(err) }));
  } finally {
    if (emitted.size > 0) await dispatchQuietly(deps, [...emitted]);
  }
  await sweepWebhooks(deps);
  await archiveQuietly(deps, now);
  await sweepKeysQuietly(deps, now);
  await measureQuietly(deps);
}

/** Deletes the idempotency keys past their day from every log database (the control database's log tables included). */
async function sweepKeysQuietly(deps: Deps, now: number): Promise<void> {
  for (const shard of [CONTROL_SHARD, ...configuredShards(deps.env)]) {
    try {
      const deleted = await sweepIdempotencyKeys(shard === CONTROL_SHARD ? deps.db : getDb(shardBinding(deps.env, shard)), now);
      if (deleted > 0) console.log(JSON.stringify({ level: "info", msg: "idempotency keys swept", shard, deleted }));
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "idempotency key sweep failed", shard, error: chainForLog(err) }));
    }
  }
}

/** Measures the log databases; one measured full takes no new logs once its workspaces' next requests begin a new period elsewhere. */
async function measureQuietly(deps: Deps): Promise<void> {
  try {
    const full = (await measureLogDatabases(deps.db, deps.env)).filter((m) => m.full);
    if (full.length > 0) console.log(JSON.stringify({ level: "info", msg: "log databases full", databases: full.map((m) => m.binding) }));
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "log database measurement failed", error: chainForLog(err) }));
  }
}

/** Moves logs past their workspace's retention window to R2; a failure waits for the next minute (nothing is lost). */
async function archiveQuietly(deps: Deps, now: number): Promise<void> {
  try {
    const run = await archiveOldLogs(deps.db, deps.logs, deps.blobs, archiveSettings(deps.env), now);
    if (run.files > 0) console.log(JSON.stringify({ level: "info", msg: "log archive", files: run.files, logs: run.logs }));
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "log archive failed", error: chainForLog(err) }));
  }
}
