// Turns grouped request-log rows (one per hour, model, provider, prompt, status, error type and
// latency bucket) into the analytics answer: totals, a time series by hour or day, breakdowns and
// latency percentiles. Pure: the rows come from the rollups or the logs, the same shape either way.
import { quantile } from "./latency-buckets";

export interface GroupedRow {
  hour: number;
  model: string;
  provider: string;
  prompt_id: number | null;
  status: string;
  error_type: string | null;
  bucket: number;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
  latency_ms: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Ranges up to two days are drawn by the hour, longer ones by the day. */
export const HOURLY_UP_TO_MS = 2 * DAY;

export type Interval = "hour" | "day";

export function intervalFor(fromMs: number | null, toMs: number | null, rows: readonly GroupedRow[]): Interval {
  let lo = fromMs;
  let hi = toMs;
  if (lo === null || hi === null) {
    for (const r of rows) {
      if (fromMs === null) lo = lo === null ? r.hour : Math.min(lo, r.hour);
      if (toMs === null) hi = hi === null ? r.hour + HOUR : Math.max(hi, r.hour + HOUR);
    }
  }
  return lo !== null && hi !== null && hi - lo > HOURLY_UP_TO_MS ? "day" : "hour";
}

export function bucketKey(hour: number, interval: Interval): string {
  const iso = new Date(hour).toISOString();
  return interval === "day" ? iso.slice(0, 10) : `${iso.slice(0, 13)}:00:00Z`;
}

interface Acc {
  requests: number;
  input: number;
  output: number;
  cost: number;
  latency: number;
  hist: Map<number, number>;
  statuses: Record<string, number>;
}
const acc = (): Acc => ({ requests: 0, input: 0, output: 0, cost: 0, latency: 0, hist: new Map(), statuses: {} });
function add(a: Acc, r: GroupedRow) {
  a.requests += r.requests;
  a.input += r.input_tokens;
  a.output += r.output_tokens;
  a.cost += r.cost;
  a.latency += r.latency_ms;
  a.hist.set(r.bucket, (a.hist.get(r.bucket) ?? 0) + r.requests);
  a.statuses[r.status] = (a.statuses[r.status] ?? 0) + r.requests;
}
const round = (n: number, digits = 6) => Math.round(n * 10 ** digits) / 10 ** digits;
const seconds = (ms: number | null) => (ms === null ? null : round(ms / 1000, 4));
const avgSeconds = (a: Acc) => (a.requests ? round(a.latency / a.requests / 1000, 4) : 0);

function groupBy<K>(rows: readonly GroupedRow[], key: (r: GroupedRow) => K): Map<K, Acc> {
  const out = new Map<K, Acc>();
  for (const r of rows) {
    const k = key(r);
    let a = out.get(k);
    if (!a) out.set(k, (a = acc()));
    add(a, r);
  }
  return out;
}

/** Per dimension value and time bucket: requests and latency series. */
function byDimension(rows: readonly GroupedRow[], dim: (r: GroupedRow) => string | null, interval: Interval) {
  const nested = new Map<string, Map<string, Acc>>();
  for (const r of rows) {
    const d = dim(r);
    if (d === null) continue;
    let m = nested.get(d);
    if (!m) nested.set(d, (m = new Map()));
    const k = bucketKey(r.hour, interval);
    let a = m.get(k);
    if (!a) m.set(k, (a = acc()));
    add(a, r);
  }
  const requests: Record<string, [string, number][]> = {};
  const latency: Record<string, Record<"average_latency" | "p50_latency" | "p90_latency" | "p95_latency", [string, number | null][]>> = {};
  for (const [d, m] of nested) {
    const keys = [...m.keys()].sort();
    requests[d] = keys.map((k) => [k, m.get(k)!.requests]);
    latency[d] = {
      average_latency: keys.map((k) => [k, avgSeconds(m.get(k)!)]),
      p50_latency: keys.map((k) => [k, seconds(quantile(m.get(k)!.hist, 0.5))]),
      p90_latency: keys.map((k) => [k, seconds(quantile(m.get(k)!.hist, 0.9))]),
      p95_latency: keys.map((k) => [k, seconds(quantile(m.get(k)!.hist, 0.95))]),
    };
  }
  return { requests, latency };
}

const breakdown = (a: Acc) => ({ requests: a.requests, cost: round(a.cost), tokens: a.input + a.output, inputTokens: a.input, outputTokens: a.output });
const byRequests = <T extends { requests: number }>(list: T[]) => list.sort((x, y) => y.requests - x.requests);

export function summarize(rows: readonly GroupedRow[], interval: Interval, promptNames: ReadonlyMap<number, string>) {
  const total = acc();
  for (const r of rows) add(total, r);
  const buckets = groupBy(rows, (r) => bucketKey(r.hour, interval));
  const dates = [...buckets.keys()].sort();
  const models = dateless(groupBy(rows, (r) => r.model));
  const providers = groupBy(rows, (r) => r.provider);
  const prompts = groupBy(rows, (r) => r.prompt_id);
  prompts.delete(null);
  const errors = groupBy(rows, (r) => r.error_type);
  errors.delete(null);
  const model = byDimension(rows, (r) => r.model, interval);
  const provider = byDimension(rows, (r) => r.provider, interval);
  const prompt = byDimension(rows, (r) => (r.prompt_id === null ? null : String(r.prompt_id)), interval);
  const latencyOf = (q: number) => Object.fromEntries(dates.map((d) => [d, seconds(quantile(buckets.get(d)!.hist, q))]));
  return {
    success: true as const,
    chartInterval: { interval, bucketSizeMs: interval === "day" ? DAY : HOUR, bucketMinutes: interval === "day" ? null : 60 },
    averageLatency: avgSeconds(total),
    totalCost: round(total.cost),
    totalTokens: total.input + total.output,
    totalInputTokens: total.input,
    totalOutputTokens: total.output,
    totalRequests: total.requests,
    totalCachedTokens: 0,
    totalThinkingTokens: 0,
    cacheTokenRatio: null,
    stats: dates.map((d) => {
      const a = buckets.get(d)!;
      return { date: d, dateLabel: d, requests: a.requests, tokens: a.input + a.output, inputTokens: a.input, outputTokens: a.output, cost: round(a.cost), latency: avgSeconds(a), statusCounts: a.statuses };
    }),
    mostUsedModels: models.map(([m, a]) => [m, a.requests] as [string, number]),
    modelRequestsByDay: model.requests,
    mostUsedPromptTemplates: byRequests([...prompts].map(([id, a]) => ({ promptId: String(id), requests: a.requests, promptName: promptNames.get(id!) ?? null }))),
    promptTemplateRequestsByDay: prompt.requests,
    providerRequestsByDay: provider.requests,
    latency: { average_latency: Object.fromEntries(dates.map((d) => [d, avgSeconds(buckets.get(d)!)])), p50_latency: latencyOf(0.5), p90_latency: latencyOf(0.9), p95_latency: latencyOf(0.95) },
    latencyByModelByDay: model.latency,
    latencyByPromptTemplateByDay: prompt.latency,
    latencyByProviderByDay: provider.latency,
    errorTypes: byRequests([...errors].map(([t, a]) => ({ errorType: t!, requests: a.requests }))),
    errorRate: total.requests ? round((total.statuses.ERROR ?? 0) / total.requests) : 0,
    providerBreakdown: byRequests([...providers].map(([p, a]) => ({ provider: p, ...breakdown(a) }))),
    promptBreakdown: byRequests([...prompts].map(([id, a]) => ({ promptId: String(id), ...breakdown(a) }))),
  };
}

function dateless(m: Map<string, Acc>): [string, Acc][] {
  return [...m].sort((a, b) => b[1].requests - a[1].requests || (a[0] < b[0] ? -1 : 1));
}
