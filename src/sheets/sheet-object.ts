// One SQLite-backed Durable Object per smart-table sheet: the single writer of that sheet's columns,
// rows, cells and version, so edits are serialized without D1 transactions. This class is its door:
// the RPC surface, admission (each route-facing call names its workspace and table, checked once in
// `open`), the transactions and effects it hands its modules (core.ts), and the alarm that runs
// recalculations. Its parts live beside it: storage.ts (the object's SQLite schema, counters,
// identity), columns.ts, column-plan.ts and column-changes.ts (columns, their checks and changes),
// cells.ts (rows and cells), column-work.ts (column-wide work on large sheets), recalc-queue.ts and
// recalculation.ts (queueing cells, and what one computes to), executions.ts (recalculation
// operations), imports.ts (import batches and progress), listing.ts (what it writes back to D1),
// types.ts (what its methods take and answer), stale-graph.ts (the column graph), versions.ts (saved
// versions), score.ts (the sheet's score), scorecard/ (its scorecard).
// Every mutation runs in one transactionSync and bumps `version` by exactly 1.
import { DurableObject } from "cloudflare:workers";
import { buildBaseDeps, type BaseDeps, type BaseEnv } from "../base-deps";
import { addRows, appendRows, deleteRows, getCell, readRows, updateCell } from "./cells";
import { buildModel } from "./column-plan";
import { addColumn, addColumnRow, createColumn, deleteColumn, updateColumn } from "./column-changes";
import { hasColumnWork, settleColumnWork, stepColumnWork } from "./column-work";
import { listColumns } from "./columns";
import type { SheetCore } from "./core";
import { getOperation, listOperations } from "./executions";
import { appendImportBatch, importProgress } from "./imports";
import { replacePromptRefs, syncListing } from "./listing";
import { promptRefsOf } from "./prompt-refs";
import { cancelOperation, claimChunk, hasPendingCells, inputCellsOf, recalculate, recordOutcomes, requeueRunning } from "./recalc-queue";
import { computeAll } from "./recalculation";
import { configureScore, hasScoreWork, recalculateScore, scoreFor, scoreHistoryFor, stepScore, type HistoryRange, type HistoryResolution, type ScoreConfigInput } from "./score";
import * as scorecard from "./scorecard";
import { SheetStore } from "./storage";
import { createVersion, versionFor, versionsFor } from "./versions";
import {
  ALARM_BATCH_CELLS,
  CHUNK_CELLS,
  fail,
  SYNC_DELAY_MS,
  type CellView,
  type ColumnView,
  type CreateColumnInput,
  type Fail,
  type ImportBatchInput,
  type ImportBatchResult,
  type ImportProgress,
  type NewColumn,
  type RecalcSelection,
  type Result,
  type SheetAccess,
  type SheetIdentity,
  type SheetModel,
  type SheetOperationsSummary,
  type SheetOperationView,
  type SheetStats,
  type UpdateColumnInput,
} from "./types";

export class SheetObject extends DurableObject<BaseEnv> {
  private readonly store: SheetStore;
  /** The database and blocks' context, built once per object from the bindings it reads. */
  private readonly deps: BaseDeps;
  /** The column model (column-plan.ts), rebuilt after any column change. */
  private modelCache: SheetModel | null = null;
  private syncing = false;
  private syncAgain = false;

  constructor(ctx: DurableObjectState, env: BaseEnv) {
    super(ctx, env);
    this.store = new SheetStore(ctx.storage);
    this.deps = buildBaseDeps(env);
    // Recalculation survives eviction: queued work found on wake-up gets its alarm back if it was lost.
    void ctx.blockConcurrencyWhile(async () => {
      const work = hasPendingCells(this.store) || hasColumnWork(this.store) || hasScoreWork(this.store) || scorecard.hasScorecardWork(this.store);
      if (this.store.meta("deleted") === 0 && work && (await ctx.storage.getAlarm()) === null) await ctx.storage.setAlarm(Date.now());
    });
  }

