// Deterministic sampling: the same (signal, source, log) always decides the same way, and a rate's
// share of many logs lands within its binomial bounds.
import { describe, expect, it } from "vitest";
import { isSampled, unitDraw } from "../../../src/services/signals/sampling";

describe("unitDraw", () => {
  it("is a number in [0, 1), the same for the same key and different for another", () => {
    const a = unitDraw("12:h3:900");
    expect(a).toBeGreaterThanOrEqual(0);
    expect(a).toBeLessThan(1);
    expect(unitDraw("12:h3:900")).toBe(a);
    expect(unitDraw("12:h3:901")).not.toBe(a);
  });
});

describe("isSampled", () => {
  it("takes every log at rate 1 and none at rate 0", () => {
    for (let id = 1; id <= 200; id++) {
      expect(isSampled(1, { hook: 1 }, id, 1)).toBe(true);
      expect(isSampled(1, { hook: 1 }, id, 0)).toBe(false);
    }
  });

  it("decides a log the same way every time (a redelivery samples what it sampled before)", () => {
    const first = Array.from({ length: 500 }, (_, i) => isSampled(7, { hook: 2 }, i + 1, 0.5));
    const again = Array.from({ length: 500 }, (_, i) => isSampled(7, { hook: 2 }, i + 1, 0.5));
    expect(again).toEqual(first);
  });

  it("keeps a share of 10,000 logs within 4 standard deviations of each rate", () => {
    for (const rate of [0.01, 0.1, 0.5, 0.9]) {
      let n = 0;
      for (let id = 1; id <= 10_000; id++) if (isSampled(3, { hook: 9 }, id, rate)) n++;
      const sd = Math.sqrt(10_000 * rate * (1 - rate));
      expect(Math.abs(n - 10_000 * rate)).toBeLessThan(4 * sd);
    }
  });

  it("draws independently per hook and per backfill (a log sampled by one is not thereby sampled by another)", () => {
    let both = 0;
    let a = 0;
    for (let id = 1; id <= 4_000; id++) {
      const x = isSampled(5, { hook: 1 }, id, 0.5);
      const y = isSampled(5, { backfill: 1 }, id, 0.5);
      if (x) a++;
      if (x && y) both++;
    }
    // Independent halves overlap on about a quarter.
    expect(Math.abs(both - 1_000)).toBeLessThan(4 * Math.sqrt(4_000 * 0.25 * 0.75));
    expect(a).toBeGreaterThan(1_800);
  });

  it("takes a smaller rate's logs within a larger rate's (the same draw)", () => {
    for (let id = 1; id <= 2_000; id++) {
      if (isSampled(4, { hook: 4 }, id, 0.2)) expect(isSampled(4, { hook: 4 }, id, 0.6)).toBe(true);
    }
  });
});
