// POST /api/public/v2/requests/analytics: exact counts whichever way a query is answered (daily
// totals for whole days, the logs for edges and other filters), percentiles within 10 %.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, logsDb, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { indexNow } from "../helpers/logs";
import { planAnalytics } from "../../src/logs/analytics";

const T0 = Date.parse("2026-03-01T00:00:00Z");
const H = 3_600_000;
interface Spec {
  start: number;
  latency: number;
  model: string;
  provider: string;
  status: "SUCCESS" | "ERROR";
  price: number;
  tags: string[];
}
// 120 logs over 5 days, at minutes that do not fall on hour boundaries, with varied latencies.
const specs: Spec[] = Array.from({ length: 120 }, (_, i) => ({
  start: T0 + i * 61 * 60_000 + (i % 7) * 1_000,
  latency: 100 + ((i * 37) % 50) * 40,
  model: ["gpt-4o", "claude-sonnet", "gemini"][i % 3],
  provider: ["openai", "anthropic", "google"][i % 3],
  status: i % 10 === 0 ? "ERROR" : "SUCCESS",
  price: (i % 5) * 0.01,
  tags: i % 2 ? ["odd"] : ["even"],
}));

let ws: TestKey;
let other: TestKey;
const analytics = async (body: unknown, key = ws.key) => {
  const res = await call("/api/public/v2/requests/analytics", { method: "POST", key, json: body });
  expect(res.status, await res.clone().text()).toBe(200);
  return json(res);
};
const range = (from: number, to: number) => ({ field: "request_start_time", operator: "between", value: [new Date(from).toISOString(), new Date(to).toISOString()] });
const expected = (pick: (s: Spec) => boolean) => {
  const m = specs.filter(pick);
  return { totalRequests: m.length, totalCost: Math.round(m.reduce((a, s) => a + s.price, 0) * 1e6) / 1e6, averageLatency: m.length ? Math.round((m.reduce((a, s) => a + s.latency, 0) / m.length) ) / 1000 : 0 };
};
const totals = (b: any) => ({ totalRequests: b.totalRequests, totalCost: b.totalCost, averageLatency: Math.round(b.averageLatency * 1000) / 1000 });

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
  for (const s of specs) {
    const res = await call("/log-request", {
      method: "POST",
      key: ws.key,
      json: logBody({
        model: s.model,
        provider: s.provider,
        status: s.status,
        ...(s.status === "ERROR" ? { error_type: "PROVIDER_ERROR", error_message: "boom" } : {}),
        price: s.price,
        tags: s.tags,
        metadata: { env: s.start % 3 === 0 ? "prod" : "dev" },
        request_start_time: s.start / 1000,
        request_end_time: (s.start + s.latency) / 1000,
      }),
    });
    expect(res.status).toBe(201);
  }
  await indexNow();
}, 120_000);

