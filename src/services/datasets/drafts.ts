// The draft endpoints beyond from-filter-params: create-draft (empty, or a queued copy of a saved
// version), add-request-log (one log appended to the draft at once), and the no-write preview of a
// from-filter-params call. Row values are built by the same SQL as the fill job (fill.ts).
import { assertRoomForJob } from "../workspace";
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { col, columnList, isUniqueViolation } from "../../db/sql";
import { datasetJobs, datasetRows, datasets } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { findArchivedLogLine, findLog, logValues, previewLogs } from "../../logs";
import { DRAFT_VERSION, MAX_LOGS_PER_JOB, requireGroup, type FillParams, type FromFilterParamsInput } from "./datasets";
import { runBatch } from "../../db/batch";
import { insertLogRows } from "./fill";
import type { WorkspaceLogs } from "../../logs";


const draftExists = () => new ApiError("conflict", "dataset_group_id: the dataset group already has a draft; save it or fill it with from-filter-params");

/**
 * A new draft for a group that has none (409 otherwise). With source_dataset_id (a saved version of the
 * same group) a queued job copies its rows and the answer is { queued: true } (the route's 202).
 */
export async function createDraft(db: Db, auth: AuthContext, input: { dataset_group_id: number; source_dataset_id?: number | null }) {
  const ws = auth.workspaceId;
  const group = await requireGroup(db, ws, input.dataset_group_id);
  let source: { id: number } | undefined;
  if (input.source_dataset_id != null) {
    const [row] = await db
      .select({ id: datasets.id, groupId: datasets.datasetGroupId, version: datasets.versionNumber })
      .from(datasets)
      .where(and(eq(datasets.workspaceId, ws), eq(datasets.id, input.source_dataset_id), eq(datasets.isDeleted, false)))
      .limit(1);
    if (!row) throw new ApiError("not_found", `source_dataset_id: dataset ${input.source_dataset_id} not found`);
    if (row.groupId !== group.id) throw new ApiError("validation_error", `source_dataset_id: must be a version of dataset group ${group.id}`);
    // The group has no draft past this point (else 409 below), so the source is a saved version.
    source = row;
  }
  const insertDraft = db
    .insert(datasets)
    .values({ workspaceId: ws, datasetGroupId: group.id, versionNumber: DRAFT_VERSION, columnNames: [], userId: auth.userId })
    .returning({ id: datasets.id });
  try {
    if (!source) {
      const [row] = await insertDraft;
      return { queued: false as const, draftDatasetId: row.id, jobId: null };
    }
    await assertRoomForJob(db, ws, "dataset_fill");
    const params: FillParams = { source_dataset_id: source.id };
    const draftSql = sql`SELECT ${datasets.id} FROM ${datasets} WHERE ${datasets.datasetGroupId} = ${group.id} AND ${datasets.versionNumber} = ${DRAFT_VERSION}`;
    const [draft, job] = await runBatch(db, [
      insertDraft,
      sql`INSERT INTO ${datasetJobs} (${columnList(datasetJobs, ["workspaceId", "datasetId", "params", "createdBy"])}) SELECT ${ws}, d.id, ${JSON.stringify(params)}, ${auth.userId} FROM (${draftSql}) AS d RETURNING ${col(datasetJobs.id)}`,
      db
        .update(datasets)
        .set({ currentJobId: sql`(SELECT max(${datasetJobs.id}) FROM ${datasetJobs} WHERE ${datasetJobs.datasetId} = ${datasets.id})` })
        .where(and(eq(datasets.datasetGroupId, group.id), eq(datasets.versionNumber, DRAFT_VERSION))),
    ]);
    return { queued: true as const, draftDatasetId: (draft.results[0] as { id: number }).id, jobId: (job.results[0] as { id: number }).id };
  } catch (err) {
    if (isUniqueViolation(err, datasets)) throw draftExists();
    throw err;
  }
}

/**
 * Appends one request log to the group's draft (created when missing), at once. The row's columns follow
 * the draft's last fill (its variables_to_parse, else every input variable plus input and output). A log
 * already in the draft changes nothing; a draft whose fill is queued or running is a 409 (the fill
 * replaces the draft's rows). With `blobs`, a log moved to the archive is named as such in the 404.
 */
