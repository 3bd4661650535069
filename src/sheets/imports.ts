// Imports into a sheet, as the object stores them: how far an import got (its committed batches),
// and the TEXT columns an import's column positions map to.
import { insertColumn } from "./columns";
import type { SheetStore } from "./storage";
import type { ImportProgress } from "./types";

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

/** Creates TEXT columns for import positions not mapped yet (a JSON import finds keys as it goes). */
export function ensureImportColumns(store: SheetStore, operationId: string, titles: string[], now: number): void {
  const known = store.sql
    .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM import_columns WHERE operation_id = ?`, operationId)
    .one().n;
  if (known >= titles.length) return;
  const taken = new Set(store.sql.exec<{ t: string }>(`SELECT lower(title) AS t FROM columns`).toArray().map((r) => r.t));
  for (let pos = known; pos < titles.length; pos++) {
    const wanted = titles[pos].trim() === "" ? `Column ${columnLetters(pos + 1)}` : titles[pos];
    const { seq } = insertColumn(store, { title: wanted, type: "TEXT" }, now, taken);
    store.sql.exec(`INSERT INTO import_columns (operation_id, position, column_seq) VALUES (?, ?, ?)`, operationId, pos, seq);
  }
}
