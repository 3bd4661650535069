// Evaluation runs: POST /reports/{id}/run snapshots the pipeline's columns into a new report with one
// result row per dataset row, and queues it; the evaluation_run job evaluates rows with the shared
// block engine (evaluateBlock, the same as workflow nodes and sheet columns) in bounded batches: at most
// ROWS_PER_BATCH rows, CELLS_PER_BATCH cells or the consumer's slice of wall time per delivery (JobSlice),
// then it queues its continuation, so no invocation nears the Worker's limits and other workspaces' jobs
// take their turn between its batches. A row's cells are written once,
// when all its columns are done: a redelivered job re-evaluates only rows not yet written, never twice.
import { assertRoomForJob } from "../workspace";
import { and, asc, eq, ne, sql } from "drizzle-orm";
import { evaluateBlock, type BlockContext } from "../../blocks";
import type { Db } from "../../db/client";
import { col, columnList, inJsonList } from "../../db/sql";
import { datasetRows, datasets, reportColumns, reportRows, reports, type ReportCells, type ReportColumnRow } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { chainIncludes } from "../../lib/error-text";
import { enqueue, sliceOver, type JobSlice } from "../../lib/jobs";
import { columnSources, validateColumns } from "./columns";
import { eventStatement } from "../webhooks";
import { runBatch } from "../../db/batch";

/**
 * Rows one delivery evaluates at most (it stops claiming more once its slice is used up). Cells per
 * delivery are bounded too, since each may be an outbound call: 500 keeps a delivery well under the
 * Workers limit of 1,000 subrequests (with its D1 statements).
 */
export const ROWS_PER_BATCH = 100;
export const CELLS_PER_BATCH = 500;
/** Rows evaluated at once: LLM and ENDPOINT cells wait on the network, not on the CPU. */
const ROW_CONCURRENCY = 5;


export interface RunBody {
  name: string;
  dataset_id?: number | null;
  refresh_dataset?: boolean | null;
}

/** The columns a pipeline column is written with (a new one, or a pipeline's copied into its run). */
export const COLUMN_COLUMNS = columnList(reportColumns, ["workspaceId", "reportId", "columnType", "name", "position", "configuration", "isPartOfScore"]);

/** Starts a run of a pipeline; answers the new run's report id (the job is queued). */

