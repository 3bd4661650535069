// Custom analytics charts: one or more series (count, sum, avg, min, max or a percentile of a numeric
// field), overall, broken down by a field, over time, or both. Pure: observations come grouped by
// (group, hour, latency bucket) from the rollups or from the logs; this folds them into chart rows.
import { quantile } from "./latency-buckets";
import { bucketKey, type Interval } from "./summarize";

export const METRIC_FIELDS = ["input_tokens", "output_tokens", "cost", "latency_ms", "prompt_version_number", "turn_count", "tool_call_count", "cached_tokens", "thinking_tokens"] as const;
export type MetricField = (typeof METRIC_FIELDS)[number];
/** Fields logs do not record: asking for them is a 400 rather than a chart of zeros. */
export const UNRECORDED_FIELDS: ReadonlySet<MetricField> = new Set(["turn_count", "tool_call_count", "cached_tokens", "thinking_tokens"]);
/** Fields every observation carries as sums (the rollups keep exactly these). */
export const SUMMED_FIELDS: ReadonlySet<MetricField> = new Set(["input_tokens", "output_tokens", "cost", "latency_ms"]);
export const GROUP_FIELDS = ["engine", "provider_type", "prompt_id", "prompt_version_number", "status", "error_type", "tags", "metadata_keys", "output_keys", "input_variable_keys", "tool_names"] as const;
export type GroupField = (typeof GROUP_FIELDS)[number];

export interface SeriesSpec {
  key: string;
  label: string;
  metric: "count" | "sum" | "avg" | "min" | "max" | "percentile";
  metricField?: MetricField | null;
  percentile?: number | null;
}

export interface ChartSpec {
  id: string;
  title?: string | null;
  chartType: "bar" | "line" | "area";
  metric?: SeriesSpec["metric"] | null;
  metricField?: MetricField | null;
  percentile?: number | null;
  series?: SeriesSpec[] | null;
  derivedInsights?: { type?: "ratio"; label: string; numeratorSeriesKey: string; denominatorSeriesKey: string }[] | null;
  groupByField?: GroupField | null;
  groupByMetadataKey?: string | null;
  timeSeries?: boolean;
  limit?: number;
}

/** Counts and sums of the logs in one (group, hour, latency bucket); v* describe the chart's own field. */
export interface Observation {
  group: string | null;
  hour: number;
  bucket: number;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
  latency_ms: number;
  vmin?: number | null;
  vmax?: number | null;
  vsum?: number | null;
  vcount?: number | null;
}

/** The chart's series: its `series`, or one series `value` made of its metric. */
export function seriesOf(chart: ChartSpec): SeriesSpec[] {
  if (chart.series?.length) return chart.series;
  return [{ key: "value", label: chart.title ?? chart.id, metric: chart.metric ?? "count", metricField: chart.metricField, percentile: chart.percentile }];
}

