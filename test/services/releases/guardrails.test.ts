// The guardrails' decisions (src/services/releases/guardrails.ts) from variants' rollups: a regression
// past its bound rolls back (or pauses) once there are enough samples, without waiting; success waits
// for the duration and promotes, ramps by steps, or only reports; a signal without results blocks.
import { describe, expect, it } from "vitest";
import type { Guardrails } from "../../../src/db/schema";
import { decide, type VariantStats } from "../../../src/services/releases/guardrails";

const HOUR = 3_600_000;

function variant(key: string, percentage: number, requests: number, errors: number, scores: number[] = [], latencyBucket = 40): VariantStats {
  const metrics = new Map();
  if (scores.length) metrics.set("score:quality", { n: scores.length, sum: scores.reduce((a, b) => a + b, 0), sumSq: scores.reduce((a, b) => a + b * b, 0) });
  return { key, percentage, requests, errors, latency: new Map([[latencyBucket, requests]]), metrics };
}

const guard = (g: Partial<Guardrails>): Guardrails => ({
  min_duration_hours: 24,
  min_samples_per_variant: 100,
  confidence: 0.95,
  metrics: [],
  on_regression: "rollback",
  on_success: "promote",
  ramp: null,
  ...g,
});

const at = (hours: number) => ({ createdAt: 0, rampedAt: 0, now: hours * HOUR });
const scores = (mean: number, n: number) => Array.from({ length: n }, (_, i) => mean + ((i % 5) - 2) * 3);

describe("guardrails", () => {
  const errorRate = { type: "error_rate" as const, direction: "lower_is_better" as const, max_regression: 0.01 };

  it("a challenger whose error rate is worse by more than its bound rolls back at once, once both have enough samples", () => {
    const g = guard({ metrics: [errorRate] });
    const variants = [variant("base", 90, 1000, 10), variant("c", 10, 500, 50)];
    expect(decide({ guardrails: g, base: "base", ...at(1), variants })).toMatchObject({ action: "rollback", variant: "c", metric: "error_rate", bound: 0.01 });
    // Too few samples: nothing yet.
    expect(decide({ guardrails: g, base: "base", ...at(1), variants: [variant("base", 90, 1000, 10), variant("c", 10, 50, 10)] })).toBeNull();
    // on_regression pause.
    expect(decide({ guardrails: guard({ metrics: [errorRate], on_regression: "pause" }), base: "base", ...at(1), variants })?.action).toBe("pause");
  });

  it("a score regression: lower mean than the base by more than max_regression (Welch, one-sided)", () => {
    const g = guard({ metrics: [{ type: "score", name: "quality", direction: "higher_is_better", max_regression: 2 }] });
    const d = decide({ guardrails: g, base: "base", ...at(1), variants: [variant("base", 50, 300, 0, scores(80, 300)), variant("c", 50, 300, 0, scores(70, 300))] });
    expect(d).toMatchObject({ action: "rollback", variant: "c", metric: "score:quality" });
    // A drop within the bound is no regression.
    expect(decide({ guardrails: g, base: "base", ...at(1), variants: [variant("base", 50, 300, 0, scores(80, 300)), variant("c", 50, 300, 0, scores(79.5, 300))] })).toBeNull();
  });

  it("success waits for min_duration_hours, then promotes the best challenger that clears every metric", () => {
    const g = guard({ metrics: [{ type: "score", name: "quality", direction: "higher_is_better", max_regression: 1 }, errorRate] });
    // Non-inferiority needs the data to show it: 1 % errors each over 4,000 requests is within 0.01 at 97.5 %.
    const variants = [variant("base", 50, 4000, 40, scores(80, 400)), variant("a", 25, 4000, 40, scores(82, 400)), variant("b", 25, 4000, 40, scores(85, 400))];
    expect(decide({ guardrails: g, base: "base", ...at(25), variants: variants.map((x) => ({ ...x, requests: 400, errors: 4 })) })).toBeNull();
    expect(decide({ guardrails: g, base: "base", ...at(23), variants })).toBeNull();
    expect(decide({ guardrails: g, base: "base", ...at(25), variants })).toEqual({ action: "promote", variant: "b" });
    // A challenger not shown within the bound does not clear.
    const unsure = [variant("base", 50, 4000, 40, scores(80, 400)), variant("a", 50, 4000, 40, [79, 60, 100, 75, 90, 65].flatMap((x) => Array(20).fill(x)))];
    expect(decide({ guardrails: g, base: "base", ...at(25), variants: unsure })).toBeNull();
    expect(decide({ guardrails: guard({ metrics: [errorRate], on_success: "none" }), base: "base", ...at(25), variants })).toMatchObject({ action: "ready" });
  });

  it("ramp: the next step above the challenger's share once every_hours passed; past the last step, promote", () => {
    const g = guard({ metrics: [errorRate], on_success: "ramp", ramp: { steps: [5, 25, 50, 100], every_hours: 6 } });
    const at10 = [variant("base", 90, 5000, 50), variant("c", 10, 5000, 50)];
    expect(decide({ guardrails: g, base: "base", createdAt: 0, rampedAt: 20 * HOUR, now: 25 * HOUR, variants: at10 })).toBeNull();
    expect(decide({ guardrails: g, base: "base", createdAt: 0, rampedAt: 18 * HOUR, now: 25 * HOUR, variants: at10 })).toEqual({ action: "ramp", variant: "c", percentage: 25 });
    const at100 = [variant("base", 0, 5000, 50), variant("c", 100, 5000, 50)];
    expect(decide({ guardrails: g, base: "base", ...at(25), variants: at100 })).toEqual({ action: "promote", variant: "c" });
  });

  it("latency p95 compares the measured ratio; a signal without results never regresses and blocks success", () => {
    const latency = { type: "latency_p95_ms" as const, direction: "lower_is_better" as const, max_regression: 0.2 };
    const slow = [variant("base", 50, 200, 0, [], 40), variant("c", 50, 200, 0, [], 45)];
    expect(decide({ guardrails: guard({ metrics: [latency] }), base: "base", ...at(1), variants: slow })).toMatchObject({ action: "rollback", metric: "latency_p95_ms" });
    const same = [variant("base", 50, 200, 0, [], 40), variant("c", 50, 200, 0, [], 40)];
    expect(decide({ guardrails: guard({ metrics: [latency] }), base: "base", ...at(25), variants: same })).toEqual({ action: "promote", variant: "c" });
    const signal = { type: "signal" as const, name: "policy", direction: "lower_is_better" as const, max_regression: 0.01 };
    expect(decide({ guardrails: guard({ metrics: [signal] }), base: "base", ...at(25), variants: same })).toBeNull();
    // With results (rows of kind 'signal'), it counts like any rate.
    const judged = same.map((v, i) => ({ ...v, metrics: new Map([["signal:policy", { n: 500, sum: i === 0 ? 5 : 60, sumSq: i === 0 ? 5 : 60 }]]) }));
    expect(decide({ guardrails: guard({ metrics: [signal] }), base: "base", ...at(25), variants: judged })).toMatchObject({ action: "rollback", metric: "signal:policy" });
  });
});
