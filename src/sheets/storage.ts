// The sheet object's own SQLite: its schema (MIGRATIONS, applied in order, once per object), the
// sheet's counters and identity, and the one statement imports append cells with. The tables:
//   sheet_meta(key, value INTEGER)   version, row_count, next_row_index, deleted, schema_version
//   sheet_identity(key, value TEXT)  sheet_id, table_id, workspace_id (set once by init)
//   columns        seq (internal key), id (uuid), title, type ('TEXT' or a block type), config (JSON),
//                  position_rank, is_output_column
//   column_dependencies  column_seq depends on depends_on_seq (the column graph the stale walk follows)
//   rows           row_index (0-based, sequential, never reused), source_operation
//   cells          (row_index, column_seq) → status, display_value, value, error, input_hash,
//                  execution_id, last_computed_version. A cell's id is derived (cell-id.ts), not stored.
//                  Text cells are stored only when they hold a value; non-text cells always (they
//                  carry a status). `value` is JSON; NULL means "the same as display_value".
//   import_batches (operation_id, batch) → the rows that batch appended: what makes a redelivered
//                  import batch a no-op. import_columns maps an import's column positions to columns
//                  (a negated seq: a computed column whose values the import drops, imports.ts).
//   column_work: column-wide work left for the alarm on a large sheet (column-work.ts).
//   saved_versions, snap_columns, snap_dependencies, snap_rows, snap_cells: named snapshots
//                  (versions.ts); a snap_ record belongs to saved versions [from_v, to_v).
//   score_settings, score_calculations: the sheet's score configuration and its calculations (score.ts).
//   scorecards, scorecard_calculations, scorecard_rows: the scorecard, its calculations and their
//                  per-row results (scorecard/).
// Every mutation runs in one transactionSync and bumps `version` by exactly 1.
import type { SheetIdentity } from "./types";

