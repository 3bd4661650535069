// The queue consumer. The JOBS queue: validates each message and dispatches it to its job's handler,
// the workspaces of a batch in turn and long jobs one slice per delivery (src/queue/turns.ts).
// The index queue: new logs to index, many at once (handleIndexBatch). The signals queue: judgements
// to make, many at once (handleSignalsBatch).
// A message that fails validation can never succeed, so it is logged and acknowledged (not retried);
// a handler that throws is retried with backoff and ends in the dead-letter queue after max_retries.
import type { Env } from "../env";
import { chainForLog } from "../lib/error-text";
import { runImport } from "../services/tables";
import { IndexLogsMessage, JobMessage, type JobSlice } from "../lib/jobs";
import { indexLogs, rollupAbLogs } from "../logs";
import { assignmentKeys } from "../services/releases";
import { giveUpEvaluationRun, runEvaluationBatch, WAIT_SECONDS } from "../services/evaluations";
import { buildDeps } from "../deps";
import { giveUpExecution, runDoneMessages, runExecution } from "../services/workflows";
import { deliverWebhook, dispatchQuietly, inEventScope } from "../services/webhooks";
import { markFillFailed, runDatasetFill } from "../services/datasets";
import { failBackfill, handleJudgeBatch, purgeDeletedSignal, runBackfill, signalMatcher } from "../services/signals";
import { hubName } from "../realtime/protocol";
import { inTurn, jobSliceMs, Turns } from "./turns";

/**
 * Tells the run's realtime subscribers (the SDKs' run workflow calls) that it is over, with its
 * outputs as its caller asked them. A failure here loses nothing for a client that subscribes later
 * (it reads the run's state itself); one already waiting waits until its own timeout.
 */
async function announceRunDone(env: Env, workspaceId: number, executionId: number): Promise<void> {
  try {
    // Each channel of the run has its own object (placed by workspace and channel, as the gate places sockets).
    const messages = await runDoneMessages(buildDeps(env).db, workspaceId, executionId);
    await Promise.all(messages.map((m) => env.REALTIME.get(env.REALTIME.idFromName(hubName(workspaceId, m.channel))).publishDone(workspaceId, [m])));
  } catch (err) {
    console.error(JSON.stringify({ level: "warn", msg: "realtime publish failed", execution_id: executionId, error: chainForLog(err) }));
  }
}

/** What a delivery leaves to do: nothing, or its continuation (queued at the back, after `delaySeconds`). */
type Next = void | { again: JobMessage; delaySeconds?: number };

type Handlers = { [K in JobMessage["kind"]]: (job: Extract<JobMessage, { kind: K }>, env: Env, slice: JobSlice) => Promise<Next> };

/** Deps of a job that snapshots logs (it indexes what waits first): logs it indexes are matched against Signals' hooks as the index queue's are. */
function snapshotDeps(env: Env) {
  const deps = buildDeps(env);
  deps.indexExtension = signalMatcher(deps);
  return deps;
}

const handlers: Handlers = {
  // Records that the queue delivered: R2 is the cheapest place a test can read it back from.
  ping: async (job, env) => {
    await env.BLOBS.put(`queue-pings/${job.workspace_id}/${job.token}`, new Date().toISOString());
  },
  workflow_run: async (job, env, slice) => {
    const deps = buildDeps(env);
    const outcome = await runExecution(deps.db, job.workspace_id, job.execution_id, deps.blocks(job.workspace_id), slice);
    if (outcome === "over") await announceRunDone(env, job.workspace_id, job.execution_id);
    if (outcome === "continue") return { again: job };
  },
  dataset_fill: async (job, env, slice) => {
    const deps = snapshotDeps(env);
    const outcome = await runDatasetFill(deps.db, deps.logs, job.workspace_id, job.job_id, deps.blobs, { slice, offset: job.offset });
    if (outcome.state === "continue") return { again: { ...job, offset: outcome.offset } };
  },
  sheet_import: async (job, env, slice) => {
    if ((await runImport(snapshotDeps(env), job.workspace_id, job.operation_id, { slice })) === "continue") return { again: job };
  },
  webhook_delivery: async (job, env) => {
    await deliverWebhook(buildDeps(env), job.workspace_id, job.delivery_id);
  },
  evaluation_run: async (job, env, slice) => {
    const deps = buildDeps(env);
    const outcome = await runEvaluationBatch(deps.db, job.workspace_id, job.report_id, deps.blocks(job.workspace_id), { slice });
    // Rows are left: the next batch is a new delivery (fresh CPU and subrequest budgets).
    if (outcome === "continue") return { again: job };
    // Rows are left but another delivery holds them: look again later (it may have died).
    if (outcome === "wait") return { again: job, delaySeconds: WAIT_SECONDS };
  },
  signal_backfill: async (job, env) => {
    const step = await runBackfill(buildDeps(env), job.workspace_id, job.backfill_id);
    // Pages are left: the next ones are a new delivery. Every log read: look again later for the judgements left.
    if (step === "continue") return { again: job };
    if (step !== "done") return { again: job, delaySeconds: step.waitSeconds };
  },
  signal_purge: async (job, env) => {
    if ((await purgeDeletedSignal(buildDeps(env), job.workspace_id, job.signal_id)) === "continue") return { again: job };
  },
  // Sent by an earlier version when a signal was renamed, to carry the name to its results; results no
  // longer hold a name (readers show the current one), so a message still queued has nothing to do.
  signal_rename: async () => {},
};

