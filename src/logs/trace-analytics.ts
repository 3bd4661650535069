// POST /api/public/v2/traces/analytics/custom-analytics: charts over traces and spans. Each request
// reads a bounded window first: the newest traces whose spans start in the filter's trace_start range,
// at most maxTraces traces and maxSpans spans in all (the answer says when older ones were left out).
// Each chart is then one statement over that window, all in one D1 batch: the window's spans with
// their logs (sp), each trace's values (tr, its depth by a recursion bounded at MAX_DEPTH levels), the
// filter group's condition, and the chart's groups aggregated in the database. Every value travels
// as a bound parameter (the window as one JSON list), within D1's 100. CROSS JOIN fixes the loop
// order where the planner, without statistics, would range over the workspace's spans instead of
// seeking the window's traces (and a span's children) on their indexes.
import { chartProblem, drawChart, needsOwnField, seriesOf, type ChartInterval, type ChartType, type Observation } from "../analytics/custom-charts";
import { intervalOf } from "../analytics/summarize";
import { chartLevel, TRACE_CHART_FIELDS, WHOLE_FIELDS, type TraceChartSpec, type TraceGroupField, type TraceMetricField } from "../analytics/trace-charts";
import { getTableName } from "drizzle-orm";
import { d1Of } from "../db/client";
import { requestLogs, spans } from "../db/schema";
import { columnNames } from "../db/sql";
import { SqlParams } from "../filters";
import { compileTraceFilter, fieldsOfGroup, traceStartBounds, type CompiledTraceFilter, type Level, type TraceFilterGroup } from "../filters/traces";
import { ApiError } from "../lib/errors";
import { toIso } from "../lib/time";
import { eachPeriod, type WorkspaceLogs } from "./periods";

// Trace analytics are SQL built as text: the tables' names from the schema.
const SPANS = getTableName(spans);
const LOGS = getTableName(requestLogs);
// Column names of the tables read; the CTEs' own columns (sp, roots, agg, tr) are named in this file.
const S = columnNames(spans);
const R = columnNames(requestLogs);

/** What one request may read: the newest traces of the range, and the spans they hold. */
export interface TraceAnalyticsLimits {
  maxTraces: number;
  maxSpans: number;
}
export const TRACE_ANALYTICS_LIMITS: TraceAnalyticsLimits = { maxTraces: 1000, maxSpans: 20_000 };
/** Parent chains are followed this many levels deep at most (a trace's depth is reported up to it). */
export const MAX_DEPTH = 100;
/** Bins an automatic histogram aims at (fewer when the chart's limit is lower). */
export const HISTOGRAM_AUTO_BINS = 20;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A span attribute (a constant name, flat dotted keys as stored). */
const attr = (name: string) => `(sx.${S.attributes} ->> '$."${name}"')`;
/**
 * Names read into the window's span rows are cut (attributes may hold 512 KiB): span names at 1024
 * characters (as spans-bulk takes them), names from attributes at LABEL_MAX.
 */
export const LABEL_MAX = 256;
const label = (expr: string) => `nullif(substr(CAST(${expr} AS TEXT), 1, ${LABEL_MAX}), '')`;
const TOOL = label(`coalesce(${attr("gen_ai.tool.name")}, ${attr("ai.toolCall.name")}, ${attr("tool.name")})`);
const WORKFLOW = label(attr("promptlayer.workflow.id"));
const TYPE = `CASE WHEN sx.${S.requestLogId} IS NOT NULL THEN 'llm'
  WHEN ${TOOL} IS NOT NULL OR ${attr("gen_ai.operation.name")} = 'execute_tool' OR ${attr("openinference.span.kind")} = 'TOOL' THEN 'tool' ELSE 'span' END`;
const KIND = `CASE sx.${S.kind} WHEN 1 THEN 'internal' WHEN 2 THEN 'server' WHEN 3 THEN 'client' WHEN 4 THEN 'producer' WHEN 5 THEN 'consumer' ELSE 'unspecified' END`;
const STATUS = `CASE sx.${S.statusCode} WHEN 2 THEN 'error' WHEN 1 THEN 'ok' ELSE 'unset' END`;

