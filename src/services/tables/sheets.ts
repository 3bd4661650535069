// Sheets of a smart table in D1: their listing fields and display positions, and their import
// operations. Positions stay contiguous (0..n-1 over live sheets): every insert, move and delete
// shifts the others inside one atomic db.batch, with the new position computed in SQL.
import { and, asc, desc, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { col, columnList } from "../../db/sql";
import { sheetOperations, sheetPromptRefs, sheets, smartTables, type SheetImportSource, type SheetOperationRow, type SheetOperationStatus, type SheetRow } from "../../db/schema";
import type { Deps } from "../../env";
import { decodeCursor, encodeCursor } from "../../lib/cursor";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { formatOf } from "../../lib/file-format";
import { statement } from "../../db/batch";
import type { SheetStats } from "../../sheets";
import { runBatch } from "../../db/batch";

export interface SheetView {
  id: string;
  table_id: string;
  workspace_id: number;
  title: string;
  index: number;
  row_count: number;
  version_count: number;
  created_at: string;
  updated_at: string;
}

export interface OperationView {
  operation_id: string;
  source: SheetImportSource;
  status: SheetOperationStatus;
  progress: number;
  message: string;
  rows_added: number;
  row_count: number;
  file_name: string | null;
  error_message: string | null;
  table_id: string;
  sheet_id: string;
  created_at: string;
  updated_at: string;
}


export function sheetView(s: SheetRow, stats?: SheetStats): SheetView {
  return {
    id: s.id,
    table_id: s.tableId,
    workspace_id: s.workspaceId,
    title: s.title,
    index: s.position,
    row_count: stats ? stats.rowCount : s.rowCount,
    version_count: stats ? stats.versionCount : s.versionCount,
    created_at: toIso(s.createdAt),
    updated_at: toIso(s.updatedAt),
  };
}

export function operationView(o: SheetOperationRow): OperationView {
  return {
    operation_id: o.id,
    source: o.source,
    status: o.status,
    progress: o.progress,
    message: o.message,
    rows_added: o.rowsAdded,
    row_count: o.rowCount,
    file_name: o.fileName,
    error_message: o.errorMessage,
    table_id: o.tableId,
    sheet_id: o.sheetId,
    created_at: toIso(o.createdAt),
    updated_at: toIso(o.updatedAt),
  };
}


export async function findSheet(db: Db, workspaceId: number, tableId: string, sheetId: string): Promise<SheetRow | null> {
  const rows = await db
    .select()
    .from(sheets)
    .where(and(eq(sheets.id, sheetId), eq(sheets.tableId, tableId), eq(sheets.workspaceId, workspaceId), isNull(sheets.deletedAt)))
    .limit(1);
  return rows[0] ?? null;
}

export async function requireSheet(db: Db, workspaceId: number, tableId: string, sheetId: string): Promise<SheetRow> {
  const s = await findSheet(db, workspaceId, tableId, sheetId);
  if (!s) throw ApiError.notFound("sheet");
  return s;
}

async function sheetById(db: Db, sheetId: string): Promise<SheetRow> {
  const [row] = await db.select().from(sheets).where(eq(sheets.id, sheetId)).limit(1);
  return row;
}

/** "Sheet N" with N one more than the number of live sheets, or the next one not in use. */
export async function defaultSheetTitle(db: Db, tableId: string): Promise<string> {
  const rows = await db
    .select({ title: sheets.title })
    .from(sheets)
    .where(and(eq(sheets.tableId, tableId), isNull(sheets.deletedAt)));
  const taken = new Set(rows.map((r) => r.title));
  for (let n = rows.length + 1; ; n++) if (!taken.has(`Sheet ${n}`)) return `Sheet ${n}`;
}

/** Bare column names of sheets, for SET targets and the statements below (unqualified as SQLite reads them). */
const c = { id: col(sheets.id), position: col(sheets.position), updatedAt: col(sheets.updatedAt), deletedAt: col(sheets.deletedAt), title: col(sheets.title) };
const liveInTable = (tableId: string) => sql`${sheets.tableId} = ${tableId} AND ${sheets.deletedAt} IS NULL`;
const liveCount = (tableId: string) => sql`(SELECT COUNT(*) FROM ${sheets} WHERE ${liveInTable(tableId)})`;
export const tableAlive = (workspaceId: number, tableId: string) =>
  sql`EXISTS (SELECT 1 FROM ${smartTables} WHERE ${smartTables.id} = ${tableId} AND ${smartTables.workspaceId} = ${workspaceId} AND ${smartTables.deletedAt} IS NULL)`;

/** The prompt a sheet's columns refer to, as conditions on its sheet_prompt_refs rows (alias r). */
export interface PromptRefQuery {
  prompt_id?: number;
  prompt_version_id?: number;
  prompt_label_id?: number;
}
export function promptRefConditions(q: PromptRefQuery): SQL[] {
  const r = sheetPromptRefs;
  const conds: SQL[] = [];
  if (q.prompt_id !== undefined) conds.push(sql`r.${col(r.promptId)} = ${q.prompt_id}`);
  if (q.prompt_version_id !== undefined) conds.push(sql`r.${col(r.promptVersionId)} = ${q.prompt_version_id}`);
  if (q.prompt_label_id !== undefined) conds.push(sql`r.${col(r.promptLabelId)} = ${q.prompt_label_id}`);
  return conds;
}

export interface NewSheet {
  id: string;
  workspaceId: number;
  tableId: string;
  title: string;
  /** 0-based; null or past the end appends. */
  index: number | null;
  stats: SheetStats;
}

/**
 * The statements that insert a sheet at its position (shifting the ones at and after it), only
 * while the table is alive and `guard` (extra SQL condition) holds. For use inside a db.batch.
 */
export function insertSheetStatements(db: Db, s: NewSheet, guard: SQL = sql`1`) {
  const now = Date.now();
  const at = s.index === null ? liveCount(s.tableId) : sql`MIN(${s.index}, ${liveCount(s.tableId)})`;
  const stmts: D1PreparedStatement[] = [];
  if (s.index !== null) {
    stmts.push(
      statement(
        db,
        sql`UPDATE ${sheets} SET ${c.position} = ${c.position} + 1 WHERE ${liveInTable(s.tableId)} AND ${c.position} >= ${s.index}
            AND ${tableAlive(s.workspaceId, s.tableId)} AND ${guard}`,
      ),
    );
  }
  stmts.push(
    statement(
      db,
      sql`INSERT INTO ${sheets} (${columnList(sheets, ["id", "workspaceId", "tableId", "title", "position", "rowCount", "versionCount", "createdAt", "updatedAt"])})
          SELECT ${s.id}, ${s.workspaceId}, ${s.tableId}, ${s.title}, ${at}, ${s.stats.rowCount}, ${s.stats.versionCount}, ${now}, ${now}
          WHERE ${tableAlive(s.workspaceId, s.tableId)} AND ${guard}`,
    ),
  );
  return stmts;
}

/** A blank sheet: its object is scaffolded first (Column A, one empty row), then it is listed in D1. */
export async function createBlankSheet(
  deps: Pick<Deps, "db" | "sheet">,
  input: { workspaceId: number; tableId: string; title: string | null; index: number | null },
): Promise<SheetRow> {
  const { db } = deps;
  const id = crypto.randomUUID();
  const stats = await deps.sheet(id).init({ sheetId: id, tableId: input.tableId, workspaceId: input.workspaceId }, { scaffold: true });
  const title = input.title ?? (await defaultSheetTitle(db, input.tableId));
  await runBatch(db, insertSheetStatements(db, { id, workspaceId: input.workspaceId, tableId: input.tableId, title, index: input.index, stats }));
  const row = await sheetById(db, id);
  if (!row) throw ApiError.notFound("table");
  return row;
}

export async function listSheets(
  db: Db,
  workspaceId: number,
  tableId: string,
  q: { cursor?: string; limit: number; order: "asc" | "desc"; prompt_id?: number; prompt_version_id?: number; prompt_label_id?: number },
) {
  const conds: SQL[] = [eq(sheets.tableId, tableId), eq(sheets.workspaceId, workspaceId), isNull(sheets.deletedAt)];
  const refConds = promptRefConditions(q);
  if (refConds.length > 0) {
    const r = sheetPromptRefs;
    conds.push(sql`${sheets.id} IN (SELECT r.${col(r.sheetId)} FROM ${r} r WHERE r.${col(r.workspaceId)} = ${workspaceId} AND ${sql.join(refConds, sql` AND `)})`);
  }
  if (q.cursor !== undefined) {
    // Keyset on (position, seq): positions shift when sheets move, so a page boundary is best effort
    // for a table being rearranged meanwhile; sheets per table are few.
    const pos = decodeCursor(q.cursor, q.order);
    const t = pos.t ?? 0;
    conds.push(
      q.order === "asc"
        ? sql`(${sheets.position} > ${pos.k} OR (${sheets.position} = ${pos.k} AND ${sheets.seq} > ${t}))`
        : sql`(${sheets.position} < ${pos.k} OR (${sheets.position} = ${pos.k} AND ${sheets.seq} < ${t}))`,
    );
  }
  const dir = q.order === "asc" ? asc : desc;
  const rows = await db
    .select()
    .from(sheets)
    .where(and(...conds))
    .orderBy(dir(sheets.position), dir(sheets.seq))
    .limit(q.limit + 1);
  const hasMore = rows.length > q.limit;
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    data: page.map((s) => sheetView(s)),
    next_cursor: hasMore && last ? encodeCursor({ o: q.order, k: last.position, t: last.seq }) : null,
    has_more: hasMore,
  };
}

