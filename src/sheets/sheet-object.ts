// One SQLite-backed Durable Object per smart-table sheet: the single writer of that sheet's columns,
// rows, cells and version, so edits are serialized without D1 transactions. This class is its RPC
// surface: admission (each call names its workspace and table), the transactions of each change, and
// the alarm that runs recalculations. Its parts live beside it: storage.ts (the object's SQLite
// schema, counters, identity), recalculation.ts (what one cell computes to), listing.ts (what it
// writes back to D1), types.ts (what its methods take and answer), stale-graph.ts (the column graph).
// Every mutation runs in one transactionSync and bumps `version` by exactly 1.
import { DurableObject } from "cloudflare:workers";
import { blockSources, COMPUTING_BLOCK_TYPES, validateBlockConfig } from "../blocks";
import { buildBaseDeps, type BaseDeps, type BaseEnv } from "../base-deps";
import { cellId, columnPrefix, MAX_ROW_INDEX, parseCellId } from "./cell-id";
import { MAX_CELL_BYTES, storeEdit, storedBytes, storeValue, utf8Bytes, type StoredValue } from "./cell-values";
import { replacePromptRefs, syncListing } from "./listing";
import { promptRefsOf } from "./prompt-refs";
import { computeCell } from "./recalculation";
import { ColumnGraph } from "./stale-graph";
import { INSERT_IMPORT_CELLS, SheetStore } from "./storage";
import {
  ALARM_BATCH_CELLS,
  CELL_STATUSES,
  CHUNK_CELLS,
  EVAL_CONCURRENCY,
  fail,
  MAX_COLUMNS,
  MAX_CONFIG_BYTES,
  ROWS_PAGE_BYTES,
  SOURCE_EDGE,
  SYNC_DELAY_MS,
  type CellStatus,
  type CellView,
  type ColumnView,
  type CreateColumnInput,
  type DependencyInput,
  type ExecutionRow,
  type Fail,
  type ImportBatchInput,
  type ImportBatchResult,
  type ImportProgress,
  type JsonValue,
  type ModelColumn,
  type NewColumn,
  type Outcome,
  type PlannedEdge,
  type RecalcSelection,
  type RecalcStarted,
  type Result,
  type RowView,
  type SheetAccess,
  type SheetIdentity,
  type SheetModel,
  type SheetOperationsSummary,
  type SheetOperationView,
  type SheetStats,
  type StoredCell,
  type UpdateColumnInput,
} from "./types";

const toIso = (ms: number) => new Date(ms).toISOString();

/** 1 → "A", 27 → "AA": spreadsheet-style names for columns without a title. */
export function columnLetters(n: number): string {
  let s = "";
  for (let k = n; k > 0; k = Math.floor((k - 1) / 26)) s = String.fromCharCode(65 + ((k - 1) % 26)) + s;
  return s;
}


