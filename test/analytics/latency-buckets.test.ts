// Latency buckets: JS and SQL agree on every threshold; percentiles read from a histogram.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sql as sqlOf } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { bucketOf, bucketSql, bucketValue, BUCKET_BOUNDS, BUCKET_COUNT, quantile } from "../../src/analytics/latency-buckets";
import { dailyTotals } from "../../src/logs/indexing";

describe("latency buckets", () => {
  it("bucket k holds [1.2^(k-1), 1.2^k) ms; under 1 ms is bucket 0; the last takes everything above", () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(0.99)).toBe(0);
    expect(bucketOf(1)).toBe(1);
    expect(bucketOf(1.19)).toBe(1);
    expect(bucketOf(1.2)).toBe(2);
    expect(bucketOf(-5)).toBe(0);
    expect(bucketOf(1e12)).toBe(BUCKET_COUNT - 1);
    for (const ms of [3, 250, 1234, 60_000]) {
      const k = bucketOf(ms);
      expect(BUCKET_BOUNDS[k - 2]).toBeLessThanOrEqual(ms);
      expect(ms).toBeLessThan(BUCKET_BOUNDS[k - 1]);
      expect(Math.abs(bucketValue(k) - ms) / ms).toBeLessThan(0.1);
    }
  });

  it("the SQL bucketing (the indexer's daily totals, log queries) gives the same bucket as bucketOf, on both sides of each threshold", async () => {
    const values: number[] = [0, 1, 2];
    for (let k = 1; k < BUCKET_COUNT - 1; k++) {
      const t = BUCKET_BOUNDS[k - 1] ?? 2e7;
      values.push(t - 0.001, t, t + 0.001, Math.round(t));
    }
    const sql = `SELECT j.value AS v, ${bucketSql("j.value")} AS b FROM json_each(?) AS j`;
    const { results } = await env.DB.prepare(sql).bind(JSON.stringify(values)).all<{ v: number; b: number }>();
    for (const r of results) expect(r.b, `latency ${r.v}`).toBe(bucketOf(r.v));
    // The daily totals' statement buckets each log's latency with it.
    const daily = new SQLiteAsyncDialect().sqlToQuery(dailyTotals(sqlOf`request_logs AS r`, ["all"], 1)).sql;
    expect(daily).toContain(bucketSql("max(r.request_end_time - r.request_start_time, 0)"));
  });

  it("reads percentiles from counts", () => {
    const h = new Map([[bucketOf(100), 50], [bucketOf(1000), 40], [bucketOf(10_000), 10]]);
    expect(quantile(h, 0.5)).toBe(bucketValue(bucketOf(100)));
    expect(quantile(h, 0.9)).toBe(bucketValue(bucketOf(1000)));
    expect(quantile(h, 0.95)).toBe(bucketValue(bucketOf(10_000)));
    expect(quantile(new Map(), 0.5)).toBeNull();
  });
});
