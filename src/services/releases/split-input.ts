// Pure: a release's split from what a create or a ramp asks, with the rules that make it a 400 naming
// the field (percentages summing to 100, keys known and distinct, the base present, segments' keys
// among the variants'), and its guardrails' rules. The bucket arithmetic is src/prompts/ab-split.ts's.
import type { Guardrails, StoredSplit } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import { BUCKETS, bucketsOf, initialShares, percentageOf, rampShares, sizeOf, type Share } from "../../prompts";

const bad = (message: string) => new ApiError("validation_error", message);

export interface VariantInput {
  key: string;
  prompt_version_number: number;
  percentage: number;
}

export interface SegmentInput {
  name: string;
  conditions: { key: string; operator: "is" | "is_not" | "in"; value: string | string[] }[];
  variants: { key: string; percentage: number }[];
}

/** Buckets per key from percentages (each two decimals at most), summing to 100 %. */
function unitsOf(path: string, shares: readonly { key: string; percentage: number }[], known: readonly string[]): Record<string, number> {
  const units: Record<string, number> = Object.fromEntries(known.map((k) => [k, 0]));
  const seen = new Set<string>();
  shares.forEach((s, i) => {
    if (!known.includes(s.key)) throw bad(`${path}[${i}].key: "${s.key}" is not a variant of this release (${known.join(", ")})`);
    if (seen.has(s.key)) throw bad(`${path}[${i}].key: "${s.key}" is given twice`);
    seen.add(s.key);
    const u = bucketsOf(s.percentage);
    if (u === null) throw bad(`${path}[${i}].percentage: must be 0 to 100 with at most two decimals`);
    units[s.key] = u;
  });
  const total = Object.values(units).reduce((a, b) => a + b, 0);
  if (total !== BUCKETS) throw bad(`${path}: percentages must sum to 100 (they sum to ${total / 100})`);
  return units;
}

/**
 * The split of a new release: `variants` in order, the base being the one on the label's version
 * (`labelVersion`). Versions are checked to exist by the caller.
 */
export function newSplit(variants: readonly VariantInput[], segments: readonly SegmentInput[], labelVersion: number): StoredSplit {
  const keys = variants.map((v) => v.key);
  variants.forEach((v, i) => {
    if (keys.indexOf(v.key) !== i) throw bad(`variants[${i}].key: "${v.key}" is given twice`);
    const dup = variants.findIndex((w) => w.prompt_version_number === v.prompt_version_number);
    if (dup !== i) throw bad(`variants[${i}].prompt_version_number: version ${v.prompt_version_number} is variant "${variants[dup].key}" already`);
  });
  const base = variants.find((v) => v.prompt_version_number === labelVersion);
  if (!base) throw bad(`variants: one variant must be the base, the label's current version ${labelVersion} (none is)`);
  const units = unitsOf("variants", variants, keys);
  const order = keys.map((key) => ({ key, units: units[key] }));
  const names = new Set<string>();
  const segs = segments.map((s, i) => {
    if (names.has(s.name)) throw bad(`segments[${i}].name: "${s.name}" is given twice`);
    names.add(s.name);
    const su = unitsOf(`segments[${i}].variants`, s.variants, keys);
    return { name: s.name, conditions: s.conditions, shares: initialShares(keys.map((key) => ({ key, units: su[key] })), base.key) };
  });
  return {
    base: base.key,
    versions: Object.fromEntries(variants.map((v) => [v.key, v.prompt_version_number])),
    shares: initialShares(order, base.key),
    segments: segs,
  };
}

/** A split's variants as answers show them: key, version, percentage, whether it is the base. */
export const variantList = (split: StoredSplit) => {
  const pct = percentagesOf(split.shares);
  return split.shares.map((s) => ({ key: s.key, prompt_version_number: split.versions[s.key], percentage: pct[s.key], is_base: s.key === split.base }));
};

/** The percentages of a split's shares, by key. */
export const percentagesOf = (shares: readonly Share[]) => Object.fromEntries(shares.map((s) => [s.key, percentageOf(s.ranges)]));

/**
 * A ramp: the variants and segments named take their new percentages (those not named keep theirs),
 * and each split must still sum to 100. Buckets move as rampShares moves them: only base units change
 * variant, and never from one challenger to another.
 */