export const MIGRATIONS: string[][] = [
  [
    `CREATE TABLE IF NOT EXISTS sheet_identity (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS columns (
       seq INTEGER PRIMARY KEY AUTOINCREMENT,
       id TEXT NOT NULL UNIQUE,
       title TEXT NOT NULL,
       type TEXT NOT NULL,
       config TEXT NOT NULL DEFAULT '{}',
       position_rank REAL NOT NULL,
       is_output_column INTEGER NOT NULL DEFAULT 0,
       created_at INTEGER NOT NULL,
       updated_at INTEGER NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS column_dependencies (
       column_seq INTEGER NOT NULL,
       depends_on_seq INTEGER NOT NULL,
       reference_type TEXT NOT NULL DEFAULT 'value',
       config_key TEXT,
       PRIMARY KEY (column_seq, depends_on_seq, reference_type)) WITHOUT ROWID`,
    `CREATE INDEX IF NOT EXISTS column_dependencies_upstream ON column_dependencies (depends_on_seq)`,
    `CREATE TABLE IF NOT EXISTS rows (
       row_index INTEGER PRIMARY KEY,
       source_operation TEXT,
       created_at INTEGER NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS cells (
       row_index INTEGER NOT NULL,
       column_seq INTEGER NOT NULL,
       status TEXT NOT NULL,
       display_value TEXT,
       value TEXT,
       error TEXT,
       input_hash TEXT,
       execution_id TEXT,
       last_computed_version INTEGER,
       updated_at INTEGER NOT NULL,
       PRIMARY KEY (row_index, column_seq)) WITHOUT ROWID`,
    // Recalculation looks for work by status; text cells (COMPLETED) stay out of this index.
    `CREATE INDEX IF NOT EXISTS cells_pending ON cells (status, column_seq) WHERE status <> 'COMPLETED'`,
    `CREATE TABLE IF NOT EXISTS import_batches (
       operation_id TEXT NOT NULL,
       batch INTEGER NOT NULL,
       first_row INTEGER NOT NULL,
       row_count INTEGER NOT NULL,
       version INTEGER NOT NULL,
       PRIMARY KEY (operation_id, batch)) WITHOUT ROWID`,
    `CREATE TABLE IF NOT EXISTS import_columns (
       operation_id TEXT NOT NULL,
       position INTEGER NOT NULL,
       column_seq INTEGER NOT NULL,
       PRIMARY KEY (operation_id, position)) WITHOUT ROWID`,
  ],
  [
    // One row per recalculation request (an "operation"; its id is also the execution id cells carry).
    // Finished cells are counted here, since a cell later recalculated again leaves for another execution.
    `CREATE TABLE IF NOT EXISTS executions (
       id TEXT PRIMARY KEY,
       operation TEXT NOT NULL,
       cell_count INTEGER NOT NULL,
       completed_count INTEGER NOT NULL DEFAULT 0,
       failed_count INTEGER NOT NULL DEFAULT 0,
       reused_count INTEGER NOT NULL DEFAULT 0,
       version INTEGER NOT NULL,
       started_at INTEGER,
       cancelled_at INTEGER,
       created_at INTEGER NOT NULL,
       updated_at INTEGER NOT NULL)`,
  ],
  [
    // Column-wide work on a large sheet, done a range of rows at a time (column-work.ts).
    `CREATE TABLE IF NOT EXISTS column_work (
       id INTEGER PRIMARY KEY AUTOINCREMENT,
       kind TEXT NOT NULL,
       column_seqs TEXT NOT NULL,
       next_row INTEGER NOT NULL,
       end_row INTEGER NOT NULL,
       created_at INTEGER NOT NULL)`,
  ],
  [
    // Saved versions (versions.ts). A snapshot record belongs to saved versions [from_v, to_v); an
    // open one (to_v NULL) is still the sheet's as of the latest saved version.
    `CREATE TABLE IF NOT EXISTS saved_versions (
       number INTEGER PRIMARY KEY,
       id TEXT NOT NULL UNIQUE,
       name TEXT,
       created_by TEXT,
       created_at INTEGER NOT NULL,
       sheet_version INTEGER NOT NULL,
       metadata TEXT NOT NULL,
       deltas TEXT NOT NULL,
       score_configuration TEXT)`,
    `CREATE INDEX IF NOT EXISTS saved_versions_sheet_version ON saved_versions (sheet_version)`,
    `CREATE TABLE IF NOT EXISTS snap_columns (
       seq INTEGER NOT NULL,
       id TEXT NOT NULL,
       title TEXT NOT NULL,
       type TEXT NOT NULL,
       config TEXT NOT NULL,
       position_rank REAL NOT NULL,
       is_output_column INTEGER NOT NULL,
       created_at INTEGER NOT NULL,
       from_v INTEGER NOT NULL,
       to_v INTEGER,
       PRIMARY KEY (seq, from_v))`,
    `CREATE TABLE IF NOT EXISTS snap_dependencies (
       column_seq INTEGER NOT NULL,
       depends_on_seq INTEGER NOT NULL,
       reference_type TEXT NOT NULL,
       config_key TEXT,
       from_v INTEGER NOT NULL,
       to_v INTEGER,
       PRIMARY KEY (column_seq, depends_on_seq, reference_type, from_v)) WITHOUT ROWID`,
    `CREATE TABLE IF NOT EXISTS snap_rows (
       row_index INTEGER NOT NULL,
       source_operation TEXT,
       created_at INTEGER NOT NULL,
       from_v INTEGER NOT NULL,
       to_v INTEGER,
       PRIMARY KEY (row_index, from_v)) WITHOUT ROWID`,
    `CREATE UNIQUE INDEX IF NOT EXISTS snap_rows_open ON snap_rows (row_index) WHERE to_v IS NULL`,
    `CREATE TABLE IF NOT EXISTS snap_cells (
       row_index INTEGER NOT NULL,
       column_seq INTEGER NOT NULL,
       status TEXT NOT NULL,
       display_value TEXT,
       value TEXT,
       error TEXT,
       input_hash TEXT,
       last_computed_version INTEGER,
       updated_at INTEGER NOT NULL,
       from_v INTEGER NOT NULL,
       to_v INTEGER)`,
    `CREATE INDEX IF NOT EXISTS snap_cells_at ON snap_cells (row_index, column_seq, from_v)`,
    `CREATE UNIQUE INDEX IF NOT EXISTS snap_cells_open ON snap_cells (row_index, column_seq) WHERE to_v IS NULL`,
    `CREATE INDEX IF NOT EXISTS snap_cells_closed ON snap_cells (to_v) WHERE to_v IS NOT NULL`,
  ],
  [
    // The sheet's score (score.ts): its configuration (one row, key 'current') and its calculations,
    // the completed ones being the score history.
    `CREATE TABLE IF NOT EXISTS score_settings (key TEXT PRIMARY KEY, config TEXT NOT NULL, updated_at INTEGER NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS score_calculations (
       id TEXT PRIMARY KEY,
       config_id TEXT NOT NULL,
       status TEXT NOT NULL,
       sheet_version INTEGER NOT NULL,
       next_row INTEGER NOT NULL,
       end_row INTEGER NOT NULL,
       state TEXT,
       result TEXT,
       error TEXT,
       created_at INTEGER NOT NULL,
       started_at INTEGER,
       completed_at INTEGER)`,
    `CREATE INDEX IF NOT EXISTS score_calculations_open ON score_calculations (created_at) WHERE status IN ('queued', 'running')`,
    `CREATE INDEX IF NOT EXISTS score_calculations_done ON score_calculations (sheet_version, completed_at) WHERE status = 'completed'`,
    `CREATE INDEX IF NOT EXISTS score_calculations_config ON score_calculations (config_id, created_at)`,
  ],
  [
    // Scorecards (scorecard/storage.ts): the active one has deleted_at NULL; its steps and aggregation are JSON.
    `CREATE TABLE IF NOT EXISTS scorecards (
       id TEXT PRIMARY KEY,
       name TEXT NOT NULL,
       evaluated_column_ids TEXT NOT NULL,
       aggregation TEXT NOT NULL,
       display_config TEXT,
       baseline_config TEXT,
       steps TEXT NOT NULL,
       config_hash TEXT NOT NULL,
       created_at INTEGER NOT NULL,
       updated_at INTEGER NOT NULL,
       deleted_at INTEGER)`,
    `CREATE TABLE IF NOT EXISTS scorecard_calculations (
       id TEXT PRIMARY KEY,
       scorecard_id TEXT NOT NULL,
       status TEXT NOT NULL,
       sheet_revision INTEGER NOT NULL,
       config_hash TEXT NOT NULL,
       rows_filter TEXT,
       steps_filter TEXT,
       previous_id TEXT,
       next_row INTEGER NOT NULL,
       state TEXT,
       summary TEXT,
       error_summary TEXT,
       created_at INTEGER NOT NULL,
       started_at INTEGER,
       completed_at INTEGER)`,
    `CREATE INDEX IF NOT EXISTS scorecard_calculations_open ON scorecard_calculations (created_at) WHERE status IN ('queued', 'running')`,
    `CREATE INDEX IF NOT EXISTS scorecard_calculations_of ON scorecard_calculations (scorecard_id, created_at)`,
    `CREATE TABLE IF NOT EXISTS scorecard_rows (
       calculation_id TEXT NOT NULL,
       row_index INTEGER NOT NULL,
       aggregate_score REAL,
       verdict TEXT NOT NULL,
       result TEXT NOT NULL,
       computed_at INTEGER NOT NULL,
       PRIMARY KEY (calculation_id, row_index))`,
    `CREATE INDEX IF NOT EXISTS scorecard_rows_verdict ON scorecard_rows (calculation_id, verdict, row_index)`,
  ],
];

