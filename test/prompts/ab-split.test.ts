// The A/B split (src/prompts/ab-split.ts): sticky buckets, percentages over many units, ramps that
// move exactly the base units they must and never a challenger's, segments, and a log's variant.
import { describe, expect, it } from "vitest";
import {
  assign,
  bucketOf,
  bucketsOf,
  BUCKETS,
  initialShares,
  matchSegment,
  rampShares,
  sizeOf,
  unitOf,
  variantOfLog,
  type Share,
  type Split,
} from "../../src/prompts/ab-split";

const owners = (shares: Share[]) => {
  const out = new Array<string>(BUCKETS);
  for (const s of shares) for (const [a, b] of s.ranges) for (let i = a; i < b; i++) out[i] = s.key;
  return out;
};

const split90: Split = {
  base: "base",
  versions: { base: 3, challenger: 4 },
  shares: initialShares(
    [
      { key: "base", units: 9000 },
      { key: "challenger", units: 1000 },
    ],
    "base",
  ),
  segments: [],
};

describe("percentages and buckets", () => {
  it("a percentage is whole buckets of 0.01 %, 0 to 100", () => {
    expect(bucketsOf(12.5)).toBe(1250);
    expect(bucketsOf(0.01)).toBe(1);
    expect(bucketsOf(100)).toBe(10_000);
    expect(bucketsOf(0)).toBe(0);
    expect(bucketsOf(0.001)).toBeNull();
    expect(bucketsOf(-1)).toBeNull();
    expect(bucketsOf(100.01)).toBeNull();
    expect(bucketsOf(Number.NaN)).toBeNull();
  });

  it("the first split gives challengers the lowest buckets in order and the base the rest, every bucket once", () => {
    const shares = initialShares(
      [
        { key: "a", units: 7000 },
        { key: "b", units: 1000 },
        { key: "c", units: 2000 },
      ],
      "a",
    );
    expect(shares).toEqual([
      { key: "a", ranges: [[3000, 10000]] },
      { key: "b", ranges: [[0, 1000]] },
      { key: "c", ranges: [[1000, 3000]] },
    ]);
    expect(owners(shares).every(Boolean)).toBe(true);
  });

  it("a unit's bucket is fixed by release, salt, segment and unit, and within 0..9999", async () => {
    const b = await bucketOf(7, "s", null, "user-1");
    expect(await bucketOf(7, "s", null, "user-1")).toBe(b);
    expect(b).toBeGreaterThanOrEqual(0);
    expect(b).toBeLessThan(BUCKETS);
    const others = await Promise.all([bucketOf(8, "s", null, "user-1"), bucketOf(7, "t", null, "user-1"), bucketOf(7, "s", "seg", "user-1"), bucketOf(7, "s", null, "user-2")]);
    // Any one may collide by chance (1 in 10,000); all four cannot.
    expect(others.filter((o) => o === b).length).toBeLessThan(2);
  });
});

describe("sticky assignment", () => {
  const release = { id: 42, salt: "", assignmentKey: "user_id", split: split90 };

  it("the same unit always gets the same variant; 10,000 units split within ±2 points of 90/10", async () => {
    let challenger = 0;
    for (let u = 0; u < 10_000; u++) {
      const a = await assign(release, { user_id: `u${u}` });
      expect(a.assignment).toBe("sticky");
      if (u < 50) expect(await assign(release, { user_id: `u${u}` })).toEqual(a);
      if (a.variant === "challenger") challenger++;
      expect(a.version).toBe(a.variant === "challenger" ? 4 : 3);
    }
    expect(Math.abs(challenger / 10_000 - 0.1)).toBeLessThanOrEqual(0.02);
  });

  it("without the key (or with it empty) assignment is random and says so, and still splits by the percentages", async () => {
    expect(unitOf(release, { other: "x" })).toBeNull();
    expect(unitOf(release, { user_id: "" })).toBeNull();
    expect(unitOf({ assignmentKey: null }, { user_id: "u" })).toBeNull();
    expect(unitOf(release, { user_id: 5 })).toBe("5");
    let challenger = 0;
    for (let i = 0; i < 4000; i++) {
      const a = await assign(release, {});
      expect(a.assignment).toBe("random");
      if (a.variant === "challenger") challenger++;
    }
    expect(Math.abs(challenger / 4000 - 0.1)).toBeLessThanOrEqual(0.02);
  });
});

