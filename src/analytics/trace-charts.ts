// Pure: what trace analytics charts are made of. A chart is trace-level (each trace one item: counts
// are of traces) or span-level (each span one item), decided by the fields it names; mixing the two is
// a 400, and span-level charts are not drawn over time. Every field is summed per observation and
// percentiles are exact (the items read are capped: src/logs/trace-analytics.ts).
import type { ChartFields, ChartSpec } from "./custom-charts";
import { seriesOf } from "./custom-charts";
import type { Level } from "../filters/traces";

export const TRACE_METRIC_FIELDS = [
  "trace_duration_ms",
  "trace_total_cost_usd",
  "trace_total_tokens",
  "trace_input_tokens",
  "trace_output_tokens",
  "trace_span_count",
  "trace_depth",
  "span_duration_ms",
  "span_cost_usd",
  "span_tokens",
  "span_input_tokens",
  "span_output_tokens",
] as const;
export type TraceMetricField = (typeof TRACE_METRIC_FIELDS)[number];

export const TRACE_GROUP_FIELDS = [
  "trace_status",
  "trace_name",
  "trace_models_used",
  "trace_prompt_ids",
  "trace_workflow_ids",
  "trace_tool_names",
  "span_tool_name",
  "span_name",
  "span_type",
  "span_kind",
  "span_status",
] as const;
export type TraceGroupField = (typeof TRACE_GROUP_FIELDS)[number];

export type TraceChartSpec = ChartSpec<TraceMetricField, TraceGroupField>;

/** Fields whose values are whole numbers: an automatic histogram bin is at least 1 wide. */
export const WHOLE_FIELDS: ReadonlySet<TraceMetricField> = new Set(["trace_total_tokens", "trace_input_tokens", "trace_output_tokens", "trace_span_count", "trace_depth", "span_tokens", "span_input_tokens", "span_output_tokens"]);

export const TRACE_CHART_FIELDS: ChartFields<TraceMetricField> = {
  summed: new Set(TRACE_METRIC_FIELDS),
  unrecorded: new Set(),
  percentiles: { from: "own" },
  unit: (f) => (f.endsWith("_duration_ms") ? "duration_seconds" : f.endsWith("_cost_usd") ? "currency" : f.endsWith("_tokens") ? "tokens" : "number"),
};

const levelOf = (field: string): Level => (field.startsWith("span_") ? "span" : "trace");

/** Every field a chart names, with where it names it. */
function chartFields(chart: TraceChartSpec): [where: string, field: string][] {
  const out: [string, string][] = [];
  const multi = Boolean(chart.series?.length);
  for (const s of seriesOf(chart)) if (s.metricField) out.push([multi ? `series.${s.key}.metricField` : "metricField", s.metricField]);
  if (chart.groupByField) out.push(["groupByField", chart.groupByField]);
  if (chart.secondaryGroupByField) out.push(["secondaryGroupByField", chart.secondaryGroupByField]);
  if (chart.histogramField) out.push(["histogramField", chart.histogramField]);
  for (const f of chart.hierarchyFields ?? []) out.push(["hierarchyFields", f]);
  return out;
}

/** The chart's level (trace when it names no field: a count of traces), or why it has none. */
export function chartLevel(chart: TraceChartSpec): { level: Level } | { problem: string } {
  const named = chartFields(chart);
  const spanLevel = named.filter(([, f]) => levelOf(f) === "span");
  const traceLevel = named.filter(([, f]) => levelOf(f) === "trace");
  if (spanLevel.length && traceLevel.length) {
    const show = (l: [string, string][]) => l.map(([w, f]) => `${f} (${w})`).join(", ");
    return {
      problem: `mixes trace-level fields (${show(traceLevel)}) and span-level fields (${show(spanLevel)}); a chart counts either traces or spans, so use fields of one level`,
    };
  }
  const level: Level = spanLevel.length ? "span" : "trace";
  if (level === "span" && chart.timeSeries) return { problem: "timeSeries: not with span-level fields; span charts are not drawn over time (use a trace-level chart)" };
  return { level };
}