export async function startEvaluationRun(db: Db, jobs: Queue, auth: AuthContext, pipelineId: number, body: RunBody): Promise<number> {
  const ws = auth.workspaceId;
  const [pipeline] = await db
    .select()
    .from(reports)
    .where(and(eq(reports.workspaceId, ws), eq(reports.id, pipelineId), eq(reports.deleted, false)))
    .limit(1);
  if (!pipeline) throw ApiError.notFound("evaluation pipeline");
  if (!pipeline.isBlueprint) throw new ApiError("validation_error", `report_id: report ${pipelineId} is a run; run its pipeline (${pipeline.parentReportId})`);
  if (body.refresh_dataset) {
    throw new ApiError("validation_error", "refresh_dataset: refreshing a dataset before a run is not supported; refill it with from-filter-params and save-draft, then run");
  }
  const datasetId = body.dataset_id ?? pipeline.datasetId;
  const [dataset] = await db
    .select()
    .from(datasets)
    .where(and(eq(datasets.workspaceId, ws), eq(datasets.id, datasetId), eq(datasets.isDeleted, false)))
    .limit(1);
  if (!dataset) throw new ApiError("not_found", `dataset_id: dataset ${datasetId} not found`);
  if (dataset.versionNumber < 1) throw new ApiError("validation_error", "dataset_id: a draft cannot be evaluated; save it first (save-draft)");
  const columns = await db.select().from(reportColumns).where(eq(reportColumns.reportId, pipeline.id)).orderBy(asc(reportColumns.position));
  if (columns.length === 0) throw new ApiError("validation_error", "report_id: the pipeline has no columns to run; add one with POST /report-columns");
  const issues = validateColumns(
    columns.map((c) => ({ column_type: c.columnType, name: c.name, configuration: c.configuration, is_part_of_score: c.isPartOfScore })),
    dataset.columnNames,
    (_i, c) => `report_columns (${JSON.stringify(c.name)})`,
  );
  if (issues.length > 0) {
    throw new ApiError("validation_error", `dataset_id: the pipeline's columns cannot run on this dataset: ${issues.slice(0, 5).map((i) => `${i.field}: ${i.rule}`).join("; ")}`, { details: issues });
  }
  await assertRoomForJob(db, ws, "evaluation_run");
  // AUTOINCREMENT ids only grow and a batch is one transaction: the workspace's newest report is this run.
  const runId = sql`(SELECT max(${reports.id}) FROM ${reports} WHERE ${reports.workspaceId} = ${ws})`;
  const [c, dr] = [reportColumns, datasetRows];
  const [inserted] = await runBatch(db, [
    db
      .insert(reports)
      .values({
        workspaceId: ws,
        name: body.name,
        folderId: pipeline.folderId,
        isBlueprint: false,
        parentReportId: pipeline.id,
        datasetGroupId: dataset.datasetGroupId,
        datasetId: dataset.id,
        status: "RUNNING",
        rowCount: sql`(SELECT count(*) FROM ${datasetRows} WHERE ${datasetRows.datasetId} = ${dataset.id})`,
        userId: auth.userId,
      })
      .returning({ id: reports.id }),
    sql`INSERT INTO ${c} (${COLUMN_COLUMNS})
        SELECT ${ws}, ${runId}, ${c.columnType}, ${c.name}, ${c.position}, ${c.configuration}, ${c.isPartOfScore} FROM ${c} WHERE ${c.reportId} = ${pipeline.id}`,
    sql`INSERT INTO ${reportRows} (${columnList(reportRows, ["reportId", "rowIndex", "datasetRowId"])})
        SELECT ${runId}, row_number() OVER (ORDER BY ${dr.jobId}, ${dr.position}, ${dr.id}) - 1, ${dr.id} FROM ${dr} WHERE ${dr.datasetId} = ${dataset.id}`,
  ]);
  const id = (inserted.results[0] as { id: number }).id;
  try {
    await enqueue(jobs, { v: 1, kind: "evaluation_run", workspace_id: ws, report_id: id });
  } catch (err) {
    await giveUpEvaluationRun(db, ws, id, "the run could not be queued");
    throw err;
  }
  return id;
}

/** "wait": every row left is held by another delivery's live claim; look again after WAIT_SECONDS. */
export type BatchOutcome = "skipped" | "continue" | "wait" | "completed";

/** How long a claimed row is another delivery's: the queue ends an invocation after 15 minutes. */
export const ROW_CLAIM_LEASE_MS = 15 * 60_000;
/** Delay before a delivery that found every row left held looks again. */
export const WAIT_SECONDS = 60;

interface ClaimedRow {
  id: number;
  dataset_row_id: number;
  /** This claim included: above MAX_ROW_CLAIMS, earlier deliveries died in the row that many times. */
  claims: number;
}

/** Claims a row may have without finishing (each cut off by its Worker's end) before it is failed. */
export const MAX_ROW_CLAIMS = 3;

/** The cells of a row no delivery could finish: every column FAILED, nothing run again. */
function cutOffCells(columns: ReportColumnRow[]): ReportCells {
  const error = `the row's evaluation was cut off ${MAX_ROW_CLAIMS} times (the Worker stopped in it); it is not tried again`;
  return Object.fromEntries(columns.map((c) => [String(c.id), { status: "FAILED" as const, value: null, error_message: error }]));
}

/** The run's columns in position order. */
async function runColumns(db: Db, reportId: number): Promise<ReportColumnRow[]> {
  return db.select().from(reportColumns).where(eq(reportColumns.reportId, reportId)).orderBy(asc(reportColumns.position), asc(reportColumns.id));
}