/** Trace groupings that are sets of the spans' values: a trace counts once under each, and not at all without one. */
const SET_GROUPS: Partial<Record<TraceGroupField, string>> = {
  trace_models_used: "span_model",
  trace_prompt_ids: "CAST(span_prompt_id AS TEXT)",
  trace_tool_names: "span_tool_name",
  trace_workflow_ids: "span_workflow_id",
};
/** Span groupings a span may lack: such spans are left out rather than drawn as "(none)". */
const OPTIONAL_SPAN_GROUPS: ReadonlySet<TraceGroupField> = new Set(["span_tool_name"]);

export interface TraceAnalyticsInput {
  filter_group?: TraceFilterGroup | null;
  customCharts: TraceChartSpec[];
}

interface Window {
  traceIds: string[];
  spans: number;
  capped: boolean;
  oldest: number | null;
}

export async function traceCustomAnalytics(logs: WorkspaceLogs, workspaceId: number, input: TraceAnalyticsInput, limits: TraceAnalyticsLimits = TRACE_ANALYTICS_LIMITS) {
  const ids = new Set<string>();
  const levels = input.customCharts.map((chart, i) => {
    if (ids.has(chart.id)) throw new ApiError("validation_error", `customCharts.${i}.id: ${chart.id} is used twice`);
    ids.add(chart.id);
    const problem = chartProblem(chart, TRACE_CHART_FIELDS);
    if (problem) throw new ApiError("validation_error", `customCharts.${i}.${problem}`);
    const level = chartLevel(chart);
    if ("problem" in level) throw new ApiError("validation_error", `customCharts.${i}${level.problem.startsWith("timeSeries:") ? "." : ": "}${level.problem}`);
    return level.level;
  });

  const bounds = traceStartBounds(input.filter_group);
  const intervals = input.customCharts.map((chart): ChartInterval => (chart.timeBucket && chart.timeBucket !== "auto" ? chart.timeBucket : intervalOf(bounds.from, bounds.to)));
  // The window over every period (a trace's spans are in one database, storeSpans keeps them there).
  const windows = await eachPeriod(logs, async (db) => windowRows(d1Of(db), workspaceId, bounds, limits));
  const window = pickWindow(windows.flatMap((w) => w.rows).sort((a, b) => b.first - a.first), windows.some((w) => w.capped), limits);
  const chosen = new Set(window.traceIds);
  const charts = logs.spread ? await Promise.all(input.customCharts.map((chart, i) => commonBins(logs, chart, levels[i], input.filter_group ?? null, workspaceId, windows, chosen, intervals[i]))) : input.customCharts;
  let observations: Observation[][] = input.customCharts.map(() => []);
  if (window.traceIds.length > 0) {
    const perDb = await eachPeriod(logs, async (db, k) => {
      const mine = windows[k].rows.filter((r) => chosen.has(r.trace_id)).map((r) => r.trace_id);
      if (mine.length === 0) return input.customCharts.map((): Observation[] => []);
      const d1 = d1Of(db);
      const statements = charts.map((chart, i) => {
        const q = chartQuery(chart, levels[i], input.filter_group ?? null, workspaceId, JSON.stringify(mine), intervals[i]);
        return d1.prepare(q.sql).bind(...q.params);
      });
      const results = await d1.batch<Row>(statements);
      return results.map((r, i) => r.results.map((row) => observationOf(row, input.customCharts[i])));
    });
    observations = input.customCharts.map((_, i) => perDb.flatMap((charts) => charts[i]));
  }
  return {
    success: true as const,
    customCharts: input.customCharts.map((chart, i) => drawChart(chart as TraceChartSpec & { chartType: ChartType }, observations[i], intervals[i], TRACE_CHART_FIELDS)),
    scanned: {
      traces: window.traceIds.length,
      spans: window.spans,
      capped: window.capped,
      max_traces: limits.maxTraces,
      max_spans: limits.maxSpans,
      oldest_span_start: toIso(window.oldest),
    },
  };
}

