// Pure: what a release's guardrails decide from its variants' rollups. Each challenger is compared
// with the base on each metric, in how much worse it is (base − challenger for a higher-is-better
// metric, challenger − base for a lower-is-better one):
// - a regression: worse by more than the metric's max_regression, at the guardrails' confidence
//   (one-sided, Bonferroni-corrected by the number of metrics), once every variant compared has
//   min_samples_per_variant requests. It does not wait for min_duration_hours.
// - success: after min_duration_hours, every metric of a challenger shown no worse than its bound at
//   that confidence (latency p95 by the measured ratio). The best such challenger (by the first
//   metric, else by requests) is promoted, ramped to the next step, or only reported.
// A signal metric reads Signals' true/false results (rows of kind 'signal'); until a signal has
// results it has no samples: it never regresses and a success waits for it.
import type { Guardrails, GuardrailMetric } from "../../db/schema";
import { pAbove, pBelow, proportionDifference, welch, type Difference, type Moments } from "../../analytics/ab-stats";
import { quantile } from "../../analytics/latency-buckets";

export interface VariantStats {
  key: string;
  /** Its share of the top-level split, in percent. */
  percentage: number;
  requests: number;
  errors: number;
  /** Latency bucket → requests. */
  latency: Map<number, number>;
  /** `${kind}:${name}` → the metric's moments. */
  metrics: Map<string, Moments>;
}

export interface GuardrailInput {
  guardrails: Guardrails;
  base: string;
  createdAt: number;
  rampedAt: number;
  now: number;
  variants: VariantStats[];
}

export type Decision =
  | { action: "rollback" | "pause"; variant: string; metric: string; observed: number; bound: number; p_value: number | null }
  | { action: "promote" | "ready"; variant: string }
  | { action: "ramp"; variant: string; percentage: number }
  | null;

const HOUR = 3_600_000;

export const metricLabel = (m: GuardrailMetric) => (m.name ? `${m.type}:${m.name}` : m.type);

/** The metric's moments for a variant: error rate as a proportion of requests, a score or signal from its rows. */
function momentsOf(v: VariantStats, m: GuardrailMetric): Moments {
  if (m.type === "error_rate") return { n: v.requests, sum: v.errors, sumSq: v.errors };
  return v.metrics.get(`${m.type}:${m.name}`) ?? { n: 0, sum: 0, sumSq: 0 };
}

const directionOf = (m: GuardrailMetric) => (m.type === "error_rate" || m.type === "latency_p95_ms" ? "lower_is_better" : m.direction);

/** How much worse the challenger is than the base (positive: worse), with its standard error; null without data. */
function worse(base: VariantStats, c: VariantStats, m: GuardrailMetric): Difference | null {
  const [b, x] = [momentsOf(base, m), momentsOf(c, m)];
  const proportion = m.type === "error_rate" || m.type === "signal";
  const d = proportion ? proportionDifference(x, b) : welch(x, b);
  if (!d) return null;
  return directionOf(m) === "higher_is_better" ? { ...d, diff: -d.diff } : d;
}

/** Latency p95 ratio − 1 (challenger over base); null without latencies. */
function latencyRatio(base: VariantStats, c: VariantStats): number | null {
  const [b, x] = [quantile(base.latency, 0.95), quantile(c.latency, 0.95)];
  return b === null || x === null || b <= 0 ? null : x / b - 1;
}

interface Verdict {
  regressed: { observed: number; p: number | null } | null;
  cleared: boolean;
  /** How much better (positive) the challenger is on this metric, for ranking. */
  gain: number;
}

function judge(base: VariantStats, c: VariantStats, m: GuardrailMetric, alpha: number): Verdict {
  if (m.type === "latency_p95_ms") {
    const r = latencyRatio(base, c);
    if (r === null) return { regressed: null, cleared: false, gain: 0 };
    return { regressed: r > m.max_regression ? { observed: r, p: null } : null, cleared: r <= m.max_regression, gain: -r };
  }
  const d = worse(base, c, m);
  if (!d) return { regressed: null, cleared: false, gain: 0 };
  const pReg = pAbove(d, m.max_regression);
  return { regressed: pReg < alpha ? { observed: d.diff, p: pReg } : null, cleared: pBelow(d, m.max_regression) < alpha, gain: -d.diff };
}

/** The guardrails' decision now, or null (nothing to do yet). */
export function decide(input: GuardrailInput): Decision {
  const g = input.guardrails;
  const base = input.variants.find((v) => v.key === input.base);
  if (!base) return null;
  const challengers = input.variants.filter((v) => v.key !== input.base && v.percentage > 0);
  if (challengers.length === 0) return null;
  const alpha = (1 - g.confidence) / Math.max(1, g.metrics.length);
  const enough = (v: VariantStats) => v.requests >= g.min_samples_per_variant;
  if (!enough(base)) return null;

  for (const c of challengers) {
    if (!enough(c)) continue;
    for (const m of g.metrics) {
      const v = judge(base, c, m, alpha);
      if (v.regressed) return { action: g.on_regression, variant: c.key, metric: metricLabel(m), observed: v.regressed.observed, bound: m.max_regression, p_value: v.regressed.p };
    }
  }

  if (input.now - input.createdAt < g.min_duration_hours * HOUR || !challengers.every(enough)) return null;
  const winners = challengers
    .map((c) => ({ c, verdicts: g.metrics.map((m) => judge(base, c, m, alpha)) }))
    .filter((w) => w.verdicts.every((v) => v.cleared))
    .sort((a, b) => (b.verdicts[0]?.gain ?? 0) - (a.verdicts[0]?.gain ?? 0) || b.c.requests - a.c.requests);
  if (winners.length === 0) return null;
  const best = winners[0].c;
  if (g.on_success === "none") return { action: "ready", variant: best.key };
  if (g.on_success === "promote") return { action: "promote", variant: best.key };
  // Ramp: the next step above the challenger's share once every_hours have passed since the last; past the last step, promote.
  const next = g.ramp?.steps.find((p) => p > best.percentage);
  if (next === undefined) return { action: "promote", variant: best.key };
  if (input.now - input.rampedAt < (g.ramp?.every_hours ?? 0) * HOUR) return null;
  return { action: "ramp", variant: best.key, percentage: next };
}
