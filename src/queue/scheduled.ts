// What the cron trigger runs every minute: the webhook sweep, the job sweep, the index sweep and the
// log archive job.
// Events a given-up job writes (an evaluation run's report_finished) are dispatched at once, as the queue consumer does.
import type { Deps } from "../env";
import { chainForLog } from "../lib/error-text";
import { archiveOldLogs, archiveSettings, CONTROL_SHARD, configuredShards, indexLeftBehind } from "../logs";
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
  await indexQuietly(deps, now);
  await archiveQuietly(deps, now);
}

/**
 * Indexes the logs of every log database left unindexed for a while (their queue message was lost,
 * the queue was down, or indexing failed): nothing stays unsearchable. A database that fails waits for
 * the next minute; the others go on.
 */
export async function indexQuietly(deps: Deps, now: number): Promise<void> {
  for (const shard of [CONTROL_SHARD, ...configuredShards(deps.env)]) {
    try {
      const indexed = await indexLeftBehind(deps.logsOn(shard), now);
      if (indexed > 0) console.log(JSON.stringify({ level: "info", msg: "index sweep", shard, logs: indexed }));
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "index sweep failed", shard, error: chainForLog(err) }));
    }
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
