// One SQLite-backed Durable Object per smart-table sheet: the single writer of that sheet's columns,
// rows, cells and version, so edits are serialized without D1 transactions. This class is its RPC
// surface: admission (each call names its workspace and table), the transactions of each change, and
// the alarm that runs recalculations. Its parts live beside it: storage.ts (the object's SQLite
// schema, counters, identity), columns.ts and cells.ts (what is stored and how the API shows it),
// executions.ts (recalculation operations), imports.ts (import progress and columns),
// recalculation.ts (what one cell computes to), listing.ts (what it writes back to D1), types.ts
// (what its methods take and answer), stale-graph.ts (the column graph), versions.ts (saved versions),
// score.ts (the sheet's score), scorecard.ts (its scorecard).
// Every mutation runs in one transactionSync and bumps `version` by exactly 1.
import { DurableObject } from "cloudflare:workers";
import { blockSources, COMPUTING_BLOCK_TYPES, validateBlockConfig } from "../blocks";
import { buildBaseDeps, type BaseDeps, type BaseEnv } from "../base-deps";
import { columnPrefix, MAX_ROW_INDEX, parseCellId } from "./cell-id";
import { MAX_CELL_BYTES, storeEdit, storedBytes, storeValue, utf8Bytes, type StoredValue } from "./cell-values";
import { replacePromptRefs, syncListing } from "./listing";
import { promptRefsOf } from "./prompt-refs";
import { appendRows, cellView, columnCells, getCell, insertStaleCells, readRows } from "./cells";
import { columnRows, findColumnByRef, insertColumn, listColumns } from "./columns";
import { COLUMN_WORK_ROWS, hasColumnWork, scheduleColumnWork, settleColumnWork, stepColumnWork } from "./column-work";
import { getOperation, listOperations } from "./executions";
import { ensureImportColumns, importColumnsFit, importProgress } from "./imports";
import { computeCell } from "./recalculation";
import {
  configure,
  hasScoreWork,
  planSettings,
  queueCalculation,
  readSettings,
  restoreSettings,
  scoreAt,
  scoreHistory,
  scorePayload,
  settingsView,
  stepScore,
  type HistoryRange,
  type HistoryResolution,
  type ScoreConfigInput,
  type ScorePayload,
  type SettingsView,
} from "./score";
import {
  activeScorecard,
  calculationView,
  cancelScorecard,
  deleteScorecard,
  findCalculation,
  hasScorecardWork,
  listRowResults,
  migrateLegacyScore,
  planScorecard,
  queueScorecardCalculation,
  rowResult,
  saveScorecard,
  scorecardPayload,
  scorecardView,
  stepScorecard,
  type ScorecardInput,
  type Verdict,
} from "./scorecard";
import { ColumnGraph } from "./stale-graph";
import {
  findVersion,
  insertVersion,
  listVersions,
  liveCellCount,
  restoreContent,
  snapshot,
  snapshotView,
  tooLarge,
  versionCount,
  versionView,
  type SnapshotView,
  type VersionMetadata,
  type VersionView,
} from "./versions";
import { INSERT_IMPORT_CELLS, SheetStore } from "./storage";
import {
  ALARM_BATCH_CELLS,
  CELL_STATUSES,
  CHUNK_CELLS,
  EVAL_CONCURRENCY,
  fail,
  MAX_COLUMNS,
  MAX_CONFIG_BYTES,
  SOURCE_EDGE,
  SYNC_DELAY_MS,
  type CellView,
  type ColumnView,
  type CreateColumnInput,
  type DependencyInput,
  type ExecutionRow,
  type Fail,
  type ImportBatchInput,
  type ImportBatchResult,
  type ImportProgress,
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
      const work = this.hasPendingCells() || hasColumnWork(this.store) || hasScoreWork(this.store) || hasScorecardWork(this.store);
      if (this.meta("deleted") === 0 && work && (await ctx.storage.getAlarm()) === null) await ctx.storage.setAlarm(Date.now());
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
          this.addColumnRow({ title: "Column A", type: "TEXT" }, now);
          appendRows(this.store, 1, null, now);
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
  // Columns, rows and cells (columns.ts, cells.ts), operations (executions.ts), imports (imports.ts)

  listColumns(): ColumnView[] {
    return listColumns(this.store, this.requireIdentity());
  }

  /** Inserts a column (in the caller's transaction) and drops the cached column model. */
  private addColumnRow(col: NewColumn, now: number, taken?: Set<string>): { seq: number; id: string } {
    this.modelCache = null;
    return insertColumn(this.store, col, now, taken);
  }

  /** A page of rows (by row_index) with a cell for every column. */
  readRows(opts: { after?: number | null; limit: number; order?: "asc" | "desc" }) {
    return readRows(this.store, this.requireIdentity(), opts);
  }

  /** One cell by its id, or null when no column and row of this sheet match it. */
  getCell(id: string): CellView | null {
    return getCell(this.store, this.requireIdentity(), id);
  }

  /** The sheet's cell status counts and its operations still running. */
  listOperations(): SheetOperationsSummary {
    return listOperations(this.store, this.requireIdentity(), this.model().list.length);
  }

  getOperation(id: string): SheetOperationView | null {
    return getOperation(this.store, this.requireIdentity(), id);
  }

  importProgress(operationId: string): ImportProgress {
    return importProgress(this.store, operationId);
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
      const { id } = this.addColumnRow(col, now);
      return { id, version: this.bumpVersion() };
    });
    await this.armForColumnWork();
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







  // ---------------------------------------------------------------------------------------------
  // The column engine: the column graph (cached, rebuilt after any column change), computed columns
  // validated by the blocks' schemas, stale propagation and recalculation.

  private modelCache: SheetModel | null = null;

  private model(): SheetModel {
    if (this.modelCache) return this.modelCache;
    const cols = columnRows(this.store);
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
    return m.byId.get(ref.toLowerCase()) ?? findColumnByRef(m.list, ref);
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

  /** Column work left pending by a change is done by the alarm (column-work.ts). */
  private async armForColumnWork(): Promise<void> {
    if (hasColumnWork(this.store)) await this.ctx.storage.setAlarm(Date.now());
  }

  /** Finishes pending STALE and insert work before reading or changing cell statuses. */
  private settleColumnWork(): void {
    if (hasColumnWork(this.store)) this.ctx.storage.transactionSync(() => settleColumnWork(this.store, Date.now()));
  }

  private changes(): number {
    return this.sql.exec<{ n: number }>(`SELECT changes() AS n`).one().n;
  }

  /**
   * Marks the cells of `columns` STALE (in one row, or in all rows: column-wide work, which on a large
   * sheet goes on in the alarm); returns how many were not stale before.
   */
  private markStale(columns: number[], now: number, rowIndex?: number): number {
    if (columns.length === 0) return 0;
    if (rowIndex === undefined) {
      return scheduleColumnWork(this.store, "stale", columns, now).changed;
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
    const bad = this.admit(access);
    if (bad) return bad;
    this.settleColumnWork();
    return { ok: true, ...this.listOperations() };
  }

  operationFor(access: SheetAccess, id: string): Result<{ operation: SheetOperationView }> {
    const bad = this.admit(access);
    if (bad) return bad;
    this.settleColumnWork();
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
      const { seq, id } = this.addColumnRow({ title: input.title, type: input.type, config: plan.config, is_output_column: input.is_output_column ?? false }, now);
      this.storeEdges(seq, plan.edges);
      if (input.position_rank != null) this.sql.exec(`UPDATE columns SET position_rank = ? WHERE seq = ?`, input.position_rank, seq);
      const staleCount = input.type === "TEXT" ? 0 : this.meta("row_count");
      return { id, version: this.bumpVersion(), staleCount };
    });
    this.modelCache = null;
    await this.armForColumnWork();
    await this.syncPromptRefs(ident, id, input.type, plan.config);
    await this.syncListing();
    return { ok: true, column: this.columnView(id), version, cells: columnCells(this.store, this.requireIdentity(), id, 100), stale_count: staleCount };
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
    await this.armForColumnWork();
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
      this.sql.exec(`DELETE FROM column_dependencies WHERE column_seq = ? OR depends_on_seq = ?`, col.seq, col.seq);
      this.sql.exec(`DELETE FROM columns WHERE seq = ?`, col.seq);
      // Column seqs are never reused, so cells left to delete belong to no column and show nowhere.
      scheduleColumnWork(this.store, "delete", [col.seq], now);
      const staleCount = this.markStale(downstream, now);
      return { version: this.bumpVersion(), staleCount };
    });
    this.modelCache = null;
    await this.armForColumnWork();
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
      const base = appendRows(this.store, input.count, null, now);
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

  /**
   * Delete Rows: the rows and all their cells go, in one transaction and one version. The other rows
   * keep their row_index (cell ids are made from it), so indexes are not reused and a sheet's rows
   * may have gaps. Every index must name a row of the sheet, or nothing is deleted.
   */
  async deleteRows(access: SheetAccess, rowIndices: number[]): Promise<Result<{ deleted_count: number; row_indices: number[]; row_count: number; version: number }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const wanted = [...new Set(rowIndices)].sort((a, b) => a - b);
    const list = JSON.stringify(wanted);
    const found = new Set(this.sql.exec<{ row_index: number }>(`SELECT row_index FROM rows WHERE row_index IN (SELECT value FROM json_each(?))`, list).toArray().map((r) => r.row_index));
    const missing = rowIndices.findIndex((r) => !found.has(r));
    if (missing >= 0) return fail("not_found", `row_indices[${missing}]: the sheet has no row ${rowIndices[missing]}`);
    const version = this.ctx.storage.transactionSync(() => {
      this.sql.exec(`DELETE FROM cells WHERE row_index IN (SELECT value FROM json_each(?))`, list);
      this.sql.exec(`DELETE FROM rows WHERE row_index IN (SELECT value FROM json_each(?))`, list);
      this.setMeta("row_count", this.meta("row_count") - wanted.length);
      return this.bumpVersion();
    });
    await this.syncListing();
    return { ok: true, deleted_count: wanted.length, row_indices: wanted, row_count: this.meta("row_count"), version };
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
    this.settleColumnWork();
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
    // Every column of a large sheet is queued a range of rows at a time, each range its own
    // transaction with requests served between them; the answer still counts every cell queued.
    const rowEnd = this.meta("next_row_index");
    const ranged = filter !== null && filter.rows === null && rowEnd > COLUMN_WORK_ROWS;
    const out = { cellCount: 0, selected: 0, version: this.meta("version") };
    for (let lo = 0; lo < (ranged ? rowEnd : 1); lo += COLUMN_WORK_ROWS) {
      const range = ranged ? { lo, hi: Math.min(lo + COLUMN_WORK_ROWS, rowEnd) } : null;
      const stop = this.ctx.storage.transactionSync(() => {
        // A range of a run that was cancelled (or whose sheet was deleted) meanwhile queues nothing more.
        if (out.cellCount > 0 && (this.meta("deleted") === 1 || this.sql.exec(`SELECT 1 FROM executions WHERE id = ? AND cancelled_at IS NULL`, executionId).toArray().length === 0)) return true;
        // The model is read again for each range: a column may have changed while requests were served.
        const got = this.queueCells(range ? this.model() : m, executionId, now, filter, targets, range);
        out.selected += got.selected;
        if (got.queued === 0) return false;
        if (out.cellCount === 0) {
          out.version = this.bumpVersion();
          this.sql.exec(
            `INSERT INTO executions (id, operation, cell_count, version, created_at, updated_at) VALUES (?, 'recalculate', ?, ?, ?, ?)`,
            executionId,
            got.queued,
            out.version,
            now,
            now,
          );
        } else {
          this.sql.exec(`UPDATE executions SET cell_count = cell_count + ? WHERE id = ?`, got.queued, executionId);
        }
        out.cellCount += got.queued;
        return false;
      });
      if (stop) break;
      if (range && range.hi < rowEnd) await new Promise((resolve) => setTimeout(resolve, 0));
    }
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

  /**
   * Marks the selected cells QUEUED under `executionId` (in rows [lo, hi) when `range` is given), then
   * the STALE cells they read, transitively, in the same rows; answers how many were selected and
   * how many were queued in all. Runs in the caller's transaction.
   */
  private queueCells(
    m: SheetModel,
    executionId: string,
    now: number,
    filter: { cols: number[]; rows: number[] | null; statuses: string[] } | null,
    targets: { col: ModelColumn; row: number }[],
    range: { lo: number; hi: number } | null,
  ): { selected: number; queued: number } {
    // In a range, `+status` keeps SQLite on the primary key's row range rather than the status index.
    const status = range ? "+status" : "status";
    const lo = range?.lo ?? 0;
    const hi = range?.hi ?? MAX_ROW_INDEX + 1;
    const countQueued = () =>
      this.sql
        .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE row_index >= ? AND row_index < ? AND ${status} = 'QUEUED' AND execution_id = ?`, lo, hi, executionId)
        .one().n;
    const selectedCols = new Set<number>();
    if (filter) {
      if (filter.cols.length > 0 && filter.statuses.length > 0) {
        this.sql.exec(
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
    const selected = countQueued();
    // The STALE cells a queued cell reads (transitively, same row) are computed first.
    for (const c of m.graph.order().filter((s) => selectedCols.has(s)).reverse()) {
      for (const u of m.graph.upstream(c)) {
        if (!m.bySeq.get(u)?.computed) continue;
        this.sql.exec(
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

  private executionCells(executionId: string, limit: number): CellView[] {
    const ident = this.requireIdentity();
    const m = this.model();
    return this.sql
      .exec<StoredCell>(`SELECT * FROM cells WHERE status IN ('QUEUED', 'RUNNING') AND execution_id = ? ORDER BY row_index, column_seq LIMIT ?`, executionId, limit)
      .toArray()
      .map((c) => cellView(ident, m.bySeq.get(c.column_seq)!, c.row_index, c, c.updated_at));
  }




  /** Cancels an operation: its queued cells go back to STALE, its running ones too (their results are dropped). */
  async cancelOperation(access: SheetAccess, id: string): Promise<Result<{ operation_id: string; execution_ids: string[]; cancelled_cell_count: number; not_started_reset_count: number; running_invalidated_count: number; version: number; message: string }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const e = this.sql.exec<ExecutionRow>(`SELECT * FROM executions WHERE id = ?`, id).toArray()[0];
    if (!e) return fail("not_found", "operation not found");
    this.settleColumnWork();
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

  // ---------------------------------------------------------------------------------------------
  // Saved versions (versions.ts): named snapshots, and restoring one as a new version.

  versionsFor(access: SheetAccess, opts: { after: number | null; limit: number; order: "asc" | "desc" }): Result<{ versions: VersionView[]; has_more: boolean }> {
    const bad = this.admit(access);
    if (bad) return bad;
    const ident = this.requireIdentity();
    const page = listVersions(this.store, opts);
    return { ok: true, versions: page.rows.map((v) => versionView(ident, v, scoreAt(this.store, v.sheet_version))), has_more: page.hasMore };
  }

  versionFor(access: SheetAccess, id: string, rows: { after: number | null; limit: number }): Result<{ version: VersionView; snapshot: SnapshotView }> {
    const bad = this.admit(access);
    if (bad) return bad;
    const ident = this.requireIdentity();
    const v = findVersion(this.store, id);
    if (!v) return fail("not_found", "version not found");
    return { ok: true, version: versionView(ident, v, scoreAt(this.store, v.sheet_version)), snapshot: snapshotView(this.store, ident, v, rows) };
  }

  /**
   * Saves the sheet as a new version named `name`; with `sourceVersionId`, first replaces the sheet's
   * columns, rows and cells by that version's (one new sheet version), then saves the result.
   */
  async createVersion(
    access: SheetAccess,
    input: { name: string | null; sourceVersionId: string | null; createdBy: string | null },
  ): Promise<Result<{ version: VersionView; snapshot: SnapshotView }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const ident = this.requireIdentity();
    const source = input.sourceVersionId ? findVersion(this.store, input.sourceVersionId) : undefined;
    if (input.sourceVersionId && !source) return fail("not_found", "source_version_id: version not found");
    if (!source && !input.name) return fail("validation_error", "name: is required unless source_version_id is given");
    const big = source
      ? tooLarge((JSON.parse(source.metadata) as VersionMetadata).cell_count, `version ${source.number}`)
      : tooLarge(liveCellCount(this.store), "the sheet");
    if (big) return big;
    if (!source) this.settleColumnWork();
    const before = source ? this.model().list : [];
    const now = Date.now();
    const id = crypto.randomUUID();
    this.ctx.storage.transactionSync(() => {
      const number = versionCount(this.store) + 1;
      if (source) {
        restoreContent(this.store, source, now);
        restoreSettings(this.store, source.score_configuration === null ? null : (JSON.parse(source.score_configuration) as SettingsView), now);
        this.bumpVersion();
      }
      const snap = snapshot(this.store, number);
      insertVersion(this.store, {
        number,
        id,
        name: input.name ?? (source ? `Restored from version ${source.number}` : null),
        createdBy: input.createdBy,
        now,
        deltas: snap.deltas,
        scoreConfiguration: settingsView(readSettings(this.store)),
        metadata: {
          sheet_version: this.meta("version"),
          row_count: snap.rowCount,
          column_count: snap.columnCount,
          cell_count: snap.cellCount,
          next_row_index: this.meta("next_row_index"),
          restored_from: source ? { version_id: source.id, version_number: source.number } : null,
        },
      });
    });
    if (source) {
      this.modelCache = null;
      // The prompts the columns use, as D1 lists them: the columns gone lose theirs, the restored ones get theirs.
      const after = this.model().list;
      const afterIds = new Set(after.map((c) => c.id));
      const hadRefs = new Set(before.filter((c) => promptRefsOf(c.type, c.config).length > 0).map((c) => c.id));
      for (const c of before) if (!afterIds.has(c.id) && hadRefs.has(c.id)) await this.syncPromptRefs(ident, c.id, "TEXT", {});
      for (const c of after) if (hadRefs.has(c.id) || promptRefsOf(c.type, c.config).length > 0) await this.syncPromptRefs(ident, c.id, c.type, c.config);
      await this.syncListing();
    }
    const v = findVersion(this.store, id)!;
    return { ok: true, version: versionView(ident, v, scoreAt(this.store, v.sheet_version)), snapshot: snapshotView(this.store, ident, v, { after: null, limit: 100 }) };
  }

  // ---------------------------------------------------------------------------------------------
  // The score (score.ts): a configuration of columns to score, calculated on the alarm.

  scoreFor(access: SheetAccess): Result<{ score: ScorePayload }> {
    const bad = this.admit(access);
    if (bad) return bad;
    return { ok: true, score: scorePayload(this.store, this.requireIdentity()) };
  }

  /** Stores a score configuration (one new sheet version); queues nothing. */
  async configureScore(access: SheetAccess, input: ScoreConfigInput): Promise<Result<{ score_configuration_id: string; version: number }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const plan = planSettings(this.model().list, input);
    if ("ok" in plan) return plan;
    const version = this.ctx.storage.transactionSync(() => {
      configure(this.store, plan, Date.now());
      return this.bumpVersion();
    });
    await this.syncListing();
    return { ok: true, score_configuration_id: plan.id, version };
  }

  /** Queues a calculation of the configured score (restarting one still open). */
  async recalculateScore(access: SheetAccess): Promise<Result<{ score_configuration_id: string; status: "queued" }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const q = this.ctx.storage.transactionSync(() => queueCalculation(this.store, Date.now()));
    if (!q.ok) return q;
    await this.ctx.storage.setAlarm(Date.now());
    return { ok: true, score_configuration_id: q.configId, status: "queued" };
  }

  scoreHistoryFor(access: SheetAccess, q: { range: HistoryRange; resolution: HistoryResolution; maxPoints: number }): Result<{ score_history: ReturnType<typeof scoreHistory> }> {
    const bad = this.admit(access);
    if (bad) return bad;
    return { ok: true, score_history: scoreHistory(this.store, q) };
  }

  // ---------------------------------------------------------------------------------------------
  // The scorecard (scorecard.ts): steps judging each row, calculated on the alarm.

  scorecardFor(access: SheetAccess): Result<ReturnType<typeof scorecardPayload>> {
    const bad = this.admit(access);
    if (bad) return bad;
    return { ok: true, ...scorecardPayload(this.store, this.requireIdentity()) };
  }

  /** Creates or replaces the active scorecard's configuration (one new sheet version). */
  async configureScorecard(access: SheetAccess, input: ScorecardInput): Promise<Result<{ scorecard: ReturnType<typeof scorecardView>; version: number }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const now = Date.now();
    const existing = activeScorecard(this.store);
    const plan = planScorecard(this.model().list, input, existing, now);
    if (!plan.ok) return plan;
    const version = this.ctx.storage.transactionSync(() => {
      saveScorecard(this.store, input, plan, existing, now);
      return this.bumpVersion();
    });
    await this.syncListing();
    return { ok: true, scorecard: scorecardView(this.store, this.requireIdentity(), activeScorecard(this.store)!), version };
  }

  async deleteScorecard(access: SheetAccess): Promise<Result<{ version: number }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const sc = activeScorecard(this.store);
    if (!sc) return fail("not_found", "the sheet has no scorecard");
    const version = this.ctx.storage.transactionSync(() => {
      deleteScorecard(this.store, sc, Date.now());
      return this.bumpVersion();
    });
    await this.syncListing();
    return { ok: true, version };
  }

  /** Queues a calculation of the scorecard (one under way is cancelled): all rows and steps, or those named. */
  async recalculateScorecard(access: SheetAccess, filter: { rows: number[] | null; steps: string[] | null }): Promise<Result<{ calculation_id: string; version: number }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const sc = activeScorecard(this.store);
    if (!sc) return fail("validation_error", "scorecard: the sheet has none; configure one first (PATCH /scorecard)");
    const q = this.ctx.storage.transactionSync(() => queueScorecardCalculation(this.store, sc, filter, Date.now()));
    if (!q.ok) return q;
    await this.ctx.storage.setAlarm(Date.now());
    return { ok: true, calculation_id: q.id, version: this.meta("version") };
  }

  cancelScorecard(access: SheetAccess): Result<{ scorecard_id: string; calculation_ids: string[] }> {
    const bad = this.admit(access);
    if (bad) return bad;
    const sc = activeScorecard(this.store);
    if (!sc) return fail("not_found", "the sheet has no scorecard");
    const ids = this.ctx.storage.transactionSync(() => cancelScorecard(this.store, sc, Date.now()));
    return { ok: true, scorecard_id: sc.id, calculation_ids: ids };
  }

  scorecardCalculationFor(access: SheetAccess, id: string): Result<{ calculation: ReturnType<typeof calculationView> }> {
    const bad = this.admit(access);
    if (bad) return bad;
    const c = findCalculation(this.store, id);
    return c ? { ok: true, calculation: calculationView(this.requireIdentity(), c) } : fail("not_found", "calculation not found");
  }

  scorecardRowsFor(access: SheetAccess, q: { calculationId: string | null; verdict: Verdict | null; cursor: number; limit: number }) {
    const bad = this.admit(access);
    if (bad) return bad;
    return listRowResults(this.store, q);
  }

  scorecardRowFor(access: SheetAccess, row: number, calculationId: string | null) {
    const bad = this.admit(access);
    if (bad) return bad;
    return rowResult(this.store, this.requireIdentity(), row, calculationId);
  }

  /** Turns the sheet's score configuration into scorecard steps (and, asked to, removes it). */
  async migrateLegacyScore(
    access: SheetAccess,
    deleteLegacy: boolean,
  ): Promise<Result<{ scorecard: ReturnType<typeof scorecardView> | null; converted_count: number; skipped: { reason: string; score_type: string | null }[]; legacy_score_deleted: boolean; version: number }>> {
    const bad = this.admit(access);
    if (bad) return bad;
    const cols = this.model().list;
    const out = this.ctx.storage.transactionSync(() => {
      const r = migrateLegacyScore(this.store, cols, deleteLegacy, Date.now());
      return r.ok ? { ...r, version: r.changed ? this.bumpVersion() : this.meta("version") } : r;
    });
    if (!out.ok) return out;
    if (out.changed) await this.syncListing();
    const sc = activeScorecard(this.store);
    return {
      ok: true,
      scorecard: sc ? scorecardView(this.store, this.requireIdentity(), sc) : null,
      converted_count: out.converted,
      skipped: out.skipped,
      legacy_score_deleted: out.deleted,
      version: out.version,
    };
  }

  /** Runs one batch of queued cells, then re-arms itself while work remains. */
  async alarm(): Promise<void> {
    // A deleted sheet computes nothing more (its queued LLM or ENDPOINT calls would cost for nothing).
    if (!this.identity() || this.meta("deleted") === 1) return;
    // Column work first, one range per run so requests are served between runs; cells are computed
    // once it is done (a cell computed before a pending STALE marking reached it would be marked anyway).
    if (hasColumnWork(this.store)) {
      const more = this.ctx.storage.transactionSync(() => stepColumnWork(this.store, Date.now()));
      if (more || this.hasPendingCells() || hasScoreWork(this.store) || hasScorecardWork(this.store)) await this.ctx.storage.setAlarm(Date.now());
      return;
    }
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
    if (this.hasPendingCells()) {
      await this.ctx.storage.setAlarm(Date.now());
      return;
    }
    // Scores and scorecards are calculated once no cell is pending, so they judge the results of what was asked before them.
    let more = false;
    if (hasScoreWork(this.store)) more = this.ctx.storage.transactionSync(() => stepScore(this.store, Date.now()));
    if (hasScorecardWork(this.store)) {
      const ctx = this.deps.blocks(this.requireIdentity().workspaceId);
      more = (await stepScorecard(this.store, ctx, Date.now, (fn) => this.ctx.storage.transactionSync(fn))) || more;
    }
    if (more) await this.ctx.storage.setAlarm(Date.now());
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
      if (before !== input.firstRow || count !== done.row_count) return { ok: false, reason: "out_of_order", expectedBatch: importProgress(this.store, input.operationId).batchesCommitted };
      const p = importProgress(this.store, input.operationId);
      return { ok: true, duplicate: true, rowsAdded: done.row_count, rowsImported: p.rowsImported, batchesCommitted: p.batchesCommitted, rowCount: p.rowCount, version: done.version };
    }
    if (this.meta("deleted") === 1) return { ok: false, reason: "deleted" };
    const progress = importProgress(this.store, input.operationId);
    if (input.batch !== progress.batchesCommitted || input.firstRow !== progress.rowsImported) {
      return { ok: false, reason: "out_of_order", expectedBatch: progress.batchesCommitted };
    }
    const count = this.sql.exec<{ n: number }>(`SELECT json_array_length(?) AS n`, input.rowsJson).one().n;
    if (this.meta("next_row_index") + count > MAX_ROW_INDEX) return { ok: false, reason: "too_many_rows" };
    if (!importColumnsFit(this.store, input)) return { ok: false, reason: "too_many_columns" };

    const now = Date.now();
    const version = this.ctx.storage.transactionSync(() => {
      if (ensureImportColumns(this.store, input.operationId, input.columns, now, input.mapByTitle) > 0) this.modelCache = null;
      const base = this.meta("next_row_index");
      this.sql.exec(
        `INSERT INTO rows (row_index, source_operation, created_at) SELECT ? + key, ?, ? FROM json_each(?)`,
        base,
        input.operationId,
        now,
        input.rowsJson,
      );
      this.sql.exec(INSERT_IMPORT_CELLS, base, now, input.rowsJson, input.operationId);
      insertStaleCells(this.store, base, count, input.operationId, now);
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
    const p = importProgress(this.store, input.operationId);
    return { ok: true, duplicate: false, rowsAdded: count, rowsImported: p.rowsImported, batchesCommitted: p.batchesCommitted, rowCount: p.rowCount, version };
  }

}