export async function updateSheet(
  db: Db,
  workspaceId: number,
  tableId: string,
  sheetId: string,
  patch: { title?: string | null; index?: number | null },
): Promise<SheetRow> {
  await requireSheet(db, workspaceId, tableId, sheetId);
  const now = Date.now();
  const stmts: D1PreparedStatement[] = [];
  if (patch.title != null) {
    stmts.push(statement(db, sql`UPDATE ${sheets} SET ${c.title} = ${patch.title}, ${c.updatedAt} = ${now} WHERE ${c.id} = ${sheetId}`));
  }
  if (stmts.length > 0) await runBatch(db, stmts);
  if (patch.index != null) await moveSheet(db, tableId, sheetId, patch.index);
  return requireSheet(db, workspaceId, tableId, sheetId);
}

/**
 * Moves a sheet to min(index, last), shifting the sheets in between by one. The positions are read
 * first and the update only applies while they still hold (checked in the statement), so a
 * concurrent change makes it read again rather than leave a gap or a duplicate.
 */
async function moveSheet(db: Db, tableId: string, sheetId: string, index: number): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const [cur] = await db
      .select({ p: sheets.position, n: sql<number>`${liveCount(tableId)}` })
      .from(sheets)
      .where(and(eq(sheets.id, sheetId), isNull(sheets.deletedAt)));
    if (!cur) return;
    const p = cur.p;
    const q = Math.min(index, cur.n - 1);
    if (p === q) return;
    const now = Date.now();
    const res = await statement(
      db,
      sql`UPDATE ${sheets} SET
            ${c.position} = CASE WHEN ${c.id} = ${sheetId} THEN ${q} WHEN ${q} > ${p} THEN ${c.position} - 1 ELSE ${c.position} + 1 END,
            ${c.updatedAt} = CASE WHEN ${c.id} = ${sheetId} THEN ${now} ELSE ${c.updatedAt} END
          WHERE ${liveInTable(tableId)}
            AND (${c.id} = ${sheetId} OR ${c.position} BETWEEN ${Math.min(p, q)} AND ${Math.max(p, q)})
            AND (SELECT ${c.position} FROM ${sheets} WHERE ${c.id} = ${sheetId} AND ${c.deletedAt} IS NULL) = ${p}
            AND ${liveCount(tableId)} = ${cur.n}`,
    ).run();
    if (res.meta.changes > 0) return;
  }
  throw new ApiError("conflict", "index: the sheet positions kept changing during the move; retry");
}

