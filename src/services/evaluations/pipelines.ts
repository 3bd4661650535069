// Evaluation pipelines (reports): create on a saved dataset version with columns of the block engine,
// list, read with columns, stats and scores, edit columns, rename, archive, and page through a run's
// rows. Runs themselves are runs.ts.
import { and, asc, desc, eq, lte, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch } from "../../db/batch";
import { col, columnList, inJsonList, isUniqueViolation, nowMs } from "../../db/sql";
import { datasetRows, datasets, reportColumns, reportRows, reports, type ReportCells, type ReportColumnRow, type ReportRow } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { DRAFT_VERSION, requireGroup } from "../datasets";
import { orderColumns, validateColumns, type ColumnIssue, type ColumnSpec } from "./columns";
import { COLUMN_COLUMNS, computeScore, type ReportScore } from "./runs";
import { externalIdsFor, newMappings, requireFolder, resolveExternalIdLookup, resourceConditions, resourceOrder, type ExternalIdLookupQuery, type ExternalIdPair, type ResourceListQuery } from "../registry";


function columnsError(issues: ColumnIssue[]): ApiError {
  const shown = issues.slice(0, 5).map((i) => `${i.field}: ${i.rule}`);
  if (issues.length > 5) shown.push(`and ${issues.length - 5} more`);
  return new ApiError("validation_error", shown.join("; "), { details: issues });
}

export interface ColumnInput {
  column_type: string;
  name: string;
  configuration: Record<string, unknown>;
  position?: number | null;
  is_part_of_score?: boolean | null;
}

const spec = (c: ColumnInput): ColumnSpec => ({ column_type: c.column_type, name: c.name, configuration: c.configuration, is_part_of_score: Boolean(c.is_part_of_score) });
const specOf = (c: ReportColumnRow): ColumnSpec => ({ column_type: c.columnType, name: c.name, configuration: c.configuration, is_part_of_score: c.isPartOfScore });

export function columnView(c: ReportColumnRow, score?: number | null) {
  return {
    id: c.id,
    report_id: c.reportId,
    column_type: c.columnType,
    name: c.name,
    position: c.position,
    is_part_of_score: c.isPartOfScore,
    configuration: c.configuration,
    score: score ?? null,
  };
}

async function datasetColumns(db: Db, datasetId: number): Promise<string[]> {
  const [d] = await db.select({ columns: datasets.columnNames }).from(datasets).where(eq(datasets.id, datasetId)).limit(1);
  return d?.columns ?? [];
}

/** A pipeline of the workspace that is not archived (404 otherwise; runs are not pipelines). */
async function requirePipeline(db: Db, ws: number, id: number, field = "report_id"): Promise<ReportRow> {
  const [r] = await db
    .select()
    .from(reports)
    .where(and(eq(reports.workspaceId, ws), eq(reports.id, id), eq(reports.deleted, false)))
    .limit(1);
  if (!r) throw new ApiError("not_found", `${field}: evaluation ${id} not found`);
  if (!r.isBlueprint) throw new ApiError("validation_error", `${field}: report ${id} is a run; its columns are a snapshot and cannot change (edit its pipeline, ${r.parentReportId})`);
  return r;
}

export async function pipelineExists(db: Db, ws: number, id: number): Promise<boolean> {
  const [r] = await db
    .select({ id: reports.id })
    .from(reports)
    .where(and(eq(reports.workspaceId, ws), eq(reports.id, id), eq(reports.isBlueprint, true), eq(reports.deleted, false)))
    .limit(1);
  return Boolean(r);
}

export interface CreatePipelineInput {
  dataset_group_id: number;
  name?: string | null;
  folder_id?: number | null;
  dataset_version_number?: number | null;
  columns?: ColumnInput[] | null;
  score_configuration?: unknown;
  external_ids?: ExternalIdPair[] | null;
}

