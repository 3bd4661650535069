// The sheet's rows and cells as stored: appending rows, the STALE cells computed columns need, the
// API views of cells (a page of rows, one column, one cell), and the changes of rows and cells on an
// admitted sheet (core.ts): Add Rows, Delete Rows, Update Cell.
import { toIso } from "../lib/time";
import { cellId, columnPrefix, MAX_ROW_INDEX, parseCellId } from "./cell-id";
import { MAX_CELL_BYTES, storeEdit, storedBytes, storeValue, type StoredValue } from "./cell-values";
import { columnRows } from "./columns";
import { markStale, pendingStale, shownStatus, type PendingStale } from "./column-work";
import type { SheetCore } from "./core";
import type { SheetStore } from "./storage";
import {
  fail,
  ROWS_PAGE_BYTES,
  type CellStatus,
  type CellView,
  type JsonValue,
  type ModelColumn,
  type Result,
  type RowView,
  type SheetIdentity,
  type StoredCell,
} from "./types";

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

/** Add Rows: `count` rows, text values set at once, non-text cells STALE. */
export async function addRows(
  s: SheetCore,
  input: { count: number; values: Record<string, unknown>[] | null },
): Promise<Result<{ rows_created: number; start_row_index: number; row_indices: number[]; rows: RowView[]; cell_count: number; row_count: number; version: number }>> {
  const m = s.model();
  if (m.list.length === 0) return fail("validation_error", "sheet: has no columns; add a column before adding rows");
  const values = input.values ?? [];
  const writes: { row: number; seq: number; v: StoredValue }[] = [];
  for (let i = 0; i < values.length; i++) {
    for (const [key, v] of Object.entries(values[i])) {
      const col = m.byId.get(key.toLowerCase());
      if (!col) return fail("validation_error", `values[${i}].${key}: no column with this id in this sheet`);
      if (col.computed) return fail("validation_error", `values[${i}].${key}: column ${JSON.stringify(col.title)} is ${col.type}, not TEXT; its cells are computed`);
      const stored = storeValue(v);
      const bytes = storedBytes(stored);
      if (bytes > MAX_CELL_BYTES) return fail("payload_too_large", `values[${i}].${key}: takes ${bytes} bytes stored; a cell holds at most ${MAX_CELL_BYTES}`);
      writes.push({ row: i, seq: col.seq, v: stored });
    }
  }
  if (s.store.meta("next_row_index") + input.count > MAX_ROW_INDEX) return fail("validation_error", "count: the sheet cannot hold more rows");
  const now = Date.now();
  const { base, version } = s.tx(() => {
    const base = appendRows(s.store, input.count, null, now);
    for (const w of writes) {
      if (w.v.display === null && w.v.json === null) continue;
      s.store.sql.exec(
        `INSERT INTO cells (row_index, column_seq, status, display_value, value, updated_at) VALUES (?, ?, 'COMPLETED', ?, ?, ?)`,
        base + w.row,
        w.seq,
        w.v.display,
        w.v.json,
        now,
      );
    }
    return { base, version: s.bump() };
  });
  await s.syncListing();
  const page = readRows(s.store, s.ident, { after: base - 1, limit: input.count });
  return {
    ok: true,
    rows_created: input.count,
    start_row_index: base,
    row_indices: page.rows.map((r) => r.row_index),
    rows: page.rows,
    cell_count: input.count * m.list.length,
    row_count: s.store.meta("row_count"),
    version,
  };
}

/**
 * Delete Rows: the rows and all their cells go, in one transaction and one version. The other rows
 * keep their row_index (cell ids are made from it), so indexes are not reused and a sheet's rows
 * may have gaps. Every index must name a row of the sheet, or nothing is deleted.
 */
export async function deleteRows(s: SheetCore, rowIndices: number[]): Promise<Result<{ deleted_count: number; row_indices: number[]; row_count: number; version: number }>> {
  const sql = s.store.sql;
  const wanted = [...new Set(rowIndices)].sort((a, b) => a - b);
  const list = JSON.stringify(wanted);
  const found = new Set(sql.exec<{ row_index: number }>(`SELECT row_index FROM rows WHERE row_index IN (SELECT value FROM json_each(?))`, list).toArray().map((r) => r.row_index));
  const missing = rowIndices.findIndex((r) => !found.has(r));
  if (missing >= 0) return fail("not_found", `row_indices[${missing}]: the sheet has no row ${rowIndices[missing]}`);
  const version = s.tx(() => {
    sql.exec(`DELETE FROM cells WHERE row_index IN (SELECT value FROM json_each(?))`, list);
    sql.exec(`DELETE FROM rows WHERE row_index IN (SELECT value FROM json_each(?))`, list);
    s.store.setMeta("row_count", s.store.meta("row_count") - wanted.length);
    return s.bump();
  });
  await s.syncListing();
  return { ok: true, deleted_count: wanted.length, row_indices: wanted, row_count: s.store.meta("row_count"), version };
}

/** Finds a cell's column and row; null when the id names no cell of this sheet. */
export function locateCell(s: SheetCore, cellIdStr: string): { col: ModelColumn; row: number } | null {
  const parsed = parseCellId(cellIdStr);
  if (!parsed) return null;
  const m = s.model();
  const col = m.list.find((c) => columnPrefix(c.id) === parsed.prefix);
  if (!col) return null;
  const row = parsed.rowIndexFor(col.id);
  if (row < 0 || s.store.sql.exec(`SELECT 1 FROM rows WHERE row_index = ?`, row).toArray().length === 0) return null;
  return { col, row };
}

/**
 * Update Cell (TEXT cells only): sets the value and marks every cell downstream of it in the same
 * row STALE, in one transaction: work in proportion to the downstream cells, not to the sheet.
 */
export async function updateCell(
  s: SheetCore,
  cellIdStr: string,
  edit: { display_value?: string | null; value?: unknown },
): Promise<Result<{ cell: CellView; version: number; stale_count: number }>> {
  const at = locateCell(s, cellIdStr);
  if (!at) return fail("not_found", "cell not found");
  if (at.col.computed) {
    return fail("validation_error", `cell_id: the cell is in column ${JSON.stringify(at.col.title)} of type ${at.col.type}; only cells of TEXT columns can be edited, the others are computed`);
  }
  const v = storeEdit(edit);
  const bytes = storedBytes(v);
  if (bytes > MAX_CELL_BYTES) return fail("payload_too_large", `value: display_value and value take ${bytes} bytes stored; a cell holds at most ${MAX_CELL_BYTES}`);
  const downstream = s.model().graph.downstream([at.col.seq]);
  const now = Date.now();
  const { version, staleCount } = s.tx(() => {
    if (v.display === null && v.json === null) {
      s.store.sql.exec(`DELETE FROM cells WHERE row_index = ? AND column_seq = ?`, at.row, at.col.seq);
    } else {
      s.store.sql.exec(
        `INSERT INTO cells (row_index, column_seq, status, display_value, value, updated_at) VALUES (?, ?, 'COMPLETED', ?, ?, ?)
         ON CONFLICT (row_index, column_seq) DO UPDATE SET display_value = excluded.display_value, value = excluded.value, updated_at = excluded.updated_at`,
        at.row,
        at.col.seq,
        v.display,
        v.json,
        now,
      );
    }
    const staleCount = markStale(s.store, downstream, now, at.row);
    return { version: s.bump(), staleCount };
  });
  s.syncSoon();
  return { ok: true, cell: getCell(s.store, s.ident, cellIdStr)!, version, stale_count: staleCount };
}
