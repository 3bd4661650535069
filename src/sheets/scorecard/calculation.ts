// Calculations of the scorecard (scorecard/index.ts says what a scorecard is): queueing one (one under
// way of the same scorecard is cancelled), and the alarm's runs of it, a chunk of rows per run
// (CHUNK_EVALUATIONS step evaluations at most, EVAL_CONCURRENCY at a time) evaluated off the
// transaction and stored in one, with its totals kept in the calculation's state until it finishes.
import type { BlockContext } from "../../blocks";
import { readValue } from "../cell-values";
import { inputHash } from "../stale-graph";
import type { SheetStore } from "../storage";
import { EVAL_CONCURRENCY, fail, type Fail } from "../types";
import {
  CHUNK_EVALUATIONS,
  combineRow,
  evaluateStep,
  KEPT_CALCULATIONS,
  ROW_RESULT_CALCULATIONS,
  verdictOf,
  zeroVerdicts,
  type Aggregation,
  type Read,
  type RowResult,
  type StepResult,
  type StoredStep,
} from "./steps";
import { cancelOpen, stepsOf, type CalcRow, type CalcState, type ScorecardRow } from "./storage";

export function queueScorecardCalculation(
  store: SheetStore,
  sc: ScorecardRow,
  filter: { rows: number[] | null; steps: string[] | null },
  now: number,
): { ok: true; id: string } | Fail {
  const steps = stepsOf(sc);
  if (steps.length === 0) return fail("validation_error", "scorecard: has no steps; add steps first (PATCH /scorecard)");
  if (filter.steps) {
    for (let i = 0; i < filter.steps.length; i++) {
      if (!steps.some((s) => s.id === filter.steps![i].toLowerCase())) return fail("validation_error", `step_ids[${i}]: no step with this id in the scorecard`);
    }
  }
  if (filter.rows) {
    const found = new Set(
      store.sql
        .exec<{ row_index: number }>(`SELECT row_index FROM rows WHERE row_index IN (SELECT value FROM json_each(?))`, JSON.stringify(filter.rows))
        .toArray()
        .map((r) => r.row_index),
    );
    const i = filter.rows.findIndex((r) => !found.has(r));
    if (i >= 0) return fail("validation_error", `row_indices[${i}]: the sheet has no row ${filter.rows[i]}`);
  }
  cancelOpen(store, sc.id, now);
  const previous = store.sql
    .exec<{ id: string }>(`SELECT id FROM scorecard_calculations WHERE scorecard_id = ? AND status = 'completed' ORDER BY completed_at DESC LIMIT 1`, sc.id)
    .toArray()[0];
  const id = crypto.randomUUID();
  store.sql.exec(
    `INSERT INTO scorecard_calculations (id, scorecard_id, status, sheet_revision, config_hash, rows_filter, steps_filter, previous_id, next_row, created_at)
     VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, 0, ?)`,
    id,
    sc.id,
    store.meta("version"),
    sc.config_hash,
    filter.rows ? JSON.stringify([...new Set(filter.rows)]) : null,
    filter.steps ? JSON.stringify(filter.steps.map((s) => s.toLowerCase())) : null,
    previous?.id ?? null,
    now,
  );
  return { ok: true, id };
}

export function hasScorecardWork(store: SheetStore): boolean {
  return store.sql.exec(`SELECT 1 FROM scorecard_calculations WHERE status IN ('queued', 'running') LIMIT 1`).toArray().length > 0;
}

function emptyState(steps: StoredStep[]): CalcState {
  return {
    total_rows: 0,
    scored_rows: 0,
    sum: 0,
    verdicts: zeroVerdicts(),
    steps: Object.fromEntries(steps.map((s) => [s.id, { title: s.title, primitive_type: s.primitive_type, evaluated: 0, sum: 0, verdicts: zeroVerdicts() }])),
  };
}

function accumulate(state: CalcState, r: RowResult): void {
  state.total_rows++;
  state.verdicts[r.verdict] = (state.verdicts[r.verdict] ?? 0) + 1;
  if (r.aggregate_score !== null) {
    state.scored_rows++;
    state.sum += r.aggregate_score;
  }
  for (const [id, s] of Object.entries(r.step_results)) {
    const acc = state.steps[id];
    if (!acc) continue;
    acc.verdicts[s.verdict] = (acc.verdicts[s.verdict] ?? 0) + 1;
    if (s.score !== null) {
      acc.evaluated++;
      acc.sum += s.score;
    }
  }
}

/**
 * One alarm run of the open calculation: a chunk of rows, evaluated off the transaction, then stored
 * in one (dropped if the calculation was cancelled meanwhile). Answers whether scorecard work remains.
 */
