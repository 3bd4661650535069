// The scorecard in the object's SQLite (scorecard/index.ts says what a scorecard is): the scorecards
// table (the active one is the latest not deleted, its steps stored as JSON), saving, deleting and
// migrating the sheet's score into steps; and the views of a scorecard, its calculations and their
// row results.
import { toIso } from "../../lib/time";
import { cellId } from "../cell-id";
import { readSettings } from "../score";
import type { SheetStore } from "../storage";
import { fail, type Fail, type JsonValue, type SheetIdentity } from "../types";
import {
  MAX_STEPS,
  planScorecard,
  stepView,
  zeroVerdicts,
  type Aggregation,
  type Col,
  type RowResult,
  type ScorecardInput,
  type StepInput,
  type StoredStep,
  type Verdict,
} from "./steps";

export interface ScorecardRow {
  id: string;
  name: string;
  evaluated_column_ids: string;
  aggregation: string;
  display_config: string | null;
  baseline_config: string | null;
  steps: string;
  config_hash: string;
  created_at: number;
  updated_at: number;
  [key: string]: SqlStorageValue;
}

export interface CalcRow {
  id: string;
  scorecard_id: string;
  status: "queued" | "running" | "completed" | "failed" | "cancelled";
  sheet_revision: number;
  config_hash: string;
  rows_filter: string | null;
  steps_filter: string | null;
  previous_id: string | null;
  next_row: number;
  state: string | null;
  summary: string | null;
  error_summary: string | null;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  [key: string]: SqlStorageValue;
}

/** The running totals of a calculation under way (its `state`). */
export interface CalcState {
  total_rows: number;
  scored_rows: number;
  sum: number;
  verdicts: Record<string, number>;
  steps: Record<string, { title: string; primitive_type: string; evaluated: number; sum: number; verdicts: Record<string, number> }>;
}

export function activeScorecard(store: SheetStore): ScorecardRow | undefined {
  return store.sql.exec<ScorecardRow>(`SELECT * FROM scorecards WHERE deleted_at IS NULL ORDER BY created_at DESC LIMIT 1`).toArray()[0];
}

export function stepsOf(sc: ScorecardRow): StoredStep[] {
  return JSON.parse(sc.steps) as StoredStep[];
}