/**
 * A histogram whose bin width is chosen from its largest value, over several periods: the width is
 * chosen once, from the largest value of every period's part of the window, so all periods bin alike.
 */
async function commonBins(
  logs: WorkspaceLogs,
  chart: TraceChartSpec,
  level: Level,
  group: TraceFilterGroup | null,
  workspaceId: number,
  windows: { rows: WindowRow[] }[],
  chosen: Set<string>,
  interval: ChartInterval,
): Promise<TraceChartSpec> {
  if (chart.chartType !== "histogram" || chart.histogramInterval != null) return chart;
  const field = chart.histogramField!;
  // The same items as the histogram's, as one bar of their largest value.
  const probe: TraceChartSpec = { id: chart.id, chartType: "bar", metric: "max", metricField: field, limit: chart.limit };
  const maxima = await eachPeriod(logs, async (db, k) => {
    const mine = windows[k].rows.filter((r) => chosen.has(r.trace_id)).map((r) => r.trace_id);
    if (mine.length === 0) return null;
    const q = chartQuery(probe, level, group, workspaceId, JSON.stringify(mine), interval);
    const { results } = await d1Of(db).prepare(q.sql).bind(...q.params).all<Row>();
    return results[0]?.vmax === null || results[0]?.vmax === undefined ? null : Number(results[0].vmax);
  });
  const largest = Math.max(0, ...maxima.filter((m): m is number => m !== null));
  const width = await d1Of(logs.current)
    .prepare(`SELECT ${autoWidthSql("?1", Math.min(chart.limit ?? 25, HISTOGRAM_AUTO_BINS), WHOLE_FIELDS.has(field))} AS w`)
    .bind(largest)
    .first<{ w: number }>();
  return { ...chart, histogramInterval: width!.w };
}

/**
 * The newest traces whose spans start in the range, newest first: read from the newest maxSpans + 1
 * spans of the range (an index range), each trace's size counted on an index (at most maxSpans + 1
 * entries a trace).
 */
export function windowQuery(workspaceId: number, bounds: { from: number | null; to: number | null }, limits: TraceAnalyticsLimits) {
  const p = new SqlParams();
  const ws = p.add(workspaceId);
  const range = [`${S.workspaceId} = ${ws}`];
  if (bounds.from !== null) range.push(`${S.startTime} >= ${p.add(bounds.from)}`);
  if (bounds.to !== null) range.push(`${S.startTime} <= ${p.add(bounds.to)}`);
  const sql = `WITH w AS (
      SELECT ${S.traceId}, min(${S.startTime}) AS first, sum(count(*)) OVER () AS scanned
      FROM (SELECT ${S.traceId}, ${S.startTime} FROM ${SPANS} WHERE ${range.join(" AND ")} ORDER BY ${S.startTime} DESC LIMIT ${limits.maxSpans + 1})
      GROUP BY ${S.traceId} ORDER BY first DESC LIMIT ${limits.maxTraces + 1})
    SELECT ${S.traceId}, first, scanned,
      (SELECT count(*) FROM (SELECT 1 FROM ${SPANS} AS s WHERE s.${S.workspaceId} = ${ws} AND s.${S.traceId} = w.${S.traceId} LIMIT ${limits.maxSpans + 1})) AS size
    FROM w ORDER BY first DESC`;
  return { sql, params: p.values };
}

interface WindowRow {
  trace_id: string;
  first: number;
  scanned: number;
  size: number;
}

/** One database's candidate traces for the window, newest first, and whether its scan was cut at maxSpans. */
async function windowRows(d1: D1Database, workspaceId: number, bounds: { from: number | null; to: number | null }, limits: TraceAnalyticsLimits) {
  const q = windowQuery(workspaceId, bounds, limits);
  const { results } = await d1
    .prepare(q.sql)
    .bind(...q.params)
    .all<WindowRow>();
  return { rows: results, capped: results.length > 0 && results[0].scanned > limits.maxSpans };
}