/** Evaluates one row, column by column; a column whose input column failed fails without running. */
async function evaluateRow(columns: ReportColumnRow[], values: Record<string, unknown>, ctx: BlockContext): Promise<ReportCells> {
  const row: Record<string, unknown> = { ...values };
  const failed = new Set<string>();
  const cells: ReportCells = {};
  for (const c of columns) {
    const bad = columnSources({ column_type: c.columnType, configuration: c.configuration }).find((s) => failed.has(s));
    const result = bad ? { ok: false as const, error: `column "${bad}" failed` } : await evaluateBlock(c.columnType, c.configuration, row, ctx);
    if (result.ok) {
      cells[String(c.id)] = { status: "COMPLETED", value: result.value, error_message: null };
      row[c.name] = result.value;
    } else {
      cells[String(c.id)] = { status: "FAILED", value: null, error_message: result.error };
      row[c.name] = null;
      failed.add(c.name);
    }
  }
  return cells;
}

async function writeRow(db: Db, rowId: number, cells: ReportCells): Promise<void> {
  const write = (cs: ReportCells) => {
    const all = Object.values(cs);
    return db
      .update(reportRows)
      .set({ state: "DONE", cells: cs, completedCount: all.filter((c) => c.status === "COMPLETED").length, failedCount: all.filter((c) => c.status === "FAILED").length })
      .where(and(eq(reportRows.id, rowId), ne(reportRows.state, "DONE")));
  };
  try {
    await write(cells);
  } catch (err) {
    if (!chainIncludes(err, /SQLITE_TOOBIG|too big/i)) throw err;
    const failed: ReportCells = Object.fromEntries(
      Object.entries(cells).map(([k, c]) => [k, c.status === "COMPLETED" ? { status: "FAILED" as const, value: null, error_message: "the row's values are larger than the database accepts" } : c]),
    );
    await write(failed);
  }
}

/**
 * One delivery of the evaluation_run job. "continue": rows are left (queue the continuation); "wait":
 * the rows left are held by another delivery (queue a delayed look);
 * "completed": the run is done and scored; "skipped": nothing to do (unknown, archived or finished run).
 */
export async function runEvaluationBatch(
  db: Db,
  ws: number,
  reportId: number,
  ctx: BlockContext,
  opts: { maxRows?: number; slice?: JobSlice } = {},
): Promise<BatchOutcome> {
  const [run] = await db
    .select({ status: reports.status, deleted: reports.deleted })
    .from(reports)
    .where(and(eq(reports.id, reportId), eq(reports.workspaceId, ws), eq(reports.isBlueprint, false)));
  if (!run || run.deleted || run.status === "COMPLETED") return "skipped";
  // The run's heartbeat: each delivery touches it, so the job sweeper leaves a live run alone.
  await db.update(reports).set({ updatedAt: Date.now() }).where(and(eq(reports.id, reportId), eq(reports.status, "RUNNING")));
  const columns = await runColumns(db, reportId);
  const maxRows = opts.maxRows ?? Math.max(1, Math.min(ROWS_PER_BATCH, Math.floor(CELLS_PER_BATCH / Math.max(1, columns.length))));
  let done = 0;
  const rr = reportRows;
  // One claim at least per delivery, however short its slice.
  while (done < maxRows && (done === 0 || !sliceOver(opts.slice))) {
    // A row RUNNING under a live claim is another delivery's (a duplicated message): left to it. Rows whose
    // claim went stale (their delivery died; none outlives the queue's 15-minute limit) are taken over.
    const now = Date.now();
    const claimed = await db.all<ClaimedRow>(
      sql`UPDATE ${rr} SET ${col(rr.state)} = 'RUNNING', ${col(rr.claimedAt)} = ${now}, ${col(rr.claims)} = ${col(rr.claims)} + 1
          WHERE ${rr.id} IN (SELECT q.${col(rr.id)} FROM ${rr} AS q WHERE q.${col(rr.reportId)} = ${reportId}
                         AND (q.${col(rr.state)} = 'QUEUED' OR (q.${col(rr.state)} = 'RUNNING' AND coalesce(q.${col(rr.claimedAt)}, 0) < ${now - ROW_CLAIM_LEASE_MS}))
                       ORDER BY q.${col(rr.rowIndex)} LIMIT ${Math.min(ROW_CONCURRENCY, maxRows - done)})
            AND (SELECT ${reports.deleted} FROM ${reports} WHERE ${reports.id} = ${reportId}) = 0
          RETURNING ${col(rr.id)}, ${col(rr.datasetRowId)}, ${col(rr.claims)}`,
    );
    if (claimed.length === 0) break;
    const values = await db.all<{ id: number; v: string }>(
      sql`SELECT ${datasetRows.id}, ${datasetRows.values} AS v FROM ${datasetRows} WHERE ${inJsonList(datasetRows.id, claimed.map((r) => r.dataset_row_id))}`,
    );
    const byId = new Map(values.map((v) => [v.id, JSON.parse(v.v) as Record<string, unknown>]));
    await Promise.all(
      claimed.map(async (r) =>
        writeRow(db, r.id, r.claims > MAX_ROW_CLAIMS ? cutOffCells(columns) : await evaluateRow(columns, byId.get(r.dataset_row_id) ?? {}, ctx)),
      ),
    );
    done += claimed.length;
  }
  const [left] = await db
    .select({ n: sql<number>`count(*)` })
    .from(reportRows)
    .where(and(eq(reportRows.reportId, reportId), ne(reportRows.state, "DONE")));
  if (left.n > 0) {
    const [stillLive] = await db.select({ deleted: reports.deleted }).from(reports).where(eq(reports.id, reportId));
    if (stillLive?.deleted) return "skipped";
    // Nothing claimable: the rows left are held by another delivery; look again later, not in a hot loop.
    return done > 0 ? "continue" : "wait";
  }
  await completeRun(db, ws, reportId, columns);
  return "completed";
}

