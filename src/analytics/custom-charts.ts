// Custom analytics charts: one or more series (count, sum, avg, min, max or a percentile of a numeric
// field), overall, broken down by a field, over time, or both; or as a pie, a histogram, a heatmap of
// two groupings, a treemap or sunburst of nested groupings. Pure: observations come grouped (by group,
// period, percentile value, histogram bin) from the database; this folds them into chart rows. The
// fields are a source's own (request logs here; traces and spans in trace-charts.ts): each source
// says which fields it sums, which it does not record, how it answers percentiles and in what units.
import { groupBy } from "../lib/collections";
import { bucketValue } from "./latency-buckets";
import { bucketKey, type Interval } from "./summarize";

export const METRIC_FIELDS = ["input_tokens", "output_tokens", "cost", "latency_ms", "prompt_version_number", "turn_count", "tool_call_count", "cached_tokens", "thinking_tokens"] as const;
/**
 * A Signals verdict as a field (`signal:<the signal's name>`): 1 for a log judged true, 0 false, no
 * value for a log without an ok verdict. So avg is the signal's true-rate over the judged logs, sum
 * the true verdicts, min and max whether any was false or true.
 */
export type SignalField = `signal:${string}`;
export const SIGNAL_FIELD_PREFIX = "signal:";
export const isSignalField = (f: string): f is SignalField => f.startsWith(SIGNAL_FIELD_PREFIX);
export type MetricField = (typeof METRIC_FIELDS)[number] | SignalField;
/** Fields logs do not record: asking for them is a 400 rather than a chart of zeros. */
export const UNRECORDED_FIELDS: ReadonlySet<MetricField> = new Set(["turn_count", "tool_call_count", "cached_tokens", "thinking_tokens"]);
/** Fields every observation carries as sums (the rollups keep exactly these). */
export const SUMMED_FIELDS: ReadonlySet<MetricField> = new Set(["input_tokens", "output_tokens", "cost", "latency_ms"]);
export const GROUP_FIELDS = ["engine", "provider_type", "prompt_id", "prompt_version_number", "status", "error_type", "tags", "metadata_keys", "output_keys", "input_variable_keys", "tool_names", "ab_variant"] as const;
export type GroupField = (typeof GROUP_FIELDS)[number];

export const CHART_TYPES = ["bar", "line", "area", "pie", "donut", "histogram", "heatmap", "treemap", "sunburst"] as const;
export type ChartType = (typeof CHART_TYPES)[number];
export const TIME_BUCKETS = ["auto", "day", "week", "month"] as const;
export type Unit = "count" | "tokens" | "currency" | "duration_seconds" | "number";
/** Periods of a time series: hour or day as analytics draws them, or a week (from Monday, UTC) or a calendar month. */
export type ChartInterval = Interval | "week" | "month";

/** What a source of items (request logs, traces, spans) offers charts. */
export interface ChartFields<M extends string> {
  /** Fields every observation carries as a sum and a count of values (sum and avg read them). */
  summed: ReadonlySet<M>;
  /** Fields the source does not record: asking for them is a 400 rather than a chart of zeros. */
  unrecorded: ReadonlySet<M>;
  /**
   * Percentiles: from the latency histogram every observation carries (of that one field, within 10 %),
   * or exact, from the chart's own field's values.
   */
  percentiles: { from: "histogram"; field: M } | { from: "own" };
  /** Unit of a field's values in the answer; durations are kept in ms and answered in seconds. */
  unit(field: M): Exclude<Unit, "count">;
}

export const REQUEST_LOG_CHART_FIELDS: ChartFields<MetricField> = {
  summed: SUMMED_FIELDS,
  unrecorded: UNRECORDED_FIELDS,
  percentiles: { from: "histogram", field: "latency_ms" },
  unit: (f) => (f === "cost" ? "currency" : f === "latency_ms" ? "duration_seconds" : f === "input_tokens" || f === "output_tokens" ? "tokens" : "number"),
};

export interface SeriesSpec<M extends string = MetricField> {
  key: string;
  label: string;
  metric: "count" | "sum" | "avg" | "min" | "max" | "percentile";
  metricField?: M | null;
  percentile?: number | null;
}

