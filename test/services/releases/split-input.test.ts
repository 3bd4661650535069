// A release's split from a create or a ramp (src/services/releases/split-input.ts): every rule a 400
// naming its field, ramps merging by key, rollbacks giving the base every bucket.
import { describe, expect, it } from "vitest";
import type { Guardrails } from "../../../src/db/schema";
import { baseOnly, challengerPercentage, checkGuardrails, newSplit, percentagesOf, rampedSplit } from "../../../src/services/releases/split-input";

const v = (key: string, prompt_version_number: number, percentage: number) => ({ key, prompt_version_number, percentage });
const fails = (f: () => unknown, message: RegExp) => expect(f).toThrow(message);

describe("a new release's split", () => {
  it("the base is the variant on the label's version; percentages give bucket ranges", () => {
    const s = newSplit([v("base", 3, 90), v("challenger", 4, 10)], [], 3);
    expect(s.base).toBe("base");
    expect(s.versions).toEqual({ base: 3, challenger: 4 });
    expect(percentagesOf(s.shares)).toEqual({ base: 90, challenger: 10 });
    expect(s.shares.find((x) => x.key === "challenger")!.ranges).toEqual([[0, 1000]]);
    expect(challengerPercentage(s)).toBe(10);
  });

  it("refuses what breaks a rule, naming the field", () => {
    fails(() => newSplit([v("base", 3, 90), v("c", 4, 5)], [], 3), /^variants: percentages must sum to 100 \(they sum to 95\)/);
    fails(() => newSplit([v("base", 3, 90), v("c", 4, 10)], [], 7), /^variants: one variant must be the base, the label's current version 7/);
    fails(() => newSplit([v("base", 3, 90), v("base", 4, 10)], [], 3), /^variants\[1\]\.key: "base" is given twice/);
    fails(() => newSplit([v("a", 3, 90), v("b", 3, 10)], [], 3), /^variants\[1\]\.prompt_version_number: version 3 is variant "a" already/);
    fails(() => newSplit([v("a", 3, 89.995), v("b", 4, 10.005)], [], 3), /^variants\[0\]\.percentage: must be 0 to 100 with at most two decimals/);
    const seg = (name: string, shares: { key: string; percentage: number }[]) => ({ name, conditions: [{ key: "k", operator: "is" as const, value: "v" }], variants: shares });
    fails(() => newSplit([v("a", 3, 90), v("b", 4, 10)], [seg("s", [{ key: "x", percentage: 100 }])], 3), /^segments\[0\]\.variants\[0\]\.key: "x" is not a variant/);
    fails(() => newSplit([v("a", 3, 90), v("b", 4, 10)], [seg("s", [{ key: "a", percentage: 60 }])], 3), /^segments\[0\]\.variants: percentages must sum to 100/);
    fails(() => newSplit([v("a", 3, 90), v("b", 4, 10)], [seg("s", [{ key: "a", percentage: 100 }]), seg("s", [{ key: "b", percentage: 100 }])], 3), /^segments\[1\]\.name: "s" is given twice/);
    // A segment may leave a variant out: it gets 0 %.
    const ok = newSplit([v("a", 3, 90), v("b", 4, 10)], [seg("s", [{ key: "b", percentage: 100 }])], 3);
    expect(percentagesOf(ok.segments[0].shares)).toEqual({ a: 0, b: 100 });
  });
});

describe("ramps", () => {
  const s = newSplit([v("base", 3, 80), v("a", 4, 10), v("b", 5, 10)], [{ name: "s", conditions: [{ key: "k", operator: "is", value: "v" }], variants: [{ key: "base", percentage: 50 }, { key: "a", percentage: 50 }] }], 3);

  it("named variants take new percentages, the others keep theirs; the total must stay 100", () => {
    const r = rampedSplit(s, [{ key: "a", percentage: 20 }, { key: "base", percentage: 70 }], null);
    expect(percentagesOf(r.shares)).toEqual({ base: 70, a: 20, b: 10 });
    fails(() => rampedSplit(s, [{ key: "a", percentage: 20 }], null), /^variants: percentages must sum to 100 \(they sum to 110\)/);
    fails(() => rampedSplit(s, [{ key: "z", percentage: 20 }], null), /^variants\[0\]\.key: "z" is not a variant/);
    fails(() => rampedSplit(s, [{ key: "a", percentage: 20 }, { key: "a", percentage: 20 }], null), /^variants\[1\]\.key: "a" is given twice/);
    const seg = rampedSplit(s, null, [{ name: "s", variants: [{ key: "base", percentage: 25 }, { key: "a", percentage: 75 }] }]);
    expect(percentagesOf(seg.segments[0].shares)).toEqual({ base: 25, a: 75, b: 0 });
    fails(() => rampedSplit(s, null, [{ name: "nope", variants: [] }]), /^segments\[0\]\.name: this release has no segment "nope"/);
  });

  it("a rollback gives the base every bucket, in each segment too", () => {
    const r = baseOnly(s);
    expect(percentagesOf(r.shares)).toEqual({ base: 100, a: 0, b: 0 });
    expect(percentagesOf(r.segments[0].shares)).toEqual({ base: 100, a: 0, b: 0 });
  });
});

describe("guardrails' rules", () => {
  const g = (over: Partial<Guardrails>): Guardrails => ({ min_duration_hours: 1, min_samples_per_variant: 10, confidence: 0.95, metrics: [], on_regression: "rollback", on_success: "none", ramp: null, ...over });
  it("a score or signal metric names its score; ramp needs steps that increase and one challenger", () => {
    fails(() => checkGuardrails(g({ metrics: [{ type: "score", direction: "higher_is_better", max_regression: 0 }] }), 2), /^guardrails\.metrics\[0\]\.name/);
    fails(() => checkGuardrails(g({ on_success: "ramp" }), 2), /^guardrails\.ramp: on_success ramp needs/);
    fails(() => checkGuardrails(g({ on_success: "ramp", ramp: { steps: [10, 5], every_hours: 1 } }), 2), /^guardrails\.ramp\.steps\[1\]: steps must increase/);
    fails(() => checkGuardrails(g({ on_success: "ramp", ramp: { steps: [10], every_hours: 1 } }), 3), /^guardrails\.on_success: ramp needs exactly one challenger/);
    expect(checkGuardrails(g({ on_success: "ramp", ramp: { steps: [10, 50, 100], every_hours: 1 } }), 2).ramp!.steps).toEqual([10, 50, 100]);
  });
});
