// Fair shares of background work: a workspace may have at most JOB_CAPS[kind] jobs of a kind queued or
// running at once; one more is a 429 with Retry-After, so one workspace cannot fill the queue that
// every workspace shares (twenty concurrent 150k-row imports from one workspace starved the others;
// a signal backfill each puts up to 100,000 judgements on the signals queue every workspace shares).
// The consumer then serves the workspaces in turn (src/queue/turns.ts). Counts read the open-jobs
// partial indexes each job table already has.
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { datasetJobs, reports, sheetOperations, signalBackfills, workflowExecutions } from "../../db/schema";
import { ApiError } from "../../lib/errors";

export type CappedJob = "sheet_import" | "dataset_fill" | "evaluation_run" | "workflow_run" | "signal_backfill";

/** Jobs of each kind a workspace may have queued or running at once. */
export const JOB_CAPS: Readonly<Record<CappedJob, number>> = { sheet_import: 5, dataset_fill: 5, evaluation_run: 5, workflow_run: 50, signal_backfill: 5 };

/** What a refused request is told to wait before trying again. */
export const JOB_RETRY_AFTER_SECONDS = 30;

const NOUN: Record<CappedJob, string> = {
  sheet_import: "imports",
  dataset_fill: "dataset fills",
  evaluation_run: "evaluation runs",
  workflow_run: "workflow runs",
  signal_backfill: "signal backfills",
};

/** The number of the workspace's jobs of a kind that are queued or running, as SQL (for a guard inside an insert). */
export function openJobsSql(kind: CappedJob, workspaceId: number): SQL {
  switch (kind) {
    case "sheet_import":
      return sql`(SELECT count(*) FROM ${sheetOperations} WHERE ${sheetOperations.status} IN ('pending', 'running') AND ${sheetOperations.workspaceId} = ${workspaceId})`;
    case "dataset_fill":
      return sql`(SELECT count(*) FROM ${datasetJobs} WHERE ${datasetJobs.status} IN ('QUEUED', 'RUNNING') AND ${datasetJobs.workspaceId} = ${workspaceId})`;
    case "evaluation_run":
      return sql`(SELECT count(*) FROM ${reports} WHERE ${reports.status} = 'RUNNING' AND ${reports.isBlueprint} = 0 AND ${reports.workspaceId} = ${workspaceId})`;
    case "workflow_run":
      return sql`(SELECT count(*) FROM ${workflowExecutions} WHERE ${workflowExecutions.status} IN ('QUEUED', 'RUNNING') AND ${workflowExecutions.workspaceId} = ${workspaceId})`;
    case "signal_backfill":
      return sql`(SELECT count(*) FROM ${signalBackfills} WHERE ${signalBackfills.status} IN ('queued', 'running') AND ${signalBackfills.workspaceId} = ${workspaceId})`;
  }
}

/** True while the workspace may start one more job of the kind, as SQL. */
export const roomForJobSql = (kind: CappedJob, workspaceId: number): SQL => sql`${openJobsSql(kind, workspaceId)} < ${JOB_CAPS[kind]}`;

export function jobCapError(kind: CappedJob): ApiError {
  return new ApiError(
    "rate_limited",
    `the workspace has ${JOB_CAPS[kind]} ${NOUN[kind]} queued or running, the most it may have at once; retry after ${JOB_RETRY_AFTER_SECONDS} seconds, once one has finished`,
    { headers: { "Retry-After": String(JOB_RETRY_AFTER_SECONDS) } },
  );
}

/** Throws the 429 when the workspace already has its cap of the kind open (a check before the work of creating one). */
export async function assertRoomForJob(db: Db, workspaceId: number, kind: CappedJob): Promise<void> {
  const row = await db.get<{ n: number }>(sql`SELECT ${openJobsSql(kind, workspaceId)} AS n`);
  if ((row?.n ?? 0) >= JOB_CAPS[kind]) throw jobCapError(kind);
}
