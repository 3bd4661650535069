// The scorecard's steps on their own: a configuration checked against the sheet's columns, one step
// judged on one row's cells, and a row's step results combined into its score and verdict.
import { describe, expect, it } from "vitest";
import type { BlockContext } from "../../src/blocks";
import { combineRow, evaluateStep, MAX_STEPS, planScorecard, type Read, type ScorecardInput, type StepResult, type StoredStep } from "../../src/sheets/scorecard/steps";

const ctx: BlockContext = {};
const cols = [
  { seq: 1, id: "c1", title: "Answer" },
  { seq: 2, id: "c2", title: "Expected" },
];
const titles = new Map(cols.map((c) => [c.seq, c.title]));
const input = (over: Partial<ScorecardInput> = {}): ScorecardInput => ({
  name: "Quality",
  evaluated_column_ids: [],
  steps: [{ title: "Mentions", primitive_type: "CONTAINS", source_column_ids: ["c1"], primitive_config: { value: "yes" } }],
  aggregation: {},
  display_config: null,
  baseline_config: null,
  ...over,
});

function planned(over: Partial<ScorecardInput> = {}, previous: StoredStep[] = []) {
  const p = planScorecard(cols, input(over), previous, 1000);
  if (!p.ok) throw new Error(p.message);
  return p;
}

describe("planScorecard", () => {
  it("fills the aggregation's defaults and checks its thresholds", () => {
    expect(planned().aggregation).toEqual({ method: "weighted_mean", required_step_failure_behavior: "fail", pass_threshold: 0.8, warn_threshold: 0.5 });
    expect(planScorecard(cols, input({ aggregation: { method: "median" } }), [], 0)).toMatchObject({ ok: false, message: expect.stringMatching(/^aggregation\.method: must be one of /) });
    expect(planScorecard(cols, input({ aggregation: { pass_threshold: 0.4, warn_threshold: 0.6 } }), [], 0)).toMatchObject({
      ok: false,
      message: "aggregation.warn_threshold: must not be above pass_threshold",
    });
    expect(planScorecard(cols, input({ aggregation: { pass_threshold: 1.5 } }), [], 0)).toMatchObject({ ok: false, message: "aggregation.pass_threshold: must be a number from 0 to 1" });
  });

  it("names the step and field of what is wrong", () => {
    const step = (s: object) => input({ steps: [{ title: "S", primitive_type: "CONTAINS", source_column_ids: ["c1"], primitive_config: { value: "x" }, ...s }] });
    expect(planScorecard(cols, step({ source_column_ids: ["zz"] }), [], 0)).toMatchObject({ ok: false, message: "steps[0].source_column_ids[0]: no column with this id or title in this sheet" });
    expect(planScorecard(cols, step({ primitive_type: "CODE_EXECUTION" }), [], 0)).toMatchObject({ ok: false, message: expect.stringMatching(/^steps\[0\]\.primitive_type: CODE_EXECUTION cannot run here/) });
    expect(planScorecard(cols, step({ primitive_type: "COMPARE", primitive_config: {} }), [], 0)).toMatchObject({ ok: false, message: expect.stringMatching(/^steps\[0\]\.source_column_ids: COMPARE compares two columns/) });
    expect(planScorecard(cols, step({ thresholds: { pass: 0.3, warn: 0.4 } }), [], 0)).toMatchObject({ ok: false, message: "steps[0].thresholds.warn: must not be above pass" });
    expect(planScorecard(cols, step({ primitive_config: { value: "x", value_source: "Nope" } }), [], 0)).toMatchObject({ ok: false, code: "validation_error" });
  });

  it("keeps a previous step's id and created_at when it is sent again, and its updated_at when unchanged", () => {
    const first = planned();
    const again = planned({ steps: [{ id: first.steps[0].id.toUpperCase(), title: "Mentions", primitive_type: "CONTAINS", source_column_ids: ["Answer"], primitive_config: { value: "yes" } }] }, first.steps);
    expect(again.steps[0]).toMatchObject({ id: first.steps[0].id, created_at: 1000, updated_at: 1000, config_hash: first.steps[0].config_hash });
    expect(again.configHash).toBe(first.configHash);
    const changed = planScorecard(cols, input({ steps: [{ id: first.steps[0].id, title: "Mentions", primitive_type: "CONTAINS", source_column_ids: ["c1"], primitive_config: { value: "no" } }] }), first.steps, 2000);
    expect(changed.ok && changed.steps[0]).toMatchObject({ id: first.steps[0].id, created_at: 1000, updated_at: 2000 });
    expect(MAX_STEPS).toBeGreaterThan(0);
  });
});

