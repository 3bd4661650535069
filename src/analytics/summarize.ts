// Turns the aggregated views of the matching logs (computed in the database per dimension: all logs,
// status, model, provider, prompt) into the analytics answer. Pure.
import { quantile } from "./latency-buckets";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Ranges up to two days are drawn by the hour, longer or open ones by the UTC day. */
export const HOURLY_UP_TO_MS = 2 * DAY;

export type Interval = "hour" | "day";

export function intervalOf(fromMs: number | null, toMs: number | null): Interval {
  return fromMs !== null && toMs !== null && toMs - fromMs <= HOURLY_UP_TO_MS ? "hour" : "day";
}

export function bucketKey(periodStart: number, interval: Interval): string {
  const iso = new Date(periodStart).toISOString();
  return interval === "day" ? iso.slice(0, 10) : `${iso.slice(0, 13)}:00:00Z`;
}

export interface Sums {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
  latency_ms: number;
}
type Keyed = Sums & { key: string };
type Bucketed = Sums & { period: number; key: string; bucket: number };

export interface Views {
  /** By period and latency bucket. */
  all: (Sums & { period: number; bucket: number })[];
  /** By period and "STATUS|error_type". */
  status: (Sums & { period: number; key: string })[];
  modelTotals: Keyed[];
  providerTotals: Keyed[];
  promptTotals: Keyed[];
  /** By period, value and latency bucket (bucket -1 for prompts: no histogram is kept for them). */
  modelSeries: Bucketed[];
  providerSeries: Bucketed[];
  promptSeries: Bucketed[];
}

const round = (n: number, digits = 6) => Math.round(n * 10 ** digits) / 10 ** digits;
const seconds = (ms: number | null) => (ms === null ? null : round(ms / 1000, 4));
const avgSeconds = (s: Sums) => (s.requests ? round(s.latency_ms / s.requests / 1000, 4) : 0);
const zero = (): Sums => ({ requests: 0, input_tokens: 0, output_tokens: 0, cost: 0, latency_ms: 0 });
function add(a: Sums, b: Sums) {
  a.requests += b.requests;
  a.input_tokens += b.input_tokens;
  a.output_tokens += b.output_tokens;
  a.cost += b.cost;
  a.latency_ms += b.latency_ms;
}
const breakdown = (s: Sums) => ({ requests: s.requests, cost: round(s.cost), tokens: s.input_tokens + s.output_tokens, inputTokens: s.input_tokens, outputTokens: s.output_tokens });

interface Cell extends Sums {
  hist: Map<number, number>;
}
function cell(map: Map<string, Cell>, k: string): Cell {
  let c = map.get(k);
  if (!c) map.set(k, (c = { ...zero(), hist: new Map() }));
  return c;
}
function record(c: Cell, r: Sums & { bucket: number }) {
  add(c, r);
  if (r.bucket >= 0) c.hist.set(r.bucket, (c.hist.get(r.bucket) ?? 0) + r.requests);
}
const pct = (c: Cell, q: number) => (c.hist.size ? seconds(quantile(c.hist, q)) : null);

/** Requests per period and latency series per period, for each value of one dimension. */
function dimension(series: Bucketed[], interval: Interval) {
  const cells = new Map<string, Map<string, Cell>>();
  for (const r of series) {
    let m = cells.get(r.key);
    if (!m) cells.set(r.key, (m = new Map()));
    record(cell(m, String(r.period)), r);
  }
  const requests: Record<string, [string, number][]> = {};
  const latency: Record<string, Record<"average_latency" | "p50_latency" | "p90_latency" | "p95_latency", [string, number | null][]>> = {};
  for (const [key, m] of cells) {
    const list = [...m].sort(([a], [b]) => Number(a) - Number(b)).map(([p, c]) => [bucketKey(Number(p), interval), c] as const);
    requests[key] = list.map(([k, c]) => [k, c.requests]);
    latency[key] = {
      average_latency: list.map(([k, c]) => [k, avgSeconds(c)]),
      p50_latency: list.map(([k, c]) => [k, pct(c, 0.5)]),
      p90_latency: list.map(([k, c]) => [k, pct(c, 0.9)]),
      p95_latency: list.map(([k, c]) => [k, pct(c, 0.95)]),
    };
  }
  return { requests, latency };
}

