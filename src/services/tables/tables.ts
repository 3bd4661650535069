// Smart tables in D1: create, read, list (keyset cursor over `seq`), update and soft delete.
// A table's sheets live in sheets.ts; sheet_count is counted, never stored, so it is always true.
import { and, asc, desc, eq, getTableColumns, gt, isNull, lt, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sheetPromptRefs, sheets, smartTables, type SmartTableRow } from "../../db/schema";
import { col, qualified } from "../../db/sql";
import { promptRefConditions } from "./sheets";
import type { AuthContext } from "../../env";
import { decodeCursor, encodeCursor } from "../../lib/cursor";
import { requireFolder, resourceConditions, type ResourceFilters } from "../registry";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { runBatch } from "../../db/batch";

export interface TableView {
  id: string;
  workspace_id: number;
  title: string;
  folder_id: number | null;
  sheet_count: number;
  created_at: string;
  updated_at: string;
}

export interface TableDetailView extends TableView {
  sheet_row_counts: Record<string, number>;
}


// qualified(): drizzle leaves a select field's columns unqualified, which inside the subquery would bind them to `sheets`.
const sheetCount = sql<number>`(SELECT COUNT(*) FROM ${sheets} AS s WHERE s.${col(sheets.tableId)} = ${qualified(smartTables.id)} AND s.${col(sheets.deletedAt)} IS NULL)`;

type TableWithCount = SmartTableRow & { sheetCount: number };

export function tableView(t: TableWithCount): TableView {
  return {
    id: t.id,
    workspace_id: t.workspaceId,
    title: t.title,
    folder_id: t.folderId,
    sheet_count: t.sheetCount,
    created_at: toIso(t.createdAt),
    updated_at: toIso(t.updatedAt),
  };
}

/** A live table of the workspace, or null (another workspace's id is as unknown as a missing one). */
export async function findTable(db: Db, workspaceId: number, tableId: string): Promise<TableWithCount | null> {
  const rows = await db
    .select({ ...getTableColumns(smartTables), sheetCount })
    .from(smartTables)
    .where(and(eq(smartTables.id, tableId), eq(smartTables.workspaceId, workspaceId), isNull(smartTables.deletedAt)))
    .limit(1);
  return rows[0] ?? null;
}

export async function requireTable(db: Db, workspaceId: number, tableId: string): Promise<TableWithCount> {
  const t = await findTable(db, workspaceId, tableId);
  if (!t) throw ApiError.notFound("table");
  return t;
}

export async function tableDetail(db: Db, t: TableWithCount): Promise<TableDetailView> {
  const rows = await db
    .select({ id: sheets.id, rowCount: sheets.rowCount })
    .from(sheets)
    .where(and(eq(sheets.tableId, t.id), isNull(sheets.deletedAt)))
    .orderBy(asc(sheets.position));
  return { ...tableView(t), sheet_row_counts: Object.fromEntries(rows.map((r) => [r.id, r.rowCount])) };
}

const UNTITLED = "Untitled Table";

/** "Untitled Table", or "Untitled Table N" with the first N not in use in the workspace. */
async function untitledTitle(db: Db, workspaceId: number): Promise<string> {
  const rows = await db
    .select({ title: smartTables.title })
    .from(smartTables)
    .where(and(eq(smartTables.workspaceId, workspaceId), isNull(smartTables.deletedAt), sql`${smartTables.title} LIKE 'Untitled Table%'`));
  const taken = new Set(rows.map((r) => r.title));
  if (!taken.has(UNTITLED)) return UNTITLED;
  for (let n = 2; ; n++) if (!taken.has(`${UNTITLED} ${n}`)) return `${UNTITLED} ${n}`;
}

