// Saved versions of a sheet: named snapshots of its columns, rows and cells, kept in the object's own
// SQLite, and restoring one as a new version. Storage is compact: every snapshot record carries the
// range of saved versions it belongs to [from_v, to_v), so a version stores only what changed since
// the one before (an unchanged cell is one record shared by every version it lived through).
// Saving or restoring compares or copies the whole sheet inside one transaction (a snapshot must be
// of one moment), so a sheet is versioned only up to MAX_VERSION_CELLS stored cells.
import { toIso } from "../lib/time";
import { cellView } from "./cells";
import type { SheetCore } from "./core";
import { promptRefsOf } from "./prompt-refs";
import { readSettings, restoreSettings, scoreAt, settingsView, type SettingsView } from "./score";
import type { SheetStore } from "./storage";
import {
  fail,
  ROWS_PAGE_BYTES,
  SOURCE_EDGE,
  type ColumnView,
  type Fail,
  type JsonValue,
  type ModelColumn,
  type Result,
  type RowView,
  type SheetIdentity,
  type StoredCell,
} from "./types";

/** Stored cells a sheet may hold to be saved or restored: the work is one transaction over all of them. */
export const MAX_VERSION_CELLS = 250_000;

export interface SavedVersionRow {
  number: number;
  id: string;
  name: string | null;
  created_by: string | null;
  created_at: number;
  sheet_version: number;
  metadata: string;
  deltas: string;
  score_configuration: string | null;
  [key: string]: SqlStorageValue;
}

export interface VersionMetadata {
  sheet_version: number;
  row_count: number;
  column_count: number;
  cell_count: number;
  next_row_index: number;
  restored_from: { version_id: string; version_number: number } | null;
}

export interface VersionView {
  id: string;
  sheet_id: string;
  version_number: number;
  name: string | null;
  created_by: string | null;
  created_at: string;
  metadata: Record<string, JsonValue>;
  deltas: Record<string, JsonValue>[];
  score: Record<string, JsonValue>;
  score_configuration: Record<string, JsonValue> | null;
}

export interface SnapshotView {
  sheet_version: number;
  row_count: number;
  column_count: number;
  columns: ColumnView[];
  rows: RowView[];
  has_more_rows: boolean;
  /** Row index of the last row shown, for the next page of this snapshot's rows. */
  last_row_index: number | null;
}

/** Records of saved version `v`: created at or before it, not yet replaced by it. */
const AT = (v: string) => `from_v <= ${v} AND (to_v IS NULL OR to_v > ${v})`;

/** QUEUED and RUNNING cells are kept as STALE: a restored sheet starts with nothing running. */
const SNAP_STATUS = `CASE WHEN c.status IN ('QUEUED', 'RUNNING') THEN 'STALE' ELSE c.status END`;

export function versionCount(store: SheetStore): number {
  return store.sql.exec<{ n: number }>(`SELECT COALESCE(MAX(number), 0) AS n FROM saved_versions`).one().n;
}

export function findVersion(store: SheetStore, id: string): SavedVersionRow | undefined {
  return store.sql.exec<SavedVersionRow>(`SELECT * FROM saved_versions WHERE id = ?`, id).toArray()[0];
}

