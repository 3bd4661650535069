// A sheet's score: a configuration naming the columns to score (booleans, numbers, or both) and
// calculations of it. A calculation runs on the object's alarm once no cell is queued or running (so
// it scores the results of the recalculations asked before it), SCORE_RANGE_ROWS rows per alarm run
// with requests served between runs; if the sheet changes meanwhile it starts over, so a completed
// score is always of one sheet version. Completed calculations are the score history.
import { toIso } from "../lib/time";
import type { SheetCore } from "./core";
import type { SheetStore } from "./storage";
import { fail, type Fail, type JsonValue, type Result, type SheetIdentity } from "./types";

/** Rows read per alarm run of a score calculation: one primary-key range of the cells table. */
export const SCORE_RANGE_ROWS = 5000;
/** Columns one score reads at most. */
export const MAX_SCORE_COLUMNS = 50;
/** Completed calculations kept (the score history's points come from them). */
export const MAX_SCORE_HISTORY = 5000;

export const DEFAULT_TRUE_VALUES = ["true", "yes", "y", "pass", "passed"];
export const DEFAULT_FALSE_VALUES = ["false", "no", "n", "fail", "failed"];

export type ScoreType = "auto" | "boolean" | "numeric";
export type Aggregation = "all" | "any" | "mean";

/** The configuration as stored: columns by seq (stable) and id (shown). */
export interface ScoreSettings {
  id: string;
  score_type: ScoreType;
  columns: { seq: number; id: string }[];
  true_values: string[];
  false_values: string[];
  assertion_aggregation: Aggregation;
}

/** What PATCH /score asks for, validated for shape by the route; columns by id or title. */
export interface ScoreConfigInput {
  score_type: ScoreType;
  column_ids: string[];
  column_names: string[];
  true_values: string[] | null;
  false_values: string[] | null;
  assertion_aggregation: Aggregation | null;
}

interface ColumnAcc {
  included: number;
  excluded: number;
  sum: number;
  trues: number;
  falses: number;
  numbers: number;
  min: number | null;
  max: number | null;
}

interface ScoreState {
  total_rows: number;
  scored_rows: number;
  sum: number;
  columns: ColumnAcc[];
}

interface CalcRow {
  id: string;
  config_id: string;
  status: "queued" | "running" | "completed" | "failed" | "cancelled";
  sheet_version: number;
  next_row: number;
  end_row: number;
  state: string | null;
  result: string | null;
  error: string | null;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  [key: string]: SqlStorageValue;
}

/** A completed calculation's outcome, as stored. */
interface ScoreResult {
  aggregate_score: number | null;
  total_rows: number;
  scored_rows: number;
  excluded_rows: number;
  columns: {
    column_id: string;
    title: string;
    score: number | null;
    included_count: number;
    excluded_count: number;
    true_count: number;
    false_count: number;
    numeric_count: number;
    min: number | null;
    max: number | null;
    resolved_scoring_type: ScoreType | null;
  }[];
}

export function readSettings(store: SheetStore): ScoreSettings | null {
  const r = store.sql.exec<{ config: string }>(`SELECT config FROM score_settings WHERE key = 'current'`).toArray()[0];
  return r ? (JSON.parse(r.config) as ScoreSettings) : null;
}

function writeSettings(store: SheetStore, s: ScoreSettings, now: number): void {
  store.sql.exec(
    `INSERT INTO score_settings (key, config, updated_at) VALUES ('current', ?1, ?2) ON CONFLICT (key) DO UPDATE SET config = ?1, updated_at = ?2`,
    JSON.stringify(s),
    now,
  );
}

/**
 * Resolves a configuration against the sheet's columns (by id, or by title without regard to case);
 * an unknown column is a 404, a list over MAX_SCORE_COLUMNS or true and false values that overlap a 400.
 */
