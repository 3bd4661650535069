// The recalculation queue: a request marks cells QUEUED under a new execution id (pulling in the STALE
// cells they read, transitively, in the same row) and sets the alarm; the alarm claims them a chunk at
// a time (RUNNING), computes them (recalculation.ts) and records the outcomes, in dependency order and
// bounded batches, re-arming itself until nothing is queued. All progress is in storage, so an evicted
// run resumes: cells left RUNNING go back to QUEUED. Cancelling an operation puts its cells back to STALE.
import { cellView, locateCell } from "./cells";
import { MAX_ROW_INDEX } from "./cell-id";
import { COLUMN_WORK_ROWS } from "./column-work";
import type { SheetCore } from "./core";
import type { SheetStore } from "./storage";
import {
  CELL_STATUSES,
  fail,
  type CellView,
  type ExecutionRow,
  type ModelColumn,
  type Outcome,
  type RecalcSelection,
  type RecalcStarted,
  type Result,
  type SheetIdentity,
  type SheetModel,
  type StoredCell,
} from "./types";

type Filter = { cols: number[]; rows: number[] | null; statuses: string[] };

/** Queues a recalculation. cell_count 0 means there was nothing to recalculate (nothing changed). */
export async function recalculate(s: SheetCore, sel: RecalcSelection): Promise<Result<RecalcStarted>> {
  const store = s.store;
  s.settle();
  const m = s.model();
  const targets: { col: ModelColumn; row: number }[] = [];
  let filter: Filter | null = null;
  if (sel.kind === "cells") {
    for (let i = 0; i < sel.cellIds.length; i++) {
      const at = locateCell(s, sel.cellIds[i]);
      if (!at) return fail("not_found", sel.cellIds.length === 1 && sel.single ? "cell not found" : `cell_ids[${i}]: cell not found`);
      if (at.col.computed) targets.push(at);
    }
  } else {
    let cols = m.list.filter((c) => c.computed);
    if (sel.columnIds) {
      const chosen = new Set<number>();
      for (let i = 0; i < sel.columnIds.length; i++) {
        const c = m.byId.get(sel.columnIds[i].toLowerCase());
        if (!c) return fail("not_found", `column_ids[${i}]: column not found`);
        chosen.add(c.seq);
      }
      cols = cols.filter((c) => chosen.has(c.seq));
    }
    filter = {
      cols: cols.map((c) => c.seq),
      rows: sel.rowIds ?? null,
      statuses: (sel.statuses ?? CELL_STATUSES).filter((st) => st !== "QUEUED" && st !== "RUNNING"),
    };
  }
  const executionId = crypto.randomUUID();
  const now = Date.now();
  // Every column of a large sheet is queued a range of rows at a time, each range its own
  // transaction with requests served between them; the answer still counts every cell queued.
  const rowEnd = store.meta("next_row_index");
  const ranged = filter !== null && filter.rows === null && rowEnd > COLUMN_WORK_ROWS;
  const out = { cellCount: 0, selected: 0, version: store.meta("version") };
  for (let lo = 0; lo < (ranged ? rowEnd : 1); lo += COLUMN_WORK_ROWS) {
    const range = ranged ? { lo, hi: Math.min(lo + COLUMN_WORK_ROWS, rowEnd) } : null;
    const stop = s.tx(() => {
      // A range of a run that was cancelled (or whose sheet was deleted) meanwhile queues nothing more.
      if (out.cellCount > 0 && (store.meta("deleted") === 1 || store.sql.exec(`SELECT 1 FROM executions WHERE id = ? AND cancelled_at IS NULL`, executionId).toArray().length === 0)) return true;
      // The model is read again for each range: a column may have changed while requests were served.
      const got = queueCells(store, range ? s.model() : m, executionId, now, filter, targets, range);
      out.selected += got.selected;
      if (got.queued === 0) return false;
      if (out.cellCount === 0) {
        out.version = s.bump();
        store.sql.exec(
          `INSERT INTO executions (id, operation, cell_count, version, created_at, updated_at) VALUES (?, 'recalculate', ?, ?, ?, ?)`,
          executionId,
          got.queued,
          out.version,
          now,
          now,
        );
      } else {
        store.sql.exec(`UPDATE executions SET cell_count = cell_count + ? WHERE id = ?`, got.queued, executionId);
      }
      out.cellCount += got.queued;
      return false;
    });
    if (stop) break;
    if (range && range.hi < rowEnd) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  if (out.cellCount === 0) return { ok: true, execution_id: null, cell_count: 0, selected_cell_count: out.selected, version: out.version, cells: [] };
  await s.arm();
  await s.syncListing();
  return {
    ok: true,
    execution_id: executionId,
    cell_count: out.cellCount,
    selected_cell_count: out.selected,
    version: out.version,
    cells: executionCells(store, s.ident, s.model(), executionId, 100),
  };
}

/**
 * Marks the selected cells QUEUED under `executionId` (in rows [lo, hi) when `range` is given), then
 * the STALE cells they read, transitively, in the same rows; answers how many were selected and
 * how many were queued in all. Runs in the caller's transaction.
 */
function queueCells(
  store: SheetStore,
  m: SheetModel,
  executionId: string,
  now: number,
  filter: Filter | null,
  targets: { col: ModelColumn; row: number }[],
  range: { lo: number; hi: number } | null,
): { selected: number; queued: number } {
  const sql = store.sql;
  // In a range, `+status` keeps SQLite on the primary key's row range rather than the status index.
  const status = range ? "+status" : "status";
  const lo = range?.lo ?? 0;
  const hi = range?.hi ?? MAX_ROW_INDEX + 1;
  const countQueued = () =>
    sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE row_index >= ? AND row_index < ? AND ${status} = 'QUEUED' AND execution_id = ?`, lo, hi, executionId).one().n;
  const selectedCols = new Set<number>();
  if (filter) {
    if (filter.cols.length > 0 && filter.statuses.length > 0) {
      sql.exec(
        `UPDATE cells SET status = 'QUEUED', execution_id = ?1, updated_at = ?2
           WHERE row_index >= ?6 AND row_index < ?7
             AND column_seq IN (SELECT value FROM json_each(?3)) AND column_seq IN (SELECT seq FROM columns)
             AND (?4 IS NULL OR row_index IN (SELECT value FROM json_each(?4)))
             AND ${status} IN (SELECT value FROM json_each(?5))`,
        executionId,
        now,
        JSON.stringify(filter.cols),
        filter.rows ? JSON.stringify(filter.rows) : null,
        JSON.stringify(filter.statuses),
        lo,
        hi,
      );
      for (const c of filter.cols) selectedCols.add(c);
    }
  } else {
    for (const t of targets) {
      sql.exec(
        `UPDATE cells SET status = 'QUEUED', execution_id = ?, updated_at = ? WHERE row_index = ? AND column_seq = ? AND status NOT IN ('QUEUED', 'RUNNING')`,
        executionId,
        now,
        t.row,
        t.col.seq,
      );
      selectedCols.add(t.col.seq);
    }
  }
  const selected = countQueued();
  // The STALE cells a queued cell reads (transitively, same row) are computed first.
  for (const c of m.graph.order().filter((seq) => selectedCols.has(seq)).reverse()) {
    for (const u of m.graph.upstream(c)) {
      if (!m.bySeq.get(u)?.computed) continue;
      sql.exec(
        `UPDATE cells SET status = 'QUEUED', execution_id = ?1, updated_at = ?2
           WHERE column_seq = ?3 AND ${status} = 'STALE' AND row_index >= ?5 AND row_index < ?6
             AND row_index IN (SELECT row_index FROM cells WHERE row_index >= ?5 AND row_index < ?6 AND ${status} = 'QUEUED' AND column_seq = ?4 AND execution_id = ?1)`,
        executionId,
        now,
        u,
        c,
        lo,
        hi,
      );
    }
  }
  return { selected, queued: countQueued() };
}

function executionCells(store: SheetStore, ident: SheetIdentity, m: SheetModel, executionId: string, limit: number): CellView[] {
  return store.sql
    .exec<StoredCell>(`SELECT * FROM cells WHERE status IN ('QUEUED', 'RUNNING') AND execution_id = ? ORDER BY row_index, column_seq LIMIT ?`, executionId, limit)
    .toArray()
    .map((c) => cellView(ident, m.bySeq.get(c.column_seq)!, c.row_index, c, c.updated_at));
}

/** Cancels an operation: its queued cells go back to STALE, its running ones too (their results are dropped). */
export async function cancelOperation(
  s: SheetCore,
  id: string,
): Promise<Result<{ operation_id: string; execution_ids: string[]; cancelled_cell_count: number; not_started_reset_count: number; running_invalidated_count: number; version: number; message: string }>> {
  const store = s.store;
  const e = store.sql.exec<ExecutionRow>(`SELECT * FROM executions WHERE id = ?`, id).toArray()[0];
  if (!e) return fail("not_found", "operation not found");
  s.settle();
  const now = Date.now();
  const out = s.tx(() => {
    store.sql.exec(`UPDATE cells SET status = 'STALE', updated_at = ? WHERE status = 'QUEUED' AND execution_id = ?`, now, id);
    const queued = store.changes();
    store.sql.exec(`UPDATE cells SET status = 'STALE', updated_at = ? WHERE status = 'RUNNING' AND execution_id = ?`, now, id);
    const running = store.changes();
    if (queued + running === 0) return { queued, running, version: store.meta("version") };
    store.sql.exec(`UPDATE executions SET cancelled_at = ?, updated_at = ? WHERE id = ?`, now, now, id);
    return { queued, running, version: s.bump() };
  });
  if (out.queued + out.running > 0) await s.syncListing();
  return {
    ok: true,
    operation_id: id,
    execution_ids: [id],
    cancelled_cell_count: out.queued + out.running,
    not_started_reset_count: out.queued,
    running_invalidated_count: out.running,
    version: out.version,
    message: out.queued + out.running > 0 ? "Operation cancelled" : "Operation had no cells left to cancel",
  };
}

export function hasPendingCells(store: SheetStore): boolean {
  return store.sql.exec(`SELECT 1 FROM cells WHERE status IN ('QUEUED', 'RUNNING') LIMIT 1`).toArray().length > 0;
}

/** Cells the alarm left RUNNING were taken by a run that was evicted: they go back to the queue. */
export function requeueRunning(store: SheetStore): void {
  store.sql.exec(`UPDATE cells SET status = 'QUEUED' WHERE status = 'RUNNING'`);
}

/**
 * Takes up to `limit` queued cells of one column and marks them RUNNING (and their executions started)
 * in the caller's transaction. One column at a time: the pending index (status, column_seq, row_index)
 * yields them in order, no sort.
 */
export function claimChunk(store: SheetStore, seq: number, limit: number, now: number, tx: <T>(fn: () => T) => T): StoredCell[] {
  const chunk = store.sql.exec<StoredCell>(`SELECT * FROM cells WHERE status = 'QUEUED' AND column_seq = ? ORDER BY row_index LIMIT ?`, seq, limit).toArray();
  if (chunk.length === 0) return chunk;
  const keys = JSON.stringify(chunk.map((c) => [c.row_index, c.column_seq]));
  tx(() => {
    store.sql.exec(
      `UPDATE cells SET status = 'RUNNING', updated_at = ? WHERE status = 'QUEUED' AND (row_index, column_seq) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`,
      now,
      keys,
    );
    store.sql.exec(
      `UPDATE executions SET started_at = ?1, updated_at = ?1 WHERE started_at IS NULL AND id IN (SELECT value FROM json_each(?2))`,
      now,
      JSON.stringify([...new Set(chunk.map((c) => c.execution_id))]),
    );
  });
  return chunk;
}

/** The inputs of a chunk: its rows' cells in the columns its columns read, keyed "row_index:column_seq". */
export function inputCellsOf(store: SheetStore, m: SheetModel, chunk: StoredCell[]): Map<string, StoredCell> {
  const readCols = [...new Set(chunk.flatMap((c) => m.bySeq.get(c.column_seq)?.upstream ?? []))];
  const rows = [...new Set(chunk.map((c) => c.row_index))];
  const inputCells = new Map<string, StoredCell>();
  if (readCols.length > 0) {
    for (const c of store.sql.exec<StoredCell>(
      `SELECT * FROM cells WHERE row_index IN (SELECT value FROM json_each(?)) AND column_seq IN (SELECT value FROM json_each(?))`,
      JSON.stringify(rows),
      JSON.stringify(readCols),
    )) {
      inputCells.set(`${c.row_index}:${c.column_seq}`, c);
    }
  }
  return inputCells;
}

/**
 * Writes a chunk's outcomes back (in the caller's transaction) and counts them on their executions.
 * A cell edited, cancelled or re-queued meanwhile no longer belongs to this run: its result is dropped.
 */
export function recordOutcomes(store: SheetStore, chunk: StoredCell[], outcomes: Outcome[], done: number): void {
  const sql = store.sql;
  const version = store.meta("version");
  for (let i = 0; i < chunk.length; i++) {
    const c = chunk[i];
    const o = outcomes[i];
    if (o.kind === "wait") {
      sql.exec(`UPDATE cells SET status = 'QUEUED' WHERE row_index = ? AND column_seq = ? AND status = 'RUNNING' AND execution_id = ?`, c.row_index, c.column_seq, c.execution_id);
      continue;
    }
    if (o.kind === "reused") {
      sql.exec(
        `UPDATE cells SET status = 'COMPLETED', updated_at = ? WHERE row_index = ? AND column_seq = ? AND status = 'RUNNING' AND execution_id = ?`,
        done,
        c.row_index,
        c.column_seq,
        c.execution_id,
      );
    } else {
      const v = o.kind === "completed" ? o.stored : { display: null, json: null };
      sql.exec(
        `UPDATE cells SET status = ?, display_value = ?, value = ?, error = ?, input_hash = ?, last_computed_version = ?, updated_at = ?
             WHERE row_index = ? AND column_seq = ? AND status = 'RUNNING' AND execution_id = ?`,
        o.kind === "completed" ? "COMPLETED" : "FAILED",
        v.display,
        v.json,
        o.kind === "failed" ? o.error : null,
        o.hash,
        version,
        done,
        c.row_index,
        c.column_seq,
        c.execution_id,
      );
    }
    if (store.changes() === 0) continue;
    const counter = o.kind === "failed" ? "failed_count" : "completed_count";
    sql.exec(
      `UPDATE executions SET ${counter} = ${counter} + 1, reused_count = reused_count + ?, updated_at = ? WHERE id = ?`,
      o.kind === "reused" ? 1 : 0,
      done,
      c.execution_id,
    );
  }
}