describe("POST /api/public/v2/requests/analytics", () => {
  it("keeps the daily totals of every dimension equal to the logs, once indexed", async () => {
    const { results } = await (await logsDb(ws)).prepare("SELECT dim, sum(requests) AS n, sum(latency_ms) AS l FROM request_log_daily WHERE workspace_id = ? GROUP BY dim ORDER BY dim")
      .bind(ws.workspaceId)
      .all<{ dim: string; n: number; l: number }>();
    const l = specs.reduce((a, s) => a + s.latency, 0);
    // No log links a prompt, so the prompt dimension has no rows.
    expect(results).toEqual(["all", "model", "provider", "status"].map((dim) => ({ dim, n: specs.length, l })));
  });

  it("answers exact totals for ranges with and without whole hours, and for filters the rollups do not carry", async () => {
    const cases: [unknown, (s: Spec) => boolean][] = [
      [{}, () => true],
      [{ filter_group: { logic: "AND", filters: [range(T0 + 90 * 60_000, T0 + 30 * H + 17 * 60_000)] } }, (s) => s.start >= T0 + 90 * 60_000 && s.start <= T0 + 30 * H + 17 * 60_000],
      [{ filter_group: { logic: "AND", filters: [range(T0 + 5 * H, T0 + 6 * H)] } }, (s) => s.start >= T0 + 5 * H && s.start <= T0 + 6 * H],
      [{ filter_group: { logic: "AND", filters: [range(T0 + 10 * 60_000, T0 + 20 * 60_000)] } }, (s) => s.start >= T0 + 10 * 60_000 && s.start <= T0 + 20 * 60_000],
      [{ filter_group: { logic: "AND", filters: [{ field: "engine", operator: "is", value: "gemini" }, range(T0, T0 + 50 * H)] } }, (s) => s.model === "gemini" && s.start <= T0 + 50 * H],
      [{ filter_group: { logic: "AND", filters: [{ field: "status", operator: "is", value: "ERROR" }] } }, (s) => s.status === "ERROR"],
      [{ filter_group: { logic: "AND", filters: [{ field: "tags", operator: "contains", value: "odd" }, range(T0 + 3 * H, T0 + 70 * H)] } }, (s) => s.tags.includes("odd") && s.start >= T0 + 3 * H && s.start <= T0 + 70 * H],
      [{ filter_group: { logic: "OR", filters: [{ field: "engine", operator: "is", value: "gemini" }, { field: "provider_type", operator: "is", value: "openai" }] } }, (s) => s.model === "gemini" || s.provider === "openai"],
    ];
    for (const [body, pick] of cases) expect(totals(await analytics(body)), JSON.stringify(body)).toEqual(expected(pick));
  });

  it("reads whole days from the daily totals and the edges from the logs", async () => {
    const D = 24 * H;
    const from = T0 + 90 * 60_000;
    const to = T0 + 3 * D + 30 * 60_000;
    const body = { filter_group: { logic: "AND", filters: [range(from, to)] } };
    expect(planAnalytics({ filter_group: { logic: "AND", filters: [{ field: "request_start_time", operator: "between", value: [from, to] }] } as never }).inner).toEqual({ from: T0 + D, to: T0 + 3 * D });
    const before = (await analytics(body)).totalRequests;
    // A day's row inside the range counts; one outside it does not.
    const bump = async (delta: number, day: number) =>
      (await logsDb(ws)).prepare("UPDATE request_log_daily SET requests = requests + ? WHERE workspace_id = ? AND dim = 'all' AND day = ?").bind(delta, ws.workspaceId, day).run();
    const rowsOn = async (day: number) =>
      (await (await logsDb(ws)).prepare("SELECT count(*) AS n FROM request_log_daily WHERE workspace_id = ? AND dim = 'all' AND day = ?").bind(ws.workspaceId, day).first<{ n: number }>())!.n;
    await bump(1000, T0 + D);
    await bump(1000, T0 + 4 * D);
    try {
      expect((await analytics(body)).totalRequests).toBe(before + 1000 * (await rowsOn(T0 + D)));
      // Free text, and filters other than the time bounds, are answered from the logs alone.
      expect((await analytics({ ...body, q: "Hello" })).totalRequests).toBe(before);
      const engines = { filter_group: { logic: "AND", filters: [range(from, to), { field: "engine", operator: "in", value: ["gpt-4o", "claude-sonnet", "gemini"] }] } };
      expect((await analytics(engines)).totalRequests).toBe(before);
    } finally {
      await bump(-1000, T0 + D);
      await bump(-1000, T0 + 4 * D);
    }
  });

  it("draws a daily series for long ranges and an hourly one for short ones, with breakdowns and percentiles", async () => {
    const daily = await analytics({ filter_group: { logic: "AND", filters: [range(T0, T0 + 5 * 24 * H)] } });
    expect(daily.chartInterval).toEqual({ interval: "day", bucketSizeMs: 86_400_000, bucketMinutes: null });
    expect(daily.stats.map((s: any) => s.date)).toEqual(["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06"].slice(0, daily.stats.length));
    const inRange = specs.filter((s) => s.start <= T0 + 5 * 24 * H);
    expect(daily.stats.reduce((a: number, s: any) => a + s.requests, 0)).toBe(inRange.length);
    const geminis = inRange.filter((s) => s.model === "gemini").length;
    expect(daily.mostUsedModels).toEqual(expect.arrayContaining([["gemini", geminis]]));
    expect(daily.modelRequestsByDay.gemini.reduce((a: number, [, n]: [string, number]) => a + n, 0)).toBe(geminis);
    const errors = inRange.filter((s) => s.status === "ERROR").length;
    expect(daily.errorTypes).toEqual([{ errorType: "PROVIDER_ERROR", requests: errors }]);
    expect(daily.errorRate).toBeCloseTo(errors / inRange.length, 5);
    expect(daily.providerBreakdown.map((p: any) => p.provider).sort()).toEqual(["anthropic", "google", "openai"]);
    const sorted = specs.map((s) => s.latency).sort((a, b) => a - b);
    const trueP90 = sorted[Math.ceil(0.9 * sorted.length) - 1] / 1000;
    const p90s = Object.values(daily.latency.p90_latency) as number[];
    expect(p90s.length).toBe(daily.stats.length);
    const overall = await analytics({});
    expect(overall.chartInterval.interval).toBe("day");
    const day1 = specs.filter((s) => s.start < T0 + 24 * H).map((s) => s.latency).sort((a, b) => a - b);
    const p90day1 = day1[Math.ceil(0.9 * day1.length) - 1] / 1000;
    expect(Math.abs(daily.latency.p90_latency["2026-03-01"] - p90day1) / p90day1).toBeLessThan(0.1);
    expect(trueP90).toBeGreaterThan(0);

    const hourly = await analytics({ filter_group: { logic: "AND", filters: [range(T0, T0 + 6 * H)] } });
    expect(hourly.chartInterval).toEqual({ interval: "hour", bucketSizeMs: 3_600_000, bucketMinutes: 60 });
    expect(hourly.stats[0].date).toBe("2026-03-01T00:00:00Z");
  });

  it("counts nothing of another workspace, and validates the body", async () => {
    expect((await analytics({}, other.key)).totalRequests).toBe(0);
    expect((await analytics({}, other.key)).stats).toEqual([]);
    const bad = await call("/api/public/v2/requests/analytics", { method: "POST", key: ws.key, json: { filter_group: { logic: "AND", filters: [{ field: "nope", operator: "is", value: 1 }] } } });
    expect(bad.status).toBe(400);
    expect((await call("/api/public/v2/requests/analytics", { method: "POST", key: ws.key, json: { q: "x".repeat(1001) } })).status).toBe(400);
  });
});