function planSettings(columns: { seq: number; id: string; title: string }[], input: ScoreConfigInput): ScoreSettings | Fail {
  const chosen: { seq: number; id: string }[] = [];
  const seen = new Set<number>();
  const add = (c: { seq: number; id: string }) => {
    if (!seen.has(c.seq)) chosen.push({ seq: c.seq, id: c.id });
    seen.add(c.seq);
  };
  for (let i = 0; i < input.column_ids.length; i++) {
    const c = columns.find((x) => x.id === input.column_ids[i].toLowerCase());
    if (!c) return fail("not_found", `column_ids[${i}]: no column with this id in this sheet`);
    add(c);
  }
  for (let i = 0; i < input.column_names.length; i++) {
    const name = input.column_names[i];
    const c = columns.find((x) => x.title === name) ?? columns.find((x) => x.title.toLowerCase() === name.toLowerCase());
    if (!c) return fail("not_found", `column_names[${i}]: no column titled ${JSON.stringify(name)} in this sheet`);
    add(c);
  }
  if (chosen.length === 0) return fail("validation_error", "column_ids: give at least one column to score (column_ids or column_names)");
  if (chosen.length > MAX_SCORE_COLUMNS) return fail("validation_error", `column_ids: names ${chosen.length} columns; a score reads at most ${MAX_SCORE_COLUMNS}`);
  const norm = (v: string[]) => [...new Set(v.map((x) => x.trim().toLowerCase()))];
  const trues = norm(input.true_values ?? DEFAULT_TRUE_VALUES);
  const falses = norm(input.false_values ?? DEFAULT_FALSE_VALUES);
  const both = trues.filter((t) => falses.includes(t));
  if (both.length > 0) return fail("validation_error", `true_values: ${JSON.stringify(both[0])} is also one of false_values`);
  return {
    id: crypto.randomUUID(),
    score_type: input.score_type,
    columns: chosen,
    true_values: trues,
    false_values: falses,
    assertion_aggregation: input.assertion_aggregation ?? "mean",
  };
}

/** Stores a new configuration (in the caller's transaction); calculations of the previous one stop. */
export function configure(store: SheetStore, s: ScoreSettings, now: number): void {
  writeSettings(store, s, now);
  store.sql.exec(`UPDATE score_calculations SET status = 'cancelled', completed_at = ? WHERE status IN ('queued', 'running')`, now);
}

/** Puts back the configuration a saved version recorded (its columns by id, as restored); columns missing are left out. */
export function restoreSettings(store: SheetStore, saved: SettingsView | null, now: number): void {
  if (!saved) return;
  const cfg = saved.score_config as { column_ids: string[]; true_values: string[]; false_values: string[]; assertion_aggregation: Aggregation };
  const seqs = new Map(store.sql.exec<{ seq: number; id: string }>(`SELECT seq, id FROM columns`).toArray().map((c) => [c.id, c.seq]));
  const columns = cfg.column_ids.filter((id) => seqs.has(id)).map((id) => ({ id, seq: seqs.get(id)! }));
  if (columns.length === 0) return;
  configure(
    store,
    { id: crypto.randomUUID(), score_type: saved.score_type, columns, true_values: cfg.true_values, false_values: cfg.false_values, assertion_aggregation: cfg.assertion_aggregation },
    now,
  );
}

/** A column of the configuration that no longer exists, as the 400 (or failure) that names it. */
function missingColumn(store: SheetStore, s: ScoreSettings): string | null {
  const live = new Set(store.sql.exec<{ seq: number }>(`SELECT seq FROM columns`).toArray().map((c) => c.seq));
  const gone = s.columns.find((c) => !live.has(c.seq));
  return gone ? `score column ${gone.id} was deleted; configure the score again (PATCH /score)` : null;
}