export interface ChartSpec<M extends string = MetricField, G extends string = GroupField> {
  id: string;
  title?: string | null;
  chartType: ChartType;
  metric?: SeriesSpec["metric"] | null;
  metricField?: M | null;
  percentile?: number | null;
  series?: SeriesSpec<M>[] | null;
  derivedInsights?: { type?: "ratio"; label: string; numeratorSeriesKey: string; denominatorSeriesKey: string }[] | null;
  groupByField?: G | null;
  groupByMetadataKey?: string | null;
  /** Heatmaps: the second grouping. */
  secondaryGroupByField?: G | null;
  /** Treemaps and sunbursts: the groupings from the outer ring in. */
  hierarchyFields?: G[] | null;
  /** Histograms: the field binned, and the bin width in its own unit (chosen when absent). */
  histogramField?: M | null;
  histogramInterval?: number | null;
  timeSeries?: boolean;
  timeBucket?: (typeof TIME_BUCKETS)[number] | null;
  limit?: number;
}

/** Items (logs, traces, spans) sharing one group, period and bin; sums and v* describe its fields. */
export interface Observation {
  /** The group (null: items without a value, drawn "(none)"). */
  group: string | null;
  /** Deeper groupings: a heatmap's second one, a hierarchy's next levels. */
  path?: (string | null)[];
  /** Start of the period, epoch ms (0 when not drawn over time). */
  hour: number;
  /** Histograms: the bin's index and width, in the binned field's own unit. */
  bin?: number | null;
  binWidth?: number | null;
  /** The value these items share for percentiles (a latency bucket's middle, or the own field's exact value); null: none. */
  pv?: number | null;
  /** How many items. */
  n: number;
  /** Sums of fields over the items. */
  sums: Partial<Record<string, number>>;
  /** How many items had a value of each summed field (averages divide by it); absent: all n. */
  counts?: Partial<Record<string, number>>;
  /** The chart's own field (min, max series). */
  vmin?: number | null;
  vmax?: number | null;
}

/** The chart's series: its `series`, or one series `value` made of its metric (a count when none is given). */
export function seriesOf<M extends string>(chart: ChartSpec<M, string>): SeriesSpec<M>[] {
  if (chart.series?.length) return chart.series;
  return [{ key: "value", label: chart.title ?? chart.id, metric: chart.metric ?? "count", metricField: chart.metricField, percentile: chart.percentile }];
}

const TIME_CHARTS: readonly ChartType[] = ["bar", "line", "area"];
/** Chart fields that only one kind of chart takes, and which. */
const ONLY_WITH: [key: "secondaryGroupByField" | "hierarchyFields" | "histogramField" | "histogramInterval", types: readonly ChartType[], what: string][] = [
  ["secondaryGroupByField", ["heatmap"], "heatmap charts"],
  ["hierarchyFields", ["treemap", "sunburst"], "treemap and sunburst charts"],
  ["histogramField", ["histogram"], "histogram charts"],
  ["histogramInterval", ["histogram"], "histogram charts"],
];