export function summarize(v: Views, interval: Interval, promptNames: ReadonlyMap<number, string>) {
  const total = zero();
  const periods = new Map<string, Cell>();
  for (const r of v.all) {
    add(total, r);
    record(cell(periods, String(r.period)), r);
  }
  const statuses = new Map<string, Record<string, number>>();
  const errors = new Map<string, number>();
  let errorRequests = 0;
  for (const r of v.status) {
    const cut = r.key.indexOf("|");
    const status = r.key.slice(0, cut);
    const errorType = r.key.slice(cut + 1);
    const counts = statuses.get(String(r.period)) ?? {};
    counts[status] = (counts[status] ?? 0) + r.requests;
    statuses.set(String(r.period), counts);
    if (status === "ERROR") errorRequests += r.requests;
    if (errorType) errors.set(errorType, (errors.get(errorType) ?? 0) + r.requests);
  }
  const order = [...periods.keys()].sort((a, b) => Number(a) - Number(b));
  const key = (p: string) => bucketKey(Number(p), interval);
  const model = dimension(v.modelSeries, interval);
  const provider = dimension(v.providerSeries, interval);
  const prompt = dimension(v.promptSeries, interval);
  return {
    success: true as const,
    chartInterval: { interval, bucketSizeMs: interval === "day" ? DAY : HOUR, bucketMinutes: interval === "day" ? null : 60 },
    averageLatency: avgSeconds(total),
    totalCost: round(total.cost),
    totalTokens: total.input_tokens + total.output_tokens,
    totalInputTokens: total.input_tokens,
    totalOutputTokens: total.output_tokens,
    totalRequests: total.requests,
    totalCachedTokens: 0,
    totalThinkingTokens: 0,
    cacheTokenRatio: null,
    stats: order.map((p) => {
      const s = periods.get(p)!;
      return {
        date: key(p),
        dateLabel: key(p),
        requests: s.requests,
        tokens: s.input_tokens + s.output_tokens,
        inputTokens: s.input_tokens,
        outputTokens: s.output_tokens,
        cost: round(s.cost),
        latency: avgSeconds(s),
        statusCounts: statuses.get(p) ?? {},
      };
    }),
    mostUsedModels: v.modelTotals.map((r) => [r.key, r.requests] as [string, number]),
    modelRequestsByDay: model.requests,
    mostUsedPromptTemplates: v.promptTotals.map((r) => ({ promptId: r.key, requests: r.requests, promptName: promptNames.get(Number(r.key)) ?? null })),
    promptTemplateRequestsByDay: prompt.requests,
    providerRequestsByDay: provider.requests,
    latency: {
      average_latency: Object.fromEntries(order.map((p) => [key(p), avgSeconds(periods.get(p)!)])),
      p50_latency: Object.fromEntries(order.map((p) => [key(p), pct(periods.get(p)!, 0.5)])),
      p90_latency: Object.fromEntries(order.map((p) => [key(p), pct(periods.get(p)!, 0.9)])),
      p95_latency: Object.fromEntries(order.map((p) => [key(p), pct(periods.get(p)!, 0.95)])),
    },
    latencyByModelByDay: model.latency,
    latencyByPromptTemplateByDay: prompt.latency,
    latencyByProviderByDay: provider.latency,
    errorTypes: [...errors].map(([errorType, requests]) => ({ errorType, requests })).sort((a, b) => b.requests - a.requests || (a.errorType < b.errorType ? -1 : 1)),
    errorRate: total.requests ? round(errorRequests / total.requests) : 0,
    providerBreakdown: v.providerTotals.map((r) => ({ provider: r.key, ...breakdown(r) })),
    promptBreakdown: v.promptTotals.map((r) => ({ promptId: r.key, ...breakdown(r) })),
  };
}
