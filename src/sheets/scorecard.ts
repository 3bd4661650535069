// A sheet's scorecard: steps that each judge a row (a column read as a score, or a check run by the
// shared blocks: CONTAINS, REGEX, ASSERT_VALID, COMPARE, LLM_ASSERTION; or structure and tool-call
// checks of a JSON value), combined per row into a score and a verdict (pass, warn, fail, error,
// skipped), and calculations of it over the sheet's rows. A calculation runs on the object's alarm
// once no cell is queued or running, a chunk of rows per run (CHUNK_EVALUATIONS step evaluations at
// most, EVAL_CONCURRENCY at a time), storing one result per row; a step whose inputs hash as in the
// previous calculation keeps its result without running again. Row results are kept for the latest
// ROW_RESULT_CALCULATIONS calculations, summaries for the latest KEPT_CALCULATIONS.
import { evaluateBlock, validateBlockConfig, blockSources, type BlockContext } from "../blocks";
import { findColumnByRef } from "./columns";
import { cellId } from "./cell-id";
import { readValue, utf8Bytes } from "./cell-values";
import { DEFAULT_FALSE_VALUES, DEFAULT_TRUE_VALUES, readSettings, scoreValue } from "./score";
import { inputHash } from "./stale-graph";
import type { SheetStore } from "./storage";
import { EVAL_CONCURRENCY, fail, MAX_CONFIG_BYTES, type Fail, type JsonValue, type SheetIdentity } from "./types";

export const MAX_STEPS = 20;
export const MAX_EVALUATED_COLUMNS = 100;
/** Step evaluations one alarm run does at most (rows × steps). */
export const CHUNK_EVALUATIONS = 250;
export const ROW_RESULT_CALCULATIONS = 5;
export const KEPT_CALCULATIONS = 100;

export const PRIMITIVES = [
  "COLUMN_AGGREGATE",
  "CONTAINS",
  "REGEX",
  "ASSERT_VALID",
  "COMPARE",
  "LLM_ASSERTION",
  "TOOL_EVALUATOR",
  "CODE_EXECUTION",
  "STRUCTURE",
  "MAX_TOOL_CALLS",
  "NO_INVALID_TOOL_CALLS",
] as const;
export type Primitive = (typeof PRIMITIVES)[number];
const BLOCK_PRIMITIVES = new Set<string>(["CONTAINS", "REGEX", "ASSERT_VALID", "COMPARE", "LLM_ASSERTION"]);
const UNSUPPORTED: Record<string, string> = {
  TOOL_EVALUATOR: "it needs a tool evaluator, which does not run here",
  CODE_EXECUTION: "no code sandbox runs here",
};
export const AGGREGATION_METHODS = ["weighted_mean", "mean", "min", "max"] as const;
export type Verdict = "pass" | "warn" | "fail" | "error" | "skipped";
export const VERDICTS: Verdict[] = ["pass", "warn", "fail", "error", "skipped"];

export interface StepInput {
  id?: string | null;
  title: string;
  primitive_type: Primitive;
  source_column_ids?: string[];
  weight?: number;
  required?: boolean;
  thresholds?: Record<string, number>;
  primitive_config?: Record<string, unknown>;
  score_adapter?: Record<string, unknown> | null;
  description?: string | null;
  target_column_id?: string | null;
  evidence_mode?: "summary" | "raw" | "hidden" | null;
}

export interface ScorecardInput {
  name: string;
  evaluated_column_ids: string[];
  steps: StepInput[];
  aggregation: Record<string, unknown>;
  display_config: Record<string, unknown> | null;
  baseline_config: Record<string, unknown> | null;
}

interface StoredStep {
  id: string;
  title: string;
  primitive_type: Primitive;
  sources: { seq: number; id: string }[];
  target: { seq: number; id: string } | null;
  weight: number;
  required: boolean;
  thresholds: { pass: number; warn: number };
  primitive_config: Record<string, unknown>;
  score_adapter: Record<string, unknown> | null;
  description: string | null;
  evidence_mode: "summary" | "raw" | "hidden" | null;
  config_hash: string;
  created_at: number;
  updated_at: number;
}

interface Aggregation {
  method: (typeof AGGREGATION_METHODS)[number];
  required_step_failure_behavior: "fail" | "warn" | "error";
  pass_threshold: number;
  warn_threshold: number;
  [key: string]: unknown;
}