  /** The sheet's current version: 0 for a new sheet, +1 on every committed mutation. */
  version(): number {
    return this.store.meta("version");
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
          addColumnRow(this.core(identity), { title: "Column A", type: "TEXT" }, now);
          appendRows(this.store, 1, null, now);
          this.bumpVersion();
        }
      });
    }
    return this.stats();
  }

  stats(): SheetStats {
    return {
      rowCount: this.store.meta("row_count"),
      versionCount: this.store.meta("version"),
      columnCount: this.store.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM columns`).one().n,
      deleted: this.store.meta("deleted") === 1,
    };
  }

  /** A deleted sheet refuses further writes (a running import stops at its next batch). */
  markDeleted(): void {
    this.store.setMeta("deleted", 1);
  }

  /** Copies the listing fields to D1 (listing.ts); a failure is logged and the next change copies again. */
  async syncListing(): Promise<void> {
    const id = this.identity();
    if (!id) return;
    await syncListing(this.deps.db, id.sheetId, { rowCount: this.store.meta("row_count"), version: this.store.meta("version") });
  }

  // ---------------------------------------------------------------------------------------------
  // The door: what the modules get for an admitted call (core.ts), and the one access check.

  private model(): SheetModel {
    return (this.modelCache ??= buildModel(this.store));
  }

  private core(ident: SheetIdentity): SheetCore {
    const storage = this.ctx.storage;
    return {
      store: this.store,
      ident,
      model: () => this.model(),
      dropModel: () => {
        this.modelCache = null;
      },
      tx: (fn) => storage.transactionSync(fn),
      bump: () => this.bumpVersion(),
      settle: () => {
        if (hasColumnWork(this.store)) storage.transactionSync(() => settleColumnWork(this.store, Date.now()));
      },
      arm: () => storage.setAlarm(Date.now()),
      armForColumnWork: async () => {
        if (hasColumnWork(this.store)) await storage.setAlarm(Date.now());
      },
      syncListing: () => this.syncListing(),
      syncSoon: () => this.syncSoon(),
      syncPromptRefs: (columns) => replacePromptRefs(this.deps.db, ident, columns.map((c) => ({ columnId: c.id, refs: promptRefsOf(c.type, c.config) }))),
    };
  }

  /**
   * Every route-facing call comes in here: the caller's workspace and table must be this sheet's, and
   * the sheet not deleted (sheet and table deletion mark the object). The Worker has already found the
   * sheet in D1. An async call's promise is returned as is, so its RPC type stays `X | Fail`.
   */
  private open<R>(access: SheetAccess, run: (sheet: SheetCore) => R): R | Fail {
    const id = this.identity();
    if (!id || id.workspaceId !== access.workspaceId || id.tableId !== access.tableId || this.store.meta("deleted") === 1) return fail("not_found", "sheet not found");
    return run(this.core(id));
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

  // ---------------------------------------------------------------------------------------------
  // Unchecked calls, for imports, services and tests (they come from code that checked the sheet).

  listColumns(): ColumnView[] {
    return listColumns(this.store, this.requireIdentity());
  }

  /** A page of rows (by row_index) with a cell for every column. */
  readRows(opts: { after?: number | null; limit: number; order?: "asc" | "desc" }) {
    return readRows(this.store, this.requireIdentity(), opts);
  }

  /** One cell by its id, or null when no column and row of this sheet match it. */
  getCell(id: string): CellView | null {
    return getCell(this.store, this.requireIdentity(), id);
  }

  importProgress(operationId: string): ImportProgress {
    return importProgress(this.store, operationId);
  }

  /** Adds a column at the end, unchecked: the storage half of Create Column (column-changes.ts). */
  async addColumn(col: NewColumn): Promise<{ column: ColumnView; version: number }> {
    const ident = this.requireIdentity();
    if (this.store.meta("deleted") === 1) throw new Error("sheet is deleted");
    return addColumn(this.core(ident), col);
  }

  /** Appends one batch of an import, idempotent by (operationId, batch) (imports.ts). */
  async appendImportBatch(input: ImportBatchInput): Promise<ImportBatchResult> {
    const ident = this.identity();
    if (!ident) return { ok: false, reason: "not_initialized" };
    return appendImportBatch(this.core(ident), input);
  }

  // ---------------------------------------------------------------------------------------------
  // Route-facing calls, each behind `open`. Reads first.

  columnsFor(access: SheetAccess): Result<{ columns: ColumnView[] }> {
    return this.open(access, (s) => ({ ok: true as const, columns: listColumns(s.store, s.ident) }));
  }

  rowsFor(access: SheetAccess, opts: { after?: number | null; limit: number; order?: "asc" | "desc"; withColumns?: boolean }) {
    return this.open(access, (s) => ({ ok: true as const, ...readRows(s.store, s.ident, opts), columns: opts.withColumns ? listColumns(s.store, s.ident) : null }));
  }

  cellFor(access: SheetAccess, id: string): Result<{ cell: CellView }> {
    return this.open(access, (s) => {
      const cell = getCell(s.store, s.ident, id);
      return cell ? { ok: true as const, cell } : fail("not_found", "cell not found");
    });
  }

  operationsFor(access: SheetAccess): Result<SheetOperationsSummary> {
    return this.open(access, (s) => {
      s.settle();
      return { ok: true as const, ...listOperations(s.store, s.ident, s.model().list.length) };
    });
  }

  operationFor(access: SheetAccess, id: string): Result<{ operation: SheetOperationView }> {
    return this.open(access, (s) => {
      s.settle();
      const operation = getOperation(s.store, s.ident, id);
      return operation ? { ok: true as const, operation } : fail("not_found", "operation not found");
    });
  }

  // Columns (column-changes.ts), rows and cells (cells.ts).
  async createColumn(access: SheetAccess, input: CreateColumnInput) {
    return this.open(access, (s) => createColumn(s, input));
  }
  async updateColumn(access: SheetAccess, columnId: string, patch: UpdateColumnInput) {
    return this.open(access, (s) => updateColumn(s, columnId, patch));
  }
  async deleteColumn(access: SheetAccess, columnId: string) {
    return this.open(access, (s) => deleteColumn(s, columnId));
  }
  async addRows(access: SheetAccess, input: { count: number; values: Record<string, unknown>[] | null }) {
    return this.open(access, (s) => addRows(s, input));
  }
  async deleteRows(access: SheetAccess, rowIndices: number[]) {
    return this.open(access, (s) => deleteRows(s, rowIndices));
  }
  async updateCell(access: SheetAccess, cellIdStr: string, edit: { display_value?: string | null; value?: unknown }) {
    return this.open(access, (s) => updateCell(s, cellIdStr, edit));
  }

  // Recalculation (recalc-queue.ts).
  async recalculate(access: SheetAccess, sel: RecalcSelection) {
    return this.open(access, (s) => recalculate(s, sel));
  }
  async cancelOperation(access: SheetAccess, id: string) {
    return this.open(access, (s) => cancelOperation(s, id));
  }

  // Saved versions (versions.ts).
  versionsFor(access: SheetAccess, opts: { after: number | null; limit: number; order: "asc" | "desc" }) {
    return this.open(access, (s) => versionsFor(s, opts));
  }
  versionFor(access: SheetAccess, id: string, rows: { after: number | null; limit: number }) {
    return this.open(access, (s) => versionFor(s, id, rows));
  }
  async createVersion(access: SheetAccess, input: { name: string | null; sourceVersionId: string | null; createdBy: string | null }) {
    return this.open(access, (s) => createVersion(s, input));
  }

  // The score (score.ts).
  scoreFor(access: SheetAccess) {
    return this.open(access, (s) => scoreFor(s));
  }
  async configureScore(access: SheetAccess, input: ScoreConfigInput) {
    return this.open(access, (s) => configureScore(s, input));
  }
  async recalculateScore(access: SheetAccess) {
    return this.open(access, (s) => recalculateScore(s));
  }
  scoreHistoryFor(access: SheetAccess, q: { range: HistoryRange; resolution: HistoryResolution; maxPoints: number }) {
    return this.open(access, (s) => scoreHistoryFor(s, q));
  }

  // The scorecard (scorecard/).
  scorecardFor(access: SheetAccess) {
    return this.open(access, (s) => scorecard.scorecardFor(s));
  }
  async configureScorecard(access: SheetAccess, input: scorecard.ScorecardInput) {
    return this.open(access, (s) => scorecard.configureScorecard(s, input));
  }
  async deleteScorecard(access: SheetAccess) {
    return this.open(access, (s) => scorecard.deleteScorecard(s));
  }
  async recalculateScorecard(access: SheetAccess, filter: { rows: number[] | null; steps: string[] | null }) {
    return this.open(access, (s) => scorecard.recalculateScorecard(s, filter));
  }
  cancelScorecard(access: SheetAccess) {
    return this.open(access, (s) => scorecard.cancelScorecard(s));
  }
  scorecardCalculationFor(access: SheetAccess, id: string) {
    return this.open(access, (s) => scorecard.scorecardCalculationFor(s, id));
  }
  scorecardRowsFor(access: SheetAccess, q: { calculationId: string | null; verdict: scorecard.Verdict | null; cursor: number; limit: number }) {
    return this.open(access, (s) => scorecard.scorecardRowsFor(s, q));
  }
  scorecardRowFor(access: SheetAccess, row: number, calculationId: string | null) {
    return this.open(access, (s) => scorecard.scorecardRowFor(s, row, calculationId));
  }
  async migrateLegacyScore(access: SheetAccess, deleteLegacy: boolean) {
    return this.open(access, (s) => scorecard.migrateLegacyScore(s, deleteLegacy));
  }

  // ---------------------------------------------------------------------------------------------
  // The alarm: column work, then queued cells (recalc-queue.ts), then scores and scorecards.

  /** Runs one batch of queued cells, then re-arms itself while work remains. */
  async alarm(): Promise<void> {
    // A deleted sheet computes nothing more (its queued LLM or ENDPOINT calls would cost for nothing).
    const ident = this.identity();
    if (!ident || this.store.meta("deleted") === 1) return;
    const rearm = () => this.ctx.storage.setAlarm(Date.now());
    // Column work first, one range per run so requests are served between runs; cells are computed
    // once it is done (a cell computed before a pending STALE marking reached it would be marked anyway).
    if (hasColumnWork(this.store)) {
      const more = this.ctx.storage.transactionSync(() => stepColumnWork(this.store, Date.now()));
      if (more || hasPendingCells(this.store) || hasScoreWork(this.store) || scorecard.hasScorecardWork(this.store)) await rearm();
      return;
    }
    // Only the alarm sets RUNNING and alarms never overlap: a RUNNING cell now is left from an evicted run.
    requeueRunning(this.store);
    let budget = ALARM_BATCH_CELLS;
    // Level by level: a level's columns read only earlier levels, all done before it (or waiting, in computeCell).
    // The columns are read afresh for every chunk: a column changed while a chunk awaited its blocks (and
    // re-queued since) must be computed with its new config and inputs, not those the run began with.
    chunks: while (budget > 0) {
      const m = this.model();
      for (const level of m.graph.levels()) {
        for (const seq of level) {
          if (!m.bySeq.get(seq)!.computed) continue;
          const n = await this.computeChunk(ident, m, seq, Math.min(budget, CHUNK_CELLS));
          if (n > 0) {
            budget -= n;
            continue chunks;
          }
        }
      }
      break;
    }
    if (hasPendingCells(this.store)) {
      await rearm();
      return;
    }
    // Scores and scorecards are calculated once no cell is pending, so they judge the results of what was asked before them.
    let more = false;
    if (hasScoreWork(this.store)) more = this.ctx.storage.transactionSync(() => stepScore(this.store, Date.now()));
    if (scorecard.hasScorecardWork(this.store)) {
      const ctx = this.deps.blocks(ident.workspaceId);
      more = (await scorecard.stepScorecard(this.store, ctx, Date.now, (fn) => this.ctx.storage.transactionSync(fn))) || more;
    }
    if (more) await rearm();
  }

  /** Computes up to `limit` queued cells of one column: claim, compute off the transaction, record; returns how many it took. */
  private async computeChunk(ident: SheetIdentity, m: SheetModel, seq: number, limit: number): Promise<number> {
    const tx = <T>(fn: () => T): T => this.ctx.storage.transactionSync(fn);
    const chunk = claimChunk(this.store, seq, limit, Date.now(), tx);
    if (chunk.length === 0) return 0;
    const outcomes = await computeAll(m, chunk, inputCellsOf(this.store, m, chunk), this.deps.blocks(ident.workspaceId));
    const done = Date.now();
    tx(() => recordOutcomes(this.store, chunk, outcomes, done));
    return chunk.length;
  }
}
