// What the sheet object hands its modules for one admitted call: the store, the sheet it is, and the
// object's effects. The object (sheet-object.ts) keeps the door: it checks access once, owns the
// transactions, the cached column model, the alarm and the copies to D1; the modules (column-changes.ts,
// cells.ts, recalc-queue.ts, imports.ts, versions.ts, score.ts, scorecard/) keep the statements and rules.
import type { SheetStore } from "./storage";
import type { SheetIdentity, SheetModel } from "./types";

export interface SheetCore {
  readonly store: SheetStore;
  /** The sheet the call was admitted to. */
  readonly ident: SheetIdentity;
  /** The column model, cached until a column changes (column-plan.ts builds it). */
  model(): SheetModel;
  /** Drops the cached model: call it when a change adds, removes or reconfigures a column. */
  dropModel(): void;
  /** The object's storage transaction (transactionSync): a mutation runs in exactly one. */
  tx<T>(fn: () => T): T;
  /** Bumps and returns the version; once per committed mutation, inside `tx`. */
  bump(): number;
  /** Finishes pending STALE and insert work before reading or changing cell statuses (column-work.ts). */
  settle(): void;
  /** Sets the alarm now (queued recalculation, score or scorecard work). */
  arm(): Promise<void>;
  /** Sets the alarm if a change left column work pending. */
  armForColumnWork(): Promise<void>;
  /** Copies the listing fields to D1 now. */
  syncListing(): Promise<void>;
  /** Copies the listing fields to D1 off the caller's path (a burst of edits shares one copy). */
  syncSoon(): void;
  /** Replaces columns' rows in D1's sheet_prompt_refs (after any change of their type or config), in one batch. */
  syncPromptRefs(columns: readonly { id: string; type: string; config: unknown }[]): Promise<void>;
}