interface ScorecardRow {
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

interface CalcRow {
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

interface StepResult {
  title: string;
  primitive_type: string;
  status: "completed" | "error" | "skipped";
  score: number | null;
  verdict: Verdict;
  value?: JsonValue;
  error: string | null;
  input_hash: string | null;
}

interface RowResult {
  aggregate_score: number | null;
  verdict: Verdict;
  step_results: Record<string, StepResult>;
  error_summary: string | null;
  input_hash: string;
}

interface CalcState {
  total_rows: number;
  scored_rows: number;
  sum: number;
  verdicts: Record<string, number>;
  steps: Record<string, { title: string; primitive_type: string; evaluated: number; sum: number; verdicts: Record<string, number> }>;
}

const toIso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const zeroVerdicts = () => Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<string, number>;

// ---------------------------------------------------------------------------------------------
// Configuration

export function activeScorecard(store: SheetStore): ScorecardRow | undefined {
  return store.sql.exec<ScorecardRow>(`SELECT * FROM scorecards WHERE deleted_at IS NULL ORDER BY created_at DESC LIMIT 1`).toArray()[0];
}

function stepsOf(sc: ScorecardRow): StoredStep[] {
  return JSON.parse(sc.steps) as StoredStep[];
}

type Col = { seq: number; id: string; title: string };

/** Checks a configuration against the sheet's columns and the blocks; the 400 names the field. */
export function planScorecard(
  cols: Col[],
  input: ScorecardInput,
  existing: ScorecardRow | undefined,
  now: number,
): { ok: true; steps: StoredStep[]; aggregation: Aggregation; configHash: string } | Fail {
  const byId = new Map(cols.map((c) => [c.id, c]));
  for (let i = 0; i < input.evaluated_column_ids.length; i++) {
    if (!byId.has(input.evaluated_column_ids[i].toLowerCase())) return fail("validation_error", `evaluated_column_ids[${i}]: no column with this id in this sheet`);
  }
  const a = input.aggregation;
  const method = a.method ?? "weighted_mean";
  if (typeof method !== "string" || !(AGGREGATION_METHODS as readonly string[]).includes(method)) {
    return fail("validation_error", `aggregation.method: must be one of ${AGGREGATION_METHODS.join(", ")}`);
  }
  const behavior = a.required_step_failure_behavior ?? "fail";
  if (behavior !== "fail" && behavior !== "warn" && behavior !== "error") return fail("validation_error", "aggregation.required_step_failure_behavior: must be fail, warn or error");
  const unit = (v: unknown, field: string, dflt: number): number | Fail =>
    v === undefined || v === null ? dflt : typeof v === "number" && v >= 0 && v <= 1 ? v : fail("validation_error", `aggregation.${field}: must be a number from 0 to 1`);
  const pass = unit(a.pass_threshold, "pass_threshold", 0.8);
  if (typeof pass !== "number") return pass;
  const warn = unit(a.warn_threshold, "warn_threshold", Math.min(0.5, pass));
  if (typeof warn !== "number") return warn;
  if (warn > pass) return fail("validation_error", "aggregation.warn_threshold: must not be above pass_threshold");
  const aggregation: Aggregation = { ...a, method: method as Aggregation["method"], required_step_failure_behavior: behavior, pass_threshold: pass, warn_threshold: warn };

  const old = new Map((existing ? stepsOf(existing) : []).map((s) => [s.id, s]));
  const steps: StoredStep[] = [];
  const seenIds = new Set<string>();
  for (let i = 0; i < input.steps.length; i++) {
    const s = input.steps[i];
    const at = `steps[${i}]`;
    if (UNSUPPORTED[s.primitive_type]) return fail("validation_error", `${at}.primitive_type: ${s.primitive_type} cannot run here: ${UNSUPPORTED[s.primitive_type]}`);
    const sources: Col[] = [];
    for (let j = 0; j < (s.source_column_ids ?? []).length; j++) {
      const c = findColumnByRef(cols, s.source_column_ids![j]);
      if (!c) return fail("validation_error", `${at}.source_column_ids[${j}]: no column with this id or title in this sheet`);
      if (!sources.includes(c)) sources.push(c);
    }
    let target: Col | null = null;
    if (s.target_column_id != null) {
      target = findColumnByRef(cols, s.target_column_id) ?? null;
      if (!target) return fail("validation_error", `${at}.target_column_id: no column with this id or title in this sheet`);
    }
    if (sources.length === 0) return fail("validation_error", `${at}.source_column_ids: give the column this step reads`);
    const cfg = s.primitive_config ?? {};
    const cfgBytes = utf8Bytes(JSON.stringify(cfg));
    if (cfgBytes > MAX_CONFIG_BYTES) return fail("payload_too_large", `${at}.primitive_config: takes ${cfgBytes} bytes; a step's config holds at most ${MAX_CONFIG_BYTES}`);
    const planned = checkPrimitive(s.primitive_type, cfg, sources, target);
    if (planned) return fail("validation_error", `${at}.${planned}`);
    const t = s.thresholds ?? {};
    for (const [k, v] of Object.entries(t)) {
      if (k !== "pass" && k !== "warn") return fail("validation_error", `${at}.thresholds: takes pass and warn, not ${k}`);
      if (!(v >= 0 && v <= 1)) return fail("validation_error", `${at}.thresholds.${k}: must be a number from 0 to 1`);
    }
    const stepPass = t.pass ?? 0.5;
    const stepWarn = t.warn ?? stepPass;
    if (stepWarn > stepPass) return fail("validation_error", `${at}.thresholds.warn: must not be above pass`);
    const kept = s.id ? old.get(s.id.toLowerCase()) : undefined;
    const id = kept && !seenIds.has(kept.id) ? kept.id : crypto.randomUUID();
    seenIds.add(id);
    const body = {
      title: s.title,
      primitive_type: s.primitive_type,
      sources: sources.map((c) => ({ seq: c.seq, id: c.id })),
      target: target ? { seq: target.seq, id: target.id } : null,
      weight: s.weight ?? 1,
      required: s.required ?? false,
      thresholds: { pass: stepPass, warn: stepWarn },
      primitive_config: cfg,
      score_adapter: s.score_adapter ?? null,
      description: s.description ?? null,
      evidence_mode: s.evidence_mode ?? null,
    };
    const hash = inputHash("SCORECARD_STEP", body, {});
    steps.push({ id, ...body, config_hash: hash, created_at: kept?.created_at ?? now, updated_at: kept && kept.config_hash === hash ? kept.updated_at : now });
  }
  const configHash = inputHash("SCORECARD", { steps: steps.map((s) => [s.id, s.config_hash]), aggregation }, {});
  return { ok: true, steps, aggregation, configHash };
}

type StepColumn = { id: string; title: string };

/**
 * A step's config with the columns it names by id named by title, as blocks read their inputs: a
 * string of the config (at its top level, in a list, or a mapping's value, where blocks keep their
 * references: value_source, prompt_source, sources, variable_mappings…) that is the id of one of the
 * step's columns. The stored config keeps what was sent, so a step naming ids survives a rename.
 */
function titlesForIds(cfg: Record<string, unknown>, cols: StepColumn[]): Record<string, unknown> {
  const title = (v: unknown) => (typeof v === "string" ? (cols.find((c) => c.id === v.toLowerCase())?.title ?? v) : v);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(cfg)) {
    if (Array.isArray(v)) out[k] = v.map(title);
    else if (v !== null && typeof v === "object") out[k] = Object.fromEntries(Object.entries(v).map(([mk, mv]) => [mk, title(mv)]));
    else out[k] = title(v);
  }
  return out;
}

/** The block config a block-based step runs with: its columns fill `source` / `sources`; ids become titles. */
function blockConfig(type: string, cfg: Record<string, unknown>, sources: StepColumn[], target: StepColumn | null): Record<string, unknown> {
  const cols = [...sources, ...(target ? [target] : [])];
  const named = titlesForIds(cfg, cols);
  if (type === "COMPARE") return { ...named, sources: cols.slice(0, 2).map((c) => c.title) };
  return { ...named, source: sources[0].title };
}

/** What is wrong with a step's primitive and config, as "field: rule", or null. */
function checkPrimitive(type: string, cfg: Record<string, unknown>, sources: Col[], target: Col | null): string | null {
  if (BLOCK_PRIMITIVES.has(type)) {
    if (type === "COMPARE" && sources.length + (target ? 1 : 0) < 2) return "source_column_ids: COMPARE compares two columns; give two source_column_ids, or one and target_column_id";
    const check = validateBlockConfig(type, blockConfig(type, cfg, sources, target));
    if (!check.ok) return check.issues.map((i) => `primitive_config${i.path ? `.${i.path}` : ""}: ${i.message}`).join("; ") || `primitive_config: ${check.message}`;
    const titles = new Set([...sources, ...(target ? [target] : [])].map((c) => c.title));
    const other = blockSources(type, check.config).find((t) => !titles.has(t));
    if (other) return `primitive_config: reads ${JSON.stringify(other)}, which is not the id or title of one of the step's columns`;
    return null;
  }
  if (type === "COLUMN_AGGREGATE") {
    const min = cfg.min ?? 0;
    const max = cfg.max ?? 1;
    if (typeof min !== "number" || typeof max !== "number" || !(max > min)) return "primitive_config: min and max must be numbers, max above min";
    return null;
  }
  if (type === "STRUCTURE") {
    const keys = cfg.required_keys;
    if (keys !== undefined && (!Array.isArray(keys) || keys.length > 100 || keys.some((k) => typeof k !== "string"))) return "primitive_config.required_keys: must be an array of at most 100 strings";
    if (cfg.type !== undefined && cfg.type !== "object" && cfg.type !== "array") return 'primitive_config.type: must be "object" or "array"';
    return null;
  }
  if (type === "MAX_TOOL_CALLS") {
    const m = cfg.max_tool_calls;
    if (typeof m !== "number" || !Number.isInteger(m) || m < 0) return "primitive_config.max_tool_calls: must be a whole number, 0 or more";
    return null;
  }
  return null;
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

function cancelOpen(store: SheetStore, scorecardId: string, now: number): string[] {
  const ids = store.sql
    .exec<{ id: string }>(`SELECT id FROM scorecard_calculations WHERE scorecard_id = ? AND status IN ('queued', 'running')`, scorecardId)
    .toArray()
    .map((r) => r.id);
  store.sql.exec(`UPDATE scorecard_calculations SET status = 'cancelled', completed_at = ? WHERE scorecard_id = ? AND status IN ('queued', 'running')`, now, scorecardId);
  return ids;
}

export function deleteScorecard(store: SheetStore, sc: ScorecardRow, now: number): void {
  store.sql.exec(`UPDATE scorecards SET deleted_at = ? WHERE id = ?`, now, sc.id);
  cancelOpen(store, sc.id, now);
}

export function cancelScorecard(store: SheetStore, sc: ScorecardRow, now: number): string[] {
  return cancelOpen(store, sc.id, now);
}

/**
 * Turns the sheet's score configuration into COLUMN_AGGREGATE steps, one per scored column (its
 * aggregation becomes the scorecard's method: mean → weighted_mean, all → min, any → max), added to
 * the active scorecard or to a new one named "Score".
 */
export function migrateLegacyScore(
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
    const plan = planScorecard(cols, input, sc, now);
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
// Calculations

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

/** A cell read for a step: its status and value. */
type Read = { status: string; value: unknown };

/** What a value reads as for a tool-call check: the calls it holds (OpenAI tool_calls, Anthropic tool_use blocks, or a list). */
function toolCalls(v: unknown): unknown[] | null {
  let x = v;
  if (typeof x === "string") {
    try {
      x = JSON.parse(x);
    } catch {
      return null;
    }
  }
  if (Array.isArray(x)) return x;
  if (x && typeof x === "object") {
    const o = x as Record<string, unknown>;
    if (Array.isArray(o.tool_calls)) return o.tool_calls;
    if (Array.isArray(o.content)) return o.content.filter((b) => b && typeof b === "object" && (b as Record<string, unknown>).type === "tool_use");
    return [];
  }
  return null;
}

function validToolCall(c: unknown): boolean {
  if (!c || typeof c !== "object") return false;
  const o = c as Record<string, unknown>;
  const fn = (o.function && typeof o.function === "object" ? o.function : o) as Record<string, unknown>;
  if (typeof fn.name !== "string" || fn.name === "") return false;
  const args = fn.arguments ?? o.input ?? {};
  if (typeof args === "string") {
    try {
      const p = JSON.parse(args);
      return p !== null && typeof p === "object" && !Array.isArray(p);
    } catch {
      return false;
    }
  }
  return typeof args === "object" && args !== null && !Array.isArray(args);
}

/** A step's score from what its primitive gave: booleans 1 / 0, numbers clamped to 0..1, a map of booleans their mean. */
function asStepScore(v: unknown): number | null {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number" && Number.isFinite(v)) return Math.min(1, Math.max(0, v));
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const vals = Object.values(v);
    if (vals.length > 0 && vals.every((x) => typeof x === "boolean")) return vals.filter(Boolean).length / vals.length;
  }
  return null;
}

function verdictOf(score: number, pass: number, warn: number): Verdict {
  return score >= pass ? "pass" : score >= warn ? "warn" : "fail";
}

/** Evaluates one step on one row's cells (by column seq; titles as the sheet has them now). */
export async function evaluateStep(step: StoredStep, cells: Map<number, Read>, titles: Map<number, string>, ctx: BlockContext): Promise<StepResult> {
  const base = { title: step.title, primitive_type: step.primitive_type };
  const cols = [...step.sources, ...(step.target ? [step.target] : [])];
  const inputs: Record<string, unknown> = {};
  for (const c of cols) {
    const title = titles.get(c.seq);
    if (title === undefined) return { ...base, status: "error", score: null, verdict: "error", error: `column ${c.id} was deleted`, input_hash: null };
    const cell = cells.get(c.seq);
    const status = cell?.status ?? "COMPLETED";
    if (status === "FAILED") return { ...base, status: "error", score: null, verdict: "error", error: `input ${JSON.stringify(title)} failed`, input_hash: null };
    if (status !== "COMPLETED") return { ...base, status: "skipped", score: null, verdict: "skipped", error: `input ${JSON.stringify(title)} is ${status}`, input_hash: null };
    inputs[title] = cell ? cell.value : null;
  }
  const hash = inputHash(step.primitive_type, [step.config_hash, cols.map((c) => titles.get(c.seq))], inputs);
  // evidence_mode "hidden": the value a step saw or gave is not kept with its result.
  const evidence = (value: JsonValue) => (step.evidence_mode === "hidden" ? {} : { value });
  const done = (value: JsonValue, score: number | null, error: string | null = null): StepResult =>
    score === null
      ? { ...base, status: "error", score: null, verdict: "error", ...evidence(value), error: error ?? "the step gave no score", input_hash: hash }
      : { ...base, status: "completed", score, verdict: verdictOf(score, step.thresholds.pass, step.thresholds.warn), ...evidence(value), error: null, input_hash: hash };
  const first = inputs[titles.get(step.sources[0].seq)!];
  const cfg = step.primitive_config;
  switch (step.primitive_type) {
    case "COLUMN_AGGREGATE": {
      if (first === null || first === "") return { ...base, status: "skipped", score: null, verdict: "skipped", error: "the cell is empty", input_hash: hash };
      const mode = cfg.score_type === "boolean" || cfg.score_type === "numeric" ? cfg.score_type : "auto";
      const trues = new Set((Array.isArray(cfg.true_values) ? (cfg.true_values as string[]) : DEFAULT_TRUE_VALUES).map((s) => String(s).toLowerCase()));
      const falses = new Set((Array.isArray(cfg.false_values) ? (cfg.false_values as string[]) : DEFAULT_FALSE_VALUES).map((s) => String(s).toLowerCase()));
      const raw = typeof first === "string" ? first : JSON.stringify(first);
      const got = scoreValue({ status: "COMPLETED", display_value: raw, value: typeof first === "string" ? null : raw }, mode, trues, falses);
      if (!got) return done(null, null, "the value is not a boolean or a number");
      if (got.kind === "bool") return done(got.v, got.v ? 1 : 0);
      const min = (cfg.min as number | undefined) ?? 0;
      const max = (cfg.max as number | undefined) ?? 1;
      return done(got.v, Math.min(1, Math.max(0, (got.v - min) / (max - min))));
    }
    case "STRUCTURE": {
      let v = first;
      if (typeof v === "string") {
        try {
          v = JSON.parse(v);
        } catch {
          return done(false, 0);
        }
      }
      const want = cfg.type === "array" ? "array" : "object";
      const shapeOk = want === "array" ? Array.isArray(v) : v !== null && typeof v === "object" && !Array.isArray(v);
      const keys = (cfg.required_keys as string[] | undefined) ?? [];
      const ok = shapeOk && (want === "array" || keys.every((k) => Object.prototype.hasOwnProperty.call(v, k)));
      return done(ok, ok ? 1 : 0);
    }
    case "MAX_TOOL_CALLS": {
      const calls = toolCalls(first);
      if (calls === null) return done(null, null, "the value holds no tool calls to count (not JSON)");
      const ok = calls.length <= (cfg.max_tool_calls as number);
      return done(calls.length, ok ? 1 : 0);
    }
    case "NO_INVALID_TOOL_CALLS": {
      const calls = toolCalls(first);
      if (calls === null) return done(null, null, "the value holds no tool calls to check (not JSON)");
      const bad = calls.filter((c) => !validToolCall(c)).length;
      return done(bad, bad === 0 ? 1 : 0);
    }
    default: {
      const cols2 = cols.map((c) => ({ id: c.id, title: titles.get(c.seq)! }));
      const r = await evaluateBlock(step.primitive_type, blockConfig(step.primitive_type, cfg, cols2.slice(0, step.sources.length), step.target ? cols2[cols2.length - 1] : null), inputs, ctx);
      if (!r.ok) return { ...base, status: "error", score: null, verdict: "error", error: r.error, input_hash: hash };
      const s = asStepScore(r.value);
      return done(r.value as JsonValue, s, s === null ? "the step gave neither a boolean nor a number" : null);
    }
  }
}

/** Combines a row's step results by the scorecard's aggregation. */
export function combineRow(steps: StoredStep[], results: Record<string, StepResult>, agg: Aggregation, hash: string): RowResult {
  const done = steps.filter((s) => results[s.id]?.status === "completed");
  const errors = steps.filter((s) => results[s.id]?.status === "error").map((s) => `${s.title}: ${results[s.id].error}`);
  const error_summary = errors.length > 0 ? errors.slice(0, 3).join("; ") + (errors.length > 3 ? `; and ${errors.length - 3} more` : "") : null;
  if (done.length === 0) {
    const allSkipped = steps.every((s) => results[s.id]?.status === "skipped");
    return { aggregate_score: null, verdict: allSkipped ? "skipped" : "error", step_results: results, error_summary, input_hash: hash };
  }
  const scores = done.map((s) => results[s.id].score!);
  let score: number;
  if (agg.method === "min") score = Math.min(...scores);
  else if (agg.method === "max") score = Math.max(...scores);
  else if (agg.method === "mean") score = scores.reduce((a, b) => a + b, 0) / scores.length;
  else {
    const w = done.reduce((a, s) => a + s.weight, 0);
    score = w > 0 ? done.reduce((a, s) => a + s.weight * results[s.id].score!, 0) / w : scores.reduce((a, b) => a + b, 0) / scores.length;
  }
  let verdict: Verdict = verdictOf(score, agg.pass_threshold, agg.warn_threshold);
  for (const s of steps.filter((x) => x.required)) {
    const r = results[s.id];
    if (!r || r.status === "error") verdict = "error";
    else if (r.status === "skipped" && verdict !== "error") verdict = "skipped";
    else if (r.verdict === "fail") {
      if (agg.required_step_failure_behavior === "error") verdict = "error";
      else if (agg.required_step_failure_behavior === "fail" && verdict !== "error" && verdict !== "skipped") verdict = "fail";
      else if (verdict === "pass") verdict = "warn";
    }
  }
  return { aggregate_score: score, verdict, step_results: results, error_summary, input_hash: hash };
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

// ---------------------------------------------------------------------------------------------
// Views

export function stepView(s: StoredStep, order: number) {
  return {
    id: s.id,
    title: s.title,
    primitive_type: s.primitive_type,
    source_column_ids: s.sources.map((c) => c.id),
    weight: s.weight,
    required: s.required,
    thresholds: s.thresholds,
    primitive_config: s.primitive_config as Record<string, JsonValue>,
    score_adapter: s.score_adapter as Record<string, JsonValue> | null,
    description: s.description,
    target_column_id: s.target?.id ?? null,
    evidence_mode: s.evidence_mode,
    order_index: order,
    backing_column_id: null,
    config_hash: s.config_hash,
    created_at: toIso(s.created_at)!,
    updated_at: toIso(s.updated_at)!,
  };
}

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
    created_at: toIso(c.created_at)!,
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
    created_at: toIso(sc.created_at)!,
    updated_at: toIso(sc.updated_at)!,
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