/** Queues a calculation of the current configuration (restarting one still open). */
export function queueCalculation(store: SheetStore, now: number): { ok: true; configId: string } | Fail {
  const s = readSettings(store);
  if (!s) return fail("validation_error", "score: is not configured; configure it first (PATCH /score)");
  const gone = missingColumn(store, s);
  if (gone) return fail("validation_error", gone);
  const open = store.sql.exec<{ id: string }>(`SELECT id FROM score_calculations WHERE status IN ('queued', 'running') ORDER BY created_at LIMIT 1`).toArray()[0];
  if (open) {
    store.sql.exec(`UPDATE score_calculations SET status = 'queued', next_row = 0, state = NULL, started_at = NULL, created_at = ? WHERE id = ?`, now, open.id);
  } else {
    store.sql.exec(
      `INSERT INTO score_calculations (id, config_id, status, sheet_version, next_row, end_row, created_at) VALUES (?, ?, 'queued', ?, 0, 0, ?)`,
      crypto.randomUUID(),
      s.id,
      store.meta("version"),
      now,
    );
  }
  return { ok: true, configId: s.id };
}

export function hasScoreWork(store: SheetStore): boolean {
  return store.sql.exec(`SELECT 1 FROM score_calculations WHERE status IN ('queued', 'running') LIMIT 1`).toArray().length > 0;
}

/** What a cell counts as: a boolean, a number, or nothing (empty, not COMPLETED, or neither). */
export function scoreValue(
  cell: { status: string; display_value: string | null; value: string | null } | undefined,
  mode: ScoreType,
  trues: ReadonlySet<string>,
  falses: ReadonlySet<string>,
): { kind: "bool"; v: boolean } | { kind: "num"; v: number } | null {
  if (!cell || cell.status !== "COMPLETED") return null;
  let v: unknown = cell.display_value;
  if (cell.value !== null) {
    try {
      v = JSON.parse(cell.value);
    } catch {
      return null;
    }
  }
  const asNumber = (n: number) => {
    if (!Number.isFinite(n)) return null;
    if (mode === "boolean") return n === 1 ? ({ kind: "bool", v: true } as const) : n === 0 ? ({ kind: "bool", v: false } as const) : null;
    return { kind: "num", v: n } as const;
  };
  if (typeof v === "boolean") return mode === "numeric" ? null : { kind: "bool", v };
  if (typeof v === "number") return asNumber(v);
  if (typeof v !== "string") return null;
  const t = v.trim().toLowerCase();
  if (t === "") return null;
  if (trues.has(t)) return mode === "numeric" ? null : { kind: "bool", v: true };
  if (falses.has(t)) return mode === "numeric" ? null : { kind: "bool", v: false };
  if (/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/.test(t)) return asNumber(Number(t));
  return null;
}

/** A row's score from its columns' values (booleans as 1 and 0): all → the least, any → the greatest, mean → the mean. */
export function rowScore(values: number[], how: Aggregation): number | null {
  if (values.length === 0) return null;
  if (how === "all") return Math.min(...values);
  if (how === "any") return Math.max(...values);
  return values.reduce((a, b) => a + b, 0) / values.length;
}

const emptyState = (n: number): ScoreState => ({
  total_rows: 0,
  scored_rows: 0,
  sum: 0,
  columns: Array.from({ length: n }, () => ({ included: 0, excluded: 0, sum: 0, trues: 0, falses: 0, numbers: 0, min: null, max: null })),
});

