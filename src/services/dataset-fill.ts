// The dataset_fill job: copies request logs into a draft dataset, in chunks of INSERT … SELECT so row
// values are built inside D1 (no log passes through Worker memory). Redelivery-safe: rows are unique
// per (dataset, request log), a finished or superseded job does nothing, and a newer fill of the same
// draft stops an older one (every chunk checks it is still the draft's current job).
import { compileRequestLogQuery, parseFilterGroup, SqlParams, type CompileContext, type Scalar } from "../filters";
import { DRAFT_VERSION, MAX_LOGS_PER_JOB, type FillParams } from "./dataset-job-params";
import { filterEstimates, SORT_COLUMNS } from "./request-search";
import { and, eq, inArray, ne, sql } from "drizzle-orm";
import { datasetJobs, datasetRows, datasets, type DatasetJobStatus } from "../db/schema";
import { eventStatement } from "./events";
import { d1Of, type Db } from "../db/client";
import { runBatch } from "../db/batch";

/** Ids per INSERT statement: one JSON parameter, so only D1's statement time bounds it. */
const CHUNK = 500;
/** Rows per statement when copying a version: values move inside D1, so only statement time bounds it. */
const COPY_CHUNK = 2000;

const iso = (col: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${col} / 1000.0, 'unixepoch')`;

/** Request fields variables_to_parse may name (they win over an input variable of the same name). */
export const REQUEST_FIELDS: Record<string, string> = {
  request_log_id: "r.id",
  input: "json(r.input)",
  output: "r.output_text",
  input_text: "r.input_text",
  output_blueprint: "json(r.output)",
  engine: "r.model",
  model: "r.model",
  provider: "r.provider",
  provider_type: "r.provider",
  tags: "json(r.tags)",
  metadata: "json(r.metadata)",
  prompt_input_variables: "json(r.prompt_input_variables)",
  prompt_name: "r.prompt_name",
  prompt_id: "r.prompt_id",
  prompt_version_number: "r.prompt_version_number",
  input_tokens: "r.input_tokens",
  output_tokens: "r.output_tokens",
  price: "r.price",
  score: "r.score",
  status: "r.status",
  latency_ms: "(r.request_end_time - r.request_start_time)",
  request_start_time: iso("r.request_start_time"),
  request_end_time: iso("r.request_end_time"),
};

/** The SQL of one row's values: the named columns, or every input variable plus input and output. */
export function valuesSql(params: SqlParams, variables: string[] | null | undefined): string {
  if (!variables || variables.length === 0) {
    return `json_set(json(r.prompt_input_variables), '$.input', json(r.input), '$.output', r.output_text)`;
  }
  const pairs = variables.map((name) => {
    const key = params.add(name);
    const expr =
      REQUEST_FIELDS[name] ??
      `(SELECT CASE WHEN v.type IN ('object', 'array') THEN json(v.value) ELSE v.value END FROM json_each(r.prompt_input_variables) AS v WHERE v.key = ${key})`;
    return `${key}, ${expr}`;
  });
  return `json_object(${pairs.join(", ")})`;
}

interface JobRow {
  id: number;
  dataset_id: number;
  params: string;
  status: string;
  current_job_id: number | null;
  version_number: number;
}

/** The query of a filter-based fill (pure): run by the job, and compiled once when the fill is asked for. */
export function fillQuery(ws: number, p: FillParams, estimate?: CompileContext["estimate"]): { sql: string; params: Scalar[] } {
  let group = null;
  if (p.filter_group) {
    const parsed = parseFilterGroup(p.filter_group);
    // Validated when the request was accepted; a stored group that no longer parses is a bug, not bad input.
    if (!parsed.ok) throw new Error(`stored filter_group no longer parses: ${parsed.issues.map((i) => i.rule).join("; ")}`);
    group = parsed.group;
  }
  const params = new SqlParams();
  const where = compileRequestLogQuery({ filter_group: group, q: p.q }, { params, workspace: params.add(ws), estimate });
  const dir = p.sort_order === "asc" ? "ASC" : "DESC";
  const order = `${SORT_COLUMNS[p.sort_by ?? "request_start_time"]} ${dir}, r.id ${dir}`;
  const cap = Math.min(p.limit ?? MAX_LOGS_PER_JOB, MAX_LOGS_PER_JOB);
  return { sql: `SELECT r.id FROM request_logs AS r WHERE ${where} ORDER BY ${order} LIMIT ${params.add(cap)}`, params: params.values };
}

/** The ids a job copies, in dataset order: explicit ids as given, else the filter's matches in sort order. */
async function selectIds(db: Db, ws: number, p: FillParams): Promise<number[]> {
  const d1 = d1Of(db);
  const cap = Math.min(p.limit ?? MAX_LOGS_PER_JOB, MAX_LOGS_PER_JOB);
  if (p.request_log_ids && p.request_log_ids.length > 0) return p.request_log_ids.slice(0, cap);
  const group = p.filter_group ? parseFilterGroup(p.filter_group) : null;
  const estimate = await filterEstimates(db, ws, group?.ok ? group.group : null);
  const { sql, params } = fillQuery(ws, p, estimate);
  // A compiled statement (src/filters/): its numbered parameters are shared, which drizzle's sql cannot express.
  const { results } = await d1.prepare(sql).bind(...params).all<{ id: number }>();
  return results.map((r) => r.id);
}

/**
 * `FROM json_each(ids) CROSS JOIN request_logs`: the CROSS JOIN keeps the id list as the outer loop, so
 * each id is one primary-key lookup whatever statistics SQLite has (with a plain JOIN and no
 * sqlite_stat1 the planner may scan the workspace's logs once per chunk instead).
 */
export const LOGS_BY_IDS = (idsJson: string, ws: string) => `json_each(${idsJson}) AS j CROSS JOIN request_logs AS r ON r.id = j.value AND r.workspace_id = ${ws}`;

/** One chunk of a filter fill (pure): rows for `ids`, at positions offset + index, only while the job is the draft's. */
export function fillChunkSql(ws: number, datasetId: number, jobId: number, offset: number, ids: number[], variables: string[] | null | undefined): { sql: string; params: Scalar[] } {
  const params = new SqlParams();
  const wsP = params.add(ws);
  const ds = params.add(datasetId);
  const jb = params.add(jobId);
  const values = valuesSql(params, variables);
  const sqlText = `INSERT INTO dataset_rows (workspace_id, dataset_id, job_id, position, request_log_id, "values")
      SELECT ${wsP}, ${ds}, ${jb}, j.key + ${params.add(offset)}, r.id, ${values}
      FROM ${LOGS_BY_IDS(params.add(JSON.stringify(ids)), wsP)}
      WHERE (SELECT current_job_id FROM datasets WHERE id = ${ds}) = ${jb}
      ON CONFLICT (dataset_id, request_log_id) DO NOTHING`;
  return { sql: sqlText, params: params.values };
}

/** Column names of a filled draft: the requested ones in order, else input variables (sorted), input, output. */
export async function columnNames(db: Db, datasetId: number, variables: string[] | null | undefined): Promise<string[]> {
  if (variables && variables.length > 0) return [...new Set(variables)];
  const keys = await db.all<{ k: string }>(
    sql`SELECT DISTINCT j.key AS k FROM ${datasetRows} AS d, json_each(d."values") AS j WHERE d.dataset_id = ${datasetId} AND j.key NOT IN ('input', 'output') ORDER BY k`,
  );
  return [...keys.map((r) => r.k), "input", "output"];
}

export type FillOutcome = { state: "skipped" } | { state: "completed"; datasetId: number; rowsAdded: number } | { state: "copied"; datasetId: number; rowsAdded: number };

/** Sets a job's status (and heartbeat). */
const jobStatus = (db: Db, jobId: number, status: DatasetJobStatus) => db.update(datasetJobs).set({ status, updatedAt: Date.now() }).where(eq(datasetJobs.id, jobId));

/** The job's heartbeat: moved with each chunk, so the job sweeper leaves a live fill alone. */
const heartbeat = (db: Db, jobId: number) => db.update(datasetJobs).set({ updatedAt: Date.now() }).where(eq(datasetJobs.id, jobId));

/** The job's end, in its last batch: COMPLETED while it is still the draft's job (else SUPERSEDED), with its row count. */
const finishJob = (db: Db, job: JobRow, now: number) =>
  db
    .update(datasetJobs)
    .set({
      status: sql`CASE WHEN (SELECT current_job_id FROM ${datasets} WHERE id = ${job.dataset_id}) = ${job.id} THEN 'COMPLETED' ELSE 'SUPERSEDED' END`,
      rowsAdded: sql`(SELECT count(*) FROM ${datasetRows} WHERE dataset_id = ${job.dataset_id} AND job_id = ${job.id})`,
      updatedAt: now,
    })
    .where(eq(datasetJobs.id, job.id));

const rowsAddedOf = (db: Db, jobId: number) => db.select({ n: datasetJobs.rowsAdded }).from(datasetJobs).where(eq(datasetJobs.id, jobId));

export async function runDatasetFill(db: Db, ws: number, jobId: number): Promise<FillOutcome> {
  const d1 = d1Of(db);
  const job = await db.get<JobRow>(
    sql`SELECT j.id, j.dataset_id, j.params, j.status, d.current_job_id, d.version_number
        FROM ${datasetJobs} AS j JOIN ${datasets} AS d ON d.id = j.dataset_id WHERE j.id = ${jobId} AND j.workspace_id = ${ws}`,
  );
  if (!job || job.status === "COMPLETED" || job.status === "SUPERSEDED") return { state: "skipped" };
  if (job.current_job_id !== job.id || job.version_number !== DRAFT_VERSION) {
    await jobStatus(db, job.id, "SUPERSEDED");
    return { state: "skipped" };
  }
  const p = JSON.parse(job.params) as FillParams;
  if (p.source_dataset_id != null) return copyRows(db, ws, job, p.source_dataset_id);
  // The draft holds one fill's result: rows of earlier fills go (this job's own survive a redelivery).
  await runBatch(db, [jobStatus(db, job.id, "RUNNING"), db.delete(datasetRows).where(and(eq(datasetRows.datasetId, job.dataset_id), ne(datasetRows.jobId, job.id)))]);

  const ids = await selectIds(db, ws, p);
  for (let offset = 0; offset < ids.length; offset += CHUNK) {
    // A compiled statement: its numbered parameters are shared, which drizzle's sql cannot express.
    const chunk = fillChunkSql(ws, job.dataset_id, job.id, offset, ids.slice(offset, offset + CHUNK), p.variables_to_parse);
    await runBatch(db, [d1.prepare(chunk.sql).bind(...chunk.params), heartbeat(db, job.id)]);
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
      userId: sql`(SELECT created_by FROM dataset_jobs WHERE id = ${job.id})`,
      details: sql`json_object('dataset_id', d.id, 'rows_added', (SELECT rows_added FROM dataset_jobs WHERE id = ${job.id}), 'dataset_version_number', d.version_number)`,
      from: sql`datasets AS d`,
      when: sql`d.id = ${job.dataset_id} AND d.current_job_id = ${job.id}`,
    }),
  ]);
  return { state: "completed", datasetId: job.dataset_id, rowsAdded: (count.results[0] as { rows_added: number }).rows_added };
}

/**
 * create-draft from a source version: copies its rows (values and columns as they are) in chunks of
 * INSERT … SELECT. Each chunk is one statement and starts after the last position this job wrote, so a
 * redelivered job resumes exactly where the previous attempt stopped.
 */
async function copyRows(db: Db, ws: number, job: JobRow, sourceId: number): Promise<FillOutcome> {
  await jobStatus(db, job.id, "RUNNING");
  for (;;) {
    const [res] = await runBatch(db, [
      sql`INSERT INTO dataset_rows (workspace_id, dataset_id, job_id, position, request_log_id, "values")
          SELECT ${ws}, ${job.dataset_id}, ${job.id}, s.k, s.request_log_id, s.v
          FROM (SELECT row_number() OVER (ORDER BY job_id, position, id) - 1 AS k, request_log_id, "values" AS v FROM dataset_rows WHERE dataset_id = ${sourceId} AND workspace_id = ${ws}
                ORDER BY job_id, position, id LIMIT ${COPY_CHUNK} OFFSET (SELECT count(*) FROM dataset_rows WHERE dataset_id = ${job.dataset_id} AND job_id = ${job.id})) AS s
          WHERE (SELECT current_job_id FROM datasets WHERE id = ${job.dataset_id}) = ${job.id}
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
      .set({ columnNames: sql`(SELECT column_names FROM ${datasets} WHERE id = ${sourceId} AND workspace_id = ${ws})`, updatedAt: now })
      .where(and(eq(datasets.id, job.dataset_id), eq(datasets.currentJobId, job.id))),
    rowsAddedOf(db, job.id),
  ]);
  return { state: "copied", datasetId: job.dataset_id, rowsAdded: (count.results[0] as { rows_added: number }).rows_added };
}

/** The dead-letter queue's (or the job sweeper's) verdict on a fill job: FAILED, unless it finished or was superseded meanwhile. */
export async function markFillFailed(db: Db, ws: number, jobId: number): Promise<void> {
  await db
    .update(datasetJobs)
    .set({ status: "FAILED", updatedAt: Date.now() })
    .where(and(eq(datasetJobs.id, jobId), eq(datasetJobs.workspaceId, ws), inArray(datasetJobs.status, ["QUEUED", "RUNNING"])));
}
