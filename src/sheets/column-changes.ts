// Create, update and delete a column, on an admitted sheet (core.ts): the checks are column-plan.ts's,
// the statements here, each change in one transaction and one version; what a change stales is marked
// at once on a small sheet and by the alarm on a large one (column-work.ts).
import { columnCells } from "./cells";
import { planColumn, planColumnUpdate, storeEdges } from "./column-plan";
import { markStale, scheduleColumnWork } from "./column-work";
import { insertColumn, listColumns } from "./columns";
import type { SheetCore } from "./core";
import { fail, MAX_COLUMNS, type CellView, type ColumnView, type CreateColumnInput, type NewColumn, type Result, type UpdateColumnInput } from "./types";

/** Inserts a column (in the caller's transaction) and drops the cached column model. */
export function addColumnRow(s: SheetCore, col: NewColumn, now: number, taken?: Set<string>): { seq: number; id: string } {
  s.dropModel();
  return insertColumn(s.store, col, now, taken);
}

function columnView(s: SheetCore, id: string): ColumnView {
  return listColumns(s.store, s.ident).find((c) => c.id === id)!;
}

/**
 * Adds a column at the end: the storage half of Create Column, for imports and tests. Validation of
 * the type's config and of the column graph is the caller's; this stores, creates the cells and
 * publishes the column's prompt references to D1.
 */
export async function addColumn(s: SheetCore, col: NewColumn): Promise<{ column: ColumnView; version: number }> {
  const now = Date.now();
  const { id, version } = s.tx(() => {
    const { id } = addColumnRow(s, col, now);
    return { id, version: s.bump() };
  });
  await s.armForColumnWork();
  await s.syncPromptRefs([{ id, type: col.type, config: col.config ?? {} }]);
  await s.syncListing();
  return { column: columnView(s, id), version };
}

/** Create Column: TEXT, or a computing block type whose config and dependencies are checked here. */
export async function createColumn(s: SheetCore, input: CreateColumnInput): Promise<Result<{ column: ColumnView; version: number; cells: CellView[]; stale_count: number }>> {
  const m = s.model();
  if (m.list.length >= MAX_COLUMNS) return fail("validation_error", `sheet: has ${m.list.length} columns, the most a sheet holds; delete one first`);
  const plan = planColumn(m, input);
  if (!plan.ok) return plan;
  const now = Date.now();
  const { id, version, staleCount } = s.tx(() => {
    const { seq, id } = addColumnRow(s, { title: input.title, type: input.type, config: plan.config, is_output_column: input.is_output_column ?? false }, now);
    storeEdges(s.store, seq, plan.edges);
    if (input.position_rank != null) s.store.sql.exec(`UPDATE columns SET position_rank = ? WHERE seq = ?`, input.position_rank, seq);
    const staleCount = input.type === "TEXT" ? 0 : s.store.meta("row_count");
    return { id, version: s.bump(), staleCount };
  });
  s.dropModel();
  await s.armForColumnWork();
  await s.syncPromptRefs([{ id, type: input.type, config: plan.config }]);
  await s.syncListing();
  return { ok: true, column: columnView(s, id), version, cells: columnCells(s.store, s.ident, id, 100), stale_count: staleCount };
}

/**
 * Update Column: title, config, dependencies, is_output_column, position_rank. A change of config or
 * dependencies marks the column's own cells and every cell downstream STALE.
 */
export async function updateColumn(
  s: SheetCore,
  columnId: string,
  patch: UpdateColumnInput,
): Promise<Result<{ column: ColumnView; version: number; stale_count: number; requires_recalculation: boolean; affected_column_ids: string[] }>> {
  const sql = s.store.sql;
  const m = s.model();
  const col = m.byId.get(columnId);
  if (!col) return fail("not_found", "column not found");
  const checked = planColumnUpdate(s.store, m, col, patch);
  if (!checked.ok) return checked;
  const plan = checked.plan;
  // Nothing that would change (the same title, type, flag or rank): answered as is, no version spent.
  if (!plan) {
    const cur = sql.exec<{ position_rank: number; is_output_column: number }>(`SELECT position_rank, is_output_column FROM columns WHERE seq = ?`, col.seq).one();
    const changes =
      (patch.title != null && patch.title !== col.title) ||
      (patch.is_output_column != null && (patch.is_output_column ? 1 : 0) !== cur.is_output_column) ||
      (patch.position_rank != null && patch.position_rank !== cur.position_rank);
    if (!changes) {
      return { ok: true, column: columnView(s, col.id), version: s.store.meta("version"), stale_count: 0, requires_recalculation: false, affected_column_ids: [] };
    }
  }
  const now = Date.now();
  // A TEXT column's config is not read by anything: storing a new one stales nothing.
  const affected = plan && col.computed ? [col.seq, ...m.graph.downstream([col.seq])] : [];
  const { version, staleCount } = s.tx(() => {
    if (patch.title != null) sql.exec(`UPDATE columns SET title = ?, updated_at = ? WHERE seq = ?`, patch.title, now, col.seq);
    if (patch.is_output_column != null) sql.exec(`UPDATE columns SET is_output_column = ?, updated_at = ? WHERE seq = ?`, patch.is_output_column ? 1 : 0, now, col.seq);
    if (patch.position_rank != null) sql.exec(`UPDATE columns SET position_rank = ?, updated_at = ? WHERE seq = ?`, patch.position_rank, now, col.seq);
    let staleCount = 0;
    if (plan) {
      sql.exec(`UPDATE columns SET config = ?, updated_at = ? WHERE seq = ?`, JSON.stringify(plan.config), now, col.seq);
      storeEdges(s.store, col.seq, plan.edges);
      staleCount = markStale(s.store, affected, now);
    }
    return { version: s.bump(), staleCount };
  });
  s.dropModel();
  await s.armForColumnWork();
  if (plan) await s.syncPromptRefs([{ id: col.id, type: col.type, config: plan.config }]);
  await s.syncListing();
  return {
    ok: true,
    column: columnView(s, col.id),
    version,
    stale_count: staleCount,
    requires_recalculation: staleCount > 0,
    affected_column_ids: affected.map((seq) => m.bySeq.get(seq)!.id),
  };
}

/** Delete Column: its cells go; every cell downstream becomes STALE (its input is gone). */
export async function deleteColumn(s: SheetCore, columnId: string): Promise<Result<{ version: number; stale_count: number }>> {
  const m = s.model();
  const col = m.byId.get(columnId);
  if (!col) return fail("not_found", "column not found");
  const downstream = m.graph.downstream([col.seq]);
  const now = Date.now();
  const { version, staleCount } = s.tx(() => {
    s.store.sql.exec(`DELETE FROM column_dependencies WHERE column_seq = ? OR depends_on_seq = ?`, col.seq, col.seq);
    s.store.sql.exec(`DELETE FROM columns WHERE seq = ?`, col.seq);
    // Column seqs are never reused, so cells left to delete belong to no column and show nowhere.
    scheduleColumnWork(s.store, "delete", [col.seq], now);
    const staleCount = markStale(s.store, downstream, now);
    return { version: s.bump(), staleCount };
  });
  s.dropModel();
  await s.armForColumnWork();
  await s.syncPromptRefs([{ id: col.id, type: "TEXT", config: {} }]);
  await s.syncListing();
  return { ok: true, version, stale_count: staleCount };
}