/** POST /reports: the pipeline, its columns and mappings in one batch (all or nothing). */
export async function createPipeline(db: Db, auth: AuthContext, input: CreatePipelineInput) {
  const ws = auth.workspaceId;
  if (input.score_configuration != null) {
    throw new ApiError("validation_error", "score_configuration: custom scoring code cannot run here; mark columns is_part_of_score for the built-in score");
  }
  const group = await requireGroup(db, ws, input.dataset_group_id);
  let dataset;
  if (input.dataset_version_number != null) {
    if (input.dataset_version_number === DRAFT_VERSION) throw new ApiError("validation_error", "dataset_version_number: a draft cannot be evaluated; save it first (save-draft)");
    [dataset] = await db
      .select()
      .from(datasets)
      .where(and(eq(datasets.datasetGroupId, group.id), eq(datasets.versionNumber, input.dataset_version_number), eq(datasets.isDeleted, false)))
      .limit(1);
    if (!dataset) throw new ApiError("not_found", `dataset_version_number: dataset group ${group.id} has no version ${input.dataset_version_number}`);
  } else {
    [dataset] = await db
      .select()
      .from(datasets)
      .where(and(eq(datasets.datasetGroupId, group.id), sql`${datasets.versionNumber} > 0`, eq(datasets.isDeleted, false)))
      .orderBy(desc(datasets.versionNumber))
      .limit(1);
    if (!dataset) throw new ApiError("validation_error", "dataset_group_id: the dataset group must have at least one saved (non-draft) version");
  }
  await requireFolder(db, ws, input.folder_id);
  const given = input.columns ?? [];
  const ordered = orderColumns(given);
  // Issues name the column by its index in the request, whatever position it takes.
  const indexOf = new Map(given.map((c, i) => [c, i]));
  const issues = validateColumns(ordered.map(spec), dataset.columnNames, (i, c) => `columns[${indexOf.get(ordered[i])}] (${JSON.stringify(c.name)})`);
  if (issues.length > 0) throw columnsError(issues);
  const mappings = await newMappings(db, ws, "evaluation", null, input.external_ids);
  const name = input.name ?? `evaluation-${crypto.randomUUID().slice(0, 8)}`;
  const self = sql`SELECT max(${reports.id}) FROM ${reports} WHERE ${reports.workspaceId} = ${ws}`;
  const cols = ordered.map((c, i) => ({ ...spec(c), position: i + 1 }));
  let results;
  try {
    results = await runBatch(db, [
      sql`INSERT INTO ${reports} (${columnList(reports, ["workspaceId", "name", "folderId", "isBlueprint", "datasetGroupId", "datasetId", "userId"])})
          VALUES (${ws}, ${name}, ${input.folder_id ?? null}, 1, ${group.id}, ${dataset.id}, ${auth.userId}) RETURNING ${col(reports.id)}`,
      ...(cols.length
        ? [
            sql`INSERT INTO ${reportColumns} (${COLUMN_COLUMNS})
                SELECT ${ws}, (${self}), j.value ->> 'column_type', j.value ->> 'name', j.value ->> 'position', json(j.value -> 'configuration'), j.value ->> 'is_part_of_score'
                FROM json_each(${JSON.stringify(cols)}) AS j`,
          ]
        : []),
      ...mappings.attach(self),
    ]);
  } catch (err) {
    mappings.throwIfTaken(err);
    throw err;
  }
  const id = (results[0].results[0] as { id: number }).id;
  const columns = await db.select().from(reportColumns).where(eq(reportColumns.reportId, id)).orderBy(asc(reportColumns.position));
  return { success: true as const, report_id: id, report_columns: columns.map((c) => columnView(c)), external_ids: mappings.pairs };
}

// ---- views ----

export interface StatusCounts {
  COMPLETED: number;
  FAILED: number;
  QUEUED: number;
  RUNNING: number;
}