export function saveScorecard(
  store: SheetStore,
  input: ScorecardInput,
  plan: { steps: StoredStep[]; aggregation: Aggregation; configHash: string },
  existing: ScorecardRow | undefined,
  now: number,
): string {
  const values = [
    input.name,
    JSON.stringify(input.evaluated_column_ids.map((c) => c.toLowerCase())),
    JSON.stringify(plan.aggregation),
    input.display_config === null ? null : JSON.stringify(input.display_config),
    input.baseline_config === null ? null : JSON.stringify(input.baseline_config),
    JSON.stringify(plan.steps),
    plan.configHash,
    now,
  ];
  if (existing) {
    store.sql.exec(
      `UPDATE scorecards SET name = ?, evaluated_column_ids = ?, aggregation = ?, display_config = ?, baseline_config = ?, steps = ?, config_hash = ?, updated_at = ? WHERE id = ?`,
      ...values,
      existing.id,
    );
    // A calculation under way of the configuration before stops.
    if (existing.config_hash !== plan.configHash) cancelOpen(store, existing.id, now);
    return existing.id;
  }
  const id = crypto.randomUUID();
  store.sql.exec(
    `INSERT INTO scorecards (name, evaluated_column_ids, aggregation, display_config, baseline_config, steps, config_hash, updated_at, id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ...values,
    id,
    now,
  );
  return id;
}

/** Cancels the scorecard's calculations under way; answers their ids. */
export function cancelOpen(store: SheetStore, scorecardId: string, now: number): string[] {
  const ids = store.sql
    .exec<{ id: string }>(`SELECT id FROM scorecard_calculations WHERE scorecard_id = ? AND status IN ('queued', 'running')`, scorecardId)
    .toArray()
    .map((r) => r.id);
  store.sql.exec(`UPDATE scorecard_calculations SET status = 'cancelled', completed_at = ? WHERE scorecard_id = ? AND status IN ('queued', 'running')`, now, scorecardId);
  return ids;
}

/** Marks the scorecard deleted and cancels its calculations under way (in the caller's transaction). */
export function removeScorecard(store: SheetStore, sc: ScorecardRow, now: number): void {
  store.sql.exec(`UPDATE scorecards SET deleted_at = ? WHERE id = ?`, now, sc.id);
  cancelOpen(store, sc.id, now);
}

/**
 * Turns the sheet's score configuration into COLUMN_AGGREGATE steps, one per scored column (its
 * aggregation becomes the scorecard's method: mean → weighted_mean, all → min, any → max), added to
 * the active scorecard or to a new one named "Score".
 */
export function convertLegacyScore(
  store: SheetStore,
  cols: Col[],
  deleteLegacy: boolean,
  now: number,
): { ok: true; converted: number; skipped: { reason: string; score_type: string | null }[]; deleted: boolean; changed: boolean } | Fail {
  const legacy = readSettings(store);
  if (!legacy) return { ok: true, converted: 0, skipped: [{ reason: "the sheet has no score configuration to migrate", score_type: null }], deleted: false, changed: false };
  const sc = activeScorecard(store);
  const live = new Map(cols.map((c) => [c.seq, c]));
  const skipped: { reason: string; score_type: string | null }[] = [];
  const steps: StepInput[] = sc
    ? stepsOf(sc).map((s) => ({
        id: s.id,
        title: s.title,
        primitive_type: s.primitive_type,
        source_column_ids: s.sources.map((c) => c.id),
        target_column_id: s.target?.id ?? null,
        weight: s.weight,
        required: s.required,
        thresholds: s.thresholds,
        primitive_config: s.primitive_config,
        score_adapter: s.score_adapter,
        description: s.description,
        evidence_mode: s.evidence_mode,
      }))
    : [];
  let converted = 0;
  for (const c of legacy.columns) {
    const col = live.get(c.seq);
    if (!col) {
      skipped.push({ reason: `column ${c.id} was deleted`, score_type: legacy.score_type });
      continue;
    }
    if (steps.length >= MAX_STEPS) {
      skipped.push({ reason: `the scorecard already has ${MAX_STEPS} steps, the most it holds`, score_type: legacy.score_type });
      continue;
    }
    steps.push({
      title: col.title,
      primitive_type: "COLUMN_AGGREGATE",
      source_column_ids: [col.id],
      primitive_config: { score_type: legacy.score_type, true_values: legacy.true_values, false_values: legacy.false_values },
    });
    converted++;
  }
  const method = legacy.assertion_aggregation === "all" ? "min" : legacy.assertion_aggregation === "any" ? "max" : "weighted_mean";
  if (converted > 0) {
    const input: ScorecardInput = {
      name: sc?.name ?? "Score",
      evaluated_column_ids: sc ? (JSON.parse(sc.evaluated_column_ids) as string[]) : [],
      steps,
      aggregation: sc ? (JSON.parse(sc.aggregation) as Record<string, unknown>) : { method },
      display_config: sc?.display_config ? (JSON.parse(sc.display_config) as Record<string, unknown>) : null,
      baseline_config: sc?.baseline_config ? (JSON.parse(sc.baseline_config) as Record<string, unknown>) : null,
    };
    const plan = planScorecard(cols, input, sc ? stepsOf(sc) : [], now);
    // The active scorecard itself no longer checks (a column it reads was deleted): nothing is changed.
    if (!plan.ok) return fail("validation_error", `scorecard: ${plan.message}; fix the scorecard first (PATCH /scorecard)`);
    saveScorecard(store, input, plan, sc, now);
  }
  if (deleteLegacy) {
    store.sql.exec(`DELETE FROM score_settings`);
    configureScoreNone(store, now);
  }
  return { ok: true, converted, skipped, deleted: deleteLegacy, changed: converted > 0 || deleteLegacy };
}

/** With the legacy configuration gone, its calculations under way stop too. */
function configureScoreNone(store: SheetStore, now: number): void {
  store.sql.exec(`UPDATE score_calculations SET status = 'cancelled', completed_at = ? WHERE status IN ('queued', 'running')`, now);
}

// ---------------------------------------------------------------------------------------------
// Views

function latestCalc(store: SheetStore, scId: string, where = "1"): CalcRow | undefined {
  return store.sql.exec<CalcRow>(`SELECT * FROM scorecard_calculations WHERE scorecard_id = ? AND ${where} ORDER BY created_at DESC LIMIT 1`, scId).toArray()[0];
}

export function calculationView(ident: SheetIdentity, c: CalcRow) {
  const s = c.summary
    ? (JSON.parse(c.summary) as { aggregate_score: number | null; aggregate_verdict: Verdict; criterion_summaries: Record<string, JsonValue>; drift_summary: Record<string, JsonValue> | null; total_rows: number; scored_rows: number; verdict_counts: Record<string, number> })
    : null;
  const st = c.state ? (JSON.parse(c.state) as CalcState) : null;
  return {
    id: c.id,
    scorecard_id: c.scorecard_id,
    workspace_id: ident.workspaceId,
    sheet_id: ident.sheetId,
    sheet_revision: String(c.sheet_revision),
    status: c.status,
    aggregate_score: s?.aggregate_score ?? null,
    aggregate_verdict: s?.aggregate_verdict ?? null,
    criterion_summaries: (s?.criterion_summaries ?? {}) as Record<string, JsonValue>,
    drift_summary: s?.drift_summary ?? null,
    config_hash: c.config_hash,
    started_at: toIso(c.started_at),
    completed_at: toIso(c.completed_at),
    error_summary: c.error_summary,
    total_rows: s?.total_rows ?? st?.total_rows ?? 0,
    scored_rows: s?.scored_rows ?? st?.scored_rows ?? 0,
    verdict_counts: s?.verdict_counts ?? st?.verdicts ?? zeroVerdicts(),
    row_indices: c.rows_filter ? (JSON.parse(c.rows_filter) as number[]) : null,
    step_ids: c.steps_filter ? (JSON.parse(c.steps_filter) as string[]) : null,
    created_at: toIso(c.created_at),
  };
}

export function scorecardView(store: SheetStore, ident: SheetIdentity, sc: ScorecardRow) {
  const steps = stepsOf(sc);
  const latest = latestCalc(store, sc.id, "status <> 'cancelled'");
  const version = store.meta("version");
  let status: "needs_setup" | "ready" | "queued" | "running" | "completed" | "stale" | "failed";
  const reasons: string[] = [];
  let staleSteps: string[] = [];
  if (steps.length === 0) status = "needs_setup";
  else if (!latest) status = "ready";
  else if (latest.status === "queued" || latest.status === "running" || latest.status === "failed") status = latest.status;
  else {
    if (latest.config_hash !== sc.config_hash) reasons.push("configuration_changed");
    if (latest.sheet_revision < version) reasons.push("sheet_changed");
    status = reasons.length > 0 ? "stale" : "completed";
    if (reasons.includes("configuration_changed")) {
      const summary = latest.summary ? (JSON.parse(latest.summary) as { criterion_summaries: Record<string, unknown> }) : null;
      staleSteps = steps.filter((s) => !summary || !(s.id in summary.criterion_summaries) || s.updated_at > (latest.started_at ?? 0)).map((s) => s.id);
    }
  }
  return {
    id: sc.id,
    workspace_id: ident.workspaceId,
    smart_table_id: ident.tableId,
    sheet_id: ident.sheetId,
    name: sc.name,
    evaluated_column_ids: JSON.parse(sc.evaluated_column_ids) as string[],
    aggregation: JSON.parse(sc.aggregation) as Aggregation & Record<string, JsonValue>,
    display_config: sc.display_config === null ? null : (JSON.parse(sc.display_config) as Record<string, JsonValue>),
    baseline_config: sc.baseline_config === null ? null : (JSON.parse(sc.baseline_config) as Record<string, JsonValue>),
    status,
    stale_state: { is_stale: reasons.length > 0, reasons, stale_step_ids: staleSteps, stale_row_indices: [] as number[] },
    latest_calculation_id: latest?.id ?? null,
    config_hash: sc.config_hash,
    steps: steps.map((s, i) => stepView(s, i)),
    created_at: toIso(sc.created_at),
    updated_at: toIso(sc.updated_at),
  };
}

/** GET /scorecard: the active scorecard, its latest calculation, the latest completed one, and progress of one under way. */
export function scorecardPayload(store: SheetStore, ident: SheetIdentity) {
  const sc = activeScorecard(store);
  if (!sc) return { scorecard: null, latest_calculation: null, display_calculation: null, criterion_summaries: null, drift_summary: null, progress: null };
  const latest = latestCalc(store, sc.id);
  const shown = latestCalc(store, sc.id, "status = 'completed'");
  const display = shown ? calculationView(ident, shown) : null;
  let progress = null;
  if (latest && (latest.status === "running" || latest.status === "queued")) {
    const st = latest.state ? (JSON.parse(latest.state) as CalcState) : null;
    progress = { scored_rows: st?.total_rows ?? 0, total_rows: store.meta("row_count"), partial_score: st && st.scored_rows > 0 ? st.sum / st.scored_rows : null };
  }
  return {
    scorecard: scorecardView(store, ident, sc),
    latest_calculation: latest ? calculationView(ident, latest) : null,
    display_calculation: display,
    criterion_summaries: display?.criterion_summaries ?? null,
    drift_summary: display?.drift_summary ?? null,
    progress,
  };
}

export function findCalculation(store: SheetStore, id: string): CalcRow | undefined {
  return store.sql.exec<CalcRow>(`SELECT * FROM scorecard_calculations WHERE id = ?`, id).toArray()[0];
}

/** The calculation rows are read from: the one named, else the latest of the active scorecard. */
function rowsCalculation(store: SheetStore, calculationId: string | null): CalcRow | undefined | null {
  if (calculationId) return findCalculation(store, calculationId) ?? null;
  const sc = activeScorecard(store);
  return sc ? latestCalc(store, sc.id, "status IN ('queued', 'running', 'completed')") : undefined;
}

function rowDrift(store: SheetStore, calc: CalcRow, row: number, r: { aggregate_score: number | null; verdict: string }) {
  if (!calc.previous_id) return null;
  const p = store.sql
    .exec<{ aggregate_score: number | null; verdict: string }>(`SELECT aggregate_score, verdict FROM scorecard_rows WHERE calculation_id = ? AND row_index = ?`, calc.previous_id, row)
    .toArray()[0];
  if (!p) return null;
  return {
    previous_calculation_id: calc.previous_id,
    previous_score: p.aggregate_score,
    previous_verdict: p.verdict,
    score_delta: r.aggregate_score !== null && p.aggregate_score !== null ? r.aggregate_score - p.aggregate_score : null,
  };
}

/** A page of row summaries (from row index `cursor`), optionally of one verdict. */
export function listRowResults(store: SheetStore, q: { calculationId: string | null; verdict: Verdict | null; cursor: number; limit: number }) {
  const calc = rowsCalculation(store, q.calculationId);
  if (calc === null) return fail("not_found", "calculation_id: calculation not found");
  if (!calc) return { ok: true as const, calculation_id: null, rows: [], next_cursor: null, verdict_counts: {} };
  const stale = calc.sheet_revision < store.meta("version");
  const rows = store.sql
    .exec<{ row_index: number; aggregate_score: number | null; verdict: string; result: string }>(
      `SELECT row_index, aggregate_score, verdict, result FROM scorecard_rows WHERE calculation_id = ? AND row_index >= ? ${q.verdict ? "AND verdict = ?" : ""}
       ORDER BY row_index LIMIT ?`,
      ...(q.verdict ? [calc.id, q.cursor, q.verdict, q.limit + 1] : [calc.id, q.cursor, q.limit + 1]),
    )
    .toArray();
  const page = rows.slice(0, q.limit);
  const counts = zeroVerdicts();
  for (const r of store.sql.exec<{ verdict: string; n: number }>(`SELECT verdict, COUNT(*) AS n FROM scorecard_rows WHERE calculation_id = ? GROUP BY verdict`, calc.id)) {
    counts[r.verdict] = r.n;
  }
  return {
    ok: true as const,
    calculation_id: calc.id,
    rows: page.map((r) => ({
      row_index: r.row_index,
      aggregate_score: r.aggregate_score,
      aggregate_verdict: r.verdict as Verdict,
      drift_summary: rowDrift(store, calc, r.row_index, r),
      stale_state: { is_stale: stale },
      error_summary: (JSON.parse(r.result) as RowResult).error_summary,
    })),
    next_cursor: rows.length > q.limit ? page[page.length - 1].row_index + 1 : null,
    verdict_counts: counts,
  };
}

export function rowResult(store: SheetStore, ident: SheetIdentity, row: number, calculationId: string | null) {
  const calc = rowsCalculation(store, calculationId);
  if (calc === null) return fail("not_found", "calculation_id: calculation not found");
  if (!calc) return fail("not_found", "the sheet has no scorecard calculation");
  const r = store.sql
    .exec<{ result: string; computed_at: number; aggregate_score: number | null; verdict: string }>(
      `SELECT result, computed_at, aggregate_score, verdict FROM scorecard_rows WHERE calculation_id = ? AND row_index = ?`,
      calc.id,
      row,
    )
    .toArray()[0];
  if (!r) return fail("not_found", `row_index: calculation ${calc.id} has no result for row ${row}`);
  const res = JSON.parse(r.result) as RowResult;
  return {
    ok: true as const,
    id: cellId(calc.id, row),
    calculation_id: calc.id,
    scorecard_id: calc.scorecard_id,
    sheet_id: ident.sheetId,
    row_index: row,
    aggregate_score: res.aggregate_score,
    aggregate_verdict: res.verdict,
    step_results: res.step_results as unknown as Record<string, JsonValue>,
    drift_summary: rowDrift(store, calc, row, r),
    stale_state: { is_stale: calc.sheet_revision < store.meta("version") },
    error_summary: res.error_summary,
    config_hash: calc.config_hash,
    input_hash: res.input_hash,
    computed_at: toIso(r.computed_at),
  };
}