/** Why the chart cannot be drawn, or null. The schema checks shapes; these are the cross-field rules. */
export function chartProblem(chart: ChartSpec): string | null {
  const multi = Boolean(chart.series?.length);
  if (multi && (chart.metric || chart.metricField || chart.percentile != null)) return "series: omit metric, metricField and percentile when giving series";
  if (multi && chart.series!.length < 2) return "series: give two or more series, or use metric";
  if (!multi && !chart.metric) return "metric: is required without series";
  if (chart.derivedInsights?.length && !multi) return "derivedInsights: only with series";
  if (chart.groupByField && chart.groupByMetadataKey) return "groupByMetadataKey: cannot be combined with groupByField";
  if (!chart.timeSeries && !chart.groupByField && !chart.groupByMetadataKey && chart.chartType !== "bar") return "chartType: an overall chart (no timeSeries, no group-by) must be bar";
  const keys = new Set<string>();
  for (const s of seriesOf(chart)) {
    const at = multi ? `series.${s.key}` : "metric";
    if (multi && keys.has(s.key)) return `series: key ${s.key} is used twice`;
    keys.add(s.key);
    if (s.metric !== "count" && !s.metricField) return `${multi ? at : "metricField"}: a field is required for ${s.metric}`;
    if (s.metricField && UNRECORDED_FIELDS.has(s.metricField)) return `${multi ? at : "metricField"}: ${s.metricField} is not recorded by this service`;
    if (s.metric === "percentile") {
      if (s.percentile == null) return `${multi ? at : "percentile"}: is required with the percentile metric`;
      if (s.metricField !== "latency_ms") return `${multi ? at : "metricField"}: percentiles are computed for latency_ms only`;
    } else if (s.percentile != null) return `${multi ? at : "percentile"}: only with the percentile metric`;
  }
  const own = new Set(seriesOf(chart).filter(needsOwnField).map((s) => s.metricField));
  if (own.size > 1) return "series: min, max and prompt_version_number series of one chart must share one field";
  for (const d of chart.derivedInsights ?? []) {
    if (!keys.has(d.numeratorSeriesKey)) return `derivedInsights: no series ${d.numeratorSeriesKey}`;
    if (!keys.has(d.denominatorSeriesKey)) return `derivedInsights: no series ${d.denominatorSeriesKey}`;
  }
  return null;
}

/** A series read from its field's own min/max/sum rather than the shared sums. */
export function needsOwnField(s: SeriesSpec): boolean {
  return s.metric === "min" || s.metric === "max" || (s.metric !== "count" && s.metricField != null && !SUMMED_FIELDS.has(s.metricField));
}

/** True when every series can be read from the daily totals (sums, counts, and latency histograms overall, by model and by provider). */
export function servedBySums(chart: ChartSpec): boolean {
  const groupOk = !chart.groupByMetadataKey && (!chart.groupByField || ["engine", "provider_type", "prompt_id", "status", "error_type"].includes(chart.groupByField));
  // Latency histograms are kept overall, by model and by provider only.
  const histogramOk = !chart.groupByField || ["engine", "provider_type"].includes(chart.groupByField);
  return (
    groupOk &&
    seriesOf(chart).every((s) => s.metric === "count" || (s.metric !== "min" && s.metric !== "max" && SUMMED_FIELDS.has(s.metricField!) && (s.metric !== "percentile" || histogramOk)))
  );
}

interface Acc {
  requests: number;
  sums: Record<string, number>;
  hist: Map<number, number>;
  vmin: number | null;
  vmax: number | null;
  vsum: number;
  vcount: number;
}

