// Imports into a sheet, as the object stores them: appending a batch (idempotent by its number), how
// far an import got (its committed batches), and which columns an import's column positions map to
// (TEXT columns it creates, or, for an import into a sheet that already had columns, the sheet's
// columns of the same titles). A sheet holds at most MAX_COLUMNS columns, imports included.
import { MAX_ROW_INDEX } from "./cell-id";
import { insertStaleCells } from "./cells";
import { insertColumn } from "./columns";
import type { SheetCore } from "./core";
import { INSERT_IMPORT_CELLS, type SheetStore } from "./storage";
import { MAX_COLUMNS, type ImportBatchInput, type ImportBatchResult, type ImportProgress } from "./types";

/** 1 → "A", 27 → "AA": spreadsheet-style names for columns without a title. */
export function columnLetters(n: number): string {
  let s = "";
  for (let k = n; k > 0; k = Math.floor((k - 1) / 26)) s = String.fromCharCode(65 + ((k - 1) % 26)) + s;
  return s;
}

export function importProgress(store: SheetStore, operationId: string): ImportProgress {
  const r = store.sql
    .exec<{ n: number; rows: number }>(
      `SELECT COUNT(*) AS n, COALESCE(SUM(row_count), 0) AS rows FROM import_batches WHERE operation_id = ?`,
      operationId,
    )
    .one();
  return { batchesCommitted: r.n, rowsImported: r.rows, rowCount: store.meta("row_count"), version: store.meta("version") };
}

/**
 * One position not mapped yet: `seq` is the column it goes to, null for a TEXT column to create, or
 * the negated seq of a computed column whose title it has. A negative seq joins no column, so the
 * position's values are dropped and the computed column gets STALE cells for the new rows; it still
 * counts as mapped, so a redelivered batch maps the same way.
 */
interface PositionPlan {
  position: number;
  title: string;
  seq: number | null;
}

const titleKey = (title: string) => title.trim().toLowerCase();

function planImportColumns(store: SheetStore, operationId: string, titles: string[], mapByTitle: boolean): PositionPlan[] {
  const known = store.sql
    .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM import_columns WHERE operation_id = ?`, operationId)
    .one().n;
  if (known >= titles.length) return [];
  // The sheet's columns this import has not mapped a position to (nor created), first by place.
  const free = new Map<string, { seq: number; type: string }>();
  if (mapByTitle) {
    const cols = store.sql
      .exec<{ seq: number; title: string; type: string }>(
        `SELECT seq, title, type FROM columns
         WHERE seq NOT IN (SELECT abs(column_seq) FROM import_columns WHERE operation_id = ?)
         ORDER BY position_rank, seq`,
        operationId,
      )
      .toArray();
    for (const c of cols) if (!free.has(titleKey(c.title))) free.set(titleKey(c.title), { seq: c.seq, type: c.type });
  }
  const plan: PositionPlan[] = [];
  for (let position = known; position < titles.length; position++) {
    const title = titles[position].trim() === "" ? `Column ${columnLetters(position + 1)}` : titles[position];
    const hit = free.get(titleKey(title));
    if (hit) free.delete(titleKey(title));
    plan.push({ position, title, seq: hit ? (hit.type === "TEXT" ? hit.seq : -hit.seq) : null });
  }
  return plan;
}

/** Whether the columns a batch would create still fit in the sheet (checked before its transaction). */
function importColumnsFit(store: SheetStore, input: ImportBatchInput): boolean {
  const creates = planImportColumns(store, input.operationId, input.columns, input.mapByTitle === true).filter((p) => p.seq === null).length;
  if (creates === 0) return true;
  return store.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM columns`).one().n + creates <= MAX_COLUMNS;
}

/**
 * Maps the import positions not mapped yet (a JSON import finds keys as it goes), creating TEXT
 * columns where needed; answers how many columns it created.
 */