export function rampedSplit(split: StoredSplit, variants: readonly { key: string; percentage: number }[] | null | undefined, segments: readonly { name: string; variants: { key: string; percentage: number }[] }[] | null | undefined): StoredSplit {
  const keys = Object.keys(split.versions);
  const merged = (shares: readonly Share[], asked: readonly { key: string; percentage: number }[], path: string) => {
    const current = percentagesOf(shares);
    const seen = new Set<string>();
    asked.forEach((a, i) => {
      if (!keys.includes(a.key)) throw bad(`${path}[${i}].key: "${a.key}" is not a variant of this release (${keys.join(", ")})`);
      if (seen.has(a.key)) throw bad(`${path}[${i}].key: "${a.key}" is given twice`);
      seen.add(a.key);
      if (bucketsOf(a.percentage) === null) throw bad(`${path}[${i}].percentage: must be 0 to 100 with at most two decimals`);
    });
    const next = keys.map((key) => ({ key, percentage: asked.find((a) => a.key === key)?.percentage ?? current[key] }));
    return rampShares(shares, unitsOf(path, next, keys), split.base);
  };
  const names = new Set<string>();
  const segs = split.segments.map((s) => ({ ...s }));
  (segments ?? []).forEach((asked, i) => {
    if (names.has(asked.name)) throw bad(`segments[${i}].name: "${asked.name}" is given twice`);
    names.add(asked.name);
    const at = segs.findIndex((s) => s.name === asked.name);
    if (at < 0) throw bad(`segments[${i}].name: this release has no segment "${asked.name}" (segments' conditions cannot change; create a new release)`);
    segs[at] = { ...segs[at], shares: merged(segs[at].shares, asked.variants, `segments[${i}].variants`) };
  });
  return { ...split, shares: variants ? merged(split.shares, variants, "variants") : split.shares, segments: segs };
}

/** Every challenger at 0 %: the base takes every bucket, at top level and in each segment (a rollback). */
export function baseOnly(split: StoredSplit): StoredSplit {
  const all = (shares: readonly Share[]) => shares.map((s) => ({ key: s.key, ranges: s.key === split.base ? ([[0, BUCKETS]] as [number, number][]) : [] }));
  return { ...split, shares: all(split.shares), segments: split.segments.map((s) => ({ ...s, shares: all(s.shares) })) };
}

/** Whether two splits give every bucket to the same variant (a ramp that changes nothing). */
export function sameSplit(a: StoredSplit, b: StoredSplit): boolean {
  return JSON.stringify([a.shares, a.segments.map((s) => s.shares)]) === JSON.stringify([b.shares, b.segments.map((s) => s.shares)]);
}

/** The challengers' share of the top-level split, in percent (a guardrail ramp's current step). */
export const challengerPercentage = (split: StoredSplit) => split.shares.filter((s) => s.key !== split.base).reduce((n, s) => n + sizeOf(s.ranges), 0) / 100;

/** A guardrails object's cross-field rules (the schema has checked each field). */
export function checkGuardrails(g: Guardrails, variantCount: number): Guardrails {
  g.metrics.forEach((m, i) => {
    if ((m.type === "score" || m.type === "signal") && !m.name) throw bad(`guardrails.metrics[${i}].name: a ${m.type} metric names its ${m.type}`);
  });
  if (g.on_success === "ramp") {
    if (!g.ramp) throw bad("guardrails.ramp: on_success ramp needs ramp {steps, every_hours}");
    if (variantCount !== 2) throw bad("guardrails.on_success: ramp needs exactly one challenger beside the base");
    g.ramp.steps.forEach((p, i) => {
      if (bucketsOf(p) === null || p <= 0) throw bad(`guardrails.ramp.steps[${i}]: must be above 0 and at most 100, with at most two decimals`);
      if (i > 0 && p <= g.ramp!.steps[i - 1]) throw bad(`guardrails.ramp.steps[${i}]: steps must increase`);
    });
  }
  return g;
}

/** Each challenger's percentage, top level and per segment (`segment/key`), for comparing two splits. */
function challengerShares(split: StoredSplit): Map<string, number> {
  const out = new Map<string, number>();
  const add = (prefix: string, shares: readonly Share[]) => {
    for (const [key, pct] of Object.entries(percentagesOf(shares))) if (key !== split.base) out.set(`${prefix}${key}`, pct);
  };
  add("", split.shares);
  for (const g of split.segments) add(`${g.name}/`, g.shares);
  return out;
}

/** Whether `after` gives any challenger more than `before` did (top level or in any segment). */
export function raisesChallenger(before: StoredSplit, after: StoredSplit): boolean {
  const was = challengerShares(before);
  return [...challengerShares(after)].some(([k, pct]) => pct > (was.get(k) ?? 0));
}

/** Whether the split serves any challenger at all (above 0 %, top level or in a segment). */
export const servesChallenger = (split: StoredSplit): boolean => [...challengerShares(split).values()].some((pct) => pct > 0);
