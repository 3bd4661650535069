// The sheet's columns as stored: reading them, their API view, and inserting one (with the STALE
// cells a computed column starts with). The column graph and config checks are the object's.
import { columnPrefix } from "./cell-id";
import { scheduleColumnWork } from "./column-work";
import type { SheetStore } from "./storage";
import { SOURCE_EDGE, type ColumnView, type JsonValue, type NewColumn, type SheetIdentity } from "./types";

export type ColumnRow = { seq: number; id: string; title: string; type: string; config: string; position_rank: number; is_output_column: number };

/** Every column in display order. */
export function columnRows(store: SheetStore): ColumnRow[] {
  return store.sql
    .exec<ColumnRow>(
      `SELECT seq, id, title, type, config, position_rank, is_output_column FROM columns ORDER BY position_rank, seq`,
    )
    .toArray();
}

export function listColumns(store: SheetStore, id: SheetIdentity): ColumnView[] {
  const cols = columnRows(store);
  const idBySeq = new Map(cols.map((c) => [c.seq, c.id]));
  const deps = store.sql
    .exec<{ column_seq: number; depends_on_seq: number; reference_type: string; config_key: string | null }>(
      `SELECT column_seq, depends_on_seq, reference_type, config_key FROM column_dependencies WHERE reference_type <> '${SOURCE_EDGE}' ORDER BY column_seq, depends_on_seq`,
    )
    .toArray();
  return cols.map((c) => ({
    id: c.id,
    sheet_id: id.sheetId,
    workspace_id: id.workspaceId,
    title: c.title,
    type: c.type,
    config: JSON.parse(c.config) as Record<string, JsonValue>,
    dependencies: deps
      .filter((d) => d.column_seq === c.seq)
      .map((d) => ({ column_id: idBySeq.get(d.depends_on_seq)!, reference_type: d.reference_type, config_key: d.config_key })),
    position_rank: c.position_rank,
    is_output_column: c.is_output_column === 1,
  }));
}

/**
 * The column a reference names: its id (any case), else its title (exactly, else in any case:
 * titles are unique regardless of case). Column dependencies and scorecard steps take either.
 */
export function findColumnByRef<C extends { id: string; title: string }>(cols: readonly C[], ref: string): C | undefined {
  const lower = ref.toLowerCase();
  return cols.find((c) => c.id === lower) ?? cols.find((c) => c.title === ref) ?? cols.find((c) => c.title.toLowerCase() === lower);
}

/** A title not yet used by a column of this sheet: "x", else "x (2)", "x (3)"… */
function uniqueTitle(wanted: string, taken: Set<string>): string {
  let title = wanted;
  for (let n = 2; taken.has(title.toLowerCase()); n++) title = `${wanted} (${n})`;
  taken.add(title.toLowerCase());
  return title;
}

/** Inserts a column (in the caller's transaction) and the STALE cells a non-text column needs (column-work.ts); the caller drops its cached column model and sets the alarm for work left pending. */
export function insertColumn(store: SheetStore, col: NewColumn, now: number, taken?: Set<string>): { seq: number; id: string } {
  let id = crypto.randomUUID();
  // Cell ids keep the first 23 characters of the column id: they must differ between columns.
  while (store.sql.exec(`SELECT 1 FROM columns WHERE substr(id, 1, 23) = ?`, columnPrefix(id)).toArray().length > 0) {
    id = crypto.randomUUID();
  }
  const titles = taken ?? new Set(store.sql.exec<{ t: string }>(`SELECT lower(title) AS t FROM columns`).toArray().map((r) => r.t));
  const title = uniqueTitle(col.title, titles);
  const rank = store.sql.exec<{ r: number }>(`SELECT COALESCE(MAX(position_rank), 0) + 1 AS r FROM columns`).one().r;
  const seq = store.sql
    .exec<{ seq: number }>(
      `INSERT INTO columns (id, title, type, config, position_rank, is_output_column, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      id,
      title,
      col.type,
      JSON.stringify(col.config ?? {}),
      rank,
      col.is_output_column ? 1 : 0,
      now,
      now,
    )
    .one().seq;
  for (const dep of col.dependencies ?? []) {
    const upstream = store.sql.exec<{ seq: number }>(`SELECT seq FROM columns WHERE id = ?`, dep.column_id).toArray()[0];
    if (!upstream) throw new Error(`unknown dependency column ${dep.column_id}`);
    store.sql.exec(
      `INSERT OR IGNORE INTO column_dependencies (column_seq, depends_on_seq, reference_type, config_key) VALUES (?, ?, ?, ?)`,
      seq,
      upstream.seq,
      dep.reference_type ?? "value",
      dep.config_key ?? null,
    );
  }
  // A computed column's cells start STALE; on a large sheet they are created a range at a time.
  if (col.type !== "TEXT") scheduleColumnWork(store, "insert", [seq], now);
  return { seq, id };
}