/** Scores rows [lo, hi) into `state`. */
function scoreRange(store: SheetStore, s: ScoreSettings, state: ScoreState, lo: number, hi: number): void {
  const rows = store.sql.exec<{ row_index: number }>(`SELECT row_index FROM rows WHERE row_index >= ? AND row_index < ?`, lo, hi).toArray();
  if (rows.length === 0) return;
  const pos = new Map(s.columns.map((c, i) => [c.seq, i]));
  const byRow = new Map<number, Map<number, { status: string; display_value: string | null; value: string | null }>>();
  for (const c of store.sql.exec<{ row_index: number; column_seq: number; status: string; display_value: string | null; value: string | null }>(
    `SELECT row_index, column_seq, status, display_value, value FROM cells
     WHERE row_index >= ? AND row_index < ? AND column_seq IN (SELECT value FROM json_each(?))`,
    lo,
    hi,
    JSON.stringify(s.columns.map((c) => c.seq)),
  )) {
    if (!byRow.has(c.row_index)) byRow.set(c.row_index, new Map());
    byRow.get(c.row_index)!.set(c.column_seq, c);
  }
  const trues = new Set(s.true_values);
  const falses = new Set(s.false_values);
  for (const r of rows) {
    state.total_rows++;
    const cells = byRow.get(r.row_index);
    const values: number[] = [];
    for (const col of s.columns) {
      const acc = state.columns[pos.get(col.seq)!];
      const got = scoreValue(cells?.get(col.seq), s.score_type, trues, falses);
      if (!got) {
        acc.excluded++;
        continue;
      }
      const n = got.kind === "bool" ? (got.v ? 1 : 0) : got.v;
      acc.included++;
      acc.sum += n;
      if (got.kind === "bool") {
        if (got.v) acc.trues++;
        else acc.falses++;
      } else {
        acc.numbers++;
      }
      acc.min = acc.min === null ? n : Math.min(acc.min, n);
      acc.max = acc.max === null ? n : Math.max(acc.max, n);
      values.push(n);
    }
    const score = rowScore(values, s.assertion_aggregation);
    if (score !== null) {
      state.scored_rows++;
      state.sum += score;
    }
  }
}

function resultOf(store: SheetStore, s: ScoreSettings, state: ScoreState): ScoreResult {
  const titles = new Map(store.sql.exec<{ seq: number; title: string }>(`SELECT seq, title FROM columns`).toArray().map((c) => [c.seq, c.title]));
  return {
    aggregate_score: state.scored_rows > 0 ? state.sum / state.scored_rows : null,
    total_rows: state.total_rows,
    scored_rows: state.scored_rows,
    excluded_rows: state.total_rows - state.scored_rows,
    columns: s.columns.map((c, i) => {
      const a = state.columns[i];
      const resolved: ScoreType | null =
        s.score_type !== "auto" ? s.score_type : a.included === 0 ? null : a.numbers === 0 ? "boolean" : a.trues + a.falses === 0 ? "numeric" : "auto";
      return {
        column_id: c.id,
        title: titles.get(c.seq) ?? "",
        score: a.included > 0 ? a.sum / a.included : null,
        included_count: a.included,
        excluded_count: a.excluded,
        true_count: a.trues,
        false_count: a.falses,
        numeric_count: a.numbers,
        min: a.min,
        max: a.max,
        resolved_scoring_type: resolved,
      };
    }),
  };
}

/**
 * One step of the open calculation (in the caller's transaction, with no cell queued or running and
 * column work done): SCORE_RANGE_ROWS rows, or the end. Answers whether score work remains.
 */
