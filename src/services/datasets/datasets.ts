// Dataset groups and their versions: create a group (with its empty draft), queue a fill of the draft
// from request logs (explicit ids or a filter group on the shared compiler), save the draft as the
// next numbered version, list datasets and page through rows. The fill itself is fill.ts.
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { col, columnList, isUniqueViolation, nowMs } from "../../db/sql";
import { runBatch } from "../../db/batch";
import { datasetGroups, datasetJobs, datasetRows, datasets, reports, type DatasetGroupRow, type DatasetJobStatus, type DatasetRow } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { containsText } from "../../lib/query";
import { toIso } from "../../lib/time";
import { externalIdsFor, newMappings, requireFolder, resolveExternalIdLookup, resourceConditions, resourceOrder, type ExternalIdLookupQuery, type ExternalIdPair, type ResourceListQuery } from "../registry";
import { labelVersionId, versionNumberOf } from "../../prompts";
import { fillQuery, filterSignalIds } from "../../logs";
import { DRAFT_VERSION, MAX_LOGS_PER_JOB, type FileFillParams, type FillParams } from "../../logs";

export { DRAFT_VERSION, MAX_LOGS_PER_JOB, type FileFillParams, type FillParams };


export function groupView(g: DatasetGroupRow) {
  return { id: g.id, name: g.name, workspace_id: g.workspaceId, folder_id: g.folderId ?? null, is_deleted: g.isDeleted, created_at: toIso(g.createdAt), updated_at: toIso(g.updatedAt) };
}

export function datasetView(d: DatasetRow, group: DatasetGroupRow, ext: ExternalIdPair[], jobStatus: DatasetJobStatus | null) {
  return {
    id: d.id,
    dataset_group_id: d.datasetGroupId,
    version_number: d.versionNumber,
    column_names: d.columnNames,
    filter_params: d.filterParams ?? null,
    is_deleted: d.isDeleted,
    user_id: d.userId ?? 0,
    job_status: jobStatus,
    created_at: toIso(d.createdAt),
    updated_at: toIso(d.updatedAt),
    dataset_group: groupView(group),
    external_ids: ext,
  };
}

export async function datasetGroupExists(db: Db, ws: number, id: number): Promise<boolean> {
  const [row] = await db.select({ id: datasetGroups.id }).from(datasetGroups).where(and(eq(datasetGroups.workspaceId, ws), eq(datasetGroups.id, id), eq(datasetGroups.isDeleted, false))).limit(1);
  return Boolean(row);
}

export async function requireGroup(db: Db, ws: number, id: number): Promise<DatasetGroupRow> {
  const [row] = await db.select().from(datasetGroups).where(and(eq(datasetGroups.workspaceId, ws), eq(datasetGroups.id, id), eq(datasetGroups.isDeleted, false))).limit(1);
  if (!row) throw ApiError.notFound("dataset group");
  return row;
}

async function draftOf(db: Db, groupId: number): Promise<DatasetRow | undefined> {
  const [d] = await db.select().from(datasets).where(and(eq(datasets.datasetGroupId, groupId), eq(datasets.versionNumber, DRAFT_VERSION))).limit(1);
  return d;
}

export interface CreateGroupInput {
  name: string;
  folder_id?: number | null;
  external_ids?: ExternalIdPair[] | null;
}

/** The columns of a new, empty draft: workspace, group, version number, column names, user. */
const DRAFT_COLUMNS = columnList(datasets, ["workspaceId", "datasetGroupId", "versionNumber", "columnNames", "userId"]);