/**
 * What a job that exhausted its retries leaves behind (its message arrives on the dead-letter queue):
 * the job's state says it failed, instead of staying RUNNING forever. Kinds without an entry need nothing.
 */
const deadLetterHandlers: { [K in JobMessage["kind"]]?: (job: Extract<JobMessage, { kind: K }>, env: Env) => Promise<void> } = {
  dataset_fill: (job, env) => markFillFailed(buildDeps(env).db, job.workspace_id, job.job_id, env.BLOBS),
  workflow_run: async (job, env) => {
    await giveUpExecution(buildDeps(env).db, job.workspace_id, job.execution_id);
    await announceRunDone(env, job.workspace_id, job.execution_id);
  },
  evaluation_run: (job, env) => giveUpEvaluationRun(buildDeps(env).db, job.workspace_id, job.report_id),
  signal_backfill: (job, env) => failBackfill(buildDeps(env).db, job.backfill_id, "the backfill's job failed after its retries"),
};

/** The dead-letter queue is named after the jobs queue with "-dlq" (wrangler.toml). */
export const isDeadLetterQueue = (queue: string) => queue.endsWith("-dlq");

async function handleDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const msg of batch.messages) {
    const parsed = JobMessage.safeParse(msg.body);
    if (parsed.success) {
      const handler = deadLetterHandlers[parsed.data.kind] as ((j: JobMessage, e: Env) => Promise<void>) | undefined;
      // A give-up can finish a job (an evaluation run's report_finished): its events go out now, not at the next sweep.
      const emitted = new Set<number>();
      try {
        if (handler) await inEventScope(emitted, () => handler(parsed.data, env));
      } catch (err) {
        console.error(JSON.stringify({ level: "error", msg: "dead-letter handler failed", kind: parsed.data.kind, id: msg.id, error: chainForLog(err) }));
        msg.retry({ delaySeconds: retryDelaySeconds(msg.attempts) });
        continue;
      } finally {
        if (emitted.size > 0) await dispatchQuietly(buildDeps(env), [...emitted]);
      }
    }
    console.error(JSON.stringify({ level: "error", msg: "job given up after its retries", kind: parsed.success ? parsed.data.kind : null, id: msg.id }));
    msg.ack();
  }
}

const RETRY_BASE_SECONDS = 2;
const RETRY_MAX_SECONDS = 300;

/** Exponential backoff: 2, 4, 8 … seconds by attempt, capped at five minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS ** Math.max(1, Math.min(attempts, 9)));
}

/** The index queue is named after the jobs queue with "-index" for "-jobs" (wrangler.toml). */
export const isIndexQueue = (queue: string) => queue.endsWith("-index");

/**
 * The index queue's batch: the ids of each log database indexed together (a few D1 batches of many
 * logs, src/logs/indexing.ts). A failed database's messages are retried; after their retries they are
 * dropped, and the cron's sweeper indexes what they named.
 */