export function stepScore(store: SheetStore, now: number): boolean {
  const calc = store.sql.exec<CalcRow>(`SELECT * FROM score_calculations WHERE status IN ('queued', 'running') ORDER BY created_at LIMIT 1`).toArray()[0];
  if (!calc) return false;
  const s = readSettings(store);
  if (!s || s.id !== calc.config_id) {
    store.sql.exec(`UPDATE score_calculations SET status = 'cancelled', completed_at = ? WHERE id = ?`, now, calc.id);
    return hasScoreWork(store);
  }
  const gone = missingColumn(store, s);
  if (gone) {
    store.sql.exec(`UPDATE score_calculations SET status = 'failed', error = ?, completed_at = ? WHERE id = ?`, gone, now, calc.id);
    return hasScoreWork(store);
  }
  const version = store.meta("version");
  let state: ScoreState;
  let from = calc.next_row;
  let end = calc.end_row;
  // Not started, or the sheet changed since the last range: (re)start from the first row at this version.
  if (calc.status === "queued" || calc.sheet_version !== version || calc.state === null) {
    state = emptyState(s.columns.length);
    from = 0;
    end = store.meta("next_row_index");
  } else {
    state = JSON.parse(calc.state) as ScoreState;
  }
  const hi = Math.min(from + SCORE_RANGE_ROWS, end);
  scoreRange(store, s, state, from, hi);
  if (hi >= end) {
    store.sql.exec(
      `UPDATE score_calculations SET status = 'completed', sheet_version = ?, next_row = ?, end_row = ?, state = NULL, result = ?,
         started_at = COALESCE(started_at, ?5), completed_at = ?5 WHERE id = ?6`,
      version,
      hi,
      end,
      JSON.stringify(resultOf(store, s, state)),
      now,
      calc.id,
    );
    // The history keeps the latest MAX_SCORE_HISTORY completed calculations (and a few ended otherwise, for their errors).
    store.sql.exec(
      `DELETE FROM score_calculations WHERE status = 'completed'
         AND id NOT IN (SELECT id FROM score_calculations WHERE status = 'completed' ORDER BY completed_at DESC LIMIT ?)`,
      MAX_SCORE_HISTORY,
    );
    store.sql.exec(
      `DELETE FROM score_calculations WHERE status IN ('failed', 'cancelled')
         AND id NOT IN (SELECT id FROM score_calculations WHERE status IN ('failed', 'cancelled') ORDER BY completed_at DESC LIMIT 100)`,
    );
    return hasScoreWork(store);
  }
  store.sql.exec(
    `UPDATE score_calculations SET status = 'running', sheet_version = ?, next_row = ?, end_row = ?, state = ?, started_at = COALESCE(started_at, ?5) WHERE id = ?6`,
    version,
    hi,
    end,
    JSON.stringify(state),
    now,
    calc.id,
  );
  return true;
}

export type SettingsView = { score_type: ScoreType; score_config: Record<string, JsonValue> };

/** The configuration as the API shows it (and as a saved version records it). */
export function settingsView(s: ScoreSettings | null): SettingsView | null {
  if (!s) return null;
  return {
    score_type: s.score_type,
    score_config: { column_ids: s.columns.map((c) => c.id), true_values: s.true_values, false_values: s.false_values, assertion_aggregation: s.assertion_aggregation },
  };
}

const METRICS = [
  { key: "column", label: "Column", positive_metric: null },
  { key: "score", label: "Score", positive_metric: true },
  { key: "included_count", label: "Scored rows", positive_metric: null },
  { key: "excluded_count", label: "Excluded rows", positive_metric: null },
];

