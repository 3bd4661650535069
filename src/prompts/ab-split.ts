// Pure: how an A/B release splits a label's traffic. A unit (the value of the release's assignment
// key in metadata_filters) hashes into one of 10,000 buckets; each variant owns stored bucket ranges,
// so the same unit always gets the same variant, and a ramp moves only the buckets it must: a
// challenger that grows takes base buckets (never another challenger's), one that shrinks gives its
// buckets back to the base. Segments (matched in order on metadata_filters) have splits of their own.
// Without a unit the bucket is drawn at random, so the percentages still hold. SHA-1 over
// (release id, salt, segment, unit), its first 60 bits scaled to the bucket count, is the common feature-flag scheme.

import type { BucketRange, SplitSegment, SplitSegmentCondition, SplitShare, StoredSplit } from "../db/schema";

/** Buckets [start, end). */
export type Range = BucketRange;
export type SegmentCondition = SplitSegmentCondition;
/** One variant of a split: its key and the buckets it owns. */
export type Share = SplitShare;
export type Segment = SplitSegment;
/** A release's split as stored: its variants (key → version), the base's key, the top-level shares and the segments. */
export type Split = StoredSplit;

/** Buckets of a split: a percentage is a whole number of them (0.01 % each). */
export const BUCKETS = 10_000;

export interface Assignment {
  variant: string;
  version: number;
  segment: string | null;
  bucket: number;
  /** sticky: from the unit's hash; random: the request named no unit. */
  assignment: "sticky" | "random";
}

/** A percentage (0..100, at most two decimals) as buckets, or null when it is not one. */
export function bucketsOf(percentage: number): number | null {
  const units = Math.round(percentage * 100);
  return Number.isFinite(percentage) && percentage >= 0 && percentage <= 100 && Math.abs(units - percentage * 100) < 1e-6 ? units : null;
}

/** How many buckets ranges cover. */
export const sizeOf = (ranges: readonly Range[]) => ranges.reduce((n, [a, b]) => n + (b - a), 0);

/** A share's percentage, from its buckets. */
export const percentageOf = (ranges: readonly Range[]) => sizeOf(ranges) / 100;

function toRanges(owner: Int16Array, index: number): Range[] {
  const out: Range[] = [];
  for (let b = 0; b < BUCKETS; b++) {
    if (owner[b] !== index) continue;
    const last = out[out.length - 1];
    if (last && last[1] === b) last[1] = b + 1;
    else out.push([b, b + 1]);
  }
  return out;
}

function countOf(owner: Int16Array, index: number): number {
  let n = 0;
  for (let b = 0; b < BUCKETS; b++) if (owner[b] === index) n++;
  return n;
}

function ownersOf(shares: readonly Share[]): Int16Array {
  const owner = new Int16Array(BUCKETS).fill(-1);
  shares.forEach((s, i) => {
    for (const [a, b] of s.ranges) owner.fill(i, a, b);
  });
  return owner;
}

/**
 * The first split: challengers (in order) take contiguous ranges from bucket 0, the base the rest.
 * `units` are buckets per key and must sum to BUCKETS.
 */
export function initialShares(order: readonly { key: string; units: number }[], base: string): Share[] {
  const owner = new Int16Array(BUCKETS).fill(-1);
  let at = 0;
  order.forEach((v, i) => {
    if (v.key === base) return;
    owner.fill(i, at, at + v.units);
    at += v.units;
  });
  const baseIndex = order.findIndex((v) => v.key === base);
  owner.fill(baseIndex, at, BUCKETS);
  return order.map((v, i) => ({ key: v.key, ranges: toRanges(owner, i) }));
}

/**
 * A ramp: each challenger ends with `units[key]` buckets. One that shrinks gives up its highest
 * buckets to the base; one that grows takes the base's lowest buckets, those the base held before
 * this ramp first, so a unit never goes from one challenger to another through the base in one step.
 * Buckets never move between challengers, and the base keeps what no challenger takes.
 */
export function rampShares(current: readonly Share[], units: Readonly<Record<string, number>>, base: string): Share[] {
  const owner = ownersOf(current);
  const baseIndex = current.findIndex((s) => s.key === base);
  const freed: number[] = [];
  current.forEach((s, i) => {
    if (i === baseIndex) return;
    let excess = countOf(owner, i) - units[s.key];
    for (let b = BUCKETS - 1; b >= 0 && excess > 0; b--) {
      if (owner[b] !== i) continue;
      owner[b] = baseIndex;
      freed.push(b);
      excess--;
    }
  });
  const freedSet = new Set(freed);
  const heldBefore: number[] = [];
  for (let b = 0; b < BUCKETS; b++) if (owner[b] === baseIndex && !freedSet.has(b)) heldBefore.push(b);
  const pool = [...heldBefore, ...freed.sort((a, b) => a - b)];
  let next = 0;
  current.forEach((s, i) => {
    if (i === baseIndex) return;
    let need = units[s.key] - countOf(owner, i);
    while (need > 0 && next < pool.length) {
      const b = pool[next++];
      if (owner[b] !== baseIndex) continue;
      owner[b] = i;
      need--;
    }
  });
  return current.map((s, i) => ({ key: s.key, ranges: toRanges(owner, i) }));
}