/** The live cells a snapshot would copy (those of columns that exist). */
function liveCellCount(store: SheetStore): number {
  return store.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE column_seq IN (SELECT seq FROM columns)`).one().n;
}

export function tooLarge(cells: number, what: string): Fail | null {
  if (cells <= MAX_VERSION_CELLS) return null;
  return fail("payload_too_large", `${what} holds ${cells} stored cells; a sheet is versioned up to ${MAX_VERSION_CELLS} (a save or restore copies them in one step)`);
}

/**
 * Records the sheet as it is now as saved version `n` (in the caller's transaction, with column
 * work settled): closes the records that changed, adds the new ones, and answers what changed since
 * the version before.
 */
export function snapshot(store: SheetStore, n: number): { deltas: Record<string, JsonValue>[]; columnCount: number; rowCount: number; cellCount: number } {
  const sql = store.sql;
  const changes = () => sql.exec<{ c: number }>(`SELECT changes() AS c`).one().c;

  const before = new Map(sql.exec<{ seq: number; id: string }>(`SELECT seq, id FROM snap_columns WHERE to_v IS NULL ORDER BY seq`).toArray().map((r) => [r.seq, r.id]));
  const now = new Map(sql.exec<{ seq: number; id: string }>(`SELECT seq, id FROM columns ORDER BY seq`).toArray().map((r) => [r.seq, r.id]));

  sql.exec(
    `UPDATE snap_columns AS s SET to_v = ?1 WHERE s.to_v IS NULL AND NOT EXISTS (
       SELECT 1 FROM columns c WHERE c.seq = s.seq AND c.id = s.id AND c.title = s.title AND c.type = s.type AND c.config = s.config
         AND c.position_rank = s.position_rank AND c.is_output_column = s.is_output_column)`,
    n,
  );
  const changedCols = sql.exec<{ seq: number }>(`SELECT seq FROM snap_columns WHERE to_v = ? ORDER BY seq`, n).toArray().map((r) => r.seq);
  sql.exec(
    `INSERT INTO snap_columns (seq, id, title, type, config, position_rank, is_output_column, created_at, from_v)
     SELECT c.seq, c.id, c.title, c.type, c.config, c.position_rank, c.is_output_column, c.created_at, ?1 FROM columns c
     WHERE NOT EXISTS (SELECT 1 FROM snap_columns s WHERE s.to_v IS NULL AND s.seq = c.seq)`,
    n,
  );

  sql.exec(
    `UPDATE snap_dependencies AS s SET to_v = ?1 WHERE s.to_v IS NULL AND NOT EXISTS (
       SELECT 1 FROM column_dependencies d WHERE d.column_seq = s.column_seq AND d.depends_on_seq = s.depends_on_seq
         AND d.reference_type = s.reference_type AND d.config_key IS s.config_key)`,
    n,
  );
  sql.exec(
    `INSERT INTO snap_dependencies (column_seq, depends_on_seq, reference_type, config_key, from_v)
     SELECT d.column_seq, d.depends_on_seq, d.reference_type, d.config_key, ?1 FROM column_dependencies d
     WHERE NOT EXISTS (SELECT 1 FROM snap_dependencies s WHERE s.to_v IS NULL AND s.column_seq = d.column_seq
       AND s.depends_on_seq = d.depends_on_seq AND s.reference_type = d.reference_type)`,
    n,
  );

  sql.exec(
    `UPDATE snap_rows AS s SET to_v = ?1 WHERE s.to_v IS NULL AND NOT EXISTS (
       SELECT 1 FROM rows r WHERE r.row_index = s.row_index AND r.created_at = s.created_at AND r.source_operation IS s.source_operation)`,
    n,
  );
  sql.exec(
    `INSERT INTO snap_rows (row_index, source_operation, created_at, from_v)
     SELECT r.row_index, r.source_operation, r.created_at, ?1 FROM rows r
     WHERE NOT EXISTS (SELECT 1 FROM snap_rows s WHERE s.to_v IS NULL AND s.row_index = r.row_index)`,
    n,
  );
  const rowsAdded = changes();
  const rowsRemoved = sql
    .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM snap_rows s WHERE s.to_v = ?1 AND NOT EXISTS (SELECT 1 FROM snap_rows o WHERE o.to_v IS NULL AND o.row_index = s.row_index)`, n)
    .one().n;

  // A cell of a column deleted meanwhile (its cells may still await removal) is not part of the sheet.
  sql.exec(
    `UPDATE snap_cells AS s SET to_v = ?1 WHERE s.to_v IS NULL AND NOT EXISTS (
       SELECT 1 FROM cells c WHERE c.row_index = s.row_index AND c.column_seq = s.column_seq
         AND c.column_seq IN (SELECT seq FROM columns)
         AND ${SNAP_STATUS} = s.status AND c.display_value IS s.display_value AND c.value IS s.value AND c.error IS s.error
         AND c.input_hash IS s.input_hash AND c.last_computed_version IS s.last_computed_version)`,
    n,
  );
  const cellsClosed = changes();
  sql.exec(
    `INSERT INTO snap_cells (row_index, column_seq, status, display_value, value, error, input_hash, last_computed_version, updated_at, from_v)
     SELECT c.row_index, c.column_seq, ${SNAP_STATUS}, c.display_value, c.value, c.error, c.input_hash, c.last_computed_version, c.updated_at, ?1
     FROM cells c
     WHERE c.column_seq IN (SELECT seq FROM columns)
       AND NOT EXISTS (SELECT 1 FROM snap_cells s WHERE s.to_v IS NULL AND s.row_index = c.row_index AND s.column_seq = c.column_seq)`,
    n,
  );
  const cellsWritten = changes();
  const cellsReplaced = sql
    .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM snap_cells s WHERE s.to_v = ?1 AND EXISTS (SELECT 1 FROM snap_cells o WHERE o.to_v IS NULL AND o.row_index = s.row_index AND o.column_seq = s.column_seq)`, n)
    .one().n;

  const added = [...now.keys()].filter((s) => !before.has(s));
  const removed = [...before.keys()].filter((s) => !now.has(s));
  const changed = changedCols.filter((s) => now.has(s));
  const cellCount = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM snap_cells WHERE to_v IS NULL`).one().n;
  return {
    deltas: [
      {
        type: "columns",
        added: added.map((s) => now.get(s)!),
        removed: removed.map((s) => before.get(s)!),
        changed: changed.map((s) => now.get(s)!),
      },
      { type: "rows", added: rowsAdded, removed: rowsRemoved },
      // A cell emptied counts as changed, like one given a new value.
      { type: "cells", changed: cellsWritten + (cellsClosed - cellsReplaced) },
    ],
    columnCount: now.size,
    rowCount: store.meta("row_count"),
    cellCount,
  };
}

