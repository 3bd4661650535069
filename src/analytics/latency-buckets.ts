// Latency histograms: a latency in ms falls in one of a fixed set of geometric buckets (each 20 %
// wider than the last), so percentiles can be read from counts kept per bucket. A percentile read
// this way is the bucket's geometric middle: within 10 % of the true value. Pure; the same bounds
// write the SQL that buckets logs (rollup trigger, exact queries).

export const BUCKET_GROWTH = 1.2;
/**
 * Upper bounds of buckets 1..89 in ms: 1.2^k to three decimals, written out so that this code, the
 * rollup trigger and any runtime agree to the bit (engines differ in the last digit of 1.2 ** k).
 * Bucket 0 holds latencies under 1 ms; bucket k holds [bound k-1, bound k); the last all above.
 */
export const BUCKET_BOUNDS: readonly number[] = [
  1.2, 1.44, 1.728, 2.074, 2.488, 2.986, 3.583, 4.3, 5.16, 6.192,
  7.43, 8.916, 10.699, 12.839, 15.407, 18.488, 22.186, 26.623, 31.948, 38.338,
  46.005, 55.206, 66.247, 79.497, 95.396, 114.475, 137.371, 164.845, 197.814, 237.376,
  284.852, 341.822, 410.186, 492.224, 590.668, 708.802, 850.562, 1020.675, 1224.81, 1469.772,
  1763.726, 2116.471, 2539.765, 3047.718, 3657.262, 4388.714, 5266.457, 6319.749, 7583.698, 9100.438,
  10920.526, 13104.631, 15725.557, 18870.669, 22644.802, 27173.763, 32608.515, 39130.218, 46956.262, 56347.514,
  67617.017, 81140.421, 97368.505, 116842.206, 140210.647, 168252.776, 201903.332, 242283.998, 290740.797, 348888.957,
  418666.748, 502400.098, 602880.118, 723456.141, 868147.369, 1041776.843, 1250132.212, 1500158.654, 1800190.385, 2160228.462,
  2592274.154, 3110728.985, 3732874.782, 4479449.739, 5375339.687, 6450407.624, 7740489.149, 9288586.978, 11146304.374,
];
export const BUCKET_COUNT = BUCKET_BOUNDS.length + 2;

export function bucketOf(latencyMs: number): number {
  if (!(latencyMs >= 1)) return 0;
  for (let k = 1; k < BUCKET_COUNT - 1; k++) if (latencyMs < BUCKET_BOUNDS[k - 1]) return k;
  return BUCKET_COUNT - 1;
}

/** The value reported for a bucket: its geometric middle (0.5 ms for bucket 0). */
export function bucketValue(k: number): number {
  return k === 0 ? 0.5 : BUCKET_GROWTH ** (k - 0.5);
}

/**
 * SQL that buckets a latency expression exactly as bucketOf does: a balanced tree of comparisons
 * with the bounds as literals, so a row costs about seven comparisons, not ninety.
 */
export function bucketSql(latency: string): string {
  // Bucket k (1..count-2) is latency < bound[k-1] and >= bound[k-2]; below 1 is 0; above all, the last.
  const bounds = [1, ...BUCKET_BOUNDS];
  const tree = (lo: number, hi: number): string => {
    // Buckets lo..hi, where lo - 1 < bounds index: latency >= bounds[lo - 1] is known (for lo ≥ 1).
    if (lo === hi) return String(lo);
    const mid = Math.floor((lo + hi) / 2);
    return `CASE WHEN ${latency} < ${bounds[mid]} THEN ${tree(lo, mid)} ELSE ${tree(mid + 1, hi)} END`;
  };
  return `(${tree(0, BUCKET_COUNT - 1)})`;
}

/** The q-quantile (0 < q ≤ 1) of a histogram {bucket → count}; null when it is empty. */
export function quantile(hist: Map<number, number>, q: number): number | null {
  let total = 0;
  for (const c of hist.values()) total += c;
  if (total === 0) return null;
  const target = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const k of [...hist.keys()].sort((a, b) => a - b)) {
    seen += hist.get(k)!;
    if (seen >= target) return bucketValue(k);
  }
  return null;
}