/** The window's traces, kept newest first while they fit both caps. */
function pickWindow(rows: WindowRow[], capped: boolean, limits: TraceAnalyticsLimits): Window {
  const out: Window = { traceIds: [], spans: 0, capped, oldest: null };
  for (const r of rows) {
    // A trace sent to two periods at the moment one began (concurrent first spans) counts once, whole.
    if (out.traceIds.includes(r.trace_id)) {
      out.spans += r.size;
      continue;
    }
    if (out.traceIds.length === limits.maxTraces || out.spans + r.size > limits.maxSpans) {
      out.capped = true;
      break;
    }
    out.traceIds.push(r.trace_id);
    out.spans += r.size;
    out.oldest = r.first;
  }
  return out;
}

/** A row of a chart's statement: groups, period, bin, percentile value, count, sums (s0…) and value counts (c0…) of its fields. */
type Row = Record<string, number | string | null>;

/** The fields a chart sums, in a fixed order (their columns are s0, c0, s1, c1, …). */
const summedFields = (chart: TraceChartSpec) => [...new Set(seriesOf(chart).flatMap((s) => (s.metricField ? [s.metricField] : [])))];

/** The group fields of a chart, outermost first. */
function groupFieldsOf(chart: TraceChartSpec): TraceGroupField[] {
  if (chart.chartType === "treemap" || chart.chartType === "sunburst") return chart.hierarchyFields ?? [];
  if (chart.chartType === "heatmap") return [chart.groupByField!, chart.secondaryGroupByField!];
  return chart.groupByField ? [chart.groupByField] : [];
}

function observationOf(r: Row, chart: TraceChartSpec): Observation {
  const levels = groupFieldsOf(chart).length;
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const sums: Record<string, number> = {};
  const counts: Record<string, number> = {};
  summedFields(chart).forEach((f, k) => {
    sums[f] = Number(r[`s${k}`] ?? 0);
    counts[f] = Number(r[`c${k}`] ?? 0);
  });
  return {
    group: text(r.grp),
    path: Array.from({ length: Math.max(0, levels - 1) }, (_, k) => text(r[`gp${k}`])),
    hour: Number(r.hour ?? 0),
    bin: r.bin === null ? null : Number(r.bin),
    binWidth: r.bw === null ? null : Number(r.bw),
    pv: r.pv === null ? null : Number(r.pv),
    n: Number(r.n),
    sums,
    counts,
    vmin: r.vmin === null ? null : Number(r.vmin),
    vmax: r.vmax === null ? null : Number(r.vmax),
  };
}

/** The start of the period holding an epoch-ms expression. */
function periodSql(interval: ChartInterval, ms: string): string {
  const t = `CAST(${ms} AS INTEGER)`;
  switch (interval) {
    case "hour":
      return `(${t} - ${t} % ${HOUR})`;
    case "day":
      return `(${t} - ${t} % ${DAY})`;
    case "week":
      // 1970-01-05 was a Monday: weeks start 4 days after the epoch.
      return `(${t} - (${t} - ${4 * DAY}) % ${7 * DAY})`;
    case "month":
      return `(CAST(strftime('%s', ${t} / 1000, 'unixepoch', 'start of month') AS INTEGER) * 1000)`;
  }
}

/** The width of automatic bins: the smallest 1, 2 or 5 × 10^k that puts the largest value within `bins` bins. */
function autoWidthSql(max: string, bins: number, whole: boolean): string {
  const widths: string[] = [];
  for (let k = whole ? 0 : -6; k <= 12; k++) for (const m of [1, 2, 5]) widths.push(`${m}e${k}`);
  return `CASE ${widths.map((w) => `WHEN ${max} < ${bins} * ${w} THEN ${w}`).join(" ")} ELSE 1e13 END`;
}

/**
 * The CTEs that make one row per trace of a window (a JSON list of trace ids, bound as `win`): sp (the
 * spans with their logs, and the nested filters' values nv0, nv1, …), roots, agg (the trace values,
 * the span-level filters' flags f0, f1, …), with depth the parent chains, and tr (the trace rows the
 * filter group's condition reads, alias t). Trace analytics and trace search share it, so a trace's
 * values are the same in both.
 */