/** Why the chart cannot be drawn, or null. The schema checks shapes; these are the cross-field rules. */
export function chartProblem<M extends string>(chart: ChartSpec<M, string>, fields: ChartFields<M>): string | null {
  const multi = Boolean(chart.series?.length);
  const type = chart.chartType;
  if (multi && (chart.metric || chart.metricField || chart.percentile != null)) return "series: omit metric, metricField and percentile when giving series";
  if (multi && chart.series!.length < 2) return "series: give two or more series, or use metric";
  // A histogram counts its bins' items unless told otherwise.
  if (!multi && !chart.metric && type !== "histogram") return "metric: is required without series";
  if (chart.derivedInsights?.length && !multi) return "derivedInsights: only with series";
  if (chart.groupByField && chart.groupByMetadataKey) return "groupByMetadataKey: cannot be combined with groupByField";
  for (const [key, types, what] of ONLY_WITH) if (chart[key] != null && !types.includes(type)) return `${key}: only with ${what}`;
  const grouped = Boolean(chart.groupByField || chart.groupByMetadataKey);
  if (chart.timeSeries && !TIME_CHARTS.includes(type)) return `timeSeries: only with bar, line and area charts, not ${type}`;
  switch (type) {
    case "bar":
    case "line":
    case "area":
      if (!chart.timeSeries && !grouped && type !== "bar") return "chartType: an overall chart (no timeSeries, no group-by) must be bar";
      break;
    case "pie":
    case "donut":
      if (!grouped) return `groupByField: is required for ${type} charts`;
      break;
    case "histogram":
      if (grouped) return "groupByField: not with histogram charts (their rows are the bins)";
      if (!chart.histogramField) return "histogramField: is required for histogram charts";
      break;
    case "heatmap":
      if (!chart.groupByField) return "groupByField: is required for heatmap charts";
      if (!chart.secondaryGroupByField) return "secondaryGroupByField: is required for heatmap charts";
      if (chart.secondaryGroupByField === chart.groupByField) return "secondaryGroupByField: must differ from groupByField";
      break;
    case "treemap":
    case "sunburst": {
      if (grouped) return `groupByField: not with ${type} charts; give hierarchyFields`;
      const levels = chart.hierarchyFields ?? [];
      if (levels.length < 2) return `hierarchyFields: give 2 to 5 fields for ${type} charts`;
      const twice = levels.find((f, i) => levels.indexOf(f) !== i);
      if (twice) return `hierarchyFields: ${twice} is used twice`;
      break;
    }
  }
  const keys = new Set<string>();
  for (const s of seriesOf(chart)) {
    const at = multi ? `series.${s.key}` : "metric";
    if (multi && keys.has(s.key)) return `series: key ${s.key} is used twice`;
    keys.add(s.key);
    if (s.metric !== "count" && !s.metricField) return `${multi ? at : "metricField"}: a field is required for ${s.metric}`;
    if (s.metricField && fields.unrecorded.has(s.metricField)) return `${multi ? at : "metricField"}: ${s.metricField} is not recorded by this service`;
    if (s.metric === "percentile") {
      if (s.percentile == null) return `${multi ? at : "percentile"}: is required with the percentile metric`;
      if (fields.percentiles.from === "histogram" && s.metricField !== fields.percentiles.field) return `${multi ? at : "metricField"}: percentiles are computed for ${fields.percentiles.field} only`;
    } else if (s.percentile != null) return `${multi ? at : "percentile"}: only with the percentile metric`;
  }
  const own = new Set(seriesOf(chart).filter((s) => needsOwnField(s, fields)).map((s) => s.metricField));
  if (own.size > 1) {
    const which = fields.percentiles.from === "own" ? "min, max and percentile" : "min, max, prompt_version_number and signal";
    return `series: ${which} series of one chart must share one field`;
  }
  for (const d of chart.derivedInsights ?? []) {
    if (!keys.has(d.numeratorSeriesKey)) return `derivedInsights: no series ${d.numeratorSeriesKey}`;
    if (!keys.has(d.denominatorSeriesKey)) return `derivedInsights: no series ${d.denominatorSeriesKey}`;
  }
  return null;
}