/** Soft-deletes the sheet and closes the gap in the positions. */
export async function deleteSheet(db: Db, workspaceId: number, tableId: string, sheetId: string): Promise<void> {
  const s = await requireSheet(db, workspaceId, tableId, sheetId);
  const now = Date.now();
  await runBatch(db, [
    statement(
      db,
      sql`UPDATE ${sheets} SET ${c.position} = ${c.position} - 1
          WHERE ${liveInTable(tableId)} AND ${c.position} > (SELECT ${c.position} FROM ${sheets} WHERE ${c.id} = ${sheetId} AND ${c.deletedAt} IS NULL)`,
    ),
    statement(db, sql`UPDATE ${sheets} SET ${c.deletedAt} = ${now}, ${c.updatedAt} = ${now} WHERE ${c.id} = ${s.id} AND ${c.deletedAt} IS NULL`),
  ]);
}

export async function findOperation(db: Db, workspaceId: number, operationId: string): Promise<SheetOperationRow | null> {
  const rows = await db
    .select()
    .from(sheetOperations)
    .where(and(eq(sheetOperations.workspaceId, workspaceId), eq(sheetOperations.id, operationId)))
    .limit(1);
  return rows[0] ?? null;
}

/** A new import operation: pending, or failed when `error` is known before it runs (bad base64, an empty file). */
export interface NewOperation {
  workspaceId: number;
  id: string;
  tableId: string;
  sheetId: string;
  source: SheetImportSource;
  fileName: string | null;
  fileBytes: number | null;
  /** Not kept on a failed operation (the caller drops the file). */
  blobKey: string | null;
  params: object | null;
  error: string | null;
  userId: number;
}

/**
 * The INSERT of an import operation, made only while `guard` holds; an operation id the workspace
 * has used already inserts nothing. It answers the new row's seq when it inserted one.
 */
export function insertOperation(op: NewOperation, guard: SQL): SQL {
  const o = sheetOperations;
  const now = Date.now();
  const status = op.error ? "failed" : "pending";
  const message = op.error ? "Import failed" : "Import queued";
  return sql`
    INSERT INTO ${o} (${columnList(o, [
      "workspaceId", "id", "tableId", "sheetId", "source", "status", "progress", "message", "fileName", "format",
      "fileBytes", "blobKey", "params", "errorMessage", "createdBy", "createdAt", "updatedAt",
    ])})
    SELECT ${op.workspaceId}, ${op.id}, ${op.tableId}, ${op.sheetId}, ${op.source}, ${status}, 0, ${message}, ${op.fileName},
           ${op.fileName ? formatOf(op.fileName) : null}, ${op.fileBytes}, ${op.error ? null : op.blobKey}, ${op.params ? JSON.stringify(op.params) : null},
           ${op.error}, ${op.userId}, ${now}, ${now}
    WHERE ${guard}
    ON CONFLICT (${col(o.workspaceId)}, ${col(o.id)}) DO NOTHING
    RETURNING ${col(o.seq)}`;
}

/** The sheet an operation imported into, as listed (deleted or not). */
export async function operationSheet(db: Db, op: SheetOperationRow): Promise<SheetRow> {
  return sheetById(db, op.sheetId);
}
