// The A/B statistics (src/analytics/ab-stats.ts) against values computed by hand or by R.
import { describe, expect, it } from "vitest";
import { meanInterval, pAbove, pBelow, proportionDifference, proportionPValue, variance, welch, welchPValue, wilson, zFor } from "../../src/analytics/ab-stats";

const moments = (xs: number[]) => ({ n: xs.length, sum: xs.reduce((a, b) => a + b, 0), sumSq: xs.reduce((a, b) => a + b * b, 0) });

describe("A/B statistics", () => {
  it("Wilson's interval: 10 of 100 at 95 % is [0.0552, 0.1744]; none of 0 is null; bounds stay in [0, 1]", () => {
    const [lo, hi] = wilson(10, 100)!;
    expect(lo).toBeCloseTo(0.0552, 4);
    expect(hi).toBeCloseTo(0.1744, 4);
    expect(wilson(0, 0)).toBeNull();
    const [z0, z1] = wilson(0, 20)!;
    expect(z0).toBe(0);
    expect(z1).toBeGreaterThan(0);
    expect(zFor(0.95)).toBeCloseTo(1.96, 2);
  });

  it("a mean's t interval and Welch's test (R: t.test(a, b), Welch)", () => {
    const a = [81, 85, 79, 90, 88, 84];
    const b = [75, 80, 78, 74, 79, 77, 76];
    expect(variance(moments(a))).toBeCloseTo(17.1, 6);
    const [lo, hi] = meanInterval(moments(a))!;
    expect(lo).toBeCloseTo(80.1604, 3);
    expect(hi).toBeCloseTo(88.8396, 3);
    // t = 3.9994, df = 7.2808, p-value = 0.004792
    const d = welch(moments(a), moments(b))!;
    expect(d.diff).toBeCloseTo(7.5, 6);
    expect(d.diff / d.se).toBeCloseTo(3.9994, 3);
    expect(d.df).toBeCloseTo(7.2808, 3);
    expect(welchPValue(d)).toBeCloseTo(0.004792, 5);
    expect(welch(moments([1]), moments(b))).toBeNull();
  });

  it("two proportions: the pooled z-test's p-value and one-sided tests against a bound", () => {
    // 20/200 vs 10/200: pooled 0.075, z = 1.8983, two-sided p = 0.0577 (R: prop.test(c(20, 10), c(200, 200), correct = FALSE)).
    expect(proportionPValue({ n: 200, sum: 20, sumSq: 20 }, { n: 200, sum: 10, sumSq: 10 })).toBeCloseTo(0.0577, 3);
    const d = proportionDifference({ n: 200, sum: 20, sumSq: 20 }, { n: 200, sum: 10, sumSq: 10 })!;
    expect(d.diff).toBeCloseTo(0.05, 6);
    expect(pAbove(d, 0)).toBeLessThan(0.05);
    expect(pAbove(d, 0.2)).toBeGreaterThan(0.99);
    expect(pBelow(d, 0.2)).toBeLessThan(0.01);
    // Without spread the estimate decides.
    expect(pAbove({ diff: 0, se: 0, df: null }, 0.01)).toBe(1);
    expect(pBelow({ diff: 0, se: 0, df: null }, 0.01)).toBe(0);
  });
});
