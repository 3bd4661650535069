// The job sweeper: no job stays stuck after a crash. Every job kind keeps a heartbeat while it runs
// (an import's and a fill's updated_at, an evaluation run's updated_at, a workflow run's
// heartbeat_at, a signal backfill's updated_at); the cron re-queues a job whose heartbeat is older than the lease, and each kind
// resumes from what it committed (import batches, fill chunks keyed on the log, claimed evaluation
// rows, finished workflow nodes), so a re-queued job never duplicates a row. After a bounded number
// of re-queues the job fails with a message that says so. Recalculations need none of this: their
// sheet object re-arms its alarm when it wakes with queued cells.
import { and, eq, inArray, lt, sql } from "drizzle-orm";
import { datasetJobs, reports, sheetOperations, signalBackfills, workflowExecutions } from "../db/schema";
import type { Deps, Env } from "../env";
import { enqueue, type JobMessage } from "../lib/jobs";
import { markFillFailed } from "../services/datasets";
import { giveUpEvaluationRun } from "../services/evaluations";
import { failOperation } from "../services/tables";
import { giveUpExecution } from "../services/workflows";
import { failBackfill } from "../services/signals";

export interface SweepSettings {
  /** How old a running job's heartbeat may get before the job counts as stopped. */
  leaseMs: number;
  /** Re-queues before a stopped job is failed. */
  maxRedrives: number;
}

const DEFAULT_LEASE_MS = 10 * 60_000;
const DEFAULT_MAX_REDRIVES = 3;
/** Jobs of one kind looked at per sweep; the next minute's sweep takes the rest. */
const SWEEP_LIMIT = 100;