/** Cell counts of runs, by report id: rows not yet written count every column as queued (or running). */
async function statusCounts(db: Db, runIds: number[]): Promise<Map<number, StatusCounts>> {
  const out = new Map<number, StatusCounts>();
  if (runIds.length === 0) return out;
  const rr = reportRows;
  const results = await db.all<{ id: number; c: number; f: number; q: number; running: number; ncols: number }>(
    sql`SELECT r.${col(rr.reportId)} AS id, sum(r.${col(rr.completedCount)}) AS c, sum(r.${col(rr.failedCount)}) AS f,
               sum(r.${col(rr.state)} = 'QUEUED') AS q, sum(r.${col(rr.state)} = 'RUNNING') AS running,
               (SELECT count(*) FROM ${reportColumns} WHERE ${reportColumns.reportId} = r.${col(rr.reportId)}) AS ncols
        FROM ${rr} AS r WHERE r.${col(rr.reportId)} IN (SELECT value FROM json_each(${JSON.stringify(runIds)})) GROUP BY r.${col(rr.reportId)}`,
  );
  for (const r of results) out.set(r.id, { COMPLETED: r.c, FAILED: r.f, QUEUED: r.q * r.ncols, RUNNING: r.running * r.ncols });
  return out;
}

const ZERO: StatusCounts = { COMPLETED: 0, FAILED: 0, QUEUED: 0, RUNNING: 0 };

function reportView<E extends ExternalIdPair[] | undefined>(r: ReportRow, ext: E) {
  return {
    id: r.id,
    name: r.name,
    comment: r.comment ?? null,
    created_at: toIso(r.createdAt),
    updated_at: toIso(r.updatedAt),
    workspace_id: r.workspaceId,
    folder_id: r.folderId ?? null,
    user_id: r.userId ?? null,
    dataset_group_id: r.datasetGroupId,
    dataset_id: r.datasetId,
    is_blueprint: r.isBlueprint,
    tags: r.tags,
    deleted: r.deleted,
    parent_report_id: r.parentReportId ?? null,
    score_configuration: null,
    ...((ext ? { external_ids: ext } : {}) as E extends ExternalIdPair[] ? { external_ids: ExternalIdPair[] } : { external_ids?: undefined }),
  };
}

function runView(r: ReportRow, counts: StatusCounts | undefined) {
  return {
    ...reportView(r, undefined),
    score: r.score ?? null,
    score_matrix: null,
    score_calculation_error: null,
    status: r.status ?? "RUNNING",
    stats: { status_counts: counts ?? ZERO },
  };
}

export interface ListEvaluationsQuery extends ExternalIdLookupQuery, ResourceListQuery {
  include_runs: boolean;
}

/** Runs listed under each pipeline by GET /evaluations?include_runs=true (the newest; run_count has them all). */
export const RUNS_PER_EVALUATION = 10;