/** A series read from its field's own values (min, max, exact percentiles, unsummed fields) rather than the shared sums. */
export function needsOwnField<M extends string>(s: SeriesSpec<M>, fields: ChartFields<M>): boolean {
  if (s.metric === "min" || s.metric === "max") return true;
  if (s.metric === "percentile" && fields.percentiles.from === "own") return true;
  return s.metric !== "count" && s.metricField != null && !fields.summed.has(s.metricField);
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

/** A request-log observation from a row of the logs or the rollups: its latency bucket and, when read, its own field. */
export function logObservation(
  r: { grp: string | null; hour: number; bucket: number; requests: number; input_tokens: number; output_tokens: number; cost: number; latency_ms: number; vmin?: number | null; vmax?: number | null; vsum?: number | null; vcount?: number | null },
  ownField?: MetricField | null,
): Observation {
  const sums: Record<string, number> = { input_tokens: r.input_tokens, output_tokens: r.output_tokens, cost: r.cost, latency_ms: r.latency_ms };
  const counts: Record<string, number> = { input_tokens: r.requests, output_tokens: r.requests, cost: r.requests, latency_ms: r.requests };
  if (ownField && !SUMMED_FIELDS.has(ownField)) {
    sums[ownField] = r.vsum ?? 0;
    counts[ownField] = r.vcount ?? 0;
  }
  return { group: r.grp, hour: r.hour, pv: r.bucket >= 0 ? bucketValue(r.bucket) : null, n: r.requests, sums, counts, vmin: r.vmin, vmax: r.vmax };
}

interface Acc {
  n: number;
  sums: Record<string, number>;
  counts: Record<string, number>;
  /** value → items */
  hist: Map<number, number>;
  vmin: number | null;
  vmax: number | null;
}

function fold(list: Observation[]): Acc {
  const a: Acc = { n: 0, sums: {}, counts: {}, hist: new Map(), vmin: null, vmax: null };
  for (const o of list) {
    a.n += o.n;
    for (const [k, v] of Object.entries(o.sums)) {
      a.sums[k] = (a.sums[k] ?? 0) + (v ?? 0);
      a.counts[k] = (a.counts[k] ?? 0) + (o.counts?.[k] ?? o.n);
    }
    if (o.pv != null) a.hist.set(o.pv, (a.hist.get(o.pv) ?? 0) + o.n);
    if (o.vmin != null) a.vmin = a.vmin === null ? o.vmin : Math.min(a.vmin, o.vmin);
    if (o.vmax != null) a.vmax = a.vmax === null ? o.vmax : Math.max(a.vmax, o.vmax);
  }
  return a;
}

/** The q-quantile (0 < q ≤ 1) of {value → items}: the smallest value with at least q of the items at or below it. */
function quantileOf(hist: Map<number, number>, q: number): number | null {
  let total = 0;
  for (const c of hist.values()) total += c;
  if (total === 0) return null;
  const target = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const v of [...hist.keys()].sort((a, b) => a - b)) {
    seen += hist.get(v)!;
    if (seen >= target) return v;
  }
  return null;
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;

function valueOf<M extends string>(a: Acc, s: SeriesSpec<M>, fields: ChartFields<M>): number | null {
  const seconds = s.metricField != null && fields.unit(s.metricField) === "duration_seconds";
  const scale = (n: number | null) => (n === null ? null : round(seconds ? n / 1000 : n));
  const f = s.metricField ?? "";
  switch (s.metric) {
    case "count":
      return a.n;
    case "sum":
      return scale(a.sums[f] ?? 0);
    case "avg":
      return a.counts[f] ? scale(a.sums[f] / a.counts[f]) : null;
    case "min":
      return scale(a.vmin);
    case "max":
      return scale(a.vmax);
    case "percentile":
      return scale(quantileOf(a.hist, Math.min(1, Math.max(s.percentile! / 100, 1e-9))));
  }
}

export function unitOf<M extends string>(s: SeriesSpec<M>, fields: ChartFields<M>): Unit {
  if (s.metric === "count" || !s.metricField) return s.metric === "count" ? "count" : "number";
  return fields.unit(s.metricField);
}


/** The label of a period: an hour or a day as analytics writes it, a week by its Monday, a month as YYYY-MM. */
export function periodKey(start: number, interval: ChartInterval): string {
  if (interval === "week") return new Date(start).toISOString().slice(0, 10);
  if (interval === "month") return new Date(start).toISOString().slice(0, 7);
  return bucketKey(start, interval);
}

const label = (g: string | null) => g ?? "(none)";

/**
 * One chart's answer. Groups are ranked by the first series (descending, then by name) and cut at
 * `limit`; histogram rows are the bins in order, the last of `limit` bins open-ended.
 */
export function drawChart<M extends string, T extends ChartType>(chart: ChartSpec<M, string> & { chartType: T }, observations: Observation[], interval: ChartInterval, fields: ChartFields<M>) {
  const series = seriesOf(chart);
  const limit = chart.limit ?? 25;
  const values = (acc: Acc) => Object.fromEntries(series.map((s) => [s.key, valueOf(acc, s, fields)]));
  const rank = (key: (o: Observation) => string) =>
    [...groupBy(observations, key)]
      .map(([g, l]) => ({ g, acc: fold(l) }))
      .sort((x, y) => (valueOf(y.acc, series[0], fields) ?? -Infinity) - (valueOf(x.acc, series[0], fields) ?? -Infinity) || (x.g < y.g ? -1 : x.g > y.g ? 1 : 0));
  let meta = series.map((s) => ({ key: s.key, label: s.label, unit: unitOf(s, fields) }));
  let data: Record<string, unknown>[];
  const grouped = Boolean(chart.groupByField || chart.groupByMetadataKey);
  if (chart.chartType === "histogram") {
    data = [...groupBy(observations, (o) => o.bin ?? 0)]
      .sort(([a], [b]) => a - b)
      .map(([bin, l]) => {
        const width = l[0].binWidth ?? 1;
        const start = round(bin * width);
        const end = bin >= limit - 1 ? null : round((bin + 1) * width);
        return { label: end === null ? `≥ ${start}` : `${start}–${end}`, bucketStart: start, bucketEnd: end, ...values(fold(l)) };
      });
  } else if (chart.chartType === "heatmap") {
    const rows = rank((o) => label(o.group)).slice(0, limit);
    const cols = rank((o) => label(o.path?.[0] ?? null)).slice(0, limit);
    const cells = groupBy(observations, (o) => JSON.stringify([label(o.group), label(o.path?.[0] ?? null)]));
    data = [];
    for (const r of rows) {
      for (const c of cols) {
        const l = cells.get(JSON.stringify([r.g, c.g]));
        if (l) data.push({ label: `${r.g} / ${c.g}`, group: r.g, secondaryGroup: c.g, ...values(fold(l)) });
      }
    }
  } else if (chart.chartType === "treemap" || chart.chartType === "sunburst") {
    data = rank((o) => JSON.stringify([o.group, ...(o.path ?? [])].map(label)))
      .slice(0, limit)
      .map(({ g, acc }) => {
        const path = JSON.parse(g) as string[];
        return { label: path.join(" / "), path, ...values(acc) };
      });
  } else if (!chart.timeSeries) {
    data = grouped ? rank((o) => label(o.group)).slice(0, limit).map(({ g, acc }) => ({ label: g, ...values(acc) })) : [{ label: chart.title ?? chart.id, ...values(fold(observations)) }];
  } else if (!grouped) {
    data = [...groupBy(observations, (o) => periodKey(o.hour, interval))]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, l]) => ({ label: k, bucketKey: k, ...values(fold(l)) }));
  } else {
    // Over time and by group: one row per time bucket, one key per group (of the first series).
    const top = rank((o) => label(o.group)).slice(0, limit);
    const keep = new Set(top.map((t) => t.g));
    meta = top.map((t) => ({ key: t.g, label: t.g, unit: unitOf(series[0], fields) }));
    data = [...groupBy(observations.filter((o) => keep.has(label(o.group))), (o) => periodKey(o.hour, interval))]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, l]) => ({ label: k, bucketKey: k, ...Object.fromEntries([...groupBy(l, (o) => label(o.group))].map(([g, gl]) => [g, valueOf(fold(gl), series[0], fields)])) }));
  }
  const totals = fold(observations);
  const insights = chart.derivedInsights?.length
    ? chart.derivedInsights.map((d) => {
        const num = valueOf(totals, series.find((s) => s.key === d.numeratorSeriesKey)!, fields);
        const den = valueOf(totals, series.find((s) => s.key === d.denominatorSeriesKey)!, fields);
        return { type: "ratio" as const, label: d.label, numeratorSeriesKey: d.numeratorSeriesKey, denominatorSeriesKey: d.denominatorSeriesKey, value: num !== null && den ? round(num / den) : null };
      })
    : null;
  return { id: chart.id, title: chart.title ?? chart.id, chartType: chart.chartType, series: meta, data, derivedInsights: insights };
}