/**
 * Marks the run COMPLETED with its score and writes report_finished in the same batch: the event is read
 * before the update, so it exists only for the completion that commits; its id (the run's) keeps it once.
 */
async function completeRun(db: Db, ws: number, reportId: number, columns: ReportColumnRow[]): Promise<void> {
  const score = await computeScore(db, reportId, columns);
  const r = reports;
  await runBatch(db, [
    eventStatement({
      workspaceId: ws,
      type: "report_finished",
      id: `report_finished_${reportId}`,
      userId: sql`r.${col(r.userId)}`,
      from: sql`${r} AS r`,
      when: sql`r.${col(r.id)} = ${reportId} AND r.${col(r.workspaceId)} = ${ws} AND r.${col(r.status)} = 'RUNNING'`,
      details: sql`json_object('report_id', r.${col(r.id)}, 'report_name', r.${col(r.name)}, 'parent_report_id', r.${col(r.parentReportId)}, 'dataset_id', r.${col(r.datasetId)},
        'row_count', r.${col(r.rowCount)}, 'score', ${score.overall_score})`,
    }),
    db
      .update(reports)
      .set({ status: "COMPLETED", score: score as unknown as Record<string, unknown>, updatedAt: Date.now() })
      .where(and(eq(reports.id, reportId), eq(reports.status, "RUNNING"))),
  ]);
}

/** Rows a give-up fails per statement. */
const GIVE_UP_CHUNK = 1000;

/**
 * The dead-letter queue gave the run up (or it could not be queued): rows not yet written get every
 * cell FAILED with the reason, and the run completes (so it stops answering RUNNING).
 */
export async function giveUpEvaluationRun(db: Db, ws: number, reportId: number, reason = "the evaluation job failed repeatedly and was given up"): Promise<void> {
  const [run] = await db
    .select({ status: reports.status })
    .from(reports)
    .where(and(eq(reports.id, reportId), eq(reports.workspaceId, ws), eq(reports.isBlueprint, false)));
  if (!run || run.status === "COMPLETED") return;
  const columns = await runColumns(db, reportId);
  const cells: ReportCells = Object.fromEntries(columns.map((c) => [String(c.id), { status: "FAILED" as const, value: null, error_message: reason }]));
  // In chunks: one UPDATE writing every row of a 50,000-row run would outgrow a D1 statement, and the run
  // would then stay RUNNING for good. Each chunk is safe to repeat (it takes rows not yet DONE).
  const rr = reportRows;
  for (;;) {
    const res = await db.run(
      sql`UPDATE ${rr} SET ${col(rr.state)} = 'DONE', ${col(rr.cells)} = ${JSON.stringify(cells)}, ${col(rr.completedCount)} = 0, ${col(rr.failedCount)} = ${columns.length}
          WHERE ${rr.id} IN (SELECT q.${col(rr.id)} FROM ${rr} AS q WHERE q.${col(rr.reportId)} = ${reportId} AND q.${col(rr.state)} <> 'DONE' LIMIT ${GIVE_UP_CHUNK})`,
    );
    if ((res.meta.changes ?? 0) < GIVE_UP_CHUNK) break;
  }
  await completeRun(db, ws, reportId, columns);
}