/** GET /api/public/v2/evaluations: the workspace's pipelines; with include_runs, each with its runs (newest first). */
export async function listEvaluations(db: Db, ws: number, q: ListEvaluationsQuery) {
  const lookup = await resolveExternalIdLookup(db, ws, "evaluation", q);
  const empty = { evaluations: [], page: q.page, per_page: q.per_page, total: 0, pages: 0 };
  if (lookup === null) return empty;
  const r = reports;
  const where = and(
    eq(r.workspaceId, ws),
    eq(r.isBlueprint, true),
    q.status === "active" ? eq(r.deleted, false) : q.status === "deleted" ? eq(r.deleted, true) : undefined,
    lookup !== undefined ? sql`CAST(${r.id} AS TEXT) = ${lookup}` : undefined,
    ...resourceConditions(ws, r, q),
  );
  const [{ n }] = await db.select({ n: sql<number>`count(*)` }).from(r).where(where);
  if (n === 0) return empty;
  const rows = await db.select().from(r).where(where).orderBy(...resourceOrder(r, q)).limit(q.per_page).offset((q.page - 1) * q.per_page);
  const ids = rows.map((x) => x.id);
  const ext = await externalIdsFor(db, ws, "evaluation", ids);
  const runsBy = new Map<number, ReturnType<typeof runView>[]>();
  const runCounts = new Map<number, number>();
  if (q.include_runs && ids.length) {
    // Each pipeline brings its newest RUNS_PER_EVALUATION runs (and how many it has), so a page's
    // size and the cell counts read for it stay bounded however often pipelines were run.
    const ranked = db
      .select({
        id: r.id,
        parent: r.parentReportId,
        rn: sql<number>`row_number() OVER (PARTITION BY ${r.parentReportId} ORDER BY ${r.id} DESC)`.as("rn"),
        total: sql<number>`count(*) OVER (PARTITION BY ${r.parentReportId})`.as("total"),
      })
      .from(r)
      // Archiving a pipeline archives its runs: the archived pipelines' lists show them.
      .where(and(eq(r.workspaceId, ws), eq(r.isBlueprint, false), q.status === "active" ? eq(r.deleted, false) : undefined, inJsonList(r.parentReportId, ids)))
      .as("ranked");
    const top = await db.select({ id: ranked.id, parent: ranked.parent, total: ranked.total }).from(ranked).where(lte(ranked.rn, RUNS_PER_EVALUATION));
    for (const t of top) runCounts.set(t.parent!, t.total);
    const runs = top.length ? await db.select().from(r).where(inJsonList(r.id, top.map((t) => t.id))).orderBy(desc(r.id)) : [];
    const counts = await statusCounts(db, runs.map((x) => x.id));
    for (const run of runs) {
      const list = runsBy.get(run.parentReportId!) ?? [];
      list.push(runView(run, counts.get(run.id)));
      runsBy.set(run.parentReportId!, list);
    }
  }
  return {
    evaluations: rows.map((x) => ({ ...reportView(x, ext.get(String(x.id)) ?? []), ...(q.include_runs ? { runs: runsBy.get(x.id) ?? [], run_count: runCounts.get(x.id) ?? 0 } : {}) })),
    page: q.page,
    per_page: q.per_page,
    total: n,
    pages: Math.ceil(n / q.per_page),
  };
}

async function requireReport(db: Db, ws: number, id: number): Promise<ReportRow> {
  const [r] = await db.select().from(reports).where(and(eq(reports.workspaceId, ws), eq(reports.id, id))).limit(1);
  if (!r) throw ApiError.notFound(`report ${id}`);
  return r;
}

/** The score of a run: stored when it completed, computed from the rows written so far while it runs. */
async function scoreOf(db: Db, r: ReportRow, columns: ReportColumnRow[]): Promise<ReportScore> {
  if (r.status === "COMPLETED" && r.score) return r.score as unknown as ReportScore;
  return computeScore(db, r.id, columns);
}

function columnScores(score: ReportScore | null): Map<string, number | null> {
  if (!score) return new Map();
  const d = score.details as { column_name?: string; score?: number | null; columns?: { column_name: string; score: number | null }[] };
  const list = d.columns ?? (d.column_name !== undefined ? [{ column_name: d.column_name, score: d.score ?? null }] : []);
  return new Map(list.map((c) => [c.column_name, c.score]));
}

/** GET /reports/{id}: the report (pipeline or run, archived ones too), its columns, status, cell counts and score. */
export async function getReport(db: Db, ws: number, id: number) {
  const r = await requireReport(db, ws, id);
  const columns = await db.select().from(reportColumns).where(eq(reportColumns.reportId, r.id)).orderBy(asc(reportColumns.position), asc(reportColumns.id));
  const ext = r.isBlueprint ? ((await externalIdsFor(db, ws, "evaluation", [r.id])).get(String(r.id)) ?? []) : undefined;
  const score = r.isBlueprint ? null : await scoreOf(db, r, columns);
  const counts = r.isBlueprint ? ZERO : ((await statusCounts(db, [r.id])).get(r.id) ?? ZERO);
  const scores = columnScores(score);
  return {
    success: true as const,
    message: "success",
    report: { ...reportView(r, ext), score, score_matrix: null, score_calculation_error: null, prompt_registry_id: null, prompt_version_number: null },
    status: r.isBlueprint ? ("COMPLETED" as const) : (r.status ?? "RUNNING"),
    stats: { status_counts: counts },
    report_columns: columns.map((c) => columnView(c, scores.get(c.name))),
  };
}