/** A metadata value as the split compares it: strings as they are, other JSON values as their JSON text. */
export function asUnitText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

function holds(c: SegmentCondition, metadata: Readonly<Record<string, unknown>>): boolean {
  const v = asUnitText(metadata[c.key]);
  if (c.operator === "is") return v !== null && v === c.value;
  if (c.operator === "is_not") return v === null || v !== c.value;
  return v !== null && (c.value as string[]).includes(v);
}

/** The first segment whose conditions all hold over the metadata, or null. */
export function matchSegment(segments: readonly Segment[], metadata: Readonly<Record<string, unknown>>): Segment | null {
  return segments.find((s) => s.conditions.every((c) => holds(c, metadata))) ?? null;
}

/** The unit's bucket: SHA-1 of `${releaseId}.${salt}.${segment}.${unit}`, its first 60 bits scaled to BUCKETS. */
export async function bucketOf(releaseId: number, salt: string, segment: string | null, unit: string): Promise<number> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(`${releaseId}.${salt}.${segment ?? ""}.${unit}`)));
  let n = 0n;
  for (let i = 0; i < 8; i++) n = (n << 8n) | BigInt(digest[i]);
  // The first 15 hex digits (60 bits), as a fraction of 2^60, times the bucket count.
  return Number(((n >> 4n) * BigInt(BUCKETS)) >> 60n);
}

/** A bucket drawn at random (no unit to hash). */
export function randomBucket(): number {
  const [n] = crypto.getRandomValues(new Uint32Array(1));
  return Math.floor((n / 2 ** 32) * BUCKETS);
}

/** The share owning the bucket. */
export function shareAt(shares: readonly Share[], bucket: number): string {
  for (const s of shares) for (const [a, b] of s.ranges) if (bucket >= a && bucket < b) return s.key;
  throw new Error(`bucket ${bucket} is in no range`);
}

/** The release's identity as assignment reads it. */
export interface SplitRelease {
  id: number;
  salt: string;
  assignmentKey: string | null;
  split: Split;
}

/** The unit a request names: metadata_filters[assignment_key], or null (no key, missing or empty). */
export function unitOf(release: Pick<SplitRelease, "assignmentKey">, metadata: Readonly<Record<string, unknown>> | null | undefined): string | null {
  if (!release.assignmentKey || !metadata) return null;
  const unit = asUnitText(metadata[release.assignmentKey]);
  return unit === null || unit === "" ? null : unit;
}

/** The variant a request gets: its segment's split (or the top one), sticky by its unit or random without one. */
export async function assign(release: SplitRelease, metadata: Readonly<Record<string, unknown>> | null | undefined, random = randomBucket): Promise<Assignment> {
  const meta = metadata ?? {};
  const segment = matchSegment(release.split.segments, meta);
  const unit = unitOf(release, meta);
  const bucket = unit === null ? random() : await bucketOf(release.id, release.salt, segment?.name ?? null, unit);
  const variant = shareAt(segment ? segment.shares : release.split.shares, bucket);
  return { variant, version: release.split.versions[variant], segment: segment?.name ?? null, bucket, assignment: unit === null ? "random" : "sticky" };
}

/** How a log is known to belong to a variant: its unit's recomputed assignment agrees with its version, or only its version tells. */
export type LoggedAssignment = "sticky" | "inferred";

/**
 * The variant of a release a log was served, from what both SDKs log: the metadata they fetched with
 * and the version they were served. Sticky when the unit's assignment (recomputed now) served that
 * version; else inferred when exactly one variant has it; else none.
 */
export async function variantOfLog(release: SplitRelease, metadata: Readonly<Record<string, unknown>>, version: number): Promise<{ variant: string; assignment: LoggedAssignment } | null> {
  if (unitOf(release, metadata) !== null) {
    const a = await assign(release, metadata);
    if (a.version === version) return { variant: a.variant, assignment: "sticky" };
  }
  const having = Object.entries(release.split.versions).filter(([, v]) => v === version);
  return having.length === 1 ? { variant: having[0][0], assignment: "inferred" } : null;
}