function ensureImportColumns(store: SheetStore, operationId: string, titles: string[], now: number, mapByTitle = false): number {
  const plan = planImportColumns(store, operationId, titles, mapByTitle);
  if (plan.length === 0) return 0;
  const taken = new Set(store.sql.exec<{ t: string }>(`SELECT lower(title) AS t FROM columns`).toArray().map((r) => r.t));
  let created = 0;
  for (const p of plan) {
    let seq = p.seq;
    if (seq === null) {
      seq = insertColumn(store, { title: p.title, type: "TEXT" }, now, taken).seq;
      created++;
    }
    store.sql.exec(`INSERT INTO import_columns (operation_id, position, column_seq) VALUES (?, ?, ?)`, operationId, p.position, seq);
  }
  return created;
}

/**
 * Appends one batch of an import, atomically, bumping the version once. Idempotent by
 * (operationId, batch): a batch already committed answers what it did then and writes nothing,
 * so a redelivered import never duplicates a row.
 */
export async function appendImportBatch(s: SheetCore, input: ImportBatchInput): Promise<ImportBatchResult> {
  const { store } = s;
  const sql = store.sql;
  const done = sql
    .exec<{ row_count: number; version: number }>(`SELECT row_count, version FROM import_batches WHERE operation_id = ? AND batch = ?`, input.operationId, input.batch)
    .toArray()[0];
  if (done) {
    const before = sql
      .exec<{ n: number }>(`SELECT COALESCE(SUM(row_count), 0) AS n FROM import_batches WHERE operation_id = ? AND batch < ?`, input.operationId, input.batch)
      .one().n;
    const count = sql.exec<{ n: number }>(`SELECT json_array_length(?) AS n`, input.rowsJson).one().n;
    // The same batch number with other rows: two runs of one import disagree; the caller restarts.
    if (before !== input.firstRow || count !== done.row_count) return { ok: false, reason: "out_of_order", expectedBatch: importProgress(store, input.operationId).batchesCommitted };
    const p = importProgress(store, input.operationId);
    return { ok: true, duplicate: true, rowsAdded: done.row_count, rowsImported: p.rowsImported, batchesCommitted: p.batchesCommitted, rowCount: p.rowCount, version: done.version };
  }
  if (store.meta("deleted") === 1) return { ok: false, reason: "deleted" };
  const progress = importProgress(store, input.operationId);
  if (input.batch !== progress.batchesCommitted || input.firstRow !== progress.rowsImported) {
    return { ok: false, reason: "out_of_order", expectedBatch: progress.batchesCommitted };
  }
  const count = sql.exec<{ n: number }>(`SELECT json_array_length(?) AS n`, input.rowsJson).one().n;
  if (store.meta("next_row_index") + count > MAX_ROW_INDEX) return { ok: false, reason: "too_many_rows" };
  if (!importColumnsFit(store, input)) return { ok: false, reason: "too_many_columns" };

  const now = Date.now();
  const version = s.tx(() => {
    if (ensureImportColumns(store, input.operationId, input.columns, now, input.mapByTitle) > 0) s.dropModel();
    const base = store.meta("next_row_index");
    sql.exec(`INSERT INTO rows (row_index, source_operation, created_at) SELECT ? + key, ?, ? FROM json_each(?)`, base, input.operationId, now, input.rowsJson);
    sql.exec(INSERT_IMPORT_CELLS, base, now, input.rowsJson, input.operationId);
    insertStaleCells(store, base, count, input.operationId, now);
    store.setMeta("next_row_index", base + count);
    store.setMeta("row_count", store.meta("row_count") + count);
    const version = s.bump();
    sql.exec(`INSERT INTO import_batches (operation_id, batch, first_row, row_count, version) VALUES (?, ?, ?, ?, ?)`, input.operationId, input.batch, base, count, version);
    return version;
  });
  await s.syncListing();
  const p = importProgress(store, input.operationId);
  return { ok: true, duplicate: false, rowsAdded: count, rowsImported: p.rowsImported, batchesCommitted: p.batchesCommitted, rowCount: p.rowCount, version };
}