/**
 * Replaces the sheet's columns, rows and cells by saved version `v`'s (in the caller's transaction).
 * Recalculations under way lose their cells (their operations end cancelled); pending column work
 * is dropped with the cells it was for. Row indexes continue from where the version's did.
 */
function restoreContent(store: SheetStore, v: SavedVersionRow, now: number): void {
  const sql = store.sql;
  sql.exec(
    `UPDATE executions SET cancelled_at = ?1, updated_at = ?1 WHERE cancelled_at IS NULL
       AND id IN (SELECT DISTINCT execution_id FROM cells WHERE status IN ('QUEUED', 'RUNNING'))`,
    now,
  );
  for (const t of ["cells", "column_dependencies", "columns", "rows", "column_work"]) sql.exec(`DELETE FROM ${t}`);
  sql.exec(
    `INSERT INTO columns (seq, id, title, type, config, position_rank, is_output_column, created_at, updated_at)
     SELECT seq, id, title, type, config, position_rank, is_output_column, created_at, ?2 FROM snap_columns WHERE ${AT("?1")}`,
    v.number,
    now,
  );
  sql.exec(
    `INSERT INTO column_dependencies (column_seq, depends_on_seq, reference_type, config_key)
     SELECT column_seq, depends_on_seq, reference_type, config_key FROM snap_dependencies WHERE ${AT("?1")}`,
    v.number,
  );
  sql.exec(`INSERT INTO rows (row_index, source_operation, created_at) SELECT row_index, source_operation, created_at FROM snap_rows WHERE ${AT("?1")}`, v.number);
  sql.exec(
    `INSERT INTO cells (row_index, column_seq, status, display_value, value, error, input_hash, last_computed_version, updated_at)
     SELECT row_index, column_seq, status, display_value, value, error, input_hash, last_computed_version, updated_at FROM snap_cells WHERE ${AT("?1")}`,
    v.number,
  );
  const meta = JSON.parse(v.metadata) as VersionMetadata;
  store.setMeta("row_count", sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM rows`).one().n);
  store.setMeta("next_row_index", meta.next_row_index);
}

export function insertVersion(
  store: SheetStore,
  row: { number: number; id: string; name: string | null; createdBy: string | null; now: number; metadata: VersionMetadata; deltas: unknown; scoreConfiguration: unknown },
): void {
  store.sql.exec(
    `INSERT INTO saved_versions (number, id, name, created_by, created_at, sheet_version, metadata, deltas, score_configuration) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    row.number,
    row.id,
    row.name,
    row.createdBy,
    row.now,
    row.metadata.sheet_version,
    JSON.stringify(row.metadata),
    JSON.stringify(row.deltas),
    row.scoreConfiguration == null ? null : JSON.stringify(row.scoreConfiguration),
  );
}

export function versionView(ident: SheetIdentity, v: SavedVersionRow, score: Record<string, JsonValue>): VersionView {
  return {
    id: v.id,
    sheet_id: ident.sheetId,
    version_number: v.number,
    name: v.name,
    created_by: v.created_by,
    created_at: toIso(v.created_at),
    metadata: JSON.parse(v.metadata) as Record<string, JsonValue>,
    deltas: JSON.parse(v.deltas) as Record<string, JsonValue>[],
    score,
    score_configuration: v.score_configuration === null ? null : (JSON.parse(v.score_configuration) as Record<string, JsonValue>),
  };
}