function fold(list: Observation[]): Acc {
  const a: Acc = { requests: 0, sums: { input_tokens: 0, output_tokens: 0, cost: 0, latency_ms: 0 }, hist: new Map(), vmin: null, vmax: null, vsum: 0, vcount: 0 };
  for (const o of list) {
    a.requests += o.requests;
    for (const f of SUMMED_FIELDS) a.sums[f] += o[f as keyof Observation] as number;
    if (o.bucket >= 0) a.hist.set(o.bucket, (a.hist.get(o.bucket) ?? 0) + o.requests);
    if (o.vmin != null) a.vmin = a.vmin === null ? o.vmin : Math.min(a.vmin, o.vmin);
    if (o.vmax != null) a.vmax = a.vmax === null ? o.vmax : Math.max(a.vmax, o.vmax);
    a.vsum += o.vsum ?? 0;
    a.vcount += o.vcount ?? 0;
  }
  return a;
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;

function valueOf(a: Acc, s: SeriesSpec): number | null {
  const seconds = s.metricField === "latency_ms";
  const scale = (n: number | null) => (n === null ? null : round(seconds ? n / 1000 : n));
  const summed = s.metricField ? SUMMED_FIELDS.has(s.metricField) : false;
  switch (s.metric) {
    case "count":
      return a.requests;
    case "sum":
      return scale(summed ? a.sums[s.metricField!] : a.vsum);
    case "avg":
      if (summed) return a.requests ? scale(a.sums[s.metricField!] / a.requests) : null;
      return a.vcount ? scale(a.vsum / a.vcount) : null;
    case "min":
      return scale(a.vmin);
    case "max":
      return scale(a.vmax);
    case "percentile":
      return scale(quantile(a.hist, Math.min(1, Math.max(s.percentile! / 100, 1e-9))));
  }
}

export function unitOf(s: SeriesSpec): "count" | "tokens" | "currency" | "duration_seconds" | "number" {
  if (s.metric === "count") return "count";
  if (s.metricField === "cost") return "currency";
  if (s.metricField === "latency_ms") return "duration_seconds";
  if (s.metricField === "input_tokens" || s.metricField === "output_tokens") return "tokens";
  return "number";
}

const byKey = <K>(list: Observation[], key: (o: Observation) => K) => {
  const m = new Map<K, Observation[]>();
  for (const o of list) {
    const k = key(o);
    const l = m.get(k);
    if (l) l.push(o);
    else m.set(k, [o]);
  }
  return m;
};

/** One chart's answer. Groups are ranked by the first series (descending) and cut at `limit`. */
export function drawChart(chart: ChartSpec, observations: Observation[], interval: Interval) {
  const series = seriesOf(chart);
  const grouped = Boolean(chart.groupByField || chart.groupByMetadataKey);
  const limit = chart.limit ?? 25;
  const label = (g: string | null) => g ?? "(none)";
  const ranked = grouped
    ? [...byKey(observations, (o) => label(o.group))].map(([g, l]) => ({ g, acc: fold(l) })).sort((x, y) => (valueOf(y.acc, series[0]) ?? -Infinity) - (valueOf(x.acc, series[0]) ?? -Infinity) || (x.g < y.g ? -1 : 1))
    : [];
  const top = ranked.slice(0, limit);
  let meta = series.map((s) => ({ key: s.key, label: s.label, unit: unitOf(s) }));
  let data: Record<string, unknown>[];
  if (!chart.timeSeries) {
    data = grouped
      ? top.map(({ g, acc }) => ({ label: g, ...Object.fromEntries(series.map((s) => [s.key, valueOf(acc, s)])) }))
      : [{ label: chart.title ?? chart.id, ...Object.fromEntries(series.map((s) => [s.key, valueOf(fold(observations), s)])) }];
  } else if (!grouped) {
    data = [...byKey(observations, (o) => bucketKey(o.hour, interval))]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, l]) => {
        const acc = fold(l);
        return { label: k, bucketKey: k, ...Object.fromEntries(series.map((s) => [s.key, valueOf(acc, s)])) };
      });
  } else {
    // Over time and by group: one row per time bucket, one key per group (of the first series).
    const keep = new Set(top.map((t) => t.g));
    meta = top.map((t) => ({ key: t.g, label: t.g, unit: unitOf(series[0]) }));
    data = [...byKey(observations.filter((o) => keep.has(label(o.group))), (o) => bucketKey(o.hour, interval))]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, l]) => ({ label: k, bucketKey: k, ...Object.fromEntries([...byKey(l, (o) => label(o.group))].map(([g, gl]) => [g, valueOf(fold(gl), series[0])])) }));
  }
  const totals = fold(observations);
  const insights = chart.derivedInsights?.length
    ? chart.derivedInsights.map((d) => {
        const num = valueOf(totals, series.find((s) => s.key === d.numeratorSeriesKey)!);
        const den = valueOf(totals, series.find((s) => s.key === d.denominatorSeriesKey)!);
        return { type: "ratio" as const, label: d.label, numeratorSeriesKey: d.numeratorSeriesKey, denominatorSeriesKey: d.denominatorSeriesKey, value: num !== null && den ? round(num / den) : null };
      })
    : null;
  return { id: chart.id, title: chart.title ?? chart.id, chartType: chart.chartType, series: meta, data, derivedInsights: insights };
}