/** The group, its empty draft and its mappings, in one batch: all or nothing. */
export async function createDatasetGroup(db: Db, auth: AuthContext, input: CreateGroupInput) {
  const ws = auth.workspaceId;
  await requireFolder(db, ws, input.folder_id);
  const mappings = await newMappings(db, ws, "dataset_group", null, input.external_ids);
  const g = datasetGroups;
  const self = sql`SELECT ${g.id} FROM ${g} WHERE ${g.workspaceId} = ${ws} AND ${g.name} = ${input.name}`;
  try {
    await runBatch(db, [
      db.insert(datasetGroups).values({ workspaceId: ws, name: input.name, folderId: input.folder_id ?? null, createdBy: auth.userId }),
      sql`INSERT INTO ${datasets} (${DRAFT_COLUMNS}) SELECT ${ws}, g.${col(g.id)}, ${DRAFT_VERSION}, '[]', ${auth.userId} FROM (${self}) AS g`,
      ...mappings.attach(self),
    ]);
  } catch (err) {
    if (isUniqueViolation(err, datasetGroups)) {
      throw new ApiError("conflict", `name: a dataset group named "${input.name}" already exists in this workspace`);
    }
    mappings.throwIfTaken(err);
    throw err;
  }
  const [group] = await db.select().from(datasetGroups).where(sql`${datasetGroups.id} = (${self})`);
  const draft = (await draftOf(db, group.id))!;
  const ext = (await externalIdsFor(db, ws, "dataset_group", [group.id])).get(String(group.id)) ?? [];
  return {
    success: true as const,
    message: "Dataset group created successfully",
    dataset_group: groupView(group),
    dataset: datasetView(draft, group, ext, null),
    external_ids: ext,
  };
}

/** What a fill job replays: persisted on the job, and (filter-based fills) on the dataset. */

export interface FromFilterParamsInput extends FillParams {
  dataset_group_id: number;
}

/**
 * Points the group's draft (created when missing) at a new fill job and returns the job id to queue.
 * Explicit ids win over the filter group; an empty id list counts as none.
 */
export async function queueDraftFill(db: Db, auth: AuthContext, input: FromFilterParamsInput) {
  const ws = auth.workspaceId;
  const group = await requireGroup(db, ws, input.dataset_group_id);
  const explicit = input.request_log_ids && input.request_log_ids.length > 0 ? [...new Set(input.request_log_ids)] : null;
  const common = { variables_to_parse: input.variables_to_parse ?? null, limit: input.limit ?? null };
  const params: FillParams = explicit
    ? { request_log_ids: explicit, ...common }
    : { filter_group: input.filter_group ?? null, q: input.q ?? null, sort_by: input.sort_by ?? null, sort_order: input.sort_order ?? null, ...common };
  const filterParams = explicit ? null : params;
  // Compiled now, so a group too large for one D1 statement is a 400 here, not a job that cannot run.
  if (!explicit) fillQuery(ws, params, await filterSignalIds(db, ws, params.filter_group));
  return queueDraftJob(db, auth, group.id, params, filterParams);
}

/**
 * One batch: the group's draft (created when missing), a new job with `params`, and the draft pointed
 * at it (which supersedes any earlier job of the draft). The job id is the caller's to queue.
 */
export async function queueDraftJob(db: Db, auth: AuthContext, groupId: number, params: FillParams, filterParams: FillParams | null) {
  const ws = auth.workspaceId;
  const [d, j] = [datasets, datasetJobs];
  const draftSql = sql`SELECT ${d.id} FROM ${d} WHERE ${d.datasetGroupId} = ${groupId} AND ${d.versionNumber} = ${DRAFT_VERSION}`;
  const results = await runBatch(db, [
    sql`INSERT INTO ${d} (${DRAFT_COLUMNS})
        VALUES (${ws}, ${groupId}, ${DRAFT_VERSION}, '[]', ${auth.userId}) ON CONFLICT (${col(d.datasetGroupId)}, ${col(d.versionNumber)}) DO NOTHING`,
    sql`INSERT INTO ${j} (${columnList(j, ["workspaceId", "datasetId", "params", "createdBy"])}) SELECT ${ws}, d.${col(d.id)}, ${JSON.stringify(params)}, ${auth.userId} FROM (${draftSql}) AS d
        RETURNING ${col(j.id)}, ${col(j.datasetId)}`,
    sql`UPDATE ${d} SET ${col(d.currentJobId)} = (SELECT max(${j.id}) FROM ${j} WHERE ${j.datasetId} = ${d.id}),
        ${col(d.filterParams)} = ${filterParams ? JSON.stringify(filterParams) : null}, ${col(d.updatedAt)} = ${nowMs}
        WHERE ${d.id} = (${draftSql})`,
  ]);
  const job = results[1].results[0] as { id: number; dataset_id: number };
  return { jobId: job.id, datasetId: job.dataset_id, datasetGroupId: groupId };
}

