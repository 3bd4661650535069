// Job messages on the JOBS queue: small (ids and keys, never payloads, well under 128 KB), versioned,
// validated on the way in and on the way out. A new kind of job adds its message to this union.
import { z } from "zod";
import { chainForLog } from "./error-text";

/** Wraps a job body with the envelope fields every message carries. */
export const envelope = <K extends string, B extends z.ZodRawShape>(kind: K, body: B) =>
  z.object({ v: z.literal(1), kind: z.literal(kind), workspace_id: z.int().positive(), ...body });

/** Checks that the queue path works end to end (used by tests and `npm run dev` smoke checks). */
export const PingJob = envelope("ping", { token: z.string().max(200) });

/** Runs (or resumes) one workflow execution; the rows it works on say what is left to do. */
export const WorkflowRunJob = envelope("workflow_run", { execution_id: z.int().positive() });

/**
 * Fills a dataset draft (from-filter-params, create-draft from a version, from-file); the job row holds the
 * parameters. `offset`: a fill from logs' continuation, the position of the first log its slice writes.
 */
export const DatasetFillJob = envelope("dataset_fill", { job_id: z.int().positive(), offset: z.int().nonnegative().optional() });

/** Runs (or resumes) a sheet import; everything else it needs is on the operation row. */
export const SheetImportJob = envelope("sheet_import", { operation_id: z.string().min(1).max(255) });

/** Makes the next attempt of one webhook delivery (event × webhook); the delivery row holds the rest. */
export const WebhookDeliveryJob = envelope("webhook_delivery", { delivery_id: z.string().min(1).max(64) });

/** Evaluates the next batch of an evaluation run's rows (and queues itself again while rows are left). */
export const EvaluationRunJob = envelope("evaluation_run", { report_id: z.int().positive() });

/** Pages a signal backfill on: reads the next logs, queues their judgements, records where it stands. */
export const SignalBackfillJob = envelope("signal_backfill", { backfill_id: z.int().positive() });

/** Deletes a deleted signal's results, judgements owed, daily totals and A/B rows from the log databases, a chunk at a time (`name`: what it was called, for the record). */
export const SignalPurgeJob = envelope("signal_purge", { signal_id: z.int().positive(), name: z.string().min(1).max(255) });

/**
 * Sent by earlier versions on a rename, to carry the new name to the signal's results; results hold no
 * name now, so none is sent, and one still queued is acknowledged with nothing to do.
 */
export const SignalRenameJob = envelope("signal_rename", { signal_id: z.int().positive(), from: z.string().min(1).max(255) });

export const JobMessage = z.discriminatedUnion("kind", [PingJob, WorkflowRunJob, DatasetFillJob, SheetImportJob, WebhookDeliveryJob, EvaluationRunJob, SignalBackfillJob, SignalPurgeJob, SignalRenameJob]);
export type JobMessage = z.infer<typeof JobMessage>;

/**
 * One delivery's share of a long job: it works in steps (a batch of rows, a chunk of logs, a level of
 * nodes), each committed, and once `endsAt` has passed it stops after the step it is in and queues its
 * continuation, which goes to the back of the queue: other workspaces' jobs queued meanwhile take their
 * turn before its next slice (src/queue/turns.ts). Every slice makes one step at least.
 */
export interface JobSlice {
  endsAt: number;
  /** The slice's length (JOB_SLICE_MS): a job that must first find its place again (an import re-reading its file) starts it over there. */
  ms?: number;
}

/** Whether the slice is used up (no slice: the job runs to its end, as direct callers and tests want). */
export const sliceOver = (slice: JobSlice | undefined): boolean => slice !== undefined && Date.now() >= slice.endsAt;

export async function enqueue(queue: Queue, message: JobMessage): Promise<void> {
  await queue.send(JobMessage.parse(message), { contentType: "json" });
}

/** Ids one index message carries at most (a message stays far below the queue's 128 KB). */
export const INDEX_MESSAGE_IDS = 1000;

/**
 * Logs just written to one log database (`shard`, its binding), for the indexer (src/logs/indexing.ts).
 * On the index queue, not the jobs queue: its consumer takes many at once and indexes them together.
 */
export const IndexLogsMessage = z.object({
  v: z.literal(1),
  kind: z.literal("index_logs"),
  shard: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/),
  ids: z.array(z.int().positive()).min(1).max(INDEX_MESSAGE_IDS),
});
export type IndexLogsMessage = z.infer<typeof IndexLogsMessage>;

/**
 * Announces logs to the index queue. Never throws: a queue that refuses or fails loses nothing (the
 * logs are written and marked unindexed, and the cron's sweeper indexes what no message brought).
 */
export async function announceUnindexed(queue: Queue, shard: string, ids: readonly number[]): Promise<void> {
  try {
    for (let at = 0; at < ids.length; at += INDEX_MESSAGE_IDS) {
      const message: IndexLogsMessage = { v: 1, kind: "index_logs", shard, ids: ids.slice(at, at + INDEX_MESSAGE_IDS) };
      await queue.send(IndexLogsMessage.parse(message), { contentType: "json" });
    }
  } catch (err) {
    console.error(JSON.stringify({ level: "warn", msg: "index queue send failed; the sweeper will index these logs", shard, logs: ids.length, error: chainForLog(err) }));
  }
}

/**
 * One judgement to make (src/services/signals/): a log and a signal. On the signals queue, whose
 * consumer calls the judge; the judgement owed is recorded beside the log (signal_pending), so this
 * message is a nudge that may be lost or delivered twice.
 */
export const SignalJudgeMessage = z.object({
  v: z.literal(1),
  kind: z.literal("signal_judge"),
  workspace_id: z.int().positive(),
  request_id: z.int().positive(),
  signal_id: z.int().positive(),
});
export type SignalJudgeMessage = z.infer<typeof SignalJudgeMessage>;

/** Messages per Queue.sendBatch call (the platform's limit). */
const SEND_BATCH = 100;

/** Sends judgement messages, each after its own delay (seconds, at most the queue's 12 hours). Throws when the queue refuses. */
export async function sendJudgements(queue: Queue, items: readonly { workspaceId: number; requestId: number; signalId: number; delaySeconds: number }[]): Promise<void> {
  for (let at = 0; at < items.length; at += SEND_BATCH) {
    await queue.sendBatch(
      items.slice(at, at + SEND_BATCH).map((i) => ({
        body: SignalJudgeMessage.parse({ v: 1, kind: "signal_judge", workspace_id: i.workspaceId, request_id: i.requestId, signal_id: i.signalId }),
        contentType: "json" as const,
        ...(i.delaySeconds > 0 ? { delaySeconds: Math.min(43_200, Math.ceil(i.delaySeconds)) } : {}),
      })),
    );
  }
}
