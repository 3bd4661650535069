// A release's scorecard: per variant, from the rollups of every log database of the workspace (never
// the logs), requests, unique units, error rate, cost per request, latency percentiles, and each
// score's (and each signal's) mean or rate with a 95 % interval, its
// difference to the base and that difference's p-value. The statistics are analytics/ab-stats.ts's.
import type { AbTestRow } from "../../db/schema";
import { mean, meanInterval, proportionPValue, welch, welchPValue, wilson, type Moments } from "../../analytics/ab-stats";
import { quantile } from "../../analytics/latency-buckets";
import type { Db } from "../../db/client";
import { abTotals, type AbTotals, type WorkspaceLogs } from "../../logs";
import { toIso } from "../../lib/time";
import { requireRelease } from "./releases";
import { percentageOf } from "../../prompts";
import type { VariantStats } from "./guardrails";

/** Each variant's stats from the summed rollups (variants without logs have zeros). */
export function variantStats(release: Pick<AbTestRow, "split">, totals: AbTotals): VariantStats[] {
  const split = release.split;
  return split.shares.map((s) => {
    const latency = new Map<number, number>();
    let requests = 0;
    let errors = 0;
    for (const d of totals.daily.filter((d) => d.variant === s.key)) {
      requests += d.requests;
      errors += d.errors;
      latency.set(d.bucket, (latency.get(d.bucket) ?? 0) + d.requests);
    }
    const metrics = new Map<string, Moments>();
    for (const m of totals.metrics.filter((m) => m.variant === s.key)) {
      const k = `${m.kind}:${m.name}`;
      const had = metrics.get(k) ?? { n: 0, sum: 0, sumSq: 0 };
      metrics.set(k, { n: had.n + m.n, sum: had.sum + m.sum, sumSq: had.sumSq + m.sum_sq });
    }
    return { key: s.key, percentage: percentageOf(s.ranges), requests, errors, latency, metrics };
  });
}

const round = (x: number | null, digits = 6) => (x === null || !Number.isFinite(x) ? null : Number(x.toFixed(digits)));
const interval = (ci: [number, number] | null): [number, number] | null => (ci ? [round(ci[0])!, round(ci[1])!] : null);

function meanEntry(m: Moments, base: Moments | undefined, isBase: boolean) {
  const d = !isBase && base ? welch(m, base) : null;
  return { mean: round(mean(m)), n: m.n, ci95: interval(meanInterval(m)), delta_vs_base: isBase ? null : d ? round(d.diff) : null, p_value: d ? round(welchPValue(d)) : null };
}

function rateEntry(m: Moments, base: Moments | undefined, isBase: boolean) {
  const rate = m.n > 0 ? m.sum / m.n : null;
  const baseRate = base && base.n > 0 ? base.sum / base.n : null;
  return {
    true_rate: round(rate),
    n: m.n,
    ci95: interval(wilson(m.sum, m.n)),
    delta_vs_base: isBase || rate === null || baseRate === null ? null : round(rate - baseRate),
    p_value: isBase || !base ? null : round(proportionPValue(m, base)),
  };
}

export function scorecardOf(release: Pick<AbTestRow, "id" | "split">, totals: AbTotals, range: { from: string | null; to: string | null }) {
  const stats = variantStats(release, totals);
  const base = stats.find((s) => s.key === release.split.base)!;
  const units = new Map<string, number>();
  for (const u of totals.units) units.set(u.variant, (units.get(u.variant) ?? 0) + u.units);
  const names = (kind: string) => [...new Set(stats.flatMap((s) => [...s.metrics.keys()].filter((k) => k.startsWith(`${kind}:`))))].map((k) => k.slice(kind.length + 1)).sort();
  const errorsOf = (s: VariantStats): Moments => ({ n: s.requests, sum: s.errors, sumSq: s.errors });
  return {
    success: true as const,
    ab_test_id: release.id,
    from: range.from,
    to: range.to,
    base: release.split.base,
    variants: stats.map((s) => {
      const isBase = s.key === base.key;
      const errorRate = s.requests > 0 ? s.errors / s.requests : null;
      const cost = totals.daily.filter((d) => d.variant === s.key).reduce((n, d) => n + d.cost, 0);
      const latencySum = totals.daily.filter((d) => d.variant === s.key).reduce((n, d) => n + d.latency_ms, 0);
      return {
        key: s.key,
        prompt_version_number: release.split.versions[s.key],
        is_base: isBase,
        percentage: s.percentage,
        requests: s.requests,
        units: units.get(s.key) ?? 0,
        errors: s.errors,
        error_rate: round(errorRate),
        error_rate_ci95: interval(wilson(s.errors, s.requests)),
        error_rate_delta_vs_base: isBase || errorRate === null || base.requests === 0 ? null : round(errorRate - base.errors / base.requests),
        error_rate_p_value: isBase ? null : round(proportionPValue(errorsOf(s), errorsOf(base))),
        cost: round(cost, 9),
        cost_per_request: s.requests > 0 ? round(cost / s.requests, 9) : null,
        latency_ms: { mean: s.requests > 0 ? round(latencySum / s.requests, 3) : null, p50: round(quantile(s.latency, 0.5), 3), p95: round(quantile(s.latency, 0.95), 3) },
        scores: Object.fromEntries(names("score").map((n) => [n, meanEntry(s.metrics.get(`score:${n}`) ?? { n: 0, sum: 0, sumSq: 0 }, base.metrics.get(`score:${n}`), isBase)])),
        // Signals' true-rates: rows of kind 'signal' (1 true, 0 false) that each stored verdict adds (logs/signal-results.ts).
        signals: Object.fromEntries(names("signal").map((n) => [n, rateEntry(s.metrics.get(`signal:${n}`) ?? { n: 0, sum: 0, sumSq: 0 }, base.metrics.get(`signal:${n}`), isBase)])),
      };
    }),
  };
}

/** GET /ab-tests/{id}/scorecard: the release's rollups over [from, to] (whole UTC days; either open). */
export async function releaseScorecard(db: Db, logs: WorkspaceLogs, ws: number, id: number, range: { from?: number; to?: number }) {
  const r = await requireRelease(db, ws, id);
  const totals = await abTotals(logs, ws, id, range);
  return scorecardOf(r, totals, { from: range.from == null ? null : toIso(range.from), to: range.to == null ? null : toIso(range.to) });
}