export function traceRowCtes(ws: string, win: string, filter: CompiledTraceFilter, depth: boolean): string[] {
  const ctes = [
    `sp AS MATERIALIZED (
      SELECT sx.${S.traceId}, sx.${S.spanId}, sx.${S.parentSpanId}, sx.${S.startTime}, sx.${S.endTime}, sx.${S.statusCode}, sx.${S.startTime} AS span_start,
        substr(sx.${S.name}, 1, 1024) AS span_name, ${KIND} AS span_kind, ${STATUS} AS span_status, ${TYPE} AS span_type, ${TOOL} AS span_tool_name, ${WORKFLOW} AS span_workflow_id,
        max(sx.${S.endTime} - sx.${S.startTime}, 0) AS span_duration_ms,
        rx.${R.price} AS span_cost_usd, rx.${R.inputTokens} + rx.${R.outputTokens} AS span_tokens, rx.${R.inputTokens} AS span_input_tokens, rx.${R.outputTokens} AS span_output_tokens,
        rx.${R.model} AS span_model, rx.${R.promptId} AS span_prompt_id${filter.nested.map((c, k) => `,\n        CASE WHEN ${c} THEN 1 ELSE 0 END AS nv${k}`).join("")}
      FROM json_each(${win}) AS w
      CROSS JOIN ${SPANS} AS sx ON sx.${S.workspaceId} = ${ws} AND sx.${S.traceId} = w.value
      LEFT JOIN ${LOGS} AS rx ON rx.${R.id} = sx.${S.requestLogId} AND rx.${R.workspaceId} = ${ws})`,
    // The root: the earliest span without a parent (SQLite takes the bare column from the min() row).
    `roots AS (SELECT trace_id, span_name AS trace_name, min(start_time) AS root_start FROM sp WHERE parent_span_id IS NULL GROUP BY trace_id)`,
    `agg AS (
      SELECT s.trace_id, min(s.start_time) AS trace_start, max(max(s.end_time) - min(s.start_time), 0) AS trace_duration_ms,
        coalesce(sum(s.span_cost_usd), 0) AS trace_total_cost_usd, coalesce(sum(s.span_tokens), 0) AS trace_total_tokens,
        coalesce(sum(s.span_input_tokens), 0) AS trace_input_tokens, coalesce(sum(s.span_output_tokens), 0) AS trace_output_tokens,
        count(*) AS trace_span_count, CASE WHEN max(s.status_code) = 2 THEN 'error' ELSE 'ok' END AS trace_status,
        max(s.end_time) AS trace_end, sum(s.span_type = 'llm') AS trace_llm_calls, sum(s.status_code = 2) AS trace_error_spans${filter.flags
          .map((c, k) => `,\n        max(CASE WHEN ${c} THEN 1 ELSE 0 END) AS f${k}`)
          .join("")}
      FROM sp AS s GROUP BY s.trace_id)`,
  ];
  if (depth) {
    // From each span without a stored parent, one index seek per level (spans_workspace_parent).
    ctes.push(
      `chain(trace_id, span_id, d) AS (
        SELECT trace_id, span_id, 1 FROM sp
        WHERE parent_span_id IS NULL OR NOT EXISTS (SELECT 1 FROM ${SPANS} AS px WHERE px.${S.workspaceId} = ${ws} AND px.${S.traceId} = sp.trace_id AND px.${S.spanId} = sp.parent_span_id)
        UNION ALL
        SELECT c.${S.traceId}, c.${S.spanId}, chain.d + 1 FROM chain CROSS JOIN ${SPANS} AS c ON c.${S.workspaceId} = ${ws} AND c.${S.traceId} = chain.trace_id AND c.${S.parentSpanId} = chain.span_id
        WHERE chain.d < ${MAX_DEPTH})`,
      `depths AS (SELECT trace_id, max(d) AS trace_depth FROM chain GROUP BY trace_id)`,
    );
  }
  ctes.push(
    `tr AS (SELECT a.*, roots.trace_name, ${depth ? "coalesce(d.trace_depth, 0)" : "NULL"} AS trace_depth
      FROM agg AS a LEFT JOIN roots ON roots.trace_id = a.trace_id${depth ? " LEFT JOIN depths AS d ON d.trace_id = a.trace_id" : ""})`,
  );
  return ctes;
}

