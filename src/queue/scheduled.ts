// What the cron trigger runs every minute: the webhook sweep, the job sweep, the index sweep, the move
// of logs from before the search index layout (until none is left), the A/B rollup sweep and the A/B
// releases' guardrails, the resend of signal judgements whose message was lost, the log
// archive job, the sweep of idempotency keys past their day, and the log databases' measurement (a
// full one sends its workspaces' new logs elsewhere).
// Events a given-up job writes (an evaluation run's report_finished) are dispatched at once, as the queue consumer does.
import type { Db } from "../db/client";
import type { Deps } from "../env";
import { chainForLog } from "../lib/error-text";
import { archiveOldLogs, archiveSettings, CONTROL_SHARD, configuredShards, indexLeftBehind, measureLogDatabases, moveToLayout, rollupAbLogs, sweepIdempotencyKeys } from "../logs";
import { assignmentKeys, runGuardrails } from "../services/releases";
import { dispatchQuietly, inEventScope, sweepWebhooks } from "../services/webhooks";
import { resendOverdueJudgements, signalMatcher } from "../services/signals";
import { sweepJobs } from "./sweeper";

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
  await moveQuietly(deps);
  await rollupQuietly(deps);
  await guardrailsQuietly(deps, now);
  await onEveryLogDatabase(deps, "signal judgement resend", (logs) => resendOverdueJudgements(deps, logs, now));
  await archiveQuietly(deps, now);
  await sweepKeysQuietly(deps, now);
  await measureQuietly(deps);
}

/** Deletes the idempotency keys past their day from every log database (the control database's log tables included). */
function sweepKeysQuietly(deps: Deps, now: number): Promise<void> {
  return onEveryLogDatabase(deps, "idempotency key sweep", (logs) => sweepIdempotencyKeys(logs, now));
}

/**
 * Runs `sweep` on each log database in turn (the control database's log tables included) and logs
 * what it counted; a database that fails waits for the next minute, the others go on.
 */
async function onEveryLogDatabase(deps: Deps, what: string, sweep: (logs: Db) => Promise<number>): Promise<void> {
  for (const shard of [CONTROL_SHARD, ...configuredShards(deps.env)]) {
    try {
      const count = await sweep(deps.logsOn(shard));
      if (count > 0) console.log(JSON.stringify({ level: "info", msg: what, shard, count }));
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: `${what} failed`, shard, error: chainForLog(err) }));
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

/**
 * Indexes the logs of every log database left unindexed for a while (their queue message was lost,
 * the queue was down, or indexing failed): nothing stays unsearchable. A database that fails waits for
 * the next minute; the others go on.
 */
export function indexQuietly(deps: Deps, now: number): Promise<void> {
  const matcher = signalMatcher(deps);
  return onEveryLogDatabase(deps, "index sweep", (logs) => indexLeftBehind(logs, now, matcher));
}

/**
 * Moves the logs indexed before the search index layout of issue 37 into it (migrations-logs/0010 left
 * them for this), MOVE_MAX_LOGS a database and minute, until none is left; then a no-op.
 */
function moveQuietly(deps: Deps): Promise<void> {
  return onEveryLogDatabase(deps, "layout move", (logs) => moveToLayout(logs));
}

/** Counts the A/B logs the index consumer's rollup step left pending (a lost message, a failure) in their variants' rollups. */
function rollupQuietly(deps: Deps): Promise<void> {
  return onEveryLogDatabase(deps, "A/B rollup sweep", (logs) => rollupAbLogs(logs, (ids) => assignmentKeys(deps.db, ids)));
}

/** Evaluates the guardrails of the running A/B releases that are due; their events go out at once. */
async function guardrailsQuietly(deps: Deps, now: number): Promise<void> {
  const emitted = new Set<number>();
  try {
    const acted = await inEventScope(emitted, () => runGuardrails(deps.db, (ws) => deps.logs(ws), now));
    if (acted > 0) console.log(JSON.stringify({ level: "info", msg: "A/B guardrail decisions", count: acted }));
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "A/B guardrails failed", error: chainForLog(err) }));
  } finally {
    if (emitted.size > 0) await dispatchQuietly(deps, [...emitted]);
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