export async function stepScorecard(store: SheetStore, ctx: BlockContext, now: () => number, transaction: <T>(fn: () => T) => T): Promise<boolean> {
  const sql = store.sql;
  let calc = sql.exec<CalcRow>(`SELECT * FROM scorecard_calculations WHERE status IN ('queued', 'running') ORDER BY created_at LIMIT 1`).toArray()[0];
  if (!calc) return false;
  const sc = sql.exec<ScorecardRow>(`SELECT * FROM scorecards WHERE id = ? AND deleted_at IS NULL`, calc.scorecard_id).toArray()[0];
  if (!sc || sc.config_hash !== calc.config_hash) {
    sql.exec(`UPDATE scorecard_calculations SET status = 'cancelled', completed_at = ? WHERE id = ?`, now(), calc.id);
    return hasScorecardWork(store);
  }
  const steps = stepsOf(sc);
  const agg = JSON.parse(sc.aggregation) as Aggregation;
  if (calc.status === "queued") {
    const t = now();
    sql.exec(
      `UPDATE scorecard_calculations SET status = 'running', started_at = ?, sheet_revision = ?, next_row = 0, state = ? WHERE id = ?`,
      t,
      store.meta("version"),
      JSON.stringify(emptyState(steps)),
      calc.id,
    );
    calc = sql.exec<CalcRow>(`SELECT * FROM scorecard_calculations WHERE id = ?`, calc.id).one();
  }
  const rowsFilter = calc.rows_filter ? new Set(JSON.parse(calc.rows_filter) as number[]) : null;
  const stepsFilter = calc.steps_filter ? new Set(JSON.parse(calc.steps_filter) as string[]) : null;
  const perRow = Math.max(1, Math.floor(CHUNK_EVALUATIONS / steps.length));
  const rowIdx = sql
    .exec<{ row_index: number }>(`SELECT row_index FROM rows WHERE row_index >= ? ORDER BY row_index LIMIT ?`, calc.next_row, perRow)
    .toArray()
    .map((r) => r.row_index);
  const state = JSON.parse(calc.state!) as CalcState;
  const previous = new Map<number, RowResult>();
  if (calc.previous_id && rowIdx.length > 0) {
    for (const r of sql.exec<{ row_index: number; result: string }>(
      `SELECT row_index, result FROM scorecard_rows WHERE calculation_id = ? AND row_index BETWEEN ? AND ?`,
      calc.previous_id,
      rowIdx[0],
      rowIdx[rowIdx.length - 1],
    )) {
      previous.set(r.row_index, JSON.parse(r.result) as RowResult);
    }
  }
  const titles = new Map(sql.exec<{ seq: number; title: string }>(`SELECT seq, title FROM columns`).toArray().map((c) => [c.seq, c.title]));
  const seqs = [...new Set(steps.flatMap((s) => [...s.sources, ...(s.target ? [s.target] : [])].map((c) => c.seq)))];
  const cells = new Map<number, Map<number, Read>>();
  if (rowIdx.length > 0) {
    for (const c of sql.exec<{ row_index: number; column_seq: number; status: string; display_value: string | null; value: string | null }>(
      `SELECT row_index, column_seq, status, display_value, value FROM cells WHERE row_index BETWEEN ? AND ? AND column_seq IN (SELECT value FROM json_each(?))`,
      rowIdx[0],
      rowIdx[rowIdx.length - 1],
      JSON.stringify(seqs),
    )) {
      if (!cells.has(c.row_index)) cells.set(c.row_index, new Map());
      cells.get(c.row_index)!.set(c.column_seq, { status: c.status, value: readValue(c.display_value, c.value) });
    }
  }
  // A computed column's absent cell is STALE; an absent text cell is empty.
  const computed = new Set(sql.exec<{ seq: number }>(`SELECT seq FROM columns WHERE type <> 'TEXT'`).toArray().map((c) => c.seq));
  const rowCells = (row: number) => {
    const m = new Map(cells.get(row) ?? []);
    for (const s of seqs) if (!m.has(s) && computed.has(s)) m.set(s, { status: "STALE", value: null });
    return m;
  };

  // The work: each (row, step) to evaluate, or a result carried over from the previous calculation.
  const out = new Map<number, Record<string, StepResult>>();
  const jobs: { row: number; step: StoredStep; cells: Map<number, Read> }[] = [];
  const carried = new Set<number>();
  for (const row of rowIdx) {
    const prev = previous.get(row);
    if (rowsFilter && !rowsFilter.has(row)) {
      if (prev) carried.add(row);
      continue;
    }
    out.set(row, {});
    const rc = rowCells(row);
    for (const step of steps) {
      const old = prev?.step_results[step.id];
      if (stepsFilter && !stepsFilter.has(step.id) && old) out.get(row)![step.id] = old;
      else jobs.push({ row, step, cells: rc });
    }
  }
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < jobs.length; i = next++) {
      const j = jobs[i];
      const old = previous.get(j.row)?.step_results[j.step.id];
      let r: StepResult;
      try {
        r = await evaluateStep(j.step, j.cells, titles, ctx);
        // The same inputs and step as last time: the result is kept, the step not run again.
        if (old && old.input_hash !== null && old.input_hash === r.input_hash && r.status !== "skipped") r = old;
      } catch (err) {
        console.error(JSON.stringify({ level: "error", msg: "scorecard step failed unexpectedly", error: String(err) }));
        r = { title: j.step.title, primitive_type: j.step.primitive_type, status: "error", score: null, verdict: "error", error: "the step failed unexpectedly", input_hash: null };
      }
      out.get(j.row)![j.step.id] = r;
    }
  };
  // Steps that only read values are evaluated before awaiting anything; blocks may wait on the network.
  await Promise.all(Array.from({ length: Math.min(EVAL_CONCURRENCY, jobs.length) }, worker));

  const t = now();
  return transaction(() => {
    const still = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM scorecard_calculations WHERE id = ? AND status = 'running'`, calc.id).one().n;
    if (still === 0) return hasScorecardWork(store);
    const results: [number, RowResult][] = [];
    for (const row of rowIdx) {
      if (carried.has(row)) results.push([row, previous.get(row)!]);
      else if (out.has(row)) {
        const stepResults = out.get(row)!;
        const hash = inputHash("SCORECARD_ROW", calc.config_hash, Object.fromEntries(Object.entries(stepResults).map(([k, v]) => [k, v.input_hash])));
        results.push([row, combineRow(steps, stepResults, agg, hash)]);
      }
    }
    for (const [row, r] of results) {
      sql.exec(
        `INSERT OR REPLACE INTO scorecard_rows (calculation_id, row_index, aggregate_score, verdict, result, computed_at) VALUES (?, ?, ?, ?, ?, ?)`,
        calc.id,
        row,
        r.aggregate_score,
        r.verdict,
        JSON.stringify(r),
        t,
      );
      accumulate(state, r);
    }
    const last = rowIdx[rowIdx.length - 1] ?? calc.next_row - 1;
    if (sql.exec(`SELECT 1 FROM rows WHERE row_index > ? LIMIT 1`, last).toArray().length === 0) {
      finish(store, calc, state, t);
      return hasScorecardWork(store);
    }
    sql.exec(`UPDATE scorecard_calculations SET next_row = ?, state = ? WHERE id = ?`, last + 1, JSON.stringify(state), calc.id);
    return true;
  });
}

function finish(store: SheetStore, calc: CalcRow, state: CalcState, t: number): void {
  const sc = store.sql.exec<ScorecardRow>(`SELECT * FROM scorecards WHERE id = ?`, calc.scorecard_id).one();
  const agg = JSON.parse(sc.aggregation) as Aggregation;
  const score = state.scored_rows > 0 ? state.sum / state.scored_rows : null;
  const criterion = Object.fromEntries(
    Object.entries(state.steps).map(([id, s]) => [
      id,
      { title: s.title, primitive_type: s.primitive_type, mean_score: s.evaluated > 0 ? s.sum / s.evaluated : null, evaluated_rows: s.evaluated, verdict_counts: s.verdicts },
    ]),
  );
  const prev = calc.previous_id
    ? store.sql.exec<CalcRow>(`SELECT * FROM scorecard_calculations WHERE id = ? AND status = 'completed'`, calc.previous_id).toArray()[0]
    : undefined;
  const prevScore = prev ? ((JSON.parse(prev.summary!) as { aggregate_score: number | null }).aggregate_score ?? null) : null;
  const drift = prev
    ? { previous_calculation_id: prev.id, previous_aggregate_score: prevScore, aggregate_score_delta: score !== null && prevScore !== null ? score - prevScore : null }
    : null;
  const summary = {
    aggregate_score: score,
    aggregate_verdict: score === null ? (state.total_rows > 0 && state.verdicts.error > 0 ? "error" : "skipped") : verdictOf(score, agg.pass_threshold, agg.warn_threshold),
    total_rows: state.total_rows,
    scored_rows: state.scored_rows,
    verdict_counts: state.verdicts,
    criterion_summaries: criterion,
    drift_summary: drift,
  };
  store.sql.exec(`UPDATE scorecard_calculations SET status = 'completed', completed_at = ?, state = NULL, summary = ? WHERE id = ?`, t, JSON.stringify(summary), calc.id);
  // Row results of older calculations go (their summaries stay), and the oldest calculations beyond KEPT_CALCULATIONS.
  store.sql.exec(
    `DELETE FROM scorecard_rows WHERE calculation_id IN (
       SELECT id FROM scorecard_calculations WHERE status NOT IN ('queued', 'running')
       AND id NOT IN (SELECT id FROM scorecard_calculations WHERE status NOT IN ('queued', 'running') ORDER BY completed_at DESC LIMIT ?))`,
    ROW_RESULT_CALCULATIONS,
  );
  store.sql.exec(
    `DELETE FROM scorecard_calculations WHERE status NOT IN ('queued', 'running')
       AND id NOT IN (SELECT id FROM scorecard_calculations WHERE status NOT IN ('queued', 'running') ORDER BY completed_at DESC LIMIT ?)`,
    KEPT_CALCULATIONS,
  );
}