/** Import cells: a string, or [display_value, value_json] for structured values; nulls are skipped. */
export const INSERT_IMPORT_CELLS = `
  INSERT INTO cells (row_index, column_seq, status, display_value, value, updated_at)
  SELECT ?1 + r.key, m.column_seq, 'COMPLETED',
         CASE c.type WHEN 'array' THEN c.value ->> 0 ELSE c.value END,
         CASE c.type WHEN 'array' THEN c.value ->> 1 END,
         ?2
  FROM json_each(?3) AS r
  JOIN json_each(r.value) AS c
  JOIN import_columns AS m ON m.operation_id = ?4 AND m.position = c.key
  JOIN columns AS col ON col.seq = m.column_seq
  WHERE c.type <> 'null'`;

/** The object's SQLite with the sheet's counters (sheet_meta) and identity (sheet_identity). */
export class SheetStore {
  readonly sql: SqlStorage;

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS sheet_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`);
    this.sql.exec(
      `INSERT OR IGNORE INTO sheet_meta (key, value) VALUES ('version', 0), ('row_count', 0), ('next_row_index', 0), ('deleted', 0), ('schema_version', 0)`,
    );
    this.migrate();
  }

  private migrate(): void {
    const at = this.meta("schema_version");
    if (at >= MIGRATIONS.length) return;
    this.storage.transactionSync(() => {
      for (let i = at; i < MIGRATIONS.length; i++) for (const stmt of MIGRATIONS[i]) this.sql.exec(stmt);
      this.setMeta("schema_version", MIGRATIONS.length);
    });
  }

  meta(key: string): number {
    return this.sql.exec<{ value: number }>(`SELECT value FROM sheet_meta WHERE key = ?`, key).one().value;
  }

  setMeta(key: string, value: number): void {
    this.sql.exec(`UPDATE sheet_meta SET value = ? WHERE key = ?`, value, key);
  }

  /** Bumps and returns the version; call it once inside each mutation's transaction. */
  bumpVersion(): number {
    return this.sql.exec<{ value: number }>(`UPDATE sheet_meta SET value = value + 1 WHERE key = 'version' RETURNING value`).one().value;
  }

  /** Rows changed by the last INSERT, UPDATE or DELETE. */
  changes(): number {
    return this.sql.exec<{ n: number }>(`SELECT changes() AS n`).one().n;
  }

  identity(): SheetIdentity | null {
    const rows = this.sql.exec<{ key: string; value: string }>(`SELECT key, value FROM sheet_identity`).toArray();
    const m = Object.fromEntries(rows.map((r) => [r.key, r.value]));
    if (!m.sheet_id) return null;
    return { sheetId: m.sheet_id, tableId: m.table_id, workspaceId: Number(m.workspace_id) };
  }

  setIdentity(identity: SheetIdentity): void {
    this.sql.exec(
      `INSERT INTO sheet_identity (key, value) VALUES ('sheet_id', ?), ('table_id', ?), ('workspace_id', ?)`,
      identity.sheetId,
      identity.tableId,
      String(identity.workspaceId),
    );
  }
}