// ---- scores ----

export interface ColumnScore {
  column_id: number;
  column_name: string;
  score: number | null;
  score_type: "boolean" | "numeric" | "mixed" | null;
  num_skipped: number;
}

export interface ReportScore {
  overall_score: number | null;
  score_type: "single_column" | "multi_column" | "none";
  has_custom_scoring: false;
  details: Record<string, unknown>;
}

/**
 * Built-in scoring over the columns marked is_part_of_score: a column's score is the mean of its
 * completed cells that hold a boolean (true 100, false 0) or a number (as it is); other cells are
 * skipped. The overall score is that of the one column, or the mean of the columns' scores.
 */
export async function computeScore(db: Db, reportId: number, columns: ReportColumnRow[]): Promise<ReportScore> {
  const scored = columns.filter((c) => c.isPartOfScore);
  if (scored.length === 0) return { overall_score: null, score_type: "none", has_custom_scoring: false, details: { message: "no column is part of the score" } };
  const results = await db.all<{ col: string; n: number; bools: number; nums: number; total: number | null }>(
    sql`SELECT c.key AS col, count(*) AS n,
         sum(CASE WHEN json_extract(c.value, '$.status') = 'COMPLETED' AND json_type(c.value, '$.value') IN ('true', 'false') THEN 1 ELSE 0 END) AS bools,
         sum(CASE WHEN json_extract(c.value, '$.status') = 'COMPLETED' AND json_type(c.value, '$.value') IN ('integer', 'real') THEN 1 ELSE 0 END) AS nums,
         sum(CASE WHEN json_extract(c.value, '$.status') <> 'COMPLETED' THEN NULL
                  WHEN json_type(c.value, '$.value') = 'true' THEN 100.0
                  WHEN json_type(c.value, '$.value') = 'false' THEN 0.0
                  WHEN json_type(c.value, '$.value') IN ('integer', 'real') THEN json_extract(c.value, '$.value') END) AS total
       FROM ${reportRows} AS r, json_each(r.${col(reportRows.cells)}) AS c
       WHERE r.${col(reportRows.reportId)} = ${reportId} AND r.${col(reportRows.state)} = 'DONE' AND c.key IN (SELECT value FROM json_each(${JSON.stringify(scored.map((c) => String(c.id)))}))
       GROUP BY c.key`,
  );
  const byCol = new Map(results.map((r) => [r.col, r]));
  const perColumn: ColumnScore[] = scored.map((c) => {
    const r = byCol.get(String(c.id));
    const counted = r ? r.bools + r.nums : 0;
    return {
      column_id: c.id,
      column_name: c.name,
      score: r && counted > 0 ? Math.round(((r.total ?? 0) / counted) * 1e6) / 1e6 : null,
      score_type: !r || counted === 0 ? null : r.nums === 0 ? "boolean" : r.bools === 0 ? "numeric" : "mixed",
      num_skipped: r ? r.n - counted : 0,
    };
  });
  const view = ({ column_id: _id, ...rest }: ColumnScore) => rest;
  if (perColumn.length === 1) return { overall_score: perColumn[0].score, score_type: "single_column", has_custom_scoring: false, details: view(perColumn[0]) };
  const known = perColumn.map((c) => c.score).filter((s): s is number => s !== null);
  return {
    overall_score: known.length ? Math.round((known.reduce((a, b) => a + b, 0) / known.length) * 1e6) / 1e6 : null,
    score_type: "multi_column",
    has_custom_scoring: false,
    details: { columns: perColumn.map(view) },
  };
}