async function handleIndexBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const deps = buildDeps(env);
  // Signals judge new logs: matched where they become searchable.
  const matcher = signalMatcher(deps);
  const byShard = new Map<string, { ids: number[]; messages: Message<unknown>[] }>();
  for (const msg of batch.messages) {
    const parsed = IndexLogsMessage.safeParse(msg.body);
    if (!parsed.success) {
      console.error(JSON.stringify({ level: "error", msg: "invalid index message dropped", id: msg.id, issues: parsed.error.issues.slice(0, 5) }));
      msg.ack();
      continue;
    }
    const group = byShard.get(parsed.data.shard) ?? { ids: [], messages: [] };
    group.ids.push(...parsed.data.ids);
    group.messages.push(msg);
    byShard.set(parsed.data.shard, group);
  }
  for (const [shard, group] of byShard) {
    try {
      const logs = deps.logsOn(shard);
      await indexLogs(logs, group.ids, Date.now(), matcher);
      // The A/B rollups' own step: whatever of this database is pending, these logs' among it.
      await rollupAbLogs(logs, (ids) => assignmentKeys(deps.db, ids));
      for (const msg of group.messages) msg.ack();
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "indexing failed, retrying", shard, logs: group.ids.length, error: chainForLog(err) }));
      for (const msg of group.messages) msg.retry({ delaySeconds: retryDelaySeconds(msg.attempts) });
    }
  }
}

/**
 * Puts a message whose workspace had its turn in this batch back at the end of the queue: sent again
 * (attempts start over: a turn is not a failure), then acknowledged. If the queue refuses, the message
 * is retried instead, so it is never lost.
 */
async function sendToBack(env: Env, msg: Message<unknown>, job: JobMessage): Promise<void> {
  try {
    await env.JOBS.send(job, { contentType: "json" });
    msg.ack();
  } catch (err) {
    console.error(JSON.stringify({ level: "warn", msg: "job could not be sent back for its turn; retried instead", kind: job.kind, id: msg.id, error: chainForLog(err) }));
    msg.retry({ delaySeconds: retryDelaySeconds(1) });
  }
}

/** The signals queue is named after the jobs queue with "-signals" for "-jobs" (wrangler.toml). */
export const isSignalsQueue = (queue: string) => queue.endsWith("-signals");

/** The signals queue's batch: judgements, all at once; a true result's signal_triggered event goes out when the batch is over. */
async function handleSignalsBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const deps = buildDeps(env);
  const emitted = new Set<number>();
  try {
    await inEventScope(emitted, () => handleJudgeBatch(deps, batch.messages));
  } finally {
    if (emitted.size > 0) await dispatchQuietly(deps, [...emitted]);
  }
}

export async function handleQueue(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  if (isDeadLetterQueue(batch.queue)) return handleDeadLetters(batch, env);
  if (isIndexQueue(batch.queue)) return handleIndexBatch(batch, env);
  if (isSignalsQueue(batch.queue)) return handleSignalsBatch(batch, env);
  const sliceMs = jobSliceMs(env.JOB_SLICE_MS);
  const turns = new Turns(sliceMs);
  // Each body is read once; the jobs are then taken with the workspaces in turn.
  const received = batch.messages.map((msg) => ({ msg, parsed: JobMessage.safeParse(msg.body) }));
  for (const { msg, parsed } of inTurn(received, (r) => (r.parsed.success ? r.parsed.data.workspace_id : null))) {
    if (!parsed.success) {
      console.error(JSON.stringify({ level: "error", msg: "invalid job message dropped", id: msg.id, issues: parsed.error.issues.slice(0, 5) }));
      msg.ack();
      continue;
    }
    const job = parsed.data;
    if (!turns.open(job.workspace_id)) {
      await sendToBack(env, msg, job);
      continue;
    }
    // Events a job committed are dispatched once it is over, whether or not it then failed.
    const emitted = new Set<number>();
    const started = Date.now();
    try {
      const next = await inEventScope(emitted, () =>
        (handlers[job.kind] as (j: JobMessage, e: Env, s: JobSlice) => Promise<Next>)(job, env, { endsAt: started + sliceMs, ms: sliceMs }),
      );
      // The continuation is queued before this delivery is acknowledged: if it cannot be, the delivery is retried.
      if (next) await env.JOBS.send(JobMessage.parse(next.again), { contentType: "json", ...(next.delaySeconds ? { delaySeconds: next.delaySeconds } : {}) });
      msg.ack();
    } catch (err) {
      const delaySeconds = retryDelaySeconds(msg.attempts);
      console.error(
        JSON.stringify({ level: "error", msg: "job failed, retrying", kind: job.kind, id: msg.id, attempts: msg.attempts, error: chainForLog(err) }),
      );
      msg.retry({ delaySeconds });
    } finally {
      turns.spend(job.workspace_id, Date.now() - started);
    }
    if (emitted.size > 0) await dispatchQuietly(buildDeps(env), [...emitted]);
  }
}
