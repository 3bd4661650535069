// Column-wide cell work: a deleted column's cells removed, whole columns marked STALE, a new computed
// column's STALE cells created. On a small sheet it is done at once, in the caller's transaction. On a
// large one a single statement would hold the object (and every request to the sheet) for as long as
// it touches every row, so it is recorded in `column_work` and done COLUMN_WORK_ROWS rows at a time,
// one range per alarm run, with requests served between the runs.
//
// While work is pending, what the API shows stays right without waiting for it:
// - a deleted column's cells are invisible (cells are shown only for the columns that exist), and its
//   cells that are not COMPLETED, the only ones status counts and recalculation read, go at once
//   through the `cells_pending` index;
// - a computed cell not yet created reads as STALE already (an absent computed cell is STALE);
// - a cell not yet marked STALE is shown STALE (`pendingStale`).
// What needs the cells themselves (status counts, recalculation, cancellation, a new STALE marking's
// count) first finishes the STALE and insert work (`settleColumnWork`); deletions never need to be
// waited for. Work is done in the order it was recorded.
import type { SheetStore } from "./storage";

/** Rows per range of column work: a range touches at most this many rows of each of its columns. */
export const COLUMN_WORK_ROWS = 5000;

export type ColumnWorkKind = "delete" | "stale" | "insert";

type WorkRow = { id: number; kind: ColumnWorkKind; column_seqs: string; next_row: number; end_row: number; created_at: number };

/** A pending STALE marking, for views: rows in [fromRow, toRow) of these columns read as STALE. */
export type PendingStale = { seqs: Set<number>; fromRow: number; toRow: number };

function pending(store: SheetStore, withDeletes = true): WorkRow | undefined {
  return store.sql.exec<WorkRow>(`SELECT * FROM column_work WHERE ? OR kind <> 'delete' ORDER BY id LIMIT 1`, withDeletes ? 1 : 0).toArray()[0];
}

export function hasColumnWork(store: SheetStore): boolean {
  return pending(store) !== undefined;
}

/** Does one kind of work on rows [lo, hi); answers how many cells it changed. */
function applyRange(store: SheetStore, kind: ColumnWorkKind, seqsJson: string, lo: number, hi: number, now: number): number {
  if (kind === "delete") {
    store.sql.exec(`DELETE FROM cells WHERE row_index >= ?1 AND row_index < ?2 AND column_seq IN (SELECT value FROM json_each(?3))`, lo, hi, seqsJson);
  } else if (kind === "stale") {
    // A column deleted since the work was recorded is left to its own delete work.
    store.sql.exec(
      `UPDATE cells SET status = 'STALE', updated_at = ?4
       WHERE row_index >= ?1 AND row_index < ?2 AND status <> 'STALE'
         AND column_seq IN (SELECT value FROM json_each(?3)) AND column_seq IN (SELECT seq FROM columns)`,
      lo,
      hi,
      seqsJson,
      now,
    );
  } else {
    store.sql.exec(
      `INSERT OR IGNORE INTO cells (row_index, column_seq, status, updated_at)
       SELECT r.row_index, c.seq, 'STALE', ?4 FROM rows AS r JOIN columns AS c ON c.seq IN (SELECT value FROM json_each(?3))
       WHERE r.row_index >= ?1 AND r.row_index < ?2`,
      lo,
      hi,
      seqsJson,
      now,
    );
  }
  return store.changes();
}

/**
 * Records column-wide work on `seqs` (in the caller's transaction), after finishing any work pending.
 * On a sheet of at most COLUMN_WORK_ROWS row indexes it is done at once. Answers, for "stale", how
 * many cells were not STALE before; the caller sets the alarm when `pending` is true.
 */
export function scheduleColumnWork(store: SheetStore, kind: ColumnWorkKind, seqs: number[], now: number): { changed: number; pending: boolean } {
  if (seqs.length === 0) return { changed: 0, pending: hasColumnWork(store) };
  if (kind === "stale") settleColumnWork(store, now);
  const seqsJson = JSON.stringify(seqs);
  const end = store.meta("next_row_index");
  if (end <= COLUMN_WORK_ROWS) return { changed: applyRange(store, kind, seqsJson, 0, end, now), pending: hasColumnWork(store) };
  let changed = 0;
  if (kind === "delete") {
    // The cells status counts and recalculation look at go now, through the index of such cells.
    store.sql.exec(`DELETE FROM cells WHERE status <> 'COMPLETED' AND column_seq IN (SELECT value FROM json_each(?))`, seqsJson);
  } else if (kind === "stale") {
    // Every row has a cell in each computed column (settled above), so the cells to mark are the
    // rows less those already STALE, which the index of pending cells counts without reading rows.
    const stale = store.sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE status = 'STALE' AND column_seq IN (SELECT value FROM json_each(?))`, seqsJson)
      .one().n;
    changed = store.meta("row_count") * seqs.length - stale;
  }
  store.sql.exec(
    `INSERT INTO column_work (kind, column_seqs, next_row, end_row, created_at) VALUES (?, ?, 0, ?, ?)`,
    kind,
    seqsJson,
    end,
    now,
  );
  return { changed, pending: true };
}

/** Does the next range of pending work (deletions too unless `withDeletes` is false); answers whether such work remains. */
export function stepColumnWork(store: SheetStore, now: number, withDeletes = true): boolean {
  const w = pending(store, withDeletes);
  if (!w) return false;
  const hi = Math.min(w.next_row + COLUMN_WORK_ROWS, w.end_row);
  applyRange(store, w.kind, w.column_seqs, w.next_row, hi, now);
  if (hi >= w.end_row) store.sql.exec(`DELETE FROM column_work WHERE id = ?`, w.id);
  else store.sql.exec(`UPDATE column_work SET next_row = ? WHERE id = ?`, hi, w.id);
  return pending(store, withDeletes) !== undefined;
}

/** Finishes the pending STALE and insert work now (in the caller's transaction); deletions stay pending. */
export function settleColumnWork(store: SheetStore, now: number): void {
  while (stepColumnWork(store, now, false));
}

/** The STALE markings still pending, for the views of cells. */
export function pendingStale(store: SheetStore): PendingStale[] {
  return store.sql
    .exec<WorkRow>(`SELECT * FROM column_work WHERE kind = 'stale' ORDER BY id`)
    .toArray()
    .map((w) => ({ seqs: new Set(JSON.parse(w.column_seqs) as number[]), fromRow: w.next_row, toRow: w.end_row }));
}

/** The status a cell shows: STALE while a pending marking has yet to reach it. */
export function shownStatus(marks: PendingStale[], rowIndex: number, seq: number, stored: string): string {
  if (stored === "STALE") return stored;
  for (const m of marks) if (m.seqs.has(seq) && rowIndex >= m.fromRow && rowIndex < m.toRow) return "STALE";
  return stored;
}

/**
 * Marks the cells of `columns` STALE (in one row, or in all rows: column-wide work, which on a large
 * sheet goes on in the alarm); returns how many were not stale before. Runs in the caller's transaction.
 */
export function markStale(store: SheetStore, columns: number[], now: number, rowIndex?: number): number {
  if (columns.length === 0) return 0;
  if (rowIndex === undefined) return scheduleColumnWork(store, "stale", columns, now).changed;
  store.sql.exec(
    `UPDATE cells SET status = 'STALE', updated_at = ? WHERE row_index = ? AND column_seq IN (SELECT value FROM json_each(?)) AND status <> 'STALE'`,
    now,
    rowIndex,
    JSON.stringify(columns),
  );
  return store.changes();
}