const step = (primitive_type: StoredStep["primitive_type"], primitive_config: Record<string, unknown>, over: Partial<StoredStep> = {}): StoredStep => ({
  id: "s1",
  title: "Step",
  primitive_type,
  sources: [{ seq: 1, id: "c1" }],
  target: null,
  weight: 1,
  required: false,
  thresholds: { pass: 0.5, warn: 0.5 },
  primitive_config,
  score_adapter: null,
  description: null,
  evidence_mode: null,
  config_hash: "h",
  created_at: 0,
  updated_at: 0,
  ...over,
});
const cells = (value: unknown, status = "COMPLETED") => new Map<number, Read>([[1, { status, value }]]);

describe("evaluateStep", () => {
  it("reads a column as a score: booleans, and numbers scaled between min and max", async () => {
    expect(await evaluateStep(step("COLUMN_AGGREGATE", {}), cells("yes"), titles, ctx)).toMatchObject({ status: "completed", score: 1, verdict: "pass", value: true });
    expect(await evaluateStep(step("COLUMN_AGGREGATE", { min: 0, max: 10 }), cells(3), titles, ctx)).toMatchObject({ status: "completed", score: 0.3, verdict: "fail" });
    expect(await evaluateStep(step("COLUMN_AGGREGATE", {}), cells(""), titles, ctx)).toMatchObject({ status: "skipped", verdict: "skipped", error: "the cell is empty" });
    expect(await evaluateStep(step("COLUMN_AGGREGATE", {}), cells("maybe"), titles, ctx)).toMatchObject({ status: "error", error: "the value is not a boolean or a number" });
  });

  it("checks structure and tool calls of a JSON value", async () => {
    expect(await evaluateStep(step("STRUCTURE", { required_keys: ["a"] }), cells('{"a":1}'), titles, ctx)).toMatchObject({ score: 1 });
    expect(await evaluateStep(step("STRUCTURE", { required_keys: ["b"] }), cells({ a: 1 }), titles, ctx)).toMatchObject({ score: 0 });
    expect(await evaluateStep(step("STRUCTURE", {}), cells("not json"), titles, ctx)).toMatchObject({ score: 0, value: false });
    const calls = { tool_calls: [{ function: { name: "f", arguments: "{}" } }, { function: { name: "", arguments: "{}" } }] };
    expect(await evaluateStep(step("MAX_TOOL_CALLS", { max_tool_calls: 2 }), cells(calls), titles, ctx)).toMatchObject({ score: 1, value: 2 });
    expect(await evaluateStep(step("MAX_TOOL_CALLS", { max_tool_calls: 1 }), cells(calls), titles, ctx)).toMatchObject({ score: 0 });
    expect(await evaluateStep(step("NO_INVALID_TOOL_CALLS", {}), cells(calls), titles, ctx)).toMatchObject({ score: 0, value: 1 });
    expect(await evaluateStep(step("MAX_TOOL_CALLS", { max_tool_calls: 1 }), cells("{oops"), titles, ctx)).toMatchObject({ status: "error" });
  });

  it("runs block checks with the step's columns named by title, and hides the value when evidence is hidden", async () => {
    const s = step("CONTAINS", { value: "YES" }, { evidence_mode: "hidden" });
    const r = await evaluateStep(s, cells("oh yes"), titles, ctx);
    expect(r).toMatchObject({ status: "completed", score: 1, verdict: "pass" });
    expect(r).not.toHaveProperty("value");
  });

  it("is an error for a deleted column or a failed input, and skipped for an input not computed", async () => {
    const s = step("CONTAINS", { value: "x" });
    expect(await evaluateStep(s, cells("x"), new Map(), ctx)).toMatchObject({ status: "error", error: "column c1 was deleted" });
    expect(await evaluateStep(s, cells(null, "FAILED"), titles, ctx)).toMatchObject({ status: "error", error: 'input "Answer" failed' });
    expect(await evaluateStep(s, cells(null, "STALE"), titles, ctx)).toMatchObject({ status: "skipped", error: 'input "Answer" is STALE' });
  });

  it("hashes its inputs: the same cells give the same hash, other cells another", async () => {
    const s = step("CONTAINS", { value: "x" });
    const one = await evaluateStep(s, cells("x"), titles, ctx);
    expect((await evaluateStep(s, cells("x"), titles, ctx)).input_hash).toBe(one.input_hash);
    expect((await evaluateStep(s, cells("y"), titles, ctx)).input_hash).not.toBe(one.input_hash);
  });
});