export async function addRequestLog(db: Db, logs: WorkspaceLogs, auth: AuthContext, input: { dataset_group_id: number; request_log_id: number }, blobs?: R2Bucket) {
  const ws = auth.workspaceId;
  const group = await requireGroup(db, ws, input.dataset_group_id);
  const log = await findLog(logs, ws, input.request_log_id);
  if (!log) {
    if (blobs && (await findArchivedLogLine(logs, blobs, ws, input.request_log_id))) {
      throw new ApiError(
        "not_found",
        `request_log_id: request log ${input.request_log_id} is archived (past the workspace's log retention window): it can be read by id or exported, not added to a dataset`,
      );
    }
    throw new ApiError("not_found", `request_log_id: request log ${input.request_log_id} not found`);
  }
  await db
    .insert(datasets)
    .values({ workspaceId: ws, datasetGroupId: group.id, versionNumber: DRAFT_VERSION, columnNames: [], userId: auth.userId })
    .onConflictDoNothing({ target: [datasets.datasetGroupId, datasets.versionNumber] });
  const [draft] = await db
    .select({ id: datasets.id, columns: datasets.columnNames, jobId: datasets.currentJobId, jobStatus: datasetJobs.status, jobParams: datasetJobs.params })
    .from(datasets)
    .leftJoin(datasetJobs, eq(datasetJobs.id, datasets.currentJobId))
    .where(and(eq(datasets.datasetGroupId, group.id), eq(datasets.versionNumber, DRAFT_VERSION)))
    .limit(1);
  const busy = () => new ApiError("conflict", "dataset_group_id: the draft is being filled; add the request log when its job has completed");
  if (draft.jobStatus === "QUEUED" || draft.jobStatus === "RUNNING") throw busy();
  const last = draft.jobParams as FillParams | null;
  // A draft copied from a version (or loaded from a file) holds that version's (file's) columns: a new
  // row takes the same ones (a column named input or output is the request field, as in the default
  // row, so the values match too), unless they are the default columns, which grow by the new row's
  // variables as after a default fill.
  const fixed = last?.source_dataset_id != null || last?.file != null;
  const copied = fixed && draft.columns.length > 0 && !isDefaultColumns(draft.columns) ? draft.columns : null;
  const variables = copied ?? ((last?.variables_to_parse ?? null) || null);
  const jobId = draft.jobId ?? 0;

  // The log's values come from its log database; the row goes after the job's rows, unless the log is
  // there already or a fill started meanwhile (the guard on current_job_id keeps the two apart).
  const [values] = await logValues(logs, ws, [log.id], variables);
  if (!values) throw new ApiError("not_found", `request_log_id: request log ${input.request_log_id} not found`);
  const position = sql`(SELECT coalesce(max(${datasetRows.position}) + 1, 0) FROM ${datasetRows} WHERE ${datasetRows.datasetId} = ${draft.id} AND ${datasetRows.jobId} = ${jobId})`;
  const written = await runBatch(db, insertLogRows(ws, { datasetId: draft.id, jobId, offset: position }, [values]));
  if (!written.some((r) => (r.meta.changes ?? 0) > 0)) {
    const [already] = await db
      .select({ id: datasetRows.id })
      .from(datasetRows)
      .where(and(eq(datasetRows.datasetId, draft.id), eq(datasetRows.requestLogId, log.id)))
      .limit(1);
    if (!already) throw busy();
    return { draftDatasetId: draft.id, added: false };
  }
  const keys = Object.keys(JSON.parse(values.v) as Record<string, unknown>);
  await mergeColumns(db, draft.id, (current) => (variables ? [...new Set(variables)] : defaultColumns(current, keys)));
  return { draftDatasetId: draft.id, added: true };
}

/**
 * Sets a dataset's column_names to next(current) without losing a concurrent append's columns: the
 * update only applies to the text it was computed from, and is recomputed from the new text otherwise.
 */
async function mergeColumns(db: Db, datasetId: number, next: (current: string[]) => string[]): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // Compared as stored text: the update applies only to the exact text it was computed from.
    const row = await db.get<{ c: string }>(sql`SELECT ${datasets.columnNames} AS c FROM ${datasets} WHERE ${datasets.id} = ${datasetId}`);
    if (!row) return;
    const text = JSON.stringify(next(JSON.parse(row.c) as string[]));
    if (text === row.c) return;
    const res = await db.run(
      sql`UPDATE ${datasets} SET ${col(datasets.columnNames)} = ${text}, ${col(datasets.updatedAt)} = ${Date.now()} WHERE ${datasets.id} = ${datasetId} AND ${datasets.columnNames} = ${row.c}`,
    );
    if ((res.meta.changes ?? 0) > 0) return;
  }
  throw new Error(`dataset ${datasetId}: column_names kept changing under 50 concurrent updates`);
}

/**
 * Columns in the default form (input variables sorted, then input and output), or too many to name as
 * variables_to_parse (at most 50): the draft then takes rows' variables as a default fill does.
 */
function isDefaultColumns(columns: string[]): boolean {
  if (columns.length > MAX_VARIABLES_TO_PARSE) return true;
  const n = columns.length;
  if (n < 2 || columns[n - 2] !== "input" || columns[n - 1] !== "output") return false;
  return columns.slice(0, -2).every((c, i, vars) => i === 0 || vars[i - 1] < c);
}

/** The most names variables_to_parse takes (the route's validation). */
const MAX_VARIABLES_TO_PARSE = 50;

/** Default columns: every input variable seen (sorted), then input and output. */
function defaultColumns(existing: string[], keys: string[]): string[] {
  const vars = new Set([...existing, ...keys].filter((k) => k !== "input" && k !== "output"));
  return [...[...vars].sort(), "input", "output"];
}

/**
 * What from-filter-params would do, without writing: how many logs match, how many a job would copy
 * (limit and the 50,000 bound applied), and the first `previewRows` rows with their columns.
 */
export async function previewFill(db: Db, logs: WorkspaceLogs, ws: number, input: FromFilterParamsInput & { preview_rows: number }) {
  const group = await requireGroup(db, ws, input.dataset_group_id);
  const cap = Math.min(input.limit ?? MAX_LOGS_PER_JOB, MAX_LOGS_PER_JOB);
  const variables = input.variables_to_parse && input.variables_to_parse.length > 0 ? input.variables_to_parse : null;
  const { matching, rows } = await previewLogs(logs, ws, input, { cap, rows: input.preview_rows, variables });
  const columns = variables ? [...new Set(variables)] : defaultColumns([], rows.flatMap((r) => Object.keys(r)));
  return {
    dataset_group_id: group.id,
    total_matching: matching,
    rows_to_add: Math.min(matching, cap),
    columns,
    rows: rows.map((r) => columns.map((c) => ({ type: "dataset" as const, value: r[c] ?? null }))),
  };
}
