// One SQLite-backed Durable Object per smart-table sheet: the single writer of that sheet's columns,
// rows, cells and version, so edits are serialized without D1 transactions. After each committed
// change it copies the sheet's listing fields (row_count, version_count) to D1.
//
// Storage (the object's own SQLite; `MIGRATIONS` below is the schema, applied in order):
//   sheet_meta(key, value INTEGER)   version, row_count, next_row_index, deleted, schema_version
//   sheet_identity(key, value TEXT)  sheet_id, table_id, workspace_id (set once by init)
//   columns        seq (internal key), id (uuid), title, type ('TEXT' or a block type), config (JSON),
//                  position_rank, is_output_column
//   column_dependencies  column_seq depends on depends_on_seq (the column graph; issue 6 walks it)
//   rows           row_index (0-based, sequential, never reused), source_operation
//   cells          (row_index, column_seq) → status, display_value, value, error, input_hash,
//                  execution_id, last_computed_version. A cell's id is derived (cell-id.ts), not stored.
//                  Text cells are stored only when they hold a value; non-text cells always (they
//                  carry a status). `value` is JSON; NULL means "the same as display_value".
//   import_batches (operation_id, batch) → the rows that batch appended: what makes a redelivered
//                  import batch a no-op. import_columns maps an import's column positions to columns.
// Every mutation runs in one transactionSync and bumps `version` by exactly 1.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { cellId, columnPrefix, MAX_ROW_INDEX, parseCellId } from "./cell-id";
import { promptRefsOf } from "./prompt-refs";

/**
 * A parsed JSON value, typed loosely on purpose: the RPC stub's types make a method returning
 * `unknown` unusable and recurse too deep on a recursive JSON type.
 */
export type JsonValue = string | number | boolean | null | object;

export const CELL_STATUSES = ["STALE", "QUEUED", "RUNNING", "COMPLETED", "FAILED"] as const;
export type CellStatus = (typeof CELL_STATUSES)[number];

export interface SheetIdentity {
  sheetId: string;
  tableId: string;
  workspaceId: number;
}

export interface SheetStats {
  rowCount: number;
  versionCount: number;
  columnCount: number;
  deleted: boolean;
}

export interface ColumnView {
  id: string;
  sheet_id: string;
  workspace_id: number;
  title: string;
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  config: object;
  dependencies: { column_id: string; reference_type: string; config_key: string | null }[];
  position_rank: number;
  is_output_column: boolean;
}

export interface CellView {
  id: string;
  sheet_id: string;
  column_id: string;
  row_index: number;
  status: CellStatus;
  display_value: string | null;
  value: JsonValue;
  error: string | null;
  input_hash: string | null;
  execution_id: string | null;
  last_computed_version: number | null;
  updated_at: string;
}

export interface RowView {
  row_index: number;
  cells: Record<string, CellView>;
}

export interface NewColumn {
  title: string;
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  config?: Record<string, any>;
  /** Ids of the columns this one reads (issue 6 validates the graph). */
  dependencies?: { column_id: string; reference_type?: string; config_key?: string | null }[];
  is_output_column?: boolean;
}

export interface ImportBatchInput {
  operationId: string;
  /** 0-based; batches of one import must arrive in order (a repeat of a committed batch is a no-op). */
  batch: number;
  /** How many rows of this import come before this batch: a batch that does not continue exactly where the last one ended is refused. */
  firstRow: number;
  /** Titles of every column the import has seen so far, by position; only ever grows. */
  columns: string[];
  /**
   * JSON array of rows; each row an array aligned with `columns` (shorter rows leave the rest empty),
   * each cell null (empty), a string (a text value), or [display_value, value_json].
   */
  rowsJson: string;
}

export type ImportBatchResult =
  | { ok: true; duplicate: boolean; rowsAdded: number; rowsImported: number; batchesCommitted: number; rowCount: number; version: number }
  | { ok: false; reason: "deleted" | "out_of_order" | "not_initialized" | "too_many_rows"; expectedBatch?: number };

export interface ImportProgress {
  batchesCommitted: number;
  rowsImported: number;
  rowCount: number;
  version: number;
}

const MIGRATIONS: string[][] = [
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
];

/** Import cells: a string, or [display_value, value_json] for structured values; nulls are skipped. */
const INSERT_IMPORT_CELLS = `
  INSERT INTO cells (row_index, column_seq, status, display_value, value, updated_at)
  SELECT ?1 + r.key, m.column_seq, 'COMPLETED',
         CASE c.type WHEN 'array' THEN c.value ->> 0 ELSE c.value END,
         CASE c.type WHEN 'array' THEN c.value ->> 1 END,
         ?2
  FROM json_each(?3) AS r
  JOIN json_each(r.value) AS c
  JOIN import_columns AS m ON m.operation_id = ?4 AND m.position = c.key
  WHERE c.type <> 'null'`;