/** One chart's statement over the window. */
export function chartQuery(chart: TraceChartSpec, level: Level, group: TraceFilterGroup | null, workspaceId: number, windowJson: string, interval: ChartInterval) {
  const p = new SqlParams();
  const ws = p.add(workspaceId);
  const win = p.add(windowJson);
  const filter = compileTraceFilter(group, level, p);
  const series = seriesOf(chart);
  const fields = summedFields(chart);
  const own = series.find((s) => needsOwnField(s, TRACE_CHART_FIELDS))?.metricField ?? null;
  const exact = series.some((s) => s.metric === "percentile");
  const named = new Set<string>([...fields, ...groupFieldsOf(chart), ...(chart.histogramField ? [chart.histogramField] : []), ...fieldsOfGroup(group)]);
  const depth = named.has("trace_depth");

  const ctes = traceRowCtes(ws, win, filter, depth);
  ctes.push(
    level === "trace" ? `items AS (SELECT t.* FROM tr AS t WHERE ${filter.where})` : `items AS (SELECT s.* FROM sp AS s JOIN tr AS t ON t.trace_id = s.trace_id WHERE ${filter.where})`,
  );

  const joins: string[] = [];
  const where: string[] = [];
  const groupExprs = groupFieldsOf(chart).map((f, k) => {
    const set = SET_GROUPS[f];
    if (set) {
      joins.push(`JOIN (SELECT DISTINCT trace_id, ${set} AS v FROM sp WHERE ${set} IS NOT NULL) AS g${k} ON g${k}.trace_id = i.trace_id`);
      return `g${k}.v`;
    }
    if (OPTIONAL_SPAN_GROUPS.has(f)) where.push(`i.${f} IS NOT NULL`);
    return `i.${f}`;
  });

  let bin = "NULL";
  let width = "NULL";
  if (chart.chartType === "histogram") {
    const h: TraceMetricField = chart.histogramField!;
    const limit = chart.limit ?? 25;
    if (chart.histogramInterval != null) width = p.add(chart.histogramInterval);
    else {
      ctes.push(`bw AS (SELECT ${autoWidthSql(`coalesce(max(max(${h}, 0)), 0)`, Math.min(limit, HISTOGRAM_AUTO_BINS), WHOLE_FIELDS.has(h))} AS w FROM items)`);
      width = "(SELECT w FROM bw)";
    }
    bin = `CAST(min(max(i.${h}, 0) * 1.0 / ${width}, ${limit - 1}) AS INTEGER)`;
    where.push(`i.${h} IS NOT NULL`);
  }
  const v = own ? `i.${own}` : "NULL";
  const columns = [
    `${groupExprs[0] ?? "NULL"} AS grp`,
    ...groupExprs.slice(1).map((e, k) => `${e} AS gp${k}`),
    `${chart.timeSeries ? periodSql(interval, "i.trace_start") : "0"} AS hour`,
    `${bin} AS bin`,
    `${width} AS bw`,
    `${exact ? v : "NULL"} AS pv`,
    "count(*) AS n",
    ...fields.flatMap((f, k) => [`sum(i.${f}) AS s${k}`, `count(i.${f}) AS c${k}`]),
    `min(${v}) AS vmin`,
    `max(${v}) AS vmax`,
  ];
  const groupBy = ["grp", ...groupExprs.slice(1).map((_, k) => `gp${k}`), "hour", "bin", "pv"];
  const sql = `WITH RECURSIVE ${ctes.join(",\n")}
    SELECT ${columns.join(", ")} FROM items AS i ${joins.join(" ")} ${where.length ? `WHERE ${where.join(" AND ")}` : ""} GROUP BY ${groupBy.join(", ")}`;
  return { sql, params: p.values };
}
