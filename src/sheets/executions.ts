// A sheet's recalculation operations (executions) as the API shows them: one operation's counts and
// state, and the summary of the sheet's cell statuses with the operations still running.
import { toIso } from "../lib/time";
import type { SheetStore } from "./storage";
import { CELL_STATUSES, type ExecutionRow, type SheetIdentity, type SheetOperationsSummary, type SheetOperationView } from "./types";

export function operationView(store: SheetStore, ident: SheetIdentity, e: ExecutionRow): SheetOperationView {
  const counts = Object.fromEntries(
    store.sql
      .exec<{ status: string; n: number }>(
        `SELECT status, COUNT(*) AS n FROM cells WHERE status IN ('QUEUED', 'RUNNING') AND execution_id = ? GROUP BY status`,
        e.id,
      )
      .toArray()
      .map((r) => [r.status, r.n]),
  ) as Record<string, number>;
  const queued = counts.QUEUED ?? 0;
  const running = counts.RUNNING ?? 0;
  const pending = queued + running;
  const left = Math.max(0, e.cell_count - e.completed_count - e.failed_count - pending);
  const status = e.cancelled_at !== null ? "cancelled" : pending > 0 ? (e.started_at !== null ? "running" : "queued") : "completed";
  return {
    operation_id: e.id,
    operation: "recalculate",
    status,
    status_counts: { QUEUED: queued, RUNNING: running, COMPLETED: e.completed_count, FAILED: e.failed_count, STALE: left },
    cell_count: e.cell_count,
    completed_count: e.completed_count,
    failed_count: e.failed_count,
    pending_count: pending,
    reused_count: e.reused_count,
    version: e.version,
    status_url: `/api/public/v2/tables/${ident.tableId}/sheets/${ident.sheetId}/operations/${e.id}`,
    created_at: toIso(e.created_at),
    updated_at: toIso(e.updated_at),
  };
}

/** The sheet's cell status counts (over `columnCount` columns) and its operations still running. */
export function listOperations(store: SheetStore, ident: SheetIdentity, columnCount: number): SheetOperationsSummary {
  const rowCount = store.meta("row_count");
  const counts: Record<string, number> = Object.fromEntries(CELL_STATUSES.map((s) => [s, 0]));
  for (const r of store.sql.exec<{ status: string; n: number }>(`SELECT status, COUNT(*) AS n FROM cells WHERE status <> 'COMPLETED' GROUP BY status`)) {
    counts[r.status] = r.n;
  }
  const total = rowCount * columnCount;
  counts.COMPLETED = total - CELL_STATUSES.filter((s) => s !== "COMPLETED").reduce((a, s) => a + counts[s], 0);
  const active = store.sql
    .exec<ExecutionRow>(
      `SELECT * FROM executions WHERE cancelled_at IS NULL AND id IN (SELECT DISTINCT execution_id FROM cells WHERE status IN ('QUEUED', 'RUNNING')) ORDER BY created_at`,
    )
    .toArray();
  return {
    sheet_id: ident.sheetId,
    version: store.meta("version"),
    total_cells: total,
    status_counts: counts,
    pending_count: counts.QUEUED + counts.RUNNING,
    active_operations: active.map((e) => operationView(store, ident, e)),
  };
}

export function getOperation(store: SheetStore, ident: SheetIdentity, id: string): SheetOperationView | null {
  const e = store.sql.exec<ExecutionRow>(`SELECT * FROM executions WHERE id = ?`, id).toArray()[0];
  return e ? operationView(store, ident, e) : null;
}