describe("ramps move only base units", () => {
  it("10 % → 25 %: exactly the units in buckets [1000, 2500) move to the challenger, none back", async () => {
    const before = owners(split90.shares);
    const ramped = rampShares(split90.shares, { base: 7500, challenger: 2500 }, "base");
    const after = owners(ramped);
    const moved = [...before.keys()].filter((b) => before[b] !== after[b]);
    expect(moved.length).toBe(1500);
    expect(moved.every((b) => before[b] === "base" && after[b] === "challenger")).toBe(true);
    expect(Math.min(...moved)).toBe(1000);
    expect(Math.max(...moved)).toBe(2499);
    // Over units: exactly those whose bucket moved change variant.
    const release = (split: Split) => ({ id: 1, salt: "", assignmentKey: "user_id", split });
    let changed = 0;
    let expected = 0;
    for (let u = 0; u < 3000; u++) {
      const b = await bucketOf(1, "", null, `u${u}`);
      const [x, y] = [await assign(release(split90), { user_id: `u${u}` }), await assign(release({ ...split90, shares: ramped }), { user_id: `u${u}` })];
      if (x.variant !== y.variant) {
        changed++;
        expect([x.variant, y.variant]).toEqual(["base", "challenger"]);
      }
      if (b >= 1000 && b < 2500) expected++;
    }
    expect(changed).toBe(expected);
  });

  it("shrinking gives the challenger's highest buckets back to the base; growing again takes base buckets only", () => {
    const down = rampShares(split90.shares, { base: 9500, challenger: 500 }, "base");
    expect(down.find((s) => s.key === "challenger")!.ranges).toEqual([[0, 500]]);
    const up = rampShares(down, { base: 8000, challenger: 2000 }, "base");
    const [b, u] = [owners(down), owners(up)];
    for (let i = 0; i < BUCKETS; i++) if (b[i] !== u[i]) expect([b[i], u[i]]).toEqual(["base", "challenger"]);
    expect(sizeOf(up.find((s) => s.key === "challenger")!.ranges)).toBe(2000);
  });

  it("with two challengers, one growing never takes the other's buckets, nor those the other gives up in the same ramp", () => {
    const start = initialShares(
      [
        { key: "base", units: 8000 },
        { key: "a", units: 1000 },
        { key: "b", units: 1000 },
      ],
      "base",
    );
    const next = rampShares(start, { base: 7500, a: 500, b: 2000 }, "base");
    const [x, y] = [owners(start), owners(next)];
    const moves = new Set<string>();
    for (let i = 0; i < BUCKETS; i++) if (x[i] !== y[i]) moves.add(`${x[i]}>${y[i]}`);
    // a gives buckets up to the base; b takes buckets the base held before the ramp.
    expect([...moves].sort()).toEqual(["a>base", "base>b"]);
    expect(next.map((s) => [s.key, sizeOf(s.ranges)])).toEqual([
      ["base", 7500],
      ["a", 500],
      ["b", 2000],
    ]);
  });
});

describe("segments", () => {
  const segments = [
    { name: "internal", conditions: [{ key: "company", operator: "is" as const, value: "acme" }], shares: initialShares([{ key: "base", units: 5000 }, { key: "challenger", units: 5000 }], "base") },
    { name: "free", conditions: [{ key: "plan", operator: "in" as const, value: ["free", "trial"] }, { key: "country", operator: "is_not" as const, value: "DE" }], shares: initialShares([{ key: "base", units: 0 }, { key: "challenger", units: 10000 }], "base") },
  ];

  it("matched in order on metadata, all conditions holding; values compared as text", () => {
    expect(matchSegment(segments, { company: "acme", plan: "free" })?.name).toBe("internal");
    expect(matchSegment(segments, { plan: "trial" })?.name).toBe("free");
    expect(matchSegment(segments, { plan: "trial", country: "DE" })).toBeNull();
    expect(matchSegment(segments, { plan: "pro" })).toBeNull();
    expect(matchSegment([{ name: "n", conditions: [{ key: "tier", operator: "is", value: "3" }], shares: [] }], { tier: 3 })?.name).toBe("n");
  });

  it("a matching segment's own split applies", async () => {
    const release = { id: 9, salt: "", assignmentKey: "user_id", split: { ...split90, segments } };
    const a = await assign(release, { user_id: "u1", plan: "free" });
    expect(a).toMatchObject({ segment: "free", variant: "challenger", version: 4 });
    expect((await assign(release, { user_id: "u1" })).segment).toBeNull();
  });
});

describe("a log's variant", () => {
  const release = { id: 5, salt: "x", assignmentKey: "user_id", split: split90 };

  it("sticky when the unit's assignment served the logged version; inferred when only the version tells; none for another version", async () => {
    for (let u = 0; u < 200; u++) {
      const a = await assign(release, { user_id: `u${u}` });
      expect(await variantOfLog(release, { user_id: `u${u}` }, a.version)).toEqual({ variant: a.variant, assignment: "sticky" });
      const other = a.version === 3 ? 4 : 3;
      expect(await variantOfLog(release, { user_id: `u${u}` }, other)).toEqual({ variant: other === 3 ? "base" : "challenger", assignment: "inferred" });
    }
    expect(await variantOfLog(release, {}, 4)).toEqual({ variant: "challenger", assignment: "inferred" });
    expect(await variantOfLog(release, { user_id: "u1" }, 9)).toBeNull();
  });
});