/** A page of saved versions by number. */
export function listVersions(store: SheetStore, opts: { after: number | null; limit: number; order: "asc" | "desc" }): { rows: SavedVersionRow[]; hasMore: boolean } {
  const desc = opts.order === "desc";
  const after = opts.after ?? (desc ? Number.MAX_SAFE_INTEGER : 0);
  const rows = store.sql
    .exec<SavedVersionRow>(`SELECT * FROM saved_versions WHERE number ${desc ? "<" : ">"} ? ORDER BY number ${desc ? "DESC" : "ASC"} LIMIT ?`, after, opts.limit + 1)
    .toArray();
  return { rows: rows.slice(0, opts.limit), hasMore: rows.length > opts.limit };
}

/** Saved version `v` as the sheet was: its columns and a page of its rows (after `after`, at most `limit`, stopping at ROWS_PAGE_BYTES). */
function snapshotView(store: SheetStore, ident: SheetIdentity, v: SavedVersionRow, page: { after: number | null; limit: number }): SnapshotView {
  const sql = store.sql;
  const meta = JSON.parse(v.metadata) as VersionMetadata;
  type SnapColumn = { seq: number; id: string; title: string; type: string; config: string; position_rank: number; is_output_column: number; [k: string]: SqlStorageValue };
  const cols = sql.exec<SnapColumn>(`SELECT * FROM snap_columns WHERE ${AT("?1")} ORDER BY position_rank, seq`, v.number).toArray();
  const idBySeq = new Map(cols.map((c) => [c.seq, c.id]));
  const deps = sql
    .exec<{ column_seq: number; depends_on_seq: number; reference_type: string; config_key: string | null }>(
      `SELECT column_seq, depends_on_seq, reference_type, config_key FROM snap_dependencies WHERE ${AT("?1")} AND reference_type <> ?2 ORDER BY column_seq, depends_on_seq`,
      v.number,
      SOURCE_EDGE,
    )
    .toArray();
  const columns: ColumnView[] = cols.map((c) => ({
    id: c.id,
    sheet_id: ident.sheetId,
    workspace_id: ident.workspaceId,
    title: c.title,
    type: c.type,
    config: JSON.parse(c.config) as Record<string, JsonValue>,
    dependencies: deps
      .filter((d) => d.column_seq === c.seq && idBySeq.has(d.depends_on_seq))
      .map((d) => ({ column_id: idBySeq.get(d.depends_on_seq)!, reference_type: d.reference_type, config_key: d.config_key })),
    position_rank: c.position_rank,
    is_output_column: c.is_output_column === 1,
  }));

  const rowRecs = sql
    .exec<{ row_index: number; created_at: number }>(
      `SELECT row_index, created_at FROM snap_rows WHERE row_index > ?2 AND ${AT("?1")} ORDER BY row_index LIMIT ?3`,
      v.number,
      page.after ?? -1,
      page.limit + 1,
    )
    .toArray();
  let hasMore = rowRecs.length > page.limit;
  const shown = rowRecs.slice(0, page.limit);
  const rows: RowView[] = [];
  if (shown.length > 0) {
    const lo = shown[0].row_index;
    const hi = shown[shown.length - 1].row_index;
    const byRow = new Map<number, Map<number, StoredCell>>();
    const bytes = new Map<number, number>();
    for (const c of sql.exec<StoredCell & { n: number }>(
      `SELECT row_index, column_seq, status, display_value, value, error, input_hash, NULL AS execution_id, last_computed_version, updated_at,
              COALESCE(length(CAST(display_value AS BLOB)), 0) + COALESCE(length(CAST(value AS BLOB)), 0) + COALESCE(length(CAST(error AS BLOB)), 0) AS n
       FROM snap_cells WHERE row_index BETWEEN ?2 AND ?3 AND ${AT("?1")}`,
      v.number,
      lo,
      hi,
    )) {
      if (!byRow.has(c.row_index)) byRow.set(c.row_index, new Map());
      byRow.get(c.row_index)!.set(c.column_seq, c);
      bytes.set(c.row_index, (bytes.get(c.row_index) ?? 0) + c.n);
    }
    let total = 0;
    for (const r of shown) {
      total += bytes.get(r.row_index) ?? 0;
      // As a page of live rows: it stops early once its cells hold ROWS_PAGE_BYTES (the first row always shows).
      if (total > ROWS_PAGE_BYTES && rows.length > 0) {
        hasMore = true;
        break;
      }
      const cells: RowView["cells"] = {};
      const stored = byRow.get(r.row_index);
      for (const col of cols) cells[col.id] = cellView(ident, col, r.row_index, stored?.get(col.seq), r.created_at);
      rows.push({ row_index: r.row_index, cells });
    }
  }
  return {
    sheet_version: v.sheet_version,
    row_count: meta.row_count,
    column_count: cols.length,
    columns,
    rows,
    has_more_rows: hasMore,
    last_row_index: rows.length > 0 ? rows[rows.length - 1].row_index : null,
  };
}