/** GET /score's payload: the configuration, the state of its latest calculation and the numbers of its latest completed one. */
function scorePayload(store: SheetStore, ident: SheetIdentity) {
  const s = readSettings(store);
  const version = store.meta("version");
  const latest = s
    ? store.sql.exec<CalcRow>(`SELECT * FROM score_calculations WHERE config_id = ? ORDER BY created_at DESC LIMIT 1`, s.id).toArray()[0]
    : undefined;
  const done = s
    ? store.sql
        .exec<CalcRow>(`SELECT * FROM score_calculations WHERE config_id = ? AND status = 'completed' ORDER BY completed_at DESC LIMIT 1`, s.id)
        .toArray()[0]
    : undefined;
  const r = done ? (JSON.parse(done.result!) as ScoreResult) : null;
  const status = latest ? (latest.status === "cancelled" ? (done ? "completed" : null) : latest.status) : null;
  const columns = r
    ? r.columns
    : (s?.columns ?? []).map((c) => ({
        column_id: c.id,
        title: store.sql.exec<{ title: string }>(`SELECT title FROM columns WHERE seq = ?`, c.seq).toArray()[0]?.title ?? "",
        score: null,
        included_count: 0,
        excluded_count: 0,
        true_count: 0,
        false_count: 0,
        numeric_count: 0,
        min: null,
        max: null,
        resolved_scoring_type: null,
      }));
  const aggregate = r?.aggregate_score ?? null;
  const totals = r ?? { total_rows: store.meta("row_count"), scored_rows: 0, excluded_rows: 0 };
  return {
    sheet_id: ident.sheetId,
    scoring_type: s?.score_type ?? null,
    columns: columns.map((c) => ({
      column_id: c.column_id,
      title: c.title,
      score: c.score,
      included_count: c.included_count,
      excluded_count: c.excluded_count,
      resolved_scoring_type: c.resolved_scoring_type,
    })),
    aggregate_score: aggregate,
    total_rows: totals.total_rows,
    scored_rows: totals.scored_rows,
    excluded_rows: totals.excluded_rows,
    calculated_at: toIso(done?.completed_at ?? null),
    score_matrix: r ? r.columns.map((c) => [c.title, c.score, c.included_count, c.excluded_count]) : null,
    score_matrix_metrics: r ? METRICS : null,
    status,
    score_calculation_error: latest?.status === "failed" ? latest.error : null,
    has_custom_scoring: false,
    score_configuration: settingsView(s),
    score_type: !s ? ("none" as const) : s.columns.length === 1 ? ("single_column" as const) : ("multi_column" as const),
    overall_score: aggregate,
    details: {
      score_configuration_id: s?.id ?? null,
      calculation_id: done?.id ?? null,
      sheet_version: done?.sheet_version ?? null,
      current_sheet_version: version,
      is_stale: done ? done.sheet_version < version : null,
      assertion_aggregation: s?.assertion_aggregation ?? null,
      true_values: s?.true_values ?? null,
      false_values: s?.false_values ?? null,
    },
    aggregate: r
      ? { score: aggregate, method: s!.assertion_aggregation, total_rows: r.total_rows, scored_rows: r.scored_rows, excluded_rows: r.excluded_rows }
      : {},
    per_column: Object.fromEntries(
      (r?.columns ?? []).map((c) => [
        c.column_id,
        {
          title: c.title,
          score: c.score,
          included_count: c.included_count,
          excluded_count: c.excluded_count,
          true_count: c.true_count,
          false_count: c.false_count,
          numeric_count: c.numeric_count,
          min: c.min,
          max: c.max,
          resolved_scoring_type: c.resolved_scoring_type,
        },
      ]),
    ),
  };
}

export type ScorePayload = ReturnType<typeof scorePayload>;

/** The score computed at sheet version `sheetVersion` (its latest completed calculation), or {} when none was. */
export function scoreAt(store: SheetStore, sheetVersion: number): Record<string, JsonValue> {
  const c = store.sql
    .exec<CalcRow>(`SELECT * FROM score_calculations WHERE status = 'completed' AND sheet_version = ? ORDER BY completed_at DESC LIMIT 1`, sheetVersion)
    .toArray()[0];
  if (!c) return {};
  const r = JSON.parse(c.result!) as ScoreResult;
  return {
    calculation_id: c.id,
    score_configuration_id: c.config_id,
    score: r.aggregate_score,
    total_rows: r.total_rows,
    scored_rows: r.scored_rows,
    excluded_rows: r.excluded_rows,
    calculated_at: toIso(c.completed_at),
  };
}

export type HistoryRange = "all" | "last_25" | "last_50" | "last_100" | "last_250";
export type HistoryResolution = "auto" | "raw" | "min_max_bucket";

/**
 * Score points across the sheet's versions: one per sheet version that has a completed score (its
 * latest), oldest first, with the saved version made at that sheet version when there is one.
 * `range` keeps the last N points; over `max_points`, `auto` and `min_max_bucket` keep the lowest and
 * highest point of each of max_points/2 buckets, `raw` the last max_points.
 */