/** GET /reports/{id}/score: runs only (a pipeline has no results of its own). */
export async function getReportScore(db: Db, ws: number, id: number) {
  const r = await requireReport(db, ws, id);
  if (r.isBlueprint) throw new ApiError("validation_error", `report_id: report ${id} is an evaluation pipeline; pipelines have no score, their runs do`);
  const columns = await db.select().from(reportColumns).where(eq(reportColumns.reportId, r.id)).orderBy(asc(reportColumns.position));
  return { success: true as const, message: "success", score: await scoreOf(db, r, columns) };
}

/** Archives a report; archiving a pipeline archives its runs (their jobs stop at their next batch). */
export async function archiveReport(db: Db, ws: number, id: number): Promise<void> {
  const r = await requireReport(db, ws, id);
  if (r.deleted) throw ApiError.notFound(`report ${id}`);
  await db
    .update(reports)
    .set({ deleted: true, updatedAt: nowMs })
    .where(and(eq(reports.workspaceId, ws), sql`(${reports.id} = ${r.id} OR ${reports.parentReportId} = ${r.id})`));
}

/** DELETE /reports/name/{name}: archives every report of that name (and the runs of pipelines among them). */
export async function archiveReportsByName(db: Db, ws: number, name: string): Promise<number> {
  const rows = await db
    .select({ id: reports.id })
    .from(reports)
    .where(and(eq(reports.workspaceId, ws), eq(reports.name, name), eq(reports.deleted, false)));
  if (rows.length === 0) throw new ApiError("not_found", `report_name: no report named ${JSON.stringify(name)}`);
  const ids = rows.map((r) => r.id);
  await db
    .update(reports)
    .set({ deleted: true, updatedAt: nowMs })
    .where(and(eq(reports.workspaceId, ws), sql`(${inJsonList(reports.id, ids)} OR ${inJsonList(reports.parentReportId, ids)})`));
  return ids.length;
}

/** PATCH /reports/{id}/rename: name and/or tags (at least one). */
export async function renameReport(db: Db, ws: number, id: number, body: { name?: string | null; tags?: string[] | null }) {
  if (body.name == null && body.tags == null) throw new ApiError("validation_error", "name, tags: give a name, tags, or both");
  const r = await requireReport(db, ws, id);
  if (r.deleted) throw ApiError.notFound(`report ${id}`);
  const [u] = await db
    .update(reports)
    .set({ ...(body.name != null ? { name: body.name } : {}), ...(body.tags != null ? { tags: body.tags } : {}), updatedAt: nowMs })
    .where(eq(reports.id, r.id))
    .returning();
  return { success: true as const, report: { id: u.id, name: u.name, tags: u.tags, score_configuration: null } };
}

/** PATCH /reports/{id}/score-card: which columns make up the built-in score (custom code cannot run here). */
export async function updateScoreCard(db: Db, ws: number, id: number, body: { column_names: string[]; code?: string | null }) {
  if (body.code != null) throw new ApiError("validation_error", "code: custom scoring code cannot run here; the built-in score averages the columns in column_names");
  const r = await requirePipeline(db, ws, id);
  const columns = await db.select({ name: reportColumns.name }).from(reportColumns).where(eq(reportColumns.reportId, r.id));
  const known = new Set(columns.map((c) => c.name));
  const unknown = body.column_names.filter((n) => !known.has(n));
  if (unknown.length) throw new ApiError("validation_error", `column_names: not columns of the pipeline: ${unknown.map((n) => JSON.stringify(n)).join(", ")}`);
  await runBatch(db, [
    sql`UPDATE ${reportColumns} SET ${col(reportColumns.isPartOfScore)} = (${reportColumns.name} IN (SELECT value FROM json_each(${JSON.stringify(body.column_names)}))), ${col(reportColumns.updatedAt)} = ${nowMs}
        WHERE ${reportColumns.reportId} = ${r.id}`,
    touched(r.id),
  ]);
  return { success: true as const, report: { id: r.id, name: r.name, tags: r.tags, score_configuration: null } };
}