function positive(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

export function sweepSettings(env: Partial<Env>): SweepSettings {
  return { leaseMs: positive(env.JOB_LEASE_MS, DEFAULT_LEASE_MS), maxRedrives: positive(env.JOB_MAX_REDRIVES, DEFAULT_MAX_REDRIVES) };
}

export type SweepDeps = Pick<Deps, "db" | "jobs"> & { env: Partial<Env> };

interface Stopped {
  workspaceId: number;
  redrives: number;
}

/** One job kind: how to find its stopped jobs, claim one for a re-queue, and give one up. */
interface JobKind<R extends Stopped> {
  kind: JobMessage["kind"];
  find(deps: SweepDeps, cutoff: number): Promise<R[]>;
  /** Counts a re-queue and refreshes the heartbeat, only if the job is still stopped (one sweep wins). */
  claim(deps: SweepDeps, job: R, cutoff: number, now: number): Promise<boolean>;
  message(job: R): JobMessage;
  giveUp(deps: SweepDeps, job: R, reason: string): Promise<void>;
}

const claimed = (rows: unknown[]) => rows.length > 0;

const imports: JobKind<Stopped & { row: typeof sheetOperations.$inferSelect }> = {
  kind: "sheet_import",
  find: async ({ db }, cutoff) =>
    (
      await db
        .select()
        .from(sheetOperations)
        .where(and(inArray(sheetOperations.status, ["pending", "running"]), lt(sheetOperations.updatedAt, cutoff)))
        .limit(SWEEP_LIMIT)
    ).map((row) => ({ workspaceId: row.workspaceId, redrives: row.redrives, row })),
  claim: async ({ db }, j, cutoff, now) =>
    claimed(
      await db
        .update(sheetOperations)
        .set({ redrives: sql`${sheetOperations.redrives} + 1`, updatedAt: now })
        .where(and(eq(sheetOperations.seq, j.row.seq), inArray(sheetOperations.status, ["pending", "running"]), lt(sheetOperations.updatedAt, cutoff)))
        .returning({ seq: sheetOperations.seq }),
    ),
  message: (j) => ({ v: 1, kind: "sheet_import", workspace_id: j.workspaceId, operation_id: j.row.id }),
  giveUp: ({ db }, j, reason) => failOperation(db, j.row, `${reason}; create the import again`),
};

const fills: JobKind<Stopped & { id: number }> = {
  kind: "dataset_fill",
  find: async ({ db }, cutoff) =>
    (
      await db
        .select({ id: datasetJobs.id, workspaceId: datasetJobs.workspaceId, redrives: datasetJobs.redrives })
        .from(datasetJobs)
        .where(and(inArray(datasetJobs.status, ["QUEUED", "RUNNING"]), lt(datasetJobs.updatedAt, cutoff)))
        .limit(SWEEP_LIMIT)
    ),
  claim: async ({ db }, j, cutoff, now) =>
    claimed(
      await db
        .update(datasetJobs)
        .set({ redrives: sql`${datasetJobs.redrives} + 1`, updatedAt: now })
        .where(and(eq(datasetJobs.id, j.id), inArray(datasetJobs.status, ["QUEUED", "RUNNING"]), lt(datasetJobs.updatedAt, cutoff)))
        .returning({ id: datasetJobs.id }),
    ),
  message: (j) => ({ v: 1, kind: "dataset_fill", workspace_id: j.workspaceId, job_id: j.id }),
  giveUp: ({ db, env }, j) => markFillFailed(db, j.workspaceId, j.id, env.BLOBS),
};

const evaluationRuns: JobKind<Stopped & { id: number }> = {
  kind: "evaluation_run",
  find: async ({ db }, cutoff) =>
    await db
      .select({ id: reports.id, workspaceId: reports.workspaceId, redrives: reports.redrives })
      .from(reports)
      .where(and(eq(reports.status, "RUNNING"), eq(reports.isBlueprint, false), eq(reports.deleted, false), lt(reports.updatedAt, cutoff)))
      .limit(SWEEP_LIMIT),
  claim: async ({ db }, j, cutoff, now) =>
    claimed(
      await db
        .update(reports)
        .set({ redrives: sql`${reports.redrives} + 1`, updatedAt: now })
        .where(and(eq(reports.id, j.id), eq(reports.status, "RUNNING"), lt(reports.updatedAt, cutoff)))
        .returning({ id: reports.id }),
    ),
  message: (j) => ({ v: 1, kind: "evaluation_run", workspace_id: j.workspaceId, report_id: j.id }),
  giveUp: ({ db }, j, reason) => giveUpEvaluationRun(db, j.workspaceId, j.id, reason),
};

const heartbeatOf = sql`coalesce(${workflowExecutions.heartbeatAt}, ${workflowExecutions.createdAt})`;

const workflowRuns: JobKind<Stopped & { id: number }> = {
  kind: "workflow_run",
  find: async ({ db }, cutoff) =>
    await db
      .select({ id: workflowExecutions.id, workspaceId: workflowExecutions.workspaceId, redrives: workflowExecutions.redrives })
      .from(workflowExecutions)
      .where(and(inArray(workflowExecutions.status, ["QUEUED", "RUNNING"]), lt(heartbeatOf, cutoff)))
      .limit(SWEEP_LIMIT),
  claim: async ({ db }, j, cutoff, now) =>
    claimed(
      await db
        .update(workflowExecutions)
        .set({ redrives: sql`${workflowExecutions.redrives} + 1`, heartbeatAt: now })
        .where(and(eq(workflowExecutions.id, j.id), inArray(workflowExecutions.status, ["QUEUED", "RUNNING"]), lt(heartbeatOf, cutoff)))
        .returning({ id: workflowExecutions.id }),
    ),
  message: (j) => ({ v: 1, kind: "workflow_run", workspace_id: j.workspaceId, execution_id: j.id }),
  giveUp: ({ db }, j, reason) => giveUpExecution(db, j.workspaceId, j.id, reason),
};

const signalBackfillJobs: JobKind<Stopped & { id: number }> = {
  kind: "signal_backfill",
  find: async ({ db }, cutoff) =>
    await db
      .select({ id: signalBackfills.id, workspaceId: signalBackfills.workspaceId, redrives: signalBackfills.redrives })
      .from(signalBackfills)
      .where(and(inArray(signalBackfills.status, ["queued", "running"]), lt(signalBackfills.updatedAt, cutoff)))
      .limit(SWEEP_LIMIT),
  claim: async ({ db }, j, cutoff, now) =>
    claimed(
      await db
        .update(signalBackfills)
        .set({ redrives: sql`${signalBackfills.redrives} + 1`, updatedAt: now })
        .where(and(eq(signalBackfills.id, j.id), inArray(signalBackfills.status, ["queued", "running"]), lt(signalBackfills.updatedAt, cutoff)))
        .returning({ id: signalBackfills.id }),
    ),
  message: (j) => ({ v: 1, kind: "signal_backfill", workspace_id: j.workspaceId, backfill_id: j.id }),
  giveUp: ({ db }, j, reason) => failBackfill(db, j.id, reason),
};

const KINDS = [imports, fills, evaluationRuns, workflowRuns, signalBackfillJobs] as JobKind<Stopped>[];

export interface SweepOutcome {
  /** Jobs put back on the queue, by kind. */
  requeued: Partial<Record<JobMessage["kind"], number>>;
  /** Jobs failed after their last re-queue, by kind. */
  failed: Partial<Record<JobMessage["kind"], number>>;
}

/**
 * Re-queues every job whose heartbeat is older than the lease, or fails it once it has been re-queued
 * maxRedrives times. Safe to run twice at once: a job is claimed by one conditional update.
 */
export async function sweepJobs(deps: SweepDeps, now = Date.now(), settings = sweepSettings(deps.env)): Promise<SweepOutcome> {
  const cutoff = now - settings.leaseMs;
  const out: SweepOutcome = { requeued: {}, failed: {} };
  for (const kind of KINDS) {
    for (const job of await kind.find(deps, cutoff)) {
      if (job.redrives >= settings.maxRedrives) {
        await kind.giveUp(deps, job, `the job stopped ${job.redrives + 1} times without finishing (its worker was restarted) and was given up`);
        out.failed[kind.kind] = (out.failed[kind.kind] ?? 0) + 1;
        continue;
      }
      if (!(await kind.claim(deps, job, cutoff, now))) continue;
      await enqueue(deps.jobs, kind.message(job));
      out.requeued[kind.kind] = (out.requeued[kind.kind] ?? 0) + 1;
    }
  }
  return out;
}