export function scoreHistory(store: SheetStore, q: { range: HistoryRange; resolution: HistoryResolution; maxPoints: number }) {
  const all = store.sql
    .exec<CalcRow & { version_id: string | null; version_number: number | null; version_name: string | null }>(
      `SELECT c.*, v.id AS version_id, v.number AS version_number, v.name AS version_name
       FROM score_calculations c
       LEFT JOIN saved_versions v ON v.number = (SELECT MAX(number) FROM saved_versions WHERE sheet_version = c.sheet_version)
       WHERE c.status = 'completed' AND c.id = (SELECT d.id FROM score_calculations d WHERE d.status = 'completed' AND d.sheet_version = c.sheet_version
                                                 ORDER BY d.completed_at DESC, d.created_at DESC LIMIT 1)
       ORDER BY c.sheet_version`,
    )
    .toArray()
    .map((c) => {
      const r = JSON.parse(c.result!) as ScoreResult;
      return {
        sheet_version: c.sheet_version,
        version_id: c.version_id,
        version_number: c.version_number,
        version_name: c.version_name,
        score: r.aggregate_score,
        scored_rows: r.scored_rows,
        total_rows: r.total_rows,
        calculation_id: c.id,
        calculated_at: toIso(c.completed_at),
      };
    });
  const last = q.range === "all" ? all.length : Number(q.range.slice(5));
  const ranged = all.slice(Math.max(0, all.length - last));
  let points = ranged;
  let resolution: "raw" | "min_max_bucket" = "raw";
  if (ranged.length > q.maxPoints) {
    if (q.resolution === "raw") {
      points = ranged.slice(ranged.length - q.maxPoints);
    } else {
      resolution = "min_max_bucket";
      const buckets = Math.floor(q.maxPoints / 2);
      points = [];
      for (let b = 0; b < buckets; b++) {
        const part = ranged.slice(Math.floor((b * ranged.length) / buckets), Math.floor(((b + 1) * ranged.length) / buckets));
        if (part.length === 0) continue;
        const scored = part.filter((p) => p.score !== null);
        if (scored.length === 0) {
          points.push(part[0]);
          continue;
        }
        const lo = scored.reduce((a, p) => (p.score! < a.score! ? p : a));
        const hi = scored.reduce((a, p) => (p.score! > a.score! ? p : a));
        points.push(...(lo === hi ? [lo] : lo.sheet_version < hi.sheet_version ? [lo, hi] : [hi, lo]));
      }
    }
  }
  return {
    points,
    total_points: ranged.length,
    returned_points: points.length,
    resolution,
    range: q.range,
    max_points: q.maxPoints,
    is_sampled: points.length < ranged.length,
  };
}

// ---------------------------------------------------------------------------------------------
// The calls of an admitted sheet (core.ts).

export function scoreFor(s: SheetCore): Result<{ score: ScorePayload }> {
  return { ok: true, score: scorePayload(s.store, s.ident) };
}

/** Stores a score configuration (one new sheet version); queues nothing. */
export async function configureScore(s: SheetCore, input: ScoreConfigInput): Promise<Result<{ score_configuration_id: string; version: number }>> {
  const plan = planSettings(s.model().list, input);
  if ("ok" in plan) return plan;
  const version = s.tx(() => {
    configure(s.store, plan, Date.now());
    return s.bump();
  });
  await s.syncListing();
  return { ok: true, score_configuration_id: plan.id, version };
}

/** Queues a calculation of the configured score (restarting one still open). */
export async function recalculateScore(s: SheetCore): Promise<Result<{ score_configuration_id: string; status: "queued" }>> {
  const q = s.tx(() => queueCalculation(s.store, Date.now()));
  if (!q.ok) return q;
  await s.arm();
  return { ok: true, score_configuration_id: q.configId, status: "queued" };
}

export function scoreHistoryFor(s: SheetCore, q: { range: HistoryRange; resolution: HistoryResolution; maxPoints: number }): Result<{ score_history: ReturnType<typeof scoreHistory> }> {
  return { ok: true, score_history: scoreHistory(s.store, q) };
}
