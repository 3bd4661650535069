// The dataset_fill job: copies request logs into a draft dataset, in chunks: each chunk's row values
// are built inside the log database and written to the control database as one JSON parameter per
// statement (a chunk of logs, never the whole fill, passes through Worker memory); or copies a saved version; or
// loads a stored file's rows (from-file). Redelivery-safe: rows are unique per (dataset, request log)
// or resume after the last row the job wrote, a finished or superseded job does nothing, and a newer
// fill of the same draft stops an older one (every chunk checks it is still the draft's current job).
// Given a slice (the queue consumer's), a fill stops after the chunk that uses it up and answers
// "continue": a fill from logs with the offset of its next chunk, a copy or a file load resuming from
// the rows it wrote, as a redelivery does.
import { DRAFT_VERSION, type FileFillParams, type FillParams } from "../../logs";
import { DatasetFileError, readDatasetFile } from "./file";
import { chunkIndexRows, logValues, matchingLogIds, type LogValues } from "../../logs";
import { and, eq, inArray, ne, sql } from "drizzle-orm";
import { datasetJobs, datasetRows, datasets, type DatasetJobStatus } from "../../db/schema";
import { col, columnList } from "../../db/sql";
import { eventStatement } from "../webhooks";
import type { SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch } from "../../db/batch";
import type { WorkspaceLogs } from "../../logs";
import { sliceOver, type JobSlice } from "../../lib/jobs";

/** Logs per chunk: read from the log database in one statement, written in as few as their size allows. */
const CHUNK = 500;
/** Characters of row values per INSERT: one JSON parameter, under D1's 2 MB value. */
const LOG_ROWS_CHARS = 512 * 1024;
/** Rows per statement when copying a version: values move inside D1, so only statement time bounds it. */
const COPY_CHUNK = 2000;
/** Rows of a file per statement, and characters of their JSON: one parameter, under D1's 2 MB value. */
const FILE_CHUNK_ROWS = 1000;
const FILE_CHUNK_CHARS = 512 * 1024;

interface JobRow {
  id: number;
  dataset_id: number;
  params: string;
  status: string;
  current_job_id: number | null;
  version_number: number;
}

/** Column names of a filled draft: the requested ones in order, else input variables (sorted), input, output. */
export async function columnNames(db: Db, datasetId: number, variables: string[] | null | undefined): Promise<string[]> {
  if (variables && variables.length > 0) return [...new Set(variables)];
  const keys = await db.all<{ k: string }>(
    sql`SELECT DISTINCT j.key AS k FROM ${datasetRows} AS d, json_each(d.${col(datasetRows.values)}) AS j WHERE d.${col(datasetRows.datasetId)} = ${datasetId} AND j.key NOT IN ('input', 'output') ORDER BY k`,
  );
  return [...keys.map((r) => r.k), "input", "output"];
}

export type FillOutcome =
  | { state: "skipped" }
  | { state: "failed" }
  | { state: "completed"; datasetId: number; rowsAdded: number }
  | { state: "copied"; datasetId: number; rowsAdded: number }
  | { state: "loaded"; datasetId: number; rowsAdded: number }
  /** The slice was used up: the next delivery goes on (a fill from logs at `offset`, the others where their rows stop). */
  | { state: "continue"; offset?: number };

export interface FillRun {
  /** This delivery's share of the work (none: to the end). */
  slice?: JobSlice;
  /** A fill from logs' continuation: the position of the first log this delivery writes. */
  offset?: number;
  /** Logs per chunk (CHUNK); tests make it small to fill in several slices. */
  chunk?: number;
}

/** Sets a job's status (and heartbeat). */
const jobStatus = (db: Db, jobId: number, status: DatasetJobStatus) => db.update(datasetJobs).set({ status, updatedAt: Date.now() }).where(eq(datasetJobs.id, jobId));

/** The job's heartbeat: moved with each chunk, so the job sweeper leaves a live fill alone. */
const heartbeat = (db: Db, jobId: number) => db.update(datasetJobs).set({ updatedAt: Date.now() }).where(eq(datasetJobs.id, jobId));

