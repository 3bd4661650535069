// The scorecard's steps (scorecard/index.ts says what a scorecard is): their configuration checked
// against the sheet's columns and the blocks (planScorecard), one step judged on one row's cells
// (evaluateStep: a column read as a score, a check run by the shared blocks, or a structure or
// tool-call check of a JSON value), and a row's step results combined into its score and verdict
// (combineRow). Pure but for the blocks' context, so they are unit-tested without a sheet.
import { evaluateBlock, validateBlockConfig, blockSources, type BlockContext } from "../../blocks";
import { toIso } from "../../lib/time";
import { findColumnByRef } from "../columns";
import { utf8Bytes } from "../cell-values";
import { DEFAULT_FALSE_VALUES, DEFAULT_TRUE_VALUES, scoreValue } from "../score";
import { inputHash } from "../stale-graph";
import { fail, MAX_CONFIG_BYTES, type Fail, type JsonValue } from "../types";

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

export interface StoredStep {
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

export interface Aggregation {
  method: (typeof AGGREGATION_METHODS)[number];
  required_step_failure_behavior: "fail" | "warn" | "error";
  pass_threshold: number;
  warn_threshold: number;
  [key: string]: unknown;
}

export interface StepResult {
  title: string;
  primitive_type: string;
  status: "completed" | "error" | "skipped";
  score: number | null;
  verdict: Verdict;
  value?: JsonValue;
  error: string | null;
  input_hash: string | null;
}

export interface RowResult {
  aggregate_score: number | null;
  verdict: Verdict;
  step_results: Record<string, StepResult>;
  error_summary: string | null;
  input_hash: string;
}

export const zeroVerdicts = () => Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<string, number>;

// ---------------------------------------------------------------------------------------------
// Configuration

export type Col = { seq: number; id: string; title: string };

/**
 * Checks a configuration against the sheet's columns and the blocks; the 400 names the field. A step
 * sent with the id of one of the `previous` steps keeps that id and its created_at.
 */
export function planScorecard(
  cols: Col[],
  input: ScorecardInput,
  previous: StoredStep[],
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

  const old = new Map(previous.map((s) => [s.id, s]));
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

// ---------------------------------------------------------------------------------------------
// Judging

/** A cell read for a step: its status and value. */
export type Read = { status: string; value: unknown };

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

export function verdictOf(score: number, pass: number, warn: number): Verdict {
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

/** A step as the API shows it. */
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
    created_at: toIso(s.created_at),
    updated_at: toIso(s.updated_at),
  };
}