const toIso = (ms: number) => new Date(ms).toISOString();

/** 1 → "A", 27 → "AA": spreadsheet-style names for columns without a title. */
export function columnLetters(n: number): string {
  let s = "";
  for (let k = n; k > 0; k = Math.floor((k - 1) / 26)) s = String.fromCharCode(65 + ((k - 1) % 26)) + s;
  return s;
}

export class SheetObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS sheet_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`);
    this.sql.exec(
      `INSERT OR IGNORE INTO sheet_meta (key, value) VALUES ('version', 0), ('row_count', 0), ('next_row_index', 0), ('deleted', 0), ('schema_version', 0)`,
    );
    this.migrate();
  }

  private migrate(): void {
    const at = this.meta("schema_version");
    if (at >= MIGRATIONS.length) return;
    this.ctx.storage.transactionSync(() => {
      for (let i = at; i < MIGRATIONS.length; i++) for (const stmt of MIGRATIONS[i]) this.sql.exec(stmt);
      this.setMeta("schema_version", MIGRATIONS.length);
    });
  }

  private meta(key: string): number {
    return this.sql.exec<{ value: number }>(`SELECT value FROM sheet_meta WHERE key = ?`, key).one().value;
  }

  private setMeta(key: string, value: number): void {
    this.sql.exec(`UPDATE sheet_meta SET value = ? WHERE key = ?`, value, key);
  }

  /** The sheet's current version: 0 for a new sheet, +1 on every committed mutation. */
  version(): number {
    return this.meta("version");
  }

  /** Bumps and returns the version; call it once inside each mutation's transaction. */
  protected bumpVersion(): number {
    return this.sql.exec<{ value: number }>(`UPDATE sheet_meta SET value = value + 1 WHERE key = 'version' RETURNING value`).one().value;
  }

  protected identity(): SheetIdentity | null {
    const rows = this.sql.exec<{ key: string; value: string }>(`SELECT key, value FROM sheet_identity`).toArray();
    const m = Object.fromEntries(rows.map((r) => [r.key, r.value]));
    if (!m.sheet_id) return null;
    return { sheetId: m.sheet_id, tableId: m.table_id, workspaceId: Number(m.workspace_id) };
  }

  private requireIdentity(): SheetIdentity {
    const id = this.identity();
    if (!id) throw new Error("sheet object used before init()");
    return id;
  }

  /**
   * Binds the object to its D1 sheet, once; with `scaffold`, a blank sheet gets a TEXT column
   * "Column A" and one empty row (version 1). Repeating the call changes nothing.
   */
  init(identity: SheetIdentity, opts: { scaffold?: boolean } = {}): SheetStats {
    if (!this.identity()) {
      this.ctx.storage.transactionSync(() => {
        this.sql.exec(
          `INSERT INTO sheet_identity (key, value) VALUES ('sheet_id', ?), ('table_id', ?), ('workspace_id', ?)`,
          identity.sheetId,
          identity.tableId,
          String(identity.workspaceId),
        );
        if (opts.scaffold) {
          const now = Date.now();
          this.insertColumn({ title: "Column A", type: "TEXT" }, now);
          this.appendRows(1, null, now);
          this.bumpVersion();
        }
      });
    }
    return this.stats();
  }

  stats(): SheetStats {
    return {
      rowCount: this.meta("row_count"),
      versionCount: this.meta("version"),
      columnCount: this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM columns`).one().n,
      deleted: this.meta("deleted") === 1,
    };
  }

  /** A deleted sheet refuses further writes (a running import stops at its next batch). */
  markDeleted(): void {
    this.setMeta("deleted", 1);
  }

  /**
   * Copies row_count and version_count to the D1 sheet row. Guarded by the version so a late copy
   * never overwrites a newer one. A failure is logged, not thrown: the change is committed here, and
   * the next change (or the import's end) copies again.
   */
  async syncListing(): Promise<void> {
    const id = this.identity();
    if (!id) return;
    const version = this.meta("version");
    const rowCount = this.meta("row_count");
    try {
      await this.env.DB.prepare(
        `UPDATE sheets SET row_count = ?1, version_count = ?2, updated_at = ?3 WHERE id = ?4 AND version_count < ?2`,
      )
        .bind(rowCount, version, Date.now(), id.sheetId)
        .run();
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "sheet listing sync failed", sheet_id: id.sheetId, error: String(err) }));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Columns

  private columnRows() {
    return this.sql
      .exec<{ seq: number; id: string; title: string; type: string; config: string; position_rank: number; is_output_column: number }>(
        `SELECT seq, id, title, type, config, position_rank, is_output_column FROM columns ORDER BY position_rank, seq`,
      )
      .toArray();
  }

  listColumns(): ColumnView[] {
    const id = this.requireIdentity();
    const cols = this.columnRows();
    const idBySeq = new Map(cols.map((c) => [c.seq, c.id]));
    const deps = this.sql
      .exec<{ column_seq: number; depends_on_seq: number; reference_type: string; config_key: string | null }>(
        `SELECT column_seq, depends_on_seq, reference_type, config_key FROM column_dependencies`,
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

  /** A title not yet used by a column of this sheet: "x", else "x (2)", "x (3)"… */
  private uniqueTitle(wanted: string, taken: Set<string>): string {
    let title = wanted;
    for (let n = 2; taken.has(title.toLowerCase()); n++) title = `${wanted} (${n})`;
    taken.add(title.toLowerCase());
    return title;
  }

  /** Inserts a column (in the caller's transaction) and the STALE cells a non-text column needs. */
  private insertColumn(col: NewColumn, now: number, taken?: Set<string>): { seq: number; id: string } {
    let id = crypto.randomUUID();
    // Cell ids keep the first 23 characters of the column id: they must differ between columns.
    while (this.sql.exec(`SELECT 1 FROM columns WHERE substr(id, 1, 23) = ?`, columnPrefix(id)).toArray().length > 0) {
      id = crypto.randomUUID();
    }
    const titles = taken ?? new Set(this.sql.exec<{ t: string }>(`SELECT lower(title) AS t FROM columns`).toArray().map((r) => r.t));
    const title = this.uniqueTitle(col.title, titles);
    const rank = this.sql.exec<{ r: number }>(`SELECT COALESCE(MAX(position_rank), 0) + 1 AS r FROM columns`).one().r;
    const seq = this.sql
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
      const upstream = this.sql.exec<{ seq: number }>(`SELECT seq FROM columns WHERE id = ?`, dep.column_id).toArray()[0];
      if (!upstream) throw new Error(`unknown dependency column ${dep.column_id}`);
      this.sql.exec(
        `INSERT OR IGNORE INTO column_dependencies (column_seq, depends_on_seq, reference_type, config_key) VALUES (?, ?, ?, ?)`,
        seq,
        upstream.seq,
        dep.reference_type ?? "value",
        dep.config_key ?? null,
      );
    }
    if (col.type !== "TEXT") {
      this.sql.exec(`INSERT INTO cells (row_index, column_seq, status, updated_at) SELECT row_index, ?, 'STALE', ? FROM rows`, seq, now);
    }
    return { seq, id };
  }

  /**
   * Adds a column at the end: the storage half of Create Column. Validation of the type's config
   * and of the column graph is the column engine's (issue 6); this stores, creates the cells and
   * publishes the column's prompt references to D1.
   */
  async addColumn(col: NewColumn): Promise<{ column: ColumnView; version: number }> {
    const ident = this.requireIdentity();
    if (this.meta("deleted") === 1) throw new Error("sheet is deleted");
    const now = Date.now();
    const { id, version } = this.ctx.storage.transactionSync(() => {
      const { id } = this.insertColumn(col, now);
      return { id, version: this.bumpVersion() };
    });
    await this.syncPromptRefs(ident, id, col.type, col.config ?? {});
    await this.syncListing();
    return { column: this.listColumns().find((c) => c.id === id)!, version };
  }

  /** Replaces a column's rows in D1's sheet_prompt_refs (call after any change of its type or config). */
  protected async syncPromptRefs(ident: SheetIdentity, columnId: string, type: string, config: unknown): Promise<void> {
    const refs = promptRefsOf(type, config);
    const stmts = [this.env.DB.prepare(`DELETE FROM sheet_prompt_refs WHERE sheet_id = ? AND column_id = ?`).bind(ident.sheetId, columnId)];
    for (const r of refs) {
      stmts.push(
        this.env.DB.prepare(
          `INSERT INTO sheet_prompt_refs (workspace_id, table_id, sheet_id, column_id, prompt_id, prompt_version_id, prompt_label_id)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).bind(ident.workspaceId, ident.tableId, ident.sheetId, columnId, r.promptId, r.promptVersionId, r.promptLabelId),
      );
    }
    await this.env.DB.batch(stmts);
  }

  // ---------------------------------------------------------------------------------------------
  // Rows and cells

  /**
   * Appends `count` empty rows (in the caller's transaction): text cells stay absent (empty), every
   * non-text column gets a STALE cell. Returns the first new row index.
   */
  protected appendRows(count: number, sourceOperation: string | null, now: number): number {
    const base = this.meta("next_row_index");
    this.sql.exec(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
       INSERT INTO rows (row_index, source_operation, created_at) SELECT ? + i, ?, ? FROM n`,
      count,
      base,
      sourceOperation,
      now,
    );
    this.insertStaleCells(base, count, null, now);
    this.setMeta("next_row_index", base + count);
    this.setMeta("row_count", this.meta("row_count") + count);
    return base;
  }

  /** STALE cells for rows [base, base+count) in every non-text column (except `skipOperation`'s import columns). */
  private insertStaleCells(base: number, count: number, skipOperation: string | null, now: number): void {
    this.sql.exec(
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

  private cellView(
    ident: SheetIdentity,
    col: { seq: number; id: string; type: string },
    rowIndex: number,
    stored: StoredCell | undefined,
    rowCreatedAt: number,
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
      status: stored.status as CellStatus,
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
  readRows(opts: { after?: number | null; limit: number; order?: "asc" | "desc" }): {
    rows: RowView[];
    rowCount: number;
    version: number;
    hasMore: boolean;
  } {
    const ident = this.requireIdentity();
    const desc = opts.order === "desc";
    const after = opts.after ?? (desc ? MAX_ROW_INDEX + 1 : -1);
    const rows = this.sql
      .exec<{ row_index: number; created_at: number }>(
        `SELECT row_index, created_at FROM rows WHERE row_index ${desc ? "<" : ">"} ? ORDER BY row_index ${desc ? "DESC" : "ASC"} LIMIT ?`,
        after,
        opts.limit + 1,
      )
      .toArray();
    const hasMore = rows.length > opts.limit;
    const page = rows.slice(0, opts.limit);
    const cols = this.columnRows();
    const views: RowView[] = [];
    if (page.length > 0) {
      const lo = Math.min(page[0].row_index, page[page.length - 1].row_index);
      const hi = Math.max(page[0].row_index, page[page.length - 1].row_index);
      const stored = new Map<string, StoredCell>();
      for (const c of this.sql.exec<StoredCell>(`SELECT * FROM cells WHERE row_index BETWEEN ? AND ?`, lo, hi)) {
        stored.set(`${c.row_index}:${c.column_seq}`, c);
      }
      for (const r of page) {
        const cells: Record<string, CellView> = {};
        for (const col of cols) cells[col.id] = this.cellView(ident, col, r.row_index, stored.get(`${r.row_index}:${col.seq}`), r.created_at);
        views.push({ row_index: r.row_index, cells });
      }
    }
    return { rows: views, rowCount: this.meta("row_count"), version: this.meta("version"), hasMore };
  }

  /** One cell by its id, or null when no column and row of this sheet match it. */
  getCell(id: string): CellView | null {
    const ident = this.requireIdentity();
    const parsed = parseCellId(id);
    if (!parsed) return null;
    const col = this.sql
      .exec<{ seq: number; id: string; type: string }>(`SELECT seq, id, type FROM columns WHERE substr(id, 1, 23) = ?`, parsed.prefix)
      .toArray()[0];
    if (!col) return null;
    const rowIndex = parsed.rowIndexFor(col.id);
    const row = this.sql.exec<{ created_at: number }>(`SELECT created_at FROM rows WHERE row_index = ?`, rowIndex).toArray()[0];
    if (!row) return null;
    const stored = this.sql.exec<StoredCell>(`SELECT * FROM cells WHERE row_index = ? AND column_seq = ?`, rowIndex, col.seq).toArray()[0];
    return this.cellView(ident, col, rowIndex, stored, row.created_at);
  }

  // ---------------------------------------------------------------------------------------------
  // Imports

  importProgress(operationId: string): ImportProgress {
    const r = this.sql
      .exec<{ n: number; rows: number }>(
        `SELECT COUNT(*) AS n, COALESCE(SUM(row_count), 0) AS rows FROM import_batches WHERE operation_id = ?`,
        operationId,
      )
      .one();
    return { batchesCommitted: r.n, rowsImported: r.rows, rowCount: this.meta("row_count"), version: this.meta("version") };
  }

  /**
   * Appends one batch of an import, atomically, bumping the version once. Idempotent by
   * (operationId, batch): a batch already committed answers what it did then and writes nothing,
   * so a redelivered import never duplicates a row.
   */
  async appendImportBatch(input: ImportBatchInput): Promise<ImportBatchResult> {
    if (!this.identity()) return { ok: false, reason: "not_initialized" };
    const done = this.sql
      .exec<{ row_count: number; version: number }>(
        `SELECT row_count, version FROM import_batches WHERE operation_id = ? AND batch = ?`,
        input.operationId,
        input.batch,
      )
      .toArray()[0];
    if (done) {
      const before = this.sql
        .exec<{ n: number }>(`SELECT COALESCE(SUM(row_count), 0) AS n FROM import_batches WHERE operation_id = ? AND batch < ?`, input.operationId, input.batch)
        .one().n;
      const count = this.sql.exec<{ n: number }>(`SELECT json_array_length(?) AS n`, input.rowsJson).one().n;
      // The same batch number with other rows: two runs of one import disagree; the caller restarts.
      if (before !== input.firstRow || count !== done.row_count) return { ok: false, reason: "out_of_order", expectedBatch: this.importProgress(input.operationId).batchesCommitted };
      const p = this.importProgress(input.operationId);
      return { ok: true, duplicate: true, rowsAdded: done.row_count, rowsImported: p.rowsImported, batchesCommitted: p.batchesCommitted, rowCount: p.rowCount, version: done.version };
    }
    if (this.meta("deleted") === 1) return { ok: false, reason: "deleted" };
    const progress = this.importProgress(input.operationId);
    if (input.batch !== progress.batchesCommitted || input.firstRow !== progress.rowsImported) {
      return { ok: false, reason: "out_of_order", expectedBatch: progress.batchesCommitted };
    }
    const count = this.sql.exec<{ n: number }>(`SELECT json_array_length(?) AS n`, input.rowsJson).one().n;
    if (this.meta("next_row_index") + count > MAX_ROW_INDEX) return { ok: false, reason: "too_many_rows" };

    const now = Date.now();
    const version = this.ctx.storage.transactionSync(() => {
      this.ensureImportColumns(input.operationId, input.columns, now);
      const base = this.meta("next_row_index");
      this.sql.exec(
        `INSERT INTO rows (row_index, source_operation, created_at) SELECT ? + key, ?, ? FROM json_each(?)`,
        base,
        input.operationId,
        now,
        input.rowsJson,
      );
      this.sql.exec(INSERT_IMPORT_CELLS, base, now, input.rowsJson, input.operationId);
      this.insertStaleCells(base, count, input.operationId, now);
      this.setMeta("next_row_index", base + count);
      this.setMeta("row_count", this.meta("row_count") + count);
      const version = this.bumpVersion();
      this.sql.exec(
        `INSERT INTO import_batches (operation_id, batch, first_row, row_count, version) VALUES (?, ?, ?, ?, ?)`,
        input.operationId,
        input.batch,
        base,
        count,
        version,
      );
      return version;
    });
    await this.syncListing();
    const p = this.importProgress(input.operationId);
    return { ok: true, duplicate: false, rowsAdded: count, rowsImported: p.rowsImported, batchesCommitted: p.batchesCommitted, rowCount: p.rowCount, version };
  }

  /** Creates TEXT columns for import positions not mapped yet (a JSON import finds keys as it goes). */
  private ensureImportColumns(operationId: string, titles: string[], now: number): void {
    const known = this.sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM import_columns WHERE operation_id = ?`, operationId)
      .one().n;
    if (known >= titles.length) return;
    const taken = new Set(this.sql.exec<{ t: string }>(`SELECT lower(title) AS t FROM columns`).toArray().map((r) => r.t));
    for (let pos = known; pos < titles.length; pos++) {
      const wanted = titles[pos].trim() === "" ? `Column ${columnLetters(pos + 1)}` : titles[pos];
      const { seq } = this.insertColumn({ title: wanted, type: "TEXT" }, now, taken);
      this.sql.exec(`INSERT INTO import_columns (operation_id, position, column_seq) VALUES (?, ?, ?)`, operationId, pos, seq);
    }
  }
}

interface StoredCell {
  row_index: number;
  column_seq: number;
  status: string;
  display_value: string | null;
  value: string | null;
  error: string | null;
  input_hash: string | null;
  execution_id: string | null;
  last_computed_version: number | null;
  updated_at: number;
  [key: string]: SqlStorageValue;
}