// ---- columns of a pipeline ----

/** The statement marking a pipeline changed now. */
const touched = (reportId: number) => sql`UPDATE ${reports} SET ${col(reports.updatedAt)} = ${nowMs} WHERE ${reports.id} = ${reportId}`;

async function pipelineColumns(db: Db, reportId: number): Promise<ReportColumnRow[]> {
  return db.select().from(reportColumns).where(eq(reportColumns.reportId, reportId)).orderBy(asc(reportColumns.position), asc(reportColumns.id));
}

/** Validates the pipeline's columns after a change and writes every position (1..n) and the change in one batch. */
async function saveColumns(db: Db, r: ReportRow, next: (ReportColumnRow | (ColumnSpec & { id: null }))[], extra: SQL[]): Promise<void> {
  const specs = next.map((c) => ("columnType" in c ? specOf(c) : c));
  const issues = validateColumns(specs, await datasetColumns(db, r.datasetId), (_i, c) => `column ${JSON.stringify(c.name)}`);
  if (issues.length > 0) throw columnsError(issues);
  const positions = next.flatMap((c, i) => (c.id !== null ? [{ id: c.id, position: i + 1 }] : []));
  try {
    await runBatch(db, [
    ...extra,
    sql`UPDATE ${reportColumns} SET ${col(reportColumns.position)} = (SELECT j.value ->> 'position' FROM json_each(${JSON.stringify(positions)}) AS j WHERE j.value ->> 'id' = ${reportColumns.id})
        WHERE ${reportColumns.reportId} = ${r.id} AND ${reportColumns.id} IN (SELECT j.value ->> 'id' FROM json_each(${JSON.stringify(positions)}) AS j)`,
    touched(r.id),
    ]);
  } catch (err) {
    // Two concurrent changes naming a column alike: the loser is told as validation would have.
    if (isUniqueViolation(err, reportColumns)) throw new ApiError("validation_error", "name: is used by another column; names must be unique in the pipeline");
    throw err;
  }
}

/** Where a new or moved column goes: 1-based, below 1 is first, past the end is last. */
const slot = (position: number | null | undefined, length: number) => (position == null ? length : Math.min(Math.max(position, 1) - 1, length));

export async function addColumn(db: Db, ws: number, body: ColumnInput & { report_id: number }) {
  const r = await requirePipeline(db, ws, body.report_id);
  const current = await pipelineColumns(db, r.id);
  const fresh = { ...spec(body), id: null };
  const at = slot(body.position, current.length);
  const next = [...current.slice(0, at), fresh, ...current.slice(at)];
  await saveColumns(db, r, next, [
    sql`INSERT INTO ${reportColumns} (${COLUMN_COLUMNS})
        VALUES (${ws}, ${r.id}, ${body.column_type}, ${body.name}, ${at + 1}, ${JSON.stringify(body.configuration)}, ${body.is_part_of_score ? 1 : 0})`,
  ]);
  const [c] = await db.select().from(reportColumns).where(and(eq(reportColumns.reportId, r.id), eq(reportColumns.name, body.name))).limit(1);
  return columnView(c);
}

async function requireColumn(db: Db, ws: number, columnId: number) {
  const [c] = await db.select().from(reportColumns).where(and(eq(reportColumns.workspaceId, ws), eq(reportColumns.id, columnId))).limit(1);
  if (!c) throw ApiError.notFound(`report column ${columnId}`);
  return c;
}

export interface EditColumnInput {
  report_id: number;
  column_type: string;
  configuration?: Record<string, unknown> | null;
  name?: string | null;
  position?: number | null;
}

