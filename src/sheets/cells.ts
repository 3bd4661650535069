// The sheet's rows and cells as stored: appending rows, the STALE cells computed columns need, and
// the API views of cells (a page of rows, one column, one cell).
import { cellId, MAX_ROW_INDEX, parseCellId } from "./cell-id";
import { columnRows } from "./columns";
import { pendingStale, shownStatus, type PendingStale } from "./column-work";
import type { SheetStore } from "./storage";
import { ROWS_PAGE_BYTES, type CellStatus, type CellView, type JsonValue, type RowView, type SheetIdentity, type StoredCell } from "./types";

const toIso = (ms: number) => new Date(ms).toISOString();

/**
 * Appends `count` empty rows (in the caller's transaction): text cells stay absent (empty), every
 * non-text column gets a STALE cell. Returns the first new row index.
 */
export function appendRows(store: SheetStore, count: number, sourceOperation: string | null, now: number): number {
  const base = store.meta("next_row_index");
  store.sql.exec(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
     INSERT INTO rows (row_index, source_operation, created_at) SELECT ? + i, ?, ? FROM n`,
    count,
    base,
    sourceOperation,
    now,
  );
  insertStaleCells(store, base, count, null, now);
  store.setMeta("next_row_index", base + count);
  store.setMeta("row_count", store.meta("row_count") + count);
  return base;
}

/** STALE cells for rows [base, base+count) in every non-text column (except `skipOperation`'s import columns). */
export function insertStaleCells(store: SheetStore, base: number, count: number, skipOperation: string | null, now: number): void {
  store.sql.exec(
    `INSERT INTO cells (row_index, column_seq, status, updated_at)
     SELECT r.row_index, c.seq, 'STALE', ?
     FROM rows AS r JOIN columns AS c ON c.type <> 'TEXT'
     WHERE r.row_index >= ? AND r.row_index < ?
       AND c.seq NOT IN (SELECT column_seq FROM import_columns WHERE operation_id = ?)`,
    now,
    base,
    base + count,
    skipOperation ?? "",
  );
}

/**
 * A cell as the API shows it; an absent one is an empty text cell or a STALE computed one, and one a
 * pending STALE marking (`marks`) has yet to reach is STALE.
 */
export function cellView(
  ident: SheetIdentity,
  col: { seq: number; id: string; type: string },
  rowIndex: number,
  stored: StoredCell | undefined,
  rowCreatedAt: number,
  marks: PendingStale[] = [],
): CellView {
  if (!stored) {
    return {
      id: cellId(col.id, rowIndex),
      sheet_id: ident.sheetId,
      column_id: col.id,
      row_index: rowIndex,
      status: col.type === "TEXT" ? "COMPLETED" : "STALE",
      display_value: null,
      value: null,
      error: null,
      input_hash: null,
      execution_id: null,
      last_computed_version: null,
      updated_at: toIso(rowCreatedAt),
    };
  }
  return {
    id: cellId(col.id, rowIndex),
    sheet_id: ident.sheetId,
    column_id: col.id,
    row_index: rowIndex,
    status: shownStatus(marks, rowIndex, col.seq, stored.status) as CellStatus,
    display_value: stored.display_value,
    value: stored.value === null ? stored.display_value : (JSON.parse(stored.value) as JsonValue),
    error: stored.error,
    input_hash: stored.input_hash,
    execution_id: stored.execution_id,
    last_computed_version: stored.last_computed_version,
    updated_at: toIso(stored.updated_at),
  };
}

/** A page of rows (by row_index) with a cell for every column. */
export function readRows(store: SheetStore, ident: SheetIdentity, opts: { after?: number | null; limit: number; order?: "asc" | "desc" }): {
  rows: RowView[];
  rowCount: number;
  version: number;
  hasMore: boolean;
} {
  const desc = opts.order === "desc";
  const after = opts.after ?? (desc ? MAX_ROW_INDEX + 1 : -1);
  const rows = store.sql
    .exec<{ row_index: number; created_at: number }>(
      `SELECT row_index, created_at FROM rows WHERE row_index ${desc ? "<" : ">"} ? ORDER BY row_index ${desc ? "DESC" : "ASC"} LIMIT ?`,
      after,
      opts.limit + 1,
    )
    .toArray();
  let hasMore = rows.length > opts.limit;
  let page = rows.slice(0, opts.limit);
  if (page.length > 1) {
    // A page stops early once its cells hold ROWS_PAGE_BYTES: 100 rows of large cells would not fit in memory (or one RPC answer).
    const lo = Math.min(page[0].row_index, page[page.length - 1].row_index);
    const hi = Math.max(page[0].row_index, page[page.length - 1].row_index);
    const bytes = new Map<number, number>();
    for (const r of store.sql.exec<{ row_index: number; n: number }>(
      `SELECT row_index, SUM(COALESCE(length(CAST(display_value AS BLOB)), 0) + COALESCE(length(CAST(value AS BLOB)), 0) + COALESCE(length(CAST(error AS BLOB)), 0)) AS n
       FROM cells WHERE row_index BETWEEN ? AND ? GROUP BY row_index`,
      lo,
      hi,
    )) {
      bytes.set(r.row_index, r.n);
    }
    let total = 0;
    for (let i = 0; i < page.length; i++) {
      total += bytes.get(page[i].row_index) ?? 0;
      if (total > ROWS_PAGE_BYTES && i > 0) {
        page = page.slice(0, i);
        hasMore = true;
        break;
      }
    }
  }
  const cols = columnRows(store);
  const views: RowView[] = [];
  if (page.length > 0) {
    const lo = Math.min(page[0].row_index, page[page.length - 1].row_index);
    const hi = Math.max(page[0].row_index, page[page.length - 1].row_index);
    const stored = new Map<string, StoredCell>();
    for (const c of store.sql.exec<StoredCell>(`SELECT * FROM cells WHERE row_index BETWEEN ? AND ?`, lo, hi)) {
      stored.set(`${c.row_index}:${c.column_seq}`, c);
    }
    const marks = pendingStale(store);
    for (const r of page) {
      const cells: Record<string, CellView> = {};
      for (const col of cols) cells[col.id] = cellView(ident, col, r.row_index, stored.get(`${r.row_index}:${col.seq}`), r.created_at, marks);
      views.push({ row_index: r.row_index, cells });
    }
  }
  return { rows: views, rowCount: store.meta("row_count"), version: store.meta("version"), hasMore };
}

/** One column's cells of the first `limit` rows (reading only that column, not whole rows). */
export function columnCells(store: SheetStore, ident: SheetIdentity, columnId: string, limit: number): CellView[] {
  const col = store.sql.exec<{ seq: number; id: string; type: string }>(`SELECT seq, id, type FROM columns WHERE id = ?`, columnId).one();
  const rows = store.sql.exec<{ row_index: number; created_at: number }>(`SELECT row_index, created_at FROM rows ORDER BY row_index LIMIT ?`, limit).toArray();
  if (rows.length === 0) return [];
  const stored = new Map<number, StoredCell>();
  for (const c of store.sql.exec<StoredCell>(
    `SELECT * FROM cells WHERE column_seq = ? AND row_index BETWEEN ? AND ?`,
    col.seq,
    rows[0].row_index,
    rows[rows.length - 1].row_index,
  )) {
    stored.set(c.row_index, c);
  }
  const marks = pendingStale(store);
  return rows.map((r) => cellView(ident, col, r.row_index, stored.get(r.row_index), r.created_at, marks));
}

/** One cell by its id, or null when no column and row of this sheet match it. */
export function getCell(store: SheetStore, ident: SheetIdentity, id: string): CellView | null {
  const parsed = parseCellId(id);
  if (!parsed) return null;
  const col = store.sql
    .exec<{ seq: number; id: string; type: string }>(`SELECT seq, id, type FROM columns WHERE substr(id, 1, 23) = ?`, parsed.prefix)
    .toArray()[0];
  if (!col) return null;
  const rowIndex = parsed.rowIndexFor(col.id);
  const row = store.sql.exec<{ created_at: number }>(`SELECT created_at FROM rows WHERE row_index = ?`, rowIndex).toArray()[0];
  if (!row) return null;
  const stored = store.sql.exec<StoredCell>(`SELECT * FROM cells WHERE row_index = ? AND column_seq = ?`, rowIndex, col.seq).toArray()[0];
  return cellView(ident, col, rowIndex, stored, row.created_at, pendingStale(store));
}