// ---------------------------------------------------------------------------------------------
// The calls of an admitted sheet (core.ts): list, read, save and restore.

export function versionsFor(s: SheetCore, opts: { after: number | null; limit: number; order: "asc" | "desc" }): Result<{ versions: VersionView[]; has_more: boolean }> {
  const page = listVersions(s.store, opts);
  return { ok: true, versions: page.rows.map((v) => versionView(s.ident, v, scoreAt(s.store, v.sheet_version))), has_more: page.hasMore };
}

export function versionFor(s: SheetCore, id: string, rows: { after: number | null; limit: number }): Result<{ version: VersionView; snapshot: SnapshotView }> {
  const v = findVersion(s.store, id);
  if (!v) return fail("not_found", "version not found");
  return { ok: true, version: versionView(s.ident, v, scoreAt(s.store, v.sheet_version)), snapshot: snapshotView(s.store, s.ident, v, rows) };
}

/**
 * The prompt references D1 must list after a restore replaced the columns `before` by `after`: the
 * columns gone lose theirs (as a TEXT column), the restored ones get theirs.
 */
export function promptRefChanges(before: ModelColumn[], after: ModelColumn[]): { id: string; type: string; config: unknown }[] {
  const afterIds = new Set(after.map((c) => c.id));
  const hadRefs = new Set(before.filter((c) => promptRefsOf(c.type, c.config).length > 0).map((c) => c.id));
  const out: { id: string; type: string; config: unknown }[] = [];
  for (const c of before) if (!afterIds.has(c.id) && hadRefs.has(c.id)) out.push({ id: c.id, type: "TEXT", config: {} });
  for (const c of after) if (hadRefs.has(c.id) || promptRefsOf(c.type, c.config).length > 0) out.push({ id: c.id, type: c.type, config: c.config });
  return out;
}

/**
 * Saves the sheet as a new version named `name`; with `sourceVersionId`, first replaces the sheet's
 * columns, rows and cells by that version's (one new sheet version), then saves the result.
 */
export async function createVersion(
  s: SheetCore,
  input: { name: string | null; sourceVersionId: string | null; createdBy: string | null },
): Promise<Result<{ version: VersionView; snapshot: SnapshotView }>> {
  const store = s.store;
  const source = input.sourceVersionId ? findVersion(store, input.sourceVersionId) : undefined;
  if (input.sourceVersionId && !source) return fail("not_found", "source_version_id: version not found");
  if (!source && !input.name) return fail("validation_error", "name: is required unless source_version_id is given");
  const big = source ? tooLarge((JSON.parse(source.metadata) as VersionMetadata).cell_count, `version ${source.number}`) : tooLarge(liveCellCount(store), "the sheet");
  if (big) return big;
  if (!source) s.settle();
  const before = source ? s.model().list : [];
  const now = Date.now();
  const id = crypto.randomUUID();
  s.tx(() => {
    const number = versionCount(store) + 1;
    if (source) {
      restoreContent(store, source, now);
      restoreSettings(store, source.score_configuration === null ? null : (JSON.parse(source.score_configuration) as SettingsView), now);
      s.bump();
    }
    const snap = snapshot(store, number);
    insertVersion(store, {
      number,
      id,
      name: input.name ?? (source ? `Restored from version ${source.number}` : null),
      createdBy: input.createdBy,
      now,
      deltas: snap.deltas,
      scoreConfiguration: settingsView(readSettings(store)),
      metadata: {
        sheet_version: store.meta("version"),
        row_count: snap.rowCount,
        column_count: snap.columnCount,
        cell_count: snap.cellCount,
        next_row_index: store.meta("next_row_index"),
        restored_from: source ? { version_id: source.id, version_number: source.number } : null,
      },
    });
  });
  if (source) {
    s.dropModel();
    await s.syncPromptRefs(promptRefChanges(before, s.model().list));
    await s.syncListing();
  }
  const v = findVersion(store, id)!;
  return { ok: true, version: versionView(s.ident, v, scoreAt(store, v.sheet_version)), snapshot: snapshotView(store, s.ident, v, { after: null, limit: 100 }) };
}