/** The job's end, in its last batch: COMPLETED while it is still the draft's job (else SUPERSEDED), with its row count. */
const finishJob = (db: Db, job: JobRow, now: number) =>
  db
    .update(datasetJobs)
    .set({
      status: sql`CASE WHEN (SELECT ${datasets.currentJobId} FROM ${datasets} WHERE ${datasets.id} = ${job.dataset_id}) = ${job.id} THEN 'COMPLETED' ELSE 'SUPERSEDED' END`,
      rowsAdded: sql`(SELECT count(*) FROM ${datasetRows} WHERE ${datasetRows.datasetId} = ${job.dataset_id} AND ${datasetRows.jobId} = ${job.id})`,
      updatedAt: now,
    })
    .where(eq(datasetJobs.id, job.id));

const rowsAddedOf = (db: Db, jobId: number) => db.select({ n: datasetJobs.rowsAdded }).from(datasetJobs).where(eq(datasetJobs.id, jobId));

/** `blobs` holds the files of from-file jobs (the queue consumer passes it; fills from logs need none). */
export async function runDatasetFill(
  db: Db,
  logsOf: (ws: number) => Promise<WorkspaceLogs>,
  ws: number,
  jobId: number,
  blobs?: R2Bucket,
  run: FillRun = {},
): Promise<FillOutcome> {
  const job = await db.get<JobRow>(
    sql`SELECT j.${col(datasetJobs.id)}, j.${col(datasetJobs.datasetId)}, j.${col(datasetJobs.params)}, j.${col(datasetJobs.status)}, d.${col(datasets.currentJobId)}, d.${col(datasets.versionNumber)}
        FROM ${datasetJobs} AS j JOIN ${datasets} AS d ON d.${col(datasets.id)} = j.${col(datasetJobs.datasetId)} WHERE j.${col(datasetJobs.id)} = ${jobId} AND j.${col(datasetJobs.workspaceId)} = ${ws}`,
  );
  if (!job) return { state: "skipped" };
  const p = JSON.parse(job.params) as FillParams;
  const dropFile = async () => {
    if (p.file && blobs) await blobs.delete(p.file.blob_key);
  };
  if (job.status === "COMPLETED" || job.status === "SUPERSEDED") {
    await dropFile();
    return { state: "skipped" };
  }
  if (job.current_job_id !== job.id || job.version_number !== DRAFT_VERSION) {
    await jobStatus(db, job.id, "SUPERSEDED");
    await dropFile();
    return { state: "skipped" };
  }
  if (p.source_dataset_id != null) return copyRows(db, ws, job, p.source_dataset_id, run.slice);
  if (p.file) {
    if (!blobs) throw new Error(`dataset job ${job.id} loads a file, and no bucket was given`);
    return loadFile(db, blobs, ws, job, p.file, run.slice);
  }
  // The draft holds one fill's result: rows of earlier fills go (this job's own survive a redelivery).
  // A continuation has done this already; done again it deletes nothing.
  await runBatch(db, [jobStatus(db, job.id, "RUNNING"), db.delete(datasetRows).where(and(eq(datasetRows.datasetId, job.dataset_id), ne(datasetRows.jobId, job.id)))]);

  const logs = await logsOf(ws);
  // The same ids in the same order at every slice: the fill's query is bounded by its newest log id.
  const ids = await matchingLogIds(logs, ws, p);
  const chunk = run.chunk ?? CHUNK;
  for (let offset = run.offset ?? 0, first = true; offset < ids.length; offset += chunk, first = false) {
    if (!first && sliceOver(run.slice)) return { state: "continue", offset };
    const values = await logValues(logs, ws, ids.slice(offset, offset + chunk), p.variables_to_parse);
    await runBatch(db, [...insertLogRows(ws, { datasetId: job.dataset_id, jobId: job.id, offset }, values), heartbeat(db, job.id)]);
  }

  const columns = await columnNames(db, job.dataset_id, p.variables_to_parse);
  const now = Date.now();
  const [, , count] = await runBatch(db, [
    finishJob(db, job, now),
    db
      .update(datasets)
      .set({ columnNames: columns, updatedAt: now })
      .where(and(eq(datasets.id, job.dataset_id), eq(datasets.currentJobId, job.id))),
    rowsAddedOf(db, job.id),
    // Written with the completion, once per job (its id is the job's), and only while the job is the draft's.
    eventStatement({
      workspaceId: ws,
      type: "dataset_version_created_from_filter_params",
      id: `dataset_fill_${job.id}`,
      userId: sql`(SELECT ${datasetJobs.createdBy} FROM ${datasetJobs} WHERE ${datasetJobs.id} = ${job.id})`,
      details: sql`json_object('dataset_id', d.${col(datasets.id)}, 'rows_added', (SELECT ${datasetJobs.rowsAdded} FROM ${datasetJobs} WHERE ${datasetJobs.id} = ${job.id}), 'dataset_version_number', d.${col(datasets.versionNumber)})`,
      from: sql`${datasets} AS d`,
      when: sql`d.${col(datasets.id)} = ${job.dataset_id} AND d.${col(datasets.currentJobId)} = ${job.id}`,
    }),
  ]);
  return { state: "completed", datasetId: job.dataset_id, rowsAdded: (count.results[0] as { rows_added: number }).rows_added };
}