/** The draft becomes the group's next numbered version; refused while a fill is still writing it. */
export async function saveDraft(db: Db, ws: number, groupId: number) {
  const group = await requireGroup(db, ws, groupId);
  const draft = await draftOf(db, group.id);
  if (!draft) throw new ApiError("not_found", "dataset_group_id: the dataset group has no draft to save");
  if (draft.currentJobId !== null) {
    const [job] = await db.select({ status: datasetJobs.status }).from(datasetJobs).where(eq(datasetJobs.id, draft.currentJobId));
    if (job && (job.status === "QUEUED" || job.status === "RUNNING")) {
      throw new ApiError("conflict", "dataset_group_id: the draft is still being filled; save it when its job has completed");
    }
  }
  const [saved] = await db
    .update(datasets)
    .set({
      versionNumber: sql`(SELECT coalesce(max(d2.${col(datasets.versionNumber)}), 0) + 1 FROM ${datasets} AS d2 WHERE d2.${col(datasets.datasetGroupId)} = ${group.id} AND d2.${col(datasets.versionNumber)} > 0)`,
      updatedAt: nowMs,
    })
    .where(
      and(
        eq(datasets.id, draft.id),
        eq(datasets.versionNumber, DRAFT_VERSION),
        draft.currentJobId === null ? sql`${datasets.currentJobId} IS NULL` : eq(datasets.currentJobId, draft.currentJobId),
      ),
    )
    .returning({ id: datasets.id, versionNumber: datasets.versionNumber });
  if (!saved) throw new ApiError("conflict", "dataset_group_id: the draft changed meanwhile; try again");
  return { draftDatasetId: saved.id, versionNumber: saved.versionNumber };
}

export interface ListDatasetsQuery extends ExternalIdLookupQuery, ResourceListQuery {
  dataset_group_id?: number;
  prompt_id?: number;
  prompt_version_id?: number;
  prompt_label_id?: number;
  report_id?: number;
}

export async function listDatasets(db: Db, ws: number, q: ListDatasetsQuery) {
  const lookup = await resolveExternalIdLookup(db, ws, "dataset_group", q);
  const empty = { datasets: [], page: q.page, per_page: q.per_page, total: 0, pages: 0 };
  if (lookup === null) return empty;
  const prompt = await promptFilter(db, ws, q);
  if (prompt === null) return empty;
  const d = datasets;
  const g = datasetGroups;
  const deleted = sql`(${d.isDeleted} OR ${g.isDeleted})`;
  // A dataset is named by its group.
  const columns = { id: d.id, name: g.name, userId: d.userId, createdAt: d.createdAt, updatedAt: d.updatedAt };
  const conds: (SQL | undefined)[] = [
    eq(d.workspaceId, ws),
    q.status === "active" ? sql`NOT ${deleted}` : q.status === "deleted" ? deleted : undefined,
    q.dataset_group_id !== undefined ? eq(d.datasetGroupId, q.dataset_group_id) : undefined,
    lookup !== undefined ? sql`CAST(${d.datasetGroupId} AS TEXT) = ${lookup}` : undefined,
    prompt,
    // An evaluation's dataset, and for a run also its pipeline's ("includes parent report").
    q.report_id !== undefined
      ? sql`${d.id} IN (SELECT ${reports.datasetId} FROM ${reports} WHERE ${reports.workspaceId} = ${ws} AND (${reports.id} = ${q.report_id} OR ${reports.id} = (SELECT p.${col(reports.parentReportId)} FROM ${reports} AS p WHERE p.${col(reports.id)} = ${q.report_id} AND p.${col(reports.workspaceId)} = ${ws})))`
      : undefined,
    ...resourceConditions(ws, columns, q),
  ];
  const where = and(...conds);
  const [{ n }] = await db.select({ n: sql<number>`count(*)` }).from(d).innerJoin(g, eq(g.id, d.datasetGroupId)).where(where);
  if (n === 0) return empty;
  const rows = await db
    .select({ d, g, jobStatus: datasetJobs.status })
    .from(d)
    .innerJoin(g, eq(g.id, d.datasetGroupId))
    .leftJoin(datasetJobs, eq(datasetJobs.id, d.currentJobId))
    .where(where)
    .orderBy(...resourceOrder(columns, q))
    .limit(q.per_page)
    .offset((q.page - 1) * q.per_page);
  const ext = await externalIdsFor(db, ws, "dataset_group", [...new Set(rows.map((r) => r.g.id))]);
  return {
    datasets: rows.map((r) => datasetView(r.d, r.g, ext.get(String(r.g.id)) ?? [], r.jobStatus ?? null)),
    page: q.page,
    per_page: q.per_page,
    total: n,
    pages: Math.ceil(n / q.per_page),
  };
}

