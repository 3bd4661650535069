// Pure: the statistics of an A/B scorecard and its guardrails, from rollups (counts, sums and sums
// of squares), never from the logs. Proportions (error rate, a signal's true-rate) get Wilson score
// intervals and a two-proportion z-test; means (scores) a t interval and Welch's t-test, whose
// degrees of freedom need not be equal variances. The distributions are jStat's.
import jStat from "jstat";

/** A metric's count, sum and sum of squares (a proportion's sum is its successes, each 1). */
export interface Moments {
  n: number;
  sum: number;
  sumSq: number;
}

export const mean = (m: Moments): number | null => (m.n > 0 ? m.sum / m.n : null);

/** The sample variance (n − 1), or null below two values. */
export function variance(m: Moments): number | null {
  if (m.n < 2) return null;
  return Math.max(0, (m.sumSq - (m.sum * m.sum) / m.n) / (m.n - 1));
}

/** The normal quantile for a two-sided interval at `confidence` (1.96 at 0.95). */
export const zFor = (confidence: number) => jStat.normal.inv(1 - (1 - confidence) / 2, 0, 1);

/** Wilson's score interval of a proportion (x of n); null when n is 0. */
export function wilson(x: number, n: number, confidence = 0.95): [number, number] | null {
  if (n <= 0) return null;
  const z = zFor(confidence);
  const p = x / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** A mean's t interval; null below two values. */
export function meanInterval(m: Moments, confidence = 0.95): [number, number] | null {
  const mu = mean(m);
  const v = variance(m);
  if (mu === null || v === null) return null;
  const half = jStat.studentt.inv(1 - (1 - confidence) / 2, m.n - 1) * Math.sqrt(v / m.n);
  return [mu - half, mu + half];
}

/** A difference (a − b) with its standard error and the degrees of freedom of its test (null: normal). */
export interface Difference {
  diff: number;
  se: number;
  df: number | null;
}

/** Welch's difference of two means; null when either has fewer than two values. */
export function welch(a: Moments, b: Moments): Difference | null {
  const [va, vb] = [variance(a), variance(b)];
  if (va === null || vb === null) return null;
  const [qa, qb] = [va / a.n, vb / b.n];
  const se = Math.sqrt(qa + qb);
  // Welch–Satterthwaite; two constant samples have no spread at all (se 0): any df will do.
  const df = se === 0 ? a.n + b.n - 2 : (qa + qb) ** 2 / ((qa * qa) / (a.n - 1) + (qb * qb) / (b.n - 1));
  return { diff: a.sum / a.n - b.sum / b.n, se, df };
}

/** The difference of two proportions (a − b), with the unpooled standard error; null when either is empty. */
export function proportionDifference(a: Moments, b: Moments): Difference | null {
  if (a.n === 0 || b.n === 0) return null;
  const [pa, pb] = [a.sum / a.n, b.sum / b.n];
  return { diff: pa - pb, se: Math.sqrt((pa * (1 - pa)) / a.n + (pb * (1 - pb)) / b.n), df: null };
}

function cdf(x: number, df: number | null): number {
  return df === null ? jStat.normal.cdf(x, 0, 1) : jStat.studentt.cdf(x, df);
}

/** The two-sided p-value of "no difference" for Welch's test (means). */
export function welchPValue(d: Difference): number {
  if (d.se === 0) return d.diff === 0 ? 1 : 0;
  return Math.min(1, 2 * (1 - cdf(Math.abs(d.diff) / d.se, d.df)));
}

/** The two-sided p-value of "equal proportions" (pooled two-proportion z-test); null when either is empty. */
export function proportionPValue(a: Moments, b: Moments): number | null {
  if (a.n === 0 || b.n === 0) return null;
  const pooled = (a.sum + b.sum) / (a.n + b.n);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / a.n + 1 / b.n));
  const diff = a.sum / a.n - b.sum / b.n;
  if (se === 0) return diff === 0 ? 1 : 0;
  return Math.min(1, 2 * (1 - jStat.normal.cdf(Math.abs(diff) / se, 0, 1)));
}

/**
 * The one-sided p-value of "the difference is at most `bound`" against "it is above": small when the
 * data show it above the bound. Without spread (se 0), the estimate decides: 0 above the bound, 1 else.
 */
export function pAbove(d: Difference, bound: number): number {
  if (d.se === 0) return d.diff > bound ? 0 : 1;
  return 1 - cdf((d.diff - bound) / d.se, d.df);
}

/** The one-sided p-value of "the difference is at least `bound`" against "it is below". */
export function pBelow(d: Difference, bound: number): number {
  if (d.se === 0) return d.diff < bound ? 0 : 1;
  return cdf((d.diff - bound) / d.se, d.df);
}