/** The columns a row copied from a log or another version fills. */
const ROW_COLUMNS = columnList(datasetRows, ["workspaceId", "datasetId", "jobId", "position", "requestLogId", "values", "logPromptId", "logPromptVersion"]);

/**
 * Statements writing logs' values as rows of a draft at positions offset + at, while `jobId` is the
 * draft's current job (a newer fill stops an older one); a log already in the draft is skipped.
 */
export function insertLogRows(ws: number, to: { datasetId: number; jobId: number; offset: number | SQL }, values: readonly LogValues[]) {
  const rows = values.map((r) => [r.at, r.id, r.v, r.promptId, r.promptVersion]);
  return chunkIndexRows(rows, LOG_ROWS_CHARS).map(
    (json) => sql`INSERT INTO ${datasetRows} (${ROW_COLUMNS})
        SELECT ${ws}, ${to.datasetId}, ${to.jobId}, ${to.offset} + (j.value ->> 0), j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4 FROM json_each(${json}) AS j
        WHERE (SELECT coalesce(${datasets.currentJobId}, 0) FROM ${datasets} WHERE ${datasets.id} = ${to.datasetId}) = ${to.jobId}
        ON CONFLICT (${col(datasetRows.datasetId)}, ${col(datasetRows.requestLogId)}) DO NOTHING`,
  );
}

/**
 * create-draft from a source version: copies its rows (values and columns as they are) in chunks of
 * INSERT … SELECT. Each chunk is one statement and starts after the last position this job wrote, so a
 * redelivered job resumes exactly where the previous attempt stopped.
 */
async function copyRows(db: Db, ws: number, job: JobRow, sourceId: number, slice?: JobSlice): Promise<FillOutcome> {
  const r = datasetRows;
  await jobStatus(db, job.id, "RUNNING");
  for (let first = true; ; first = false) {
    if (!first && sliceOver(slice)) return { state: "continue" };
    const [res] = await runBatch(db, [
      sql`INSERT INTO ${r} (${ROW_COLUMNS})
          SELECT ${ws}, ${job.dataset_id}, ${job.id}, s.k, s.${col(r.requestLogId)}, s.v, s.${col(r.logPromptId)}, s.${col(r.logPromptVersion)}
          FROM (SELECT row_number() OVER (ORDER BY ${r.jobId}, ${r.position}, ${r.id}) - 1 AS k, ${r.requestLogId}, ${r.values} AS v, ${r.logPromptId}, ${r.logPromptVersion}
                FROM ${r} WHERE ${r.datasetId} = ${sourceId} AND ${r.workspaceId} = ${ws}
                ORDER BY ${r.jobId}, ${r.position}, ${r.id} LIMIT ${COPY_CHUNK} OFFSET (SELECT count(*) FROM ${r} WHERE ${r.datasetId} = ${job.dataset_id} AND ${r.jobId} = ${job.id})) AS s
          WHERE (SELECT ${datasets.currentJobId} FROM ${datasets} WHERE ${datasets.id} = ${job.dataset_id}) = ${job.id}
          ORDER BY s.k`,
      heartbeat(db, job.id),
    ]);
    if ((res.meta.changes ?? 0) < COPY_CHUNK) break;
  }
  const now = Date.now();
  const [, , count] = await runBatch(db, [
    finishJob(db, job, now),
    db
      .update(datasets)
      .set({ columnNames: sql`(SELECT s.${col(datasets.columnNames)} FROM ${datasets} AS s WHERE s.${col(datasets.id)} = ${sourceId} AND s.${col(datasets.workspaceId)} = ${ws})`, updatedAt: now })
      .where(and(eq(datasets.id, job.dataset_id), eq(datasets.currentJobId, job.id))),
    rowsAddedOf(db, job.id),
  ]);
  return { state: "copied", datasetId: job.dataset_id, rowsAdded: (count.results[0] as { rows_added: number }).rows_added };
}