/**
 * prompt_id / prompt_version_id / prompt_label_id: datasets holding a row copied from a request log made
 * with that prompt (version). A version is recorded on a log as its prompt id and version number; a label
 * names a version. An id the workspace does not own matches nothing (null: answer an empty list).
 */
async function promptFilter(db: Db, ws: number, q: ListDatasetsQuery): Promise<SQL | null | undefined> {
  const versions: { promptId: number; version: number }[] = [];
  const versionIds: number[] = [];
  if (q.prompt_version_id !== undefined) versionIds.push(q.prompt_version_id);
  if (q.prompt_label_id !== undefined) {
    const versionId = await labelVersionId(db, ws, q.prompt_label_id);
    if (versionId === null) return null;
    versionIds.push(versionId);
  }
  for (const id of versionIds) {
    const pv = await versionNumberOf(db, ws, id);
    if (!pv) return null;
    versions.push(pv);
  }
  return holdsLogsOf(ws, { promptId: q.prompt_id, versions });
}

/**
 * Datasets holding a row copied from a log of the prompt `promptId`, or of one of the prompt versions
 * given as (prompt id, version number): the prompt a log records is kept with each row copied from it.
 */
function holdsLogsOf(ws: number, of: { promptId?: number; versions: { promptId: number; version: number }[] }): SQL | undefined {
  const conds: SQL[] = [];
  const r = datasetRows;
  if (of.promptId !== undefined) conds.push(sql`dr.${col(r.logPromptId)} = ${of.promptId}`);
  for (const v of of.versions) conds.push(sql`dr.${col(r.logPromptId)} = ${v.promptId} AND dr.${col(r.logPromptVersion)} = ${v.version}`);
  if (conds.length === 0) return undefined;
  return sql`EXISTS (SELECT 1 FROM ${r} AS dr WHERE dr.${col(r.datasetId)} = ${datasets.id} AND dr.${col(r.workspaceId)} = ${ws} AND ${sql.join(conds, sql` AND `)})`;
}

export async function datasetRowsPage(db: Db, ws: number, datasetId: number, q: { page: number; per_page: number; q?: string }) {
  const [d] = await db.select().from(datasets).where(and(eq(datasets.workspaceId, ws), eq(datasets.id, datasetId), eq(datasets.isDeleted, false))).limit(1);
  if (!d) throw ApiError.notFound("dataset");
  const r = datasetRows;
  const where = and(eq(r.datasetId, d.id), q.q ? containsText(r.values, q.q) : undefined);
  const [{ n }] = await db.select({ n: sql<number>`count(*)` }).from(r).where(where);
  const rows = await db
    .select({ values: r.values })
    .from(r)
    .where(where)
    .orderBy(asc(r.jobId), asc(r.position), asc(r.id))
    .limit(q.per_page)
    .offset((q.page - 1) * q.per_page);
  const columns = d.columnNames;
  return {
    columns,
    rows: rows.map((row) => columns.map((c) => ({ type: "dataset" as const, value: row.values[c] ?? null }))),
    page: q.page,
    per_page: q.per_page,
    total: n,
    pages: Math.ceil(n / q.per_page),
  };
}