export async function editColumn(db: Db, ws: number, columnId: number, body: EditColumnInput) {
  const c = await requireColumn(db, ws, columnId);
  if (c.reportId !== body.report_id) throw new ApiError("validation_error", `report_id: column ${columnId} belongs to another report`);
  const r = await requirePipeline(db, ws, c.reportId);
  const current = await pipelineColumns(db, r.id);
  const changed: ReportColumnRow = { ...c, columnType: body.column_type, configuration: body.configuration ?? c.configuration, name: body.name ?? c.name };
  const others = current.filter((x) => x.id !== c.id);
  const at = body.position != null ? slot(body.position, others.length) : current.findIndex((x) => x.id === c.id);
  const next = [...others.slice(0, at), changed, ...others.slice(at)];
  await saveColumns(db, r, next, [
    sql`UPDATE ${reportColumns} SET ${col(reportColumns.columnType)} = ${changed.columnType}, ${col(reportColumns.configuration)} = ${JSON.stringify(changed.configuration)},
        ${col(reportColumns.name)} = ${changed.name}, ${col(reportColumns.updatedAt)} = ${nowMs} WHERE ${reportColumns.id} = ${c.id}`,
  ]);
  const [u] = await db.select().from(reportColumns).where(eq(reportColumns.id, c.id)).limit(1);
  return columnView(u);
}

export async function deleteColumn(db: Db, ws: number, columnId: number): Promise<void> {
  const c = await requireColumn(db, ws, columnId);
  const r = await requirePipeline(db, ws, c.reportId);
  const next = (await pipelineColumns(db, r.id)).filter((x) => x.id !== c.id);
  await saveColumns(db, r, next, [sql`DELETE FROM ${reportColumns} WHERE ${reportColumns.id} = ${c.id}`]);
}

// ---- rows ----

/**
 * GET /api/public/v2/evaluations/{id}/rows: a run's rows, dataset cells then one eval cell per column.
 * For a pipeline: the rows of its newest run (none yet: no rows).
 */
export async function evaluationRows(db: Db, ws: number, id: number, q: { page: number; per_page: number }) {
  let r = await requireReport(db, ws, id);
  if (r.isBlueprint) {
    const [latest] = await db
      .select()
      .from(reports)
      .where(and(eq(reports.workspaceId, ws), eq(reports.parentReportId, r.id), eq(reports.deleted, false)))
      .orderBy(desc(reports.id))
      .limit(1);
    if (latest) r = latest;
  }
  const columns = await pipelineColumns(db, r.id);
  const dsColumns = await datasetColumns(db, r.datasetId);
  const names = [...dsColumns, ...columns.map((c) => c.name)];
  const empty = { columns: names, rows: [], page: q.page, per_page: q.per_page, total: 0, pages: 0 };
  if (r.isBlueprint) return empty;
  const total = r.rowCount ?? 0;
  const results = await db.all<{ state: string; cells: string | null; v: string }>(
    sql`SELECT rr.${col(reportRows.state)}, rr.${col(reportRows.cells)}, dr.${col(datasetRows.values)} AS v
        FROM ${reportRows} AS rr JOIN ${datasetRows} AS dr ON dr.${col(datasetRows.id)} = rr.${col(reportRows.datasetRowId)}
        WHERE rr.${col(reportRows.reportId)} = ${r.id} ORDER BY rr.${col(reportRows.rowIndex)} LIMIT ${q.per_page} OFFSET ${(q.page - 1) * q.per_page}`,
  );
  const rows = results.map((row) => {
    const values = JSON.parse(row.v) as Record<string, unknown>;
    const cells = row.cells ? (JSON.parse(row.cells) as ReportCells) : {};
    return [
      ...dsColumns.map((c) => ({ type: "dataset" as const, value: values[c] ?? null })),
      ...columns.map((c) => {
        const cell = cells[String(c.id)];
        return cell
          ? { type: "eval" as const, status: cell.status, value: cell.value ?? null, error_message: cell.error_message }
          : { type: "eval" as const, status: row.state === "RUNNING" ? ("RUNNING" as const) : ("QUEUED" as const), value: null, error_message: null };
      }),
    ];
  });
  return { columns: names, rows, page: q.page, per_page: q.per_page, total, pages: Math.ceil(total / q.per_page) };
}