export async function createTable(
  db: Db,
  auth: AuthContext,
  input: { title?: string | null; folder_id?: number | null },
): Promise<TableWithCount> {
  await requireFolder(db, auth.workspaceId, input.folder_id);
  const title = input.title ?? (await untitledTitle(db, auth.workspaceId));
  const now = Date.now();
  const [row] = await db
    .insert(smartTables)
    .values({
      id: crypto.randomUUID(),
      workspaceId: auth.workspaceId,
      title,
      titleFolded: title.toLowerCase(),
      folderId: input.folder_id ?? null,
      createdBy: auth.userId,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return { ...row, sheetCount: 0 };
}

export interface ListTablesQuery extends Omit<ResourceFilters, "name" | "sort_by" | "sort_order"> {
  folder_id?: number;
  name?: string;
  cursor?: string;
  limit: number;
  order: "asc" | "desc";
  prompt_id?: number;
  prompt_version_id?: number;
  prompt_label_id?: number;
}

export async function listTables(db: Db, workspaceId: number, q: ListTablesQuery) {
  const conds: SQL[] = [eq(smartTables.workspaceId, workspaceId), isNull(smartTables.deletedAt)];
  if (q.folder_id !== undefined) conds.push(eq(smartTables.folderId, q.folder_id));
  if (q.name) conds.push(sql`instr(${smartTables.titleFolded}, ${q.name.toLowerCase()}) > 0`);
  const t = smartTables;
  for (const c of resourceConditions(workspaceId, { id: t.id, name: t.title, userId: t.createdBy, createdAt: t.createdAt, updatedAt: t.updatedAt }, { ...q, name: undefined })) if (c) conds.push(c);
  const refConds = promptRefConditions(q);
  if (refConds.length > 0) {
    const r = sheetPromptRefs;
    conds.push(
      sql`${smartTables.id} IN (SELECT r.${col(r.tableId)} FROM ${r} r JOIN ${sheets} s ON s.${col(sheets.id)} = r.${col(r.sheetId)} AND s.${col(sheets.deletedAt)} IS NULL
          WHERE r.${col(r.workspaceId)} = ${workspaceId} AND ${sql.join(refConds, sql` AND `)})`,
    );
  }
  if (q.cursor !== undefined) {
    const pos = decodeCursor(q.cursor, q.order);
    conds.push(q.order === "desc" ? lt(smartTables.seq, pos.k) : gt(smartTables.seq, pos.k));
  }
  const rows = await db
    .select({ ...getTableColumns(smartTables), sheetCount })
    .from(smartTables)
    .where(and(...conds))
    .orderBy(q.order === "desc" ? desc(smartTables.seq) : asc(smartTables.seq))
    .limit(q.limit + 1);
  const hasMore = rows.length > q.limit;
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    data: page.map(tableView),
    next_cursor: hasMore && last ? encodeCursor({ o: q.order, k: last.seq }) : null,
    has_more: hasMore,
  };
}

export async function updateTable(
  db: Db,
  workspaceId: number,
  tableId: string,
  patch: { title?: string | null; folder_id?: number | null },
): Promise<TableWithCount> {
  await requireTable(db, workspaceId, tableId);
  await requireFolder(db, workspaceId, patch.folder_id);
  const set: Partial<typeof smartTables.$inferInsert> = { updatedAt: Date.now() };
  if (patch.title != null) {
    set.title = patch.title;
    set.titleFolded = patch.title.toLowerCase();
  }
  if (patch.folder_id !== undefined) set.folderId = patch.folder_id;
  await db
    .update(smartTables)
    .set(set)
    .where(and(eq(smartTables.id, tableId), eq(smartTables.workspaceId, workspaceId), isNull(smartTables.deletedAt)));
  return requireTable(db, workspaceId, tableId);
}

/** Soft-deletes the table and its sheets; returns the ids of the sheets, whose objects must stop writing. */
export async function deleteTable(db: Db, workspaceId: number, tableId: string): Promise<string[]> {
  await requireTable(db, workspaceId, tableId);
  const now = Date.now();
  const live = await db
    .select({ id: sheets.id })
    .from(sheets)
    .where(and(eq(sheets.tableId, tableId), isNull(sheets.deletedAt)));
  await runBatch(db, [
    db
      .update(smartTables)
      .set({ deletedAt: now, updatedAt: now })
      .where(and(eq(smartTables.id, tableId), eq(smartTables.workspaceId, workspaceId), isNull(smartTables.deletedAt))),
    db
      .update(sheets)
      .set({ deletedAt: now, updatedAt: now })
      .where(and(eq(sheets.tableId, tableId), eq(sheets.workspaceId, workspaceId), isNull(sheets.deletedAt))),
  ]);
  return live.map((s) => s.id);
}
