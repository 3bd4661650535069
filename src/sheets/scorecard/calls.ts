// The scorecard calls of an admitted sheet (core.ts): read, configure, delete, calculate, cancel, the
// calculations and row results, and the migration of the sheet's score into steps.
import type { SheetCore } from "../core";
import { fail, type Result } from "../types";
import { queueScorecardCalculation } from "./calculation";
import { planScorecard, type ScorecardInput, type Verdict } from "./steps";
import {
  activeScorecard,
  calculationView,
  cancelOpen,
  convertLegacyScore,
  findCalculation,
  listRowResults,
  removeScorecard,
  rowResult,
  saveScorecard,
  scorecardPayload,
  scorecardView,
  stepsOf,
} from "./storage";

export function scorecardFor(s: SheetCore): Result<ReturnType<typeof scorecardPayload>> {
  return { ok: true, ...scorecardPayload(s.store, s.ident) };
}

/** Creates or replaces the active scorecard's configuration (one new sheet version). */
export async function configureScorecard(s: SheetCore, input: ScorecardInput): Promise<Result<{ scorecard: ReturnType<typeof scorecardView>; version: number }>> {
  const now = Date.now();
  const existing = activeScorecard(s.store);
  const plan = planScorecard(s.model().list, input, existing ? stepsOf(existing) : [], now);
  if (!plan.ok) return plan;
  const version = s.tx(() => {
    saveScorecard(s.store, input, plan, existing, now);
    return s.bump();
  });
  await s.syncListing();
  return { ok: true, scorecard: scorecardView(s.store, s.ident, activeScorecard(s.store)!), version };
}

export async function deleteScorecard(s: SheetCore): Promise<Result<{ version: number }>> {
  const sc = activeScorecard(s.store);
  if (!sc) return fail("not_found", "the sheet has no scorecard");
  const version = s.tx(() => {
    removeScorecard(s.store, sc, Date.now());
    return s.bump();
  });
  await s.syncListing();
  return { ok: true, version };
}

/** Queues a calculation of the scorecard (one under way is cancelled): all rows and steps, or those named. */
export async function recalculateScorecard(
  s: SheetCore,
  filter: { rows: number[] | null; steps: string[] | null },
): Promise<Result<{ calculation_id: string; version: number }>> {
  const sc = activeScorecard(s.store);
  if (!sc) return fail("validation_error", "scorecard: the sheet has none; configure one first (PATCH /scorecard)");
  const q = s.tx(() => queueScorecardCalculation(s.store, sc, filter, Date.now()));
  if (!q.ok) return q;
  await s.arm();
  return { ok: true, calculation_id: q.id, version: s.store.meta("version") };
}

export function cancelScorecard(s: SheetCore): Result<{ scorecard_id: string; calculation_ids: string[] }> {
  const sc = activeScorecard(s.store);
  if (!sc) return fail("not_found", "the sheet has no scorecard");
  const ids = s.tx(() => cancelOpen(s.store, sc.id, Date.now()));
  return { ok: true, scorecard_id: sc.id, calculation_ids: ids };
}

export function scorecardCalculationFor(s: SheetCore, id: string): Result<{ calculation: ReturnType<typeof calculationView> }> {
  const c = findCalculation(s.store, id);
  return c ? { ok: true, calculation: calculationView(s.ident, c) } : fail("not_found", "calculation not found");
}

export function scorecardRowsFor(s: SheetCore, q: { calculationId: string | null; verdict: Verdict | null; cursor: number; limit: number }) {
  return listRowResults(s.store, q);
}

export function scorecardRowFor(s: SheetCore, row: number, calculationId: string | null) {
  return rowResult(s.store, s.ident, row, calculationId);
}

/** Turns the sheet's score configuration into scorecard steps (and, asked to, removes it). */
export async function migrateLegacyScore(
  s: SheetCore,
  deleteLegacy: boolean,
): Promise<Result<{ scorecard: ReturnType<typeof scorecardView> | null; converted_count: number; skipped: { reason: string; score_type: string | null }[]; legacy_score_deleted: boolean; version: number }>> {
  const cols = s.model().list;
  const out = s.tx(() => {
    const r = convertLegacyScore(s.store, cols, deleteLegacy, Date.now());
    return r.ok ? { ...r, version: r.changed ? s.bump() : s.store.meta("version") } : r;
  });
  if (!out.ok) return out;
  if (out.changed) await s.syncListing();
  const sc = activeScorecard(s.store);
  return {
    ok: true,
    scorecard: sc ? scorecardView(s.store, s.ident, sc) : null,
    converted_count: out.converted,
    skipped: out.skipped,
    legacy_score_deleted: out.deleted,
    version: out.version,
  };
}