export class SheetObject extends DurableObject<BaseEnv> {
  private readonly store: SheetStore;
  /** The database and blocks' context, built once per object from the bindings it reads. */
  private readonly deps: BaseDeps;
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: BaseEnv) {
    super(ctx, env);
    this.store = new SheetStore(ctx.storage);
    this.sql = this.store.sql;
    this.deps = buildBaseDeps(env);
    // Recalculation survives eviction: queued work found on wake-up gets its alarm back if it was lost.
    void ctx.blockConcurrencyWhile(async () => {
      if (this.meta("deleted") === 0 && this.hasPendingCells() && (await ctx.storage.getAlarm()) === null) await ctx.storage.setAlarm(Date.now());
    });
  }

  private meta(key: string): number {
    return this.store.meta(key);
  }

  private setMeta(key: string, value: number): void {
    this.store.setMeta(key, value);
  }

  /** The sheet's current version: 0 for a new sheet, +1 on every committed mutation. */
  version(): number {
    return this.meta("version");
  }

  /** Bumps and returns the version; call it once inside each mutation's transaction. */
  protected bumpVersion(): number {
    return this.store.bumpVersion();
  }

  protected identity(): SheetIdentity | null {
    return this.store.identity();
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
        this.store.setIdentity(identity);
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

  /** Copies the listing fields to D1 (listing.ts); a failure is logged and the next change copies again. */
  async syncListing(): Promise<void> {
    const id = this.identity();
    if (!id) return;
    await syncListing(this.deps.db, id.sheetId, { rowCount: this.meta("row_count"), version: this.meta("version") });
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

  /** A title not yet used by a column of this sheet: "x", else "x (2)", "x (3)"… */
  private uniqueTitle(wanted: string, taken: Set<string>): string {
    let title = wanted;
    for (let n = 2; taken.has(title.toLowerCase()); n++) title = `${wanted} (${n})`;
    taken.add(title.toLowerCase());
    return title;
  }

  /** Inserts a column (in the caller's transaction) and the STALE cells a non-text column needs. */
  private insertColumn(col: NewColumn, now: number, taken?: Set<string>): { seq: number; id: string } {
    this.modelCache = null;
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
   * and of the column graph is the column engine's; this stores, creates the cells and
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
    await replacePromptRefs(this.deps.db, ident, columnId, promptRefsOf(type, config));
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
    let hasMore = rows.length > opts.limit;
    let page = rows.slice(0, opts.limit);
    if (page.length > 1) {
      // A page stops early once its cells hold ROWS_PAGE_BYTES: 100 rows of large cells would not fit in memory (or one RPC answer).
      const lo = Math.min(page[0].row_index, page[page.length - 1].row_index);
      const hi = Math.max(page[0].row_index, page[page.length - 1].row_index);
      const bytes = new Map<number, number>();
      for (const r of this.sql.exec<{ row_index: number; n: number }>(
        `SELECT row_index, SUM(COALESCE(length(CAST(display_value AS BLOB)), 0) + COALESCE(length(CAST(value AS BLOB)), 0) + COALESCE(length(CAST(error AS BLOB)), 0)) AS n
         FROM cells WHERE row_index BETWEEN ? AND ? GROUP BY row_index`,
        lo,
        hi,
      )) {
        bytes.set(r.row_index, r.n);
      }
      let total = 0;
      for (let i = 0; i < page.length; i++) {
        total += bytes.get(page[i].row_index) ?? 0;
        if (total > ROWS_PAGE_BYTES && i > 0) {
          page = page.slice(0, i);
          hasMore = true;
          break;
        }
      }
    }
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

  /** One column's cells of the first `limit` rows (reading only that column, not whole rows). */
  private columnCells(columnId: string, limit: number): CellView[] {
    const ident = this.requireIdentity();
    const col = this.sql.exec<{ seq: number; id: string; type: string }>(`SELECT seq, id, type FROM columns WHERE id = ?`, columnId).one();
    const rows = this.sql.exec<{ row_index: number; created_at: number }>(`SELECT row_index, created_at FROM rows ORDER BY row_index LIMIT ?`, limit).toArray();
    if (rows.length === 0) return [];
    const stored = new Map<number, StoredCell>();
    for (const c of this.sql.exec<StoredCell>(
      `SELECT * FROM cells WHERE column_seq = ? AND row_index BETWEEN ? AND ?`,
      col.seq,
      rows[0].row_index,
      rows[rows.length - 1].row_index,
    )) {
      stored.set(c.row_index, c);
    }
    return rows.map((r) => this.cellView(ident, col, r.row_index, stored.get(r.row_index), r.created_at));
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
  // The column engine: the column graph (cached, rebuilt after any column change), computed columns
  // validated by the blocks' schemas, stale propagation and recalculation.

  private modelCache: SheetModel | null = null;

  private model(): SheetModel {
    if (this.modelCache) return this.modelCache;
    const cols = this.columnRows();
    const edges = this.sql
      .exec<{ column_seq: number; depends_on_seq: number; reference_type: string; config_key: string | null }>(
        `SELECT column_seq, depends_on_seq, reference_type, config_key FROM column_dependencies`,
      )
      .toArray();
    const list: ModelColumn[] = cols.map((c) => {
      const own = edges.filter((e) => e.column_seq === c.seq);
      return {
        seq: c.seq,
        id: c.id,
        title: c.title,
        type: c.type,
        config: JSON.parse(c.config) as Record<string, unknown>,
        computed: c.type !== "TEXT",
        upstream: [...new Set(own.map((e) => e.depends_on_seq))],
      };
    });
    const bySeq = new Map(list.map((c) => [c.seq, c]));
    const graph = new ColumnGraph(list.map((c) => ({ seq: c.seq, computed: c.computed, upstream: c.upstream.filter((u) => bySeq.has(u)) })));
    this.modelCache = { list, bySeq, byId: new Map(list.map((c) => [c.id, c])), graph, sourceReaders: edges.filter((e) => e.reference_type === SOURCE_EDGE) };
    return this.modelCache;
  }

  /** A dependency given by column id or, as PromptLayer's SDK sends it, by title. */
  private resolveColumn(m: SheetModel, ref: string): ModelColumn | undefined {
    return m.byId.get(ref.toLowerCase()) ?? m.list.find((c) => c.title === ref) ?? m.list.find((c) => c.title.toLowerCase() === ref.toLowerCase());
  }

  /**
   * Checks a column's type, config and dependencies against the blocks and this sheet's columns.
   * Returns the normalized config (defaults applied) and the edges to store, or the 400 to answer.
   */
  private planColumn(
    m: SheetModel,
    input: { type: string; config?: Record<string, unknown> | null; dependencies?: DependencyInput[] | null },
  ): { ok: true; config: Record<string, unknown>; edges: PlannedEdge[] } | Fail {
    const deps = input.dependencies ?? [];
    // Every column's config is held in memory by each call that reads the column graph.
    const configBytes = utf8Bytes(JSON.stringify(input.config ?? {}));
    if (configBytes > MAX_CONFIG_BYTES) return fail("payload_too_large", `config: takes ${configBytes} bytes; a column's config holds at most ${MAX_CONFIG_BYTES}`);
    if (input.type === "TEXT") {
      if (deps.length > 0) return fail("validation_error", "dependencies: a TEXT column reads no other column; its cells are edited");
      return { ok: true, config: input.config ?? {}, edges: [] };
    }
    const check = validateBlockConfig(input.type, input.config ?? {});
    if (!check.ok) {
      if (check.reason === "unknown_type") return fail("validation_error", `type: "${input.type}" is not a column type; use TEXT or one of ${COMPUTING_BLOCK_TYPES.join(", ")}`);
      if (check.reason === "unsupported") return fail("validation_error", `type: ${check.message}`);
      return fail("validation_error", check.issues.map((i) => `config${i.path ? `.${i.path}` : ""}: ${i.message}`).join("; "));
    }
    const edges: PlannedEdge[] = [];
    for (let i = 0; i < deps.length; i++) {
      const d = deps[i];
      const ref = typeof d === "string" ? d : d.column_id;
      const col = this.resolveColumn(m, ref);
      if (!col) return fail("validation_error", `dependencies[${i}]: no column with id or title ${JSON.stringify(ref)} in this sheet`);
      edges.push({ seq: col.seq, referenceType: typeof d === "string" ? "value" : (d.reference_type ?? "value"), configKey: typeof d === "string" ? null : (d.config_key ?? null) });
    }
    for (const name of blockSources(input.type, check.config)) {
      const col = m.list.find((c) => c.title === name);
      if (!col) return fail("validation_error", `config: reads ${JSON.stringify(name)}, which is not the title of a column of this sheet`);
      edges.push({ seq: col.seq, referenceType: SOURCE_EDGE, configKey: name });
    }
    return { ok: true, config: check.config, edges };
  }

  private cycleMessage(m: SheetModel, cycle: number[]): string {
    const names = cycle.map((s) => JSON.stringify(m.bySeq.get(s)?.title ?? "this column"));
    return `dependencies: would create a cycle: ${[...names, names[0]].join(" reads ")}`;
  }

  private storeEdges(seq: number, edges: PlannedEdge[]): void {
    this.sql.exec(`DELETE FROM column_dependencies WHERE column_seq = ?`, seq);
    for (const e of edges) {
      this.sql.exec(
        `INSERT OR IGNORE INTO column_dependencies (column_seq, depends_on_seq, reference_type, config_key) VALUES (?, ?, ?, ?)`,
        seq,
        e.seq,
        e.referenceType,
        e.configKey,
      );
    }
  }

  private changes(): number {
    return this.sql.exec<{ n: number }>(`SELECT changes() AS n`).one().n;
  }

  /** Marks the cells of `columns` STALE (in one row, or in all rows); returns how many were not stale before. */
  private markStale(columns: number[], now: number, rowIndex?: number): number {
    if (columns.length === 0) return 0;
    if (rowIndex === undefined) {
      this.sql.exec(
        `UPDATE cells SET status = 'STALE', updated_at = ? WHERE column_seq IN (SELECT value FROM json_each(?)) AND status <> 'STALE'`,
        now,
        JSON.stringify(columns),
      );
    } else {
      this.sql.exec(
        `UPDATE cells SET status = 'STALE', updated_at = ? WHERE row_index = ? AND column_seq IN (SELECT value FROM json_each(?)) AND status <> 'STALE'`,
        now,
        rowIndex,
        JSON.stringify(columns),
      );
    }
    return this.changes();
  }

  /**
   * The object's own check on every route-facing call: the caller's workspace and table must be this
   * sheet's, and the sheet not deleted (sheet and table deletion mark the object). The Worker has
   * already found the sheet in D1.
   */
  private admit(access: SheetAccess): Fail | null {
    const id = this.identity();
    if (!id || id.workspaceId !== access.workspaceId || id.tableId !== access.tableId || this.meta("deleted") === 1) {
      return fail("not_found", "sheet not found");
    }
    return null;
  }

  /**
   * Copies the listing fields to D1 off the caller's path, at most every SYNC_DELAY_MS: a burst of
   * edits shares one copy (and one more if edits came in meanwhile), so the edits do not queue
   * behind D1 writes; the copy is guarded by the version, so D1 ends at the latest version.
   */
  private syncSoon(): void {
    if (this.syncing) {
      this.syncAgain = true;
      return;
    }
    this.syncing = true;
    const run = async () => {
      try {
        do {
          this.syncAgain = false;
          await new Promise((r) => setTimeout(r, SYNC_DELAY_MS));
          await this.syncListing();
        } while (this.syncAgain);
      } finally {
        this.syncing = false;
      }
    };
    this.ctx.waitUntil(run());
  }

  private syncing = false;
  private syncAgain = false;

  // Reads for the routes, behind the same check.
  columnsFor(access: SheetAccess): Result<{ columns: ColumnView[] }> {
    return this.admit(access) ?? { ok: true, columns: this.listColumns() };
  }

  rowsFor(access: SheetAccess, opts: { after?: number | null; limit: number; order?: "asc" | "desc"; withColumns?: boolean }) {
    const bad = this.admit(access);
    if (bad) return bad;
    return { ok: true as const, ...this.readRows(opts), columns: opts.withColumns ? this.listColumns() : null };
  }

  cellFor(access: SheetAccess, id: string): Result<{ cell: CellView }> {
    const bad = this.admit(access);
    if (bad) return bad;
    const cell = this.getCell(id);
    return cell ? { ok: true, cell } : fail("not_found", "cell not found");
  }

  operationsFor(access: SheetAccess): Result<SheetOperationsSummary> {
    return this.admit(access) ?? { ok: true, ...this.listOperations() };
  }

  operationFor(access: SheetAccess, id: string): Result<{ operation: SheetOperationView }> {
    const bad = this.admit(access);
    if (bad) return bad;
    const operation = this.getOperation(id);
    return operation ? { ok: true, operation } : fail("not_found", "operation not found");
  }

  private columnView(id: string): ColumnView {
    return this.listColumns().find((c) => c.id === id)!;
  }

  /** Create Column: TEXT, or a computing block type whose config and dependencies are checked here. */
  async createColumn(access: SheetAccess, input: CreateColumnInput): Promise<Result<{ column: ColumnView; version: number; cells: CellView[]; stale_count: number }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const ident = this.requireIdentity();
    const m = this.model();
    if (m.list.length >= MAX_COLUMNS) return fail("validation_error", `sheet: has ${m.list.length} columns, the most a sheet holds; delete one first`);
    const plan = this.planColumn(m, input);
    if (!plan.ok) return plan;
    const now = Date.now();
    const { id, version, staleCount } = this.ctx.storage.transactionSync(() => {
      const { seq, id } = this.insertColumn({ title: input.title, type: input.type, config: plan.config, is_output_column: input.is_output_column ?? false }, now);
      this.storeEdges(seq, plan.edges);
      if (input.position_rank != null) this.sql.exec(`UPDATE columns SET position_rank = ? WHERE seq = ?`, input.position_rank, seq);
      const staleCount = input.type === "TEXT" ? 0 : this.meta("row_count");
      return { id, version: this.bumpVersion(), staleCount };
    });
    this.modelCache = null;
    await this.syncPromptRefs(ident, id, input.type, plan.config);
    await this.syncListing();
    return { ok: true, column: this.columnView(id), version, cells: this.columnCells(id, 100), stale_count: staleCount };
  }

  /**
   * Update Column: title, config, dependencies, is_output_column, position_rank. A change of config or
   * dependencies marks the column's own cells and every cell downstream STALE.
   */
  async updateColumn(
    access: SheetAccess,
    columnId: string,
    patch: UpdateColumnInput,
  ): Promise<Result<{ column: ColumnView; version: number; stale_count: number; requires_recalculation: boolean; affected_column_ids: string[] }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const ident = this.requireIdentity();
    const m = this.model();
    const col = m.byId.get(columnId);
    if (!col) return fail("not_found", "column not found");
    if (patch.type != null && patch.type !== col.type) return fail("validation_error", "type: cannot be changed; create a new column of the other type");
    if (patch.title != null && patch.title !== col.title) {
      const clash = m.list.find((c) => c.seq !== col.seq && c.title.toLowerCase() === patch.title!.toLowerCase());
      if (clash) return fail("conflict", `title: another column of this sheet is titled ${JSON.stringify(clash.title)}`);
      const readers = m.sourceReaders.filter((e) => e.depends_on_seq === col.seq && e.column_seq !== col.seq).map((e) => m.bySeq.get(e.column_seq)?.title);
      if (readers.length > 0) {
        return fail(
          "validation_error",
          `title: ${[...new Set(readers)].map((t) => JSON.stringify(t)).join(", ")} read this column by its title in their config; change their config first`,
        );
      }
    }
    const reconfigure = patch.config !== undefined || patch.dependencies !== undefined;
    let plan: { config: Record<string, unknown>; edges: PlannedEdge[] } | null = null;
    if (reconfigure) {
      const currentDeps = this.sql
        .exec<{ depends_on_seq: number; reference_type: string; config_key: string | null }>(
          `SELECT depends_on_seq, reference_type, config_key FROM column_dependencies WHERE column_seq = ? AND reference_type <> ?`,
          col.seq,
          SOURCE_EDGE,
        )
        .toArray()
        .filter((d) => m.bySeq.has(d.depends_on_seq))
        .map((d) => ({ column_id: m.bySeq.get(d.depends_on_seq)!.id, reference_type: d.reference_type, config_key: d.config_key }));
      const p = this.planColumn(m, {
        type: col.type,
        config: patch.config === undefined ? col.config : patch.config,
        dependencies: patch.dependencies === undefined ? currentDeps : patch.dependencies,
      });
      if (!p.ok) return p;
      const cycle = m.graph.cycleIf(col.seq, p.edges.map((e) => e.seq));
      if (cycle) return fail("validation_error", this.cycleMessage(m, cycle));
      plan = p;
    }
    // Nothing that would change (the same title, type, flag or rank): answered as is, no version spent.
    if (!plan) {
      const cur = this.sql.exec<{ position_rank: number; is_output_column: number }>(`SELECT position_rank, is_output_column FROM columns WHERE seq = ?`, col.seq).one();
      const changes =
        (patch.title != null && patch.title !== col.title) ||
        (patch.is_output_column != null && (patch.is_output_column ? 1 : 0) !== cur.is_output_column) ||
        (patch.position_rank != null && patch.position_rank !== cur.position_rank);
      if (!changes) {
        return { ok: true, column: this.columnView(col.id), version: this.meta("version"), stale_count: 0, requires_recalculation: false, affected_column_ids: [] };
      }
    }
    const now = Date.now();
    // A TEXT column's config is not read by anything: storing a new one stales nothing.
    const affected = plan && col.computed ? [col.seq, ...m.graph.downstream([col.seq])] : [];
    const { version, staleCount } = this.ctx.storage.transactionSync(() => {
      if (patch.title != null) this.sql.exec(`UPDATE columns SET title = ?, updated_at = ? WHERE seq = ?`, patch.title, now, col.seq);
      if (patch.is_output_column != null) this.sql.exec(`UPDATE columns SET is_output_column = ?, updated_at = ? WHERE seq = ?`, patch.is_output_column ? 1 : 0, now, col.seq);
      if (patch.position_rank != null) this.sql.exec(`UPDATE columns SET position_rank = ?, updated_at = ? WHERE seq = ?`, patch.position_rank, now, col.seq);
      let staleCount = 0;
      if (plan) {
        this.sql.exec(`UPDATE columns SET config = ?, updated_at = ? WHERE seq = ?`, JSON.stringify(plan.config), now, col.seq);
        this.storeEdges(col.seq, plan.edges);
        staleCount = this.markStale(affected, now);
      }
      return { version: this.bumpVersion(), staleCount };
    });
    this.modelCache = null;
    if (plan) await this.syncPromptRefs(ident, col.id, col.type, plan.config);
    await this.syncListing();
    return {
      ok: true,
      column: this.columnView(col.id),
      version,
      stale_count: staleCount,
      requires_recalculation: staleCount > 0,
      affected_column_ids: affected.map((s) => m.bySeq.get(s)!.id),
    };
  }

  /** Delete Column: its cells go; every cell downstream becomes STALE (its input is gone). */
  async deleteColumn(access: SheetAccess, columnId: string): Promise<Result<{ version: number; stale_count: number }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const ident = this.requireIdentity();
    const m = this.model();
    const col = m.byId.get(columnId);
    if (!col) return fail("not_found", "column not found");
    const downstream = m.graph.downstream([col.seq]);
    const now = Date.now();
    const { version, staleCount } = this.ctx.storage.transactionSync(() => {
      this.sql.exec(`DELETE FROM cells WHERE column_seq = ?`, col.seq);
      this.sql.exec(`DELETE FROM column_dependencies WHERE column_seq = ? OR depends_on_seq = ?`, col.seq, col.seq);
      this.sql.exec(`DELETE FROM columns WHERE seq = ?`, col.seq);
      const staleCount = this.markStale(downstream, now);
      return { version: this.bumpVersion(), staleCount };
    });
    this.modelCache = null;
    await this.syncPromptRefs(ident, col.id, "TEXT", {});
    await this.syncListing();
    return { ok: true, version, stale_count: staleCount };
  }

  /** Add Rows: `count` rows, text values set at once, non-text cells STALE. */
  async addRows(access: SheetAccess, input: { count: number; values: Record<string, unknown>[] | null }): Promise<
    Result<{ rows_created: number; start_row_index: number; row_indices: number[]; rows: RowView[]; cell_count: number; row_count: number; version: number }>
  > {
    const bad = this.admit(access);
    if (bad) return bad;
    const m = this.model();
    if (m.list.length === 0) return fail("validation_error", "sheet: has no columns; add a column before adding rows");
    const values = input.values ?? [];
    const writes: { row: number; seq: number; v: StoredValue }[] = [];
    for (let i = 0; i < values.length; i++) {
      for (const [key, v] of Object.entries(values[i])) {
        const col = m.byId.get(key.toLowerCase());
        if (!col) return fail("validation_error", `values[${i}].${key}: no column with this id in this sheet`);
        if (col.computed) return fail("validation_error", `values[${i}].${key}: column ${JSON.stringify(col.title)} is ${col.type}, not TEXT; its cells are computed`);
        const stored = storeValue(v);
        const bytes = storedBytes(stored);
        if (bytes > MAX_CELL_BYTES) return fail("payload_too_large", `values[${i}].${key}: takes ${bytes} bytes stored; a cell holds at most ${MAX_CELL_BYTES}`);
        writes.push({ row: i, seq: col.seq, v: stored });
      }
    }
    if (this.meta("next_row_index") + input.count > MAX_ROW_INDEX) return fail("validation_error", "count: the sheet cannot hold more rows");
    const now = Date.now();
    const { base, version } = this.ctx.storage.transactionSync(() => {
      const base = this.appendRows(input.count, null, now);
      for (const w of writes) {
        if (w.v.display === null && w.v.json === null) continue;
        this.sql.exec(
          `INSERT INTO cells (row_index, column_seq, status, display_value, value, updated_at) VALUES (?, ?, 'COMPLETED', ?, ?, ?)`,
          base + w.row,
          w.seq,
          w.v.display,
          w.v.json,
          now,
        );
      }
      return { base, version: this.bumpVersion() };
    });
    await this.syncListing();
    const page = this.readRows({ after: base - 1, limit: input.count });
    return {
      ok: true,
      rows_created: input.count,
      start_row_index: base,
      row_indices: page.rows.map((r) => r.row_index),
      rows: page.rows,
      cell_count: input.count * m.list.length,
      row_count: this.meta("row_count"),
      version,
    };
  }

  /** Finds a cell's column and row; null when the id names no cell of this sheet. */
  private locateCell(cellIdStr: string): { col: ModelColumn; row: number } | null {
    const parsed = parseCellId(cellIdStr);
    if (!parsed) return null;
    const m = this.model();
    const col = m.list.find((c) => columnPrefix(c.id) === parsed.prefix);
    if (!col) return null;
    const row = parsed.rowIndexFor(col.id);
    if (row < 0 || this.sql.exec(`SELECT 1 FROM rows WHERE row_index = ?`, row).toArray().length === 0) return null;
    return { col, row };
  }

  /**
   * Update Cell (TEXT cells only): sets the value and marks every cell downstream of it in the same
   * row STALE, in one transaction: work in proportion to the downstream cells, not to the sheet.
   */
  async updateCell(access: SheetAccess, cellIdStr: string, edit: { display_value?: string | null; value?: unknown }): Promise<Result<{ cell: CellView; version: number; stale_count: number }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const at = this.locateCell(cellIdStr);
    if (!at) return fail("not_found", "cell not found");
    if (at.col.computed) {
      return fail("validation_error", `cell_id: the cell is in column ${JSON.stringify(at.col.title)} of type ${at.col.type}; only cells of TEXT columns can be edited, the others are computed`);
    }
    const v = storeEdit(edit);
    const bytes = storedBytes(v);
    if (bytes > MAX_CELL_BYTES) return fail("payload_too_large", `value: display_value and value take ${bytes} bytes stored; a cell holds at most ${MAX_CELL_BYTES}`);
    const downstream = this.model().graph.downstream([at.col.seq]);
    const now = Date.now();
    const { version, staleCount } = this.ctx.storage.transactionSync(() => {
      if (v.display === null && v.json === null) {
        this.sql.exec(`DELETE FROM cells WHERE row_index = ? AND column_seq = ?`, at.row, at.col.seq);
      } else {
        this.sql.exec(
          `INSERT INTO cells (row_index, column_seq, status, display_value, value, updated_at) VALUES (?, ?, 'COMPLETED', ?, ?, ?)
           ON CONFLICT (row_index, column_seq) DO UPDATE SET display_value = excluded.display_value, value = excluded.value, updated_at = excluded.updated_at`,
          at.row,
          at.col.seq,
          v.display,
          v.json,
          now,
        );
      }
      const staleCount = this.markStale(downstream, now, at.row);
      return { version: this.bumpVersion(), staleCount };
    });
    this.syncSoon();
    return { ok: true, cell: this.getCell(cellIdStr)!, version, stale_count: staleCount };
  }

  // ---------------------------------------------------------------------------------------------
  // Recalculation: a request marks cells QUEUED under a new execution id (pulling in the STALE cells
  // they read, transitively, in the same row) and sets the alarm; the alarm computes them in
  // dependency order, in bounded batches, re-arming itself until nothing is queued. All progress is
  // in storage, so an evicted run resumes: cells left RUNNING go back to QUEUED.

  /** Queues a recalculation. cell_count 0 means there was nothing to recalculate (nothing changed). */
  async recalculate(access: SheetAccess, sel: RecalcSelection): Promise<Result<RecalcStarted>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const m = this.model();
    const targets: { col: ModelColumn; row: number }[] = [];
    let filter: { cols: number[]; rows: number[] | null; statuses: string[] } | null = null;
    if (sel.kind === "cells") {
      for (let i = 0; i < sel.cellIds.length; i++) {
        const at = this.locateCell(sel.cellIds[i]);
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
        statuses: (sel.statuses ?? CELL_STATUSES).filter((s) => s !== "QUEUED" && s !== "RUNNING"),
      };
    }
    const executionId = crypto.randomUUID();
    const now = Date.now();
    const out = this.ctx.storage.transactionSync(() => {
      const selectedCols = new Set<number>();
      if (filter) {
        if (filter.cols.length > 0 && filter.statuses.length > 0) {
          this.sql.exec(
            `UPDATE cells SET status = 'QUEUED', execution_id = ?1, updated_at = ?2
             WHERE column_seq IN (SELECT value FROM json_each(?3))
               AND (?4 IS NULL OR row_index IN (SELECT value FROM json_each(?4)))
               AND status IN (SELECT value FROM json_each(?5))`,
            executionId,
            now,
            JSON.stringify(filter.cols),
            filter.rows ? JSON.stringify(filter.rows) : null,
            JSON.stringify(filter.statuses),
          );
          for (const c of filter.cols) selectedCols.add(c);
        }
      } else {
        for (const t of targets) {
          this.sql.exec(
            `UPDATE cells SET status = 'QUEUED', execution_id = ?, updated_at = ? WHERE row_index = ? AND column_seq = ? AND status NOT IN ('QUEUED', 'RUNNING')`,
            executionId,
            now,
            t.row,
            t.col.seq,
          );
          selectedCols.add(t.col.seq);
        }
      }
      const selected = this.countQueued(executionId);
      // The STALE cells a queued cell reads (transitively, same row) are computed first.
      for (const c of m.graph.order().filter((s) => selectedCols.has(s)).reverse()) {
        for (const u of m.graph.upstream(c)) {
          if (!m.bySeq.get(u)?.computed) continue;
          this.sql.exec(
            `UPDATE cells SET status = 'QUEUED', execution_id = ?1, updated_at = ?2
             WHERE column_seq = ?3 AND status = 'STALE'
               AND row_index IN (SELECT row_index FROM cells WHERE status = 'QUEUED' AND column_seq = ?4 AND execution_id = ?1)`,
            executionId,
            now,
            u,
            c,
          );
        }
      }
      const cellCount = this.countQueued(executionId);
      if (cellCount === 0) return { cellCount, selected, version: this.meta("version") };
      const version = this.bumpVersion();
      this.sql.exec(
        `INSERT INTO executions (id, operation, cell_count, version, created_at, updated_at) VALUES (?, 'recalculate', ?, ?, ?, ?)`,
        executionId,
        cellCount,
        version,
        now,
        now,
      );
      return { cellCount, selected, version };
    });
    if (out.cellCount === 0) return { ok: true, execution_id: null, cell_count: 0, selected_cell_count: out.selected, version: out.version, cells: [] };
    await this.ctx.storage.setAlarm(Date.now());
    await this.syncListing();
    return {
      ok: true,
      execution_id: executionId,
      cell_count: out.cellCount,
      selected_cell_count: out.selected,
      version: out.version,
      cells: this.executionCells(executionId, 100),
    };
  }

  private countQueued(executionId: string): number {
    return this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE status = 'QUEUED' AND execution_id = ?`, executionId).one().n;
  }

  private executionCells(executionId: string, limit: number): CellView[] {
    const ident = this.requireIdentity();
    const m = this.model();
    return this.sql
      .exec<StoredCell>(`SELECT * FROM cells WHERE status IN ('QUEUED', 'RUNNING') AND execution_id = ? ORDER BY row_index, column_seq LIMIT ?`, executionId, limit)
      .toArray()
      .map((c) => this.cellView(ident, m.bySeq.get(c.column_seq)!, c.row_index, c, c.updated_at));
  }

  private operationView(e: ExecutionRow): SheetOperationView {
    const ident = this.requireIdentity();
    const counts = Object.fromEntries(
      this.sql
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

  /** The sheet's cell status counts and its operations still running. */
  listOperations(): SheetOperationsSummary {
    const ident = this.requireIdentity();
    const m = this.model();
    const rowCount = this.meta("row_count");
    const counts: Record<string, number> = Object.fromEntries(CELL_STATUSES.map((s) => [s, 0]));
    for (const r of this.sql.exec<{ status: string; n: number }>(`SELECT status, COUNT(*) AS n FROM cells WHERE status <> 'COMPLETED' GROUP BY status`)) {
      counts[r.status] = r.n;
    }
    const total = rowCount * m.list.length;
    counts.COMPLETED = total - CELL_STATUSES.filter((s) => s !== "COMPLETED").reduce((a, s) => a + counts[s], 0);
    const active = this.sql
      .exec<ExecutionRow>(
        `SELECT * FROM executions WHERE cancelled_at IS NULL AND id IN (SELECT DISTINCT execution_id FROM cells WHERE status IN ('QUEUED', 'RUNNING')) ORDER BY created_at`,
      )
      .toArray();
    return {
      sheet_id: ident.sheetId,
      version: this.meta("version"),
      total_cells: total,
      status_counts: counts,
      pending_count: counts.QUEUED + counts.RUNNING,
      active_operations: active.map((e) => this.operationView(e)),
    };
  }

  getOperation(id: string): SheetOperationView | null {
    const e = this.sql.exec<ExecutionRow>(`SELECT * FROM executions WHERE id = ?`, id).toArray()[0];
    return e ? this.operationView(e) : null;
  }

  /** Cancels an operation: its queued cells go back to STALE, its running ones too (their results are dropped). */
  async cancelOperation(access: SheetAccess, id: string): Promise<Result<{ operation_id: string; execution_ids: string[]; cancelled_cell_count: number; not_started_reset_count: number; running_invalidated_count: number; version: number; message: string }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const e = this.sql.exec<ExecutionRow>(`SELECT * FROM executions WHERE id = ?`, id).toArray()[0];
    if (!e) return fail("not_found", "operation not found");
    const now = Date.now();
    const out = this.ctx.storage.transactionSync(() => {
      this.sql.exec(`UPDATE cells SET status = 'STALE', updated_at = ? WHERE status = 'QUEUED' AND execution_id = ?`, now, id);
      const queued = this.changes();
      this.sql.exec(`UPDATE cells SET status = 'STALE', updated_at = ? WHERE status = 'RUNNING' AND execution_id = ?`, now, id);
      const running = this.changes();
      if (queued + running === 0) return { queued, running, version: this.meta("version") };
      this.sql.exec(`UPDATE executions SET cancelled_at = ?, updated_at = ? WHERE id = ?`, now, now, id);
      return { queued, running, version: this.bumpVersion() };
    });
    if (out.queued + out.running > 0) await this.syncListing();
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

  /** Runs one batch of queued cells, then re-arms itself while work remains. */
  async alarm(): Promise<void> {
    // A deleted sheet computes nothing more (its queued LLM or ENDPOINT calls would cost for nothing).
    if (!this.identity() || this.meta("deleted") === 1) return;
    // Only the alarm sets RUNNING and alarms never overlap: a RUNNING cell now is left from an evicted run.
    this.sql.exec(`UPDATE cells SET status = 'QUEUED' WHERE status = 'RUNNING'`);
    let budget = ALARM_BATCH_CELLS;
    // Level by level: a level's columns read only earlier levels, all done before it (or waiting, in computeCell).
    // The columns are read afresh for every chunk: a column changed while a chunk awaited its blocks (and
    // re-queued since) must be computed with its new config and inputs, not those the run began with.
    chunks: while (budget > 0) {
      const m = this.model();
      for (const level of m.graph.levels()) {
        for (const seq of level) {
          if (!m.bySeq.get(seq)!.computed) continue;
          const n = await this.computeChunk(m, seq, Math.min(budget, CHUNK_CELLS));
          if (n > 0) {
            budget -= n;
            continue chunks;
          }
        }
      }
      break;
    }
    if (this.hasPendingCells()) await this.ctx.storage.setAlarm(Date.now());
  }

  private hasPendingCells(): boolean {
    return this.sql.exec(`SELECT 1 FROM cells WHERE status IN ('QUEUED', 'RUNNING') LIMIT 1`).toArray().length > 0;
  }

  /** Computes up to `limit` queued cells of one column; returns how many it took. */
  private async computeChunk(m: SheetModel, seq: number, limit: number): Promise<number> {
    const ident = this.requireIdentity();
    // One column at a time: the pending index (status, column_seq, row_index) yields them in order, no sort.
    const chunk = this.sql
      .exec<StoredCell>(`SELECT * FROM cells WHERE status = 'QUEUED' AND column_seq = ? ORDER BY row_index LIMIT ?`, seq, limit)
      .toArray();
    if (chunk.length === 0) return 0;
    const now = Date.now();
    const keys = JSON.stringify(chunk.map((c) => [c.row_index, c.column_seq]));
    this.ctx.storage.transactionSync(() => {
      this.sql.exec(
        `UPDATE cells SET status = 'RUNNING', updated_at = ? WHERE status = 'QUEUED' AND (row_index, column_seq) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`,
        now,
        keys,
      );
      this.sql.exec(
        `UPDATE executions SET started_at = ?1, updated_at = ?1 WHERE started_at IS NULL AND id IN (SELECT value FROM json_each(?2))`,
        now,
        JSON.stringify([...new Set(chunk.map((c) => c.execution_id))]),
      );
    });

    // The inputs: the chunk's rows, in the columns its columns read.
    const readCols = [...new Set(chunk.flatMap((c) => m.bySeq.get(c.column_seq)?.upstream ?? []))];
    const rows = [...new Set(chunk.map((c) => c.row_index))];
    const inputCells = new Map<string, StoredCell>();
    if (readCols.length > 0) {
      for (const c of this.sql.exec<StoredCell>(
        `SELECT * FROM cells WHERE row_index IN (SELECT value FROM json_each(?)) AND column_seq IN (SELECT value FROM json_each(?))`,
        JSON.stringify(rows),
        JSON.stringify(readCols),
      )) {
        inputCells.set(`${c.row_index}:${c.column_seq}`, c);
      }
    }

    const ctx = this.deps.blocks(ident.workspaceId);
    const outcomes: Outcome[] = new Array(chunk.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < chunk.length; i = next++) {
        // A throw must fail its cell, not the alarm: a failed alarm leaves the chunk RUNNING and each retry recomputes it.
        try {
          outcomes[i] = await computeCell(m, chunk[i], inputCells, ctx);
        } catch (err) {
          console.error(JSON.stringify({ level: "error", msg: "cell computation failed unexpectedly", error: String(err) }));
          outcomes[i] = { kind: "failed", error: "the computation failed unexpectedly", hash: null };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(EVAL_CONCURRENCY, chunk.length) }, worker));

    const done = Date.now();
    this.ctx.storage.transactionSync(() => {
      const version = this.meta("version");
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i];
        const o = outcomes[i];
        if (o.kind === "wait") {
          this.sql.exec(`UPDATE cells SET status = 'QUEUED' WHERE row_index = ? AND column_seq = ? AND status = 'RUNNING' AND execution_id = ?`, c.row_index, c.column_seq, c.execution_id);
          continue;
        }
        if (o.kind === "reused") {
          this.sql.exec(
            `UPDATE cells SET status = 'COMPLETED', updated_at = ? WHERE row_index = ? AND column_seq = ? AND status = 'RUNNING' AND execution_id = ?`,
            done,
            c.row_index,
            c.column_seq,
            c.execution_id,
          );
        } else {
          const v = o.kind === "completed" ? o.stored : { display: null, json: null };
          this.sql.exec(
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
        // A cell edited, cancelled or re-queued meanwhile no longer belongs to this run: its result is dropped.
        if (this.changes() === 0) continue;
        const counter = o.kind === "failed" ? "failed_count" : "completed_count";
        this.sql.exec(
          `UPDATE executions SET ${counter} = ${counter} + 1, reused_count = reused_count + ?, updated_at = ? WHERE id = ?`,
          o.kind === "reused" ? 1 : 0,
          done,
          c.execution_id,
        );
      }
    });
    return chunk.length;
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