/**
 * from-file: the stored file's rows into the draft, in statements of up to FILE_CHUNK_ROWS rows that
 * each carry their values as one JSON parameter. A redelivered job counts the rows it already wrote
 * and skips as many rows of the file (each statement is atomic, so the count is a statement boundary).
 * The request read the same file through the same reader, so a content error here is a bug or a
 * change of limits since: the job fails rather than retrying for ever.
 */
async function loadFile(db: Db, blobs: R2Bucket, ws: number, job: JobRow, file: FileFillParams, slice?: JobSlice): Promise<FillOutcome> {
  await runBatch(db, [jobStatus(db, job.id, "RUNNING"), db.delete(datasetRows).where(and(eq(datasetRows.datasetId, job.dataset_id), ne(datasetRows.jobId, job.id)))]);
  const [{ done }] = await db
    .select({ done: sql<number>`count(*)` })
    .from(datasetRows)
    .where(and(eq(datasetRows.datasetId, job.dataset_id), eq(datasetRows.jobId, job.id)));
  const fail = async () => {
    await markFillFailed(db, ws, job.id);
    await blobs.delete(file.blob_key);
    return { state: "failed" as const };
  };
  const object = await blobs.get(file.blob_key);
  if (!object) return fail();

  let seen = 0;
  let position = done;
  let superseded = false;
  let paused = false;
  let rows: string[] = [];
  let chars = 0;
  const write = async (final: boolean) => {
    while (!superseded && !paused && rows.length > 0 && (final || rows.length >= FILE_CHUNK_ROWS || chars >= FILE_CHUNK_CHARS)) {
      let n = 0;
      let size = 0;
      while (n < rows.length && n < FILE_CHUNK_ROWS && (n === 0 || size + rows[n].length <= FILE_CHUNK_CHARS)) size += rows[n++].length;
      const chunk = rows.slice(0, n);
      rows = rows.slice(n);
      chars -= size;
      const [res] = await runBatch(db, [
        sql`INSERT INTO ${datasetRows} (${columnList(datasetRows, ["workspaceId", "datasetId", "jobId", "position", "requestLogId", "values"])})
            SELECT ${ws}, ${job.dataset_id}, ${job.id}, ${position} + j.key, NULL, j.value FROM json_each(${`[${chunk.join(",")}]`}) AS j
            WHERE (SELECT ${datasets.currentJobId} FROM ${datasets} WHERE ${datasets.id} = ${job.dataset_id}) = ${job.id}`,
        heartbeat(db, job.id),
      ]);
      // Nothing written: a newer fill of the draft took over; finishJob marks this one SUPERSEDED.
      if ((res.meta.changes ?? 0) === 0) superseded = true;
      position += n;
      // The slice used up with rows still to write: the next delivery resumes after the rows written.
      if ((!final || rows.length > 0) && sliceOver(slice)) paused = true;
    }
    return !superseded && !paused;
  };
  try {
    await readDatasetFile(
      object,
      file.format,
      (values) => {
        if (seen++ < done) return;
        rows.push(values);
        chars += values.length;
      },
      () => write(false),
    );
    if (!paused) await write(true);
    if (paused) return { state: "continue" };
  } catch (err) {
    if (err instanceof DatasetFileError) return fail();
    throw err;
  }

  const now = Date.now();
  const [, , count] = await runBatch(db, [
    finishJob(db, job, now),
    db
      .update(datasets)
      .set({ columnNames: file.columns, updatedAt: now })
      .where(and(eq(datasets.id, job.dataset_id), eq(datasets.currentJobId, job.id))),
    rowsAddedOf(db, job.id),
  ]);
  await blobs.delete(file.blob_key);
  return { state: "loaded", datasetId: job.dataset_id, rowsAdded: (count.results[0] as { rows_added: number }).rows_added };
}

/**
 * The dead-letter queue's (or the job sweeper's) verdict on a fill job: FAILED, unless it finished or
 * was superseded meanwhile. With `blobs`, a from-file job's stored file goes too.
 */
export async function markFillFailed(db: Db, ws: number, jobId: number, blobs?: R2Bucket): Promise<void> {
  const [job] = await db
    .update(datasetJobs)
    .set({ status: "FAILED", updatedAt: Date.now() })
    .where(and(eq(datasetJobs.id, jobId), eq(datasetJobs.workspaceId, ws), inArray(datasetJobs.status, ["QUEUED", "RUNNING"])))
    .returning({ params: datasetJobs.params });
  const file = (job?.params as FillParams | undefined)?.file;
  if (file && blobs) await blobs.delete(file.blob_key);
}