describe("POST /api/public/v2/requests/analytics/custom-analytics", () => {
  const charts = async (customCharts: unknown[], extra: Record<string, unknown> = {}) => {
    const res = await call("/api/public/v2/requests/analytics/custom-analytics", { method: "POST", key: ws.key, json: { customCharts, ...extra } });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await json(res)).customCharts;
  };
  const sumBy = <K>(key: (s: Spec) => K, val: (s: Spec) => number) => {
    const m = new Map<K, number>();
    for (const s of specs) m.set(key(s), (m.get(key(s)) ?? 0) + val(s));
    return m;
  };

  it("sums cost by model, counts over time, and draws several series with a ratio", async () => {
    const [byModel, overTime, tokens] = await charts([
      { id: "cost_by_model", title: "Cost by Model", chartType: "bar", metric: "sum", metricField: "cost", groupByField: "engine", limit: 2 },
      { id: "requests_over_time", chartType: "line", metric: "count", timeSeries: true },
      {
        id: "latency",
        chartType: "bar",
        series: [
          { key: "avg", label: "Average", metric: "avg", metricField: "latency_ms" },
          { key: "total", label: "Total", metric: "sum", metricField: "latency_ms" },
        ],
        derivedInsights: [{ label: "Total/Average", numeratorSeriesKey: "total", denominatorSeriesKey: "avg" }],
      },
    ]);
    const costs = sumBy((s) => s.model, (s) => s.price);
    const r6 = (n: number) => Math.round(n * 1e6) / 1e6;
    const ranked = [...costs].sort((a, b) => r6(b[1]) - r6(a[1]) || (a[0] < b[0] ? -1 : 1)).slice(0, 2);
    expect(byModel).toMatchObject({ id: "cost_by_model", title: "Cost by Model", chartType: "bar", series: [{ key: "value", unit: "currency" }] });
    expect(byModel.data.map((d: any) => d.label)).toEqual(ranked.map(([m]) => m));
    for (const [i, [, cost]] of ranked.entries()) expect(byModel.data[i].value).toBeCloseTo(cost, 6);
    expect(overTime.data.reduce((a: number, d: any) => a + d.value, 0)).toBe(specs.length);
    expect(overTime.data[0]).toMatchObject({ bucketKey: "2026-03-01", label: "2026-03-01" });
    const total = specs.reduce((a, s) => a + s.latency, 0) / 1000;
    expect(tokens.data[0].total).toBeCloseTo(total, 3);
    expect(tokens.data[0].avg).toBeCloseTo(total / specs.length, 3);
    expect(tokens.series).toEqual([{ key: "avg", label: "Average", unit: "duration_seconds" }, { key: "total", label: "Total", unit: "duration_seconds" }]);
    expect(tokens.derivedInsights[0].value).toBeCloseTo(specs.length, 3);
  });

  it("breaks down by metadata values and tags from the logs, with exact min and max and percentiles within 10 %", async () => {
    const [byEnv, byTag, extremes] = await charts([
      { id: "p95_by_env", chartType: "bar", metric: "percentile", percentile: 95, metricField: "latency_ms", groupByMetadataKey: "env" },
      { id: "by_tag", chartType: "bar", metric: "count", groupByField: "tags" },
      { id: "extremes", chartType: "bar", series: [{ key: "min", label: "Min", metric: "min", metricField: "latency_ms" }, { key: "max", label: "Max", metric: "max", metricField: "latency_ms" }] },
    ]);
    for (const env of ["prod", "dev"]) {
      const lat = specs.filter((s) => (s.start % 3 === 0 ? "prod" : "dev") === env).map((s) => s.latency).sort((a, b) => a - b);
      const p95 = lat[Math.ceil(0.95 * lat.length) - 1] / 1000;
      const got = byEnv.data.find((d: any) => d.label === env).value;
      expect(Math.abs(got - p95) / p95, env).toBeLessThan(0.1);
    }
    expect(Object.fromEntries(byTag.data.map((d: any) => [d.label, d.value]))).toEqual({ odd: 60, even: 60 });
    const lat = specs.map((s) => s.latency);
    expect(extremes.data[0]).toMatchObject({ min: Math.min(...lat) / 1000, max: Math.max(...lat) / 1000 });
  });

  it("groups over time and by model: one row per day, one key per model", async () => {
    const [chart] = await charts([{ id: "m", chartType: "area", metric: "count", groupByField: "engine", timeSeries: true }]);
    expect(chart.series.map((s: any) => s.key).sort()).toEqual(["claude-sonnet", "gemini", "gpt-4o"]);
    const total = chart.data.reduce((a: number, d: any) => a + (d["gemini"] ?? 0), 0);
    expect(total).toBe(40);
  });

  it("refuses charts it cannot draw with a 400 naming the chart and the rule", async () => {
    const bad = async (customCharts: unknown, pattern: RegExp) => {
      const res = await call("/api/public/v2/requests/analytics/custom-analytics", { method: "POST", key: ws.key, json: { customCharts } });
      expect(res.status).toBe(400);
      expect((await json(res)).message).toMatch(pattern);
    };
    await bad([], /customCharts: must hold 1 to 20 charts/);
    await bad([{ id: "a", chartType: "line", metric: "count" }], /customCharts\.0\.chartType: an overall chart/);
    await bad([{ id: "a", chartType: "bar", metric: "count" }, { id: "a", chartType: "bar", metric: "count" }], /customCharts\.1\.id: a is used twice/);
    await bad([{ id: "a", chartType: "bar", metric: "percentile", metricField: "latency_ms" }], /percentile: is required/);
    await bad([{ id: "a", chartType: "bar", metric: "percentile", percentile: 50, metricField: "cost" }], /latency_ms only/);
    await bad([{ id: "a", chartType: "bar", metric: "sum", metricField: "cached_tokens" }], /not recorded/);
    await bad([{ id: "a", chartType: "bar", metric: "count", groupByField: "engine", groupByMetadataKey: "env" }], /cannot be combined/);
    await bad([{ id: "a", chartType: "bar" }], /metric: is required/);
    await bad([{ id: "a b", chartType: "bar", metric: "count" }], /id: must be 1 to 64/);
    await bad([{ id: "a", chartType: "bar", metric: "sum" }], /a field is required/);
    const other = await call("/api/public/v2/requests/analytics/custom-analytics", { method: "POST", key: (await createWorkspace()).key, json: { customCharts: [{ id: "n", chartType: "bar", metric: "count" }] } });
    expect((await json(other)).customCharts[0].data).toEqual([{ label: "n", value: 0 }]);
  });
});