describe("combineRow", () => {
  const agg = { method: "weighted_mean" as const, required_step_failure_behavior: "fail" as const, pass_threshold: 0.8, warn_threshold: 0.5 };
  const res = (score: number | null, verdict: StepResult["verdict"], status: StepResult["status"] = "completed"): StepResult => ({
    title: "t",
    primitive_type: "CONTAINS",
    status,
    score,
    verdict,
    error: status === "error" ? "boom" : null,
    input_hash: null,
  });
  const a = step("CONTAINS", {}, { id: "a", weight: 3 });
  const b = step("CONTAINS", {}, { id: "b", weight: 1 });

  it("weights the completed steps' scores, and takes the mean, min or max as asked", () => {
    const r = { a: res(1, "pass"), b: res(0, "fail") };
    expect(combineRow([a, b], r, agg, "h")).toMatchObject({ aggregate_score: 0.75, verdict: "warn", input_hash: "h" });
    expect(combineRow([a, b], r, { ...agg, method: "mean" }, "h").aggregate_score).toBe(0.5);
    expect(combineRow([a, b], r, { ...agg, method: "min" }, "h")).toMatchObject({ aggregate_score: 0, verdict: "fail" });
    expect(combineRow([a, b], r, { ...agg, method: "max" }, "h")).toMatchObject({ aggregate_score: 1, verdict: "pass" });
  });

  it("applies a required step's failure as the aggregation says", () => {
    const req = { ...b, required: true };
    const r = { a: res(1, "pass"), b: res(0.9, "fail") };
    expect(combineRow([a, req], r, agg, "h").verdict).toBe("fail");
    expect(combineRow([a, req], r, { ...agg, required_step_failure_behavior: "warn" }, "h").verdict).toBe("warn");
    expect(combineRow([a, req], r, { ...agg, required_step_failure_behavior: "error" }, "h").verdict).toBe("error");
    expect(combineRow([a, req], { a: res(1, "pass"), b: res(null, "skipped", "skipped") }, agg, "h").verdict).toBe("skipped");
  });

  it("scores nothing when no step completed: skipped if all skipped, else an error with a summary", () => {
    expect(combineRow([a, b], { a: res(null, "skipped", "skipped"), b: res(null, "skipped", "skipped") }, agg, "h")).toMatchObject({ aggregate_score: null, verdict: "skipped", error_summary: null });
    expect(combineRow([a, b], { a: res(null, "error", "error"), b: res(null, "skipped", "skipped") }, agg, "h")).toMatchObject({ aggregate_score: null, verdict: "error", error_summary: "Step: boom" });
  });
});
