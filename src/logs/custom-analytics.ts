// POST /api/public/v2/requests/analytics/custom-analytics: charts over the logs a filter group
// selects. Charts made of counts, sums, averages and latency percentiles by model, provider, prompt,
// status or error type share one read of the grouped rows (rollups for whole hours, as analytics
// does); the others (min, max, prompt_version_number, groupings by keyed values) read the logs per chart.
import { getTableName } from "drizzle-orm";
import { d1Of, type Db } from "../db/client";
import { requestLogs, signalResults } from "../db/schema";
import { columnNames } from "../db/sql";
import { compileRequestLogQuery, indexedSql, SqlParams, valueSources } from "../filters";
import { bucketSql } from "../analytics/latency-buckets";
import {
  chartProblem,
  drawChart,
  logObservation,
  needsOwnField,
  isSignalField,
  REQUEST_LOG_CHART_FIELDS,
  SIGNAL_FIELD_PREFIX,
  seriesOf,
  servedBySums,
  type ChartSpec,
  type GroupField,
  type MetricField,
  type Observation,
} from "../analytics/custom-charts";
import type { Interval } from "../analytics/summarize";
import { ApiError } from "../lib/errors";
import { dimensionSource, LATENCY, planAnalytics, SUMS, type AnalyticsInput, type Dim, type Estimate, type Plan } from "./analytics";
import { filterEstimates } from "./search";
import { filterSignalIds } from "./signal-names";
import { eachPeriod, type WorkspaceLogs } from "./periods";

const HOUR = 3_600_000;
const R = columnNames(requestLogs);

/** Groupings the daily totals carry: which dimension, and the group from its key. */
const DIM_GROUP: Partial<Record<GroupField, { dim: Dim; group: string }>> = {
  engine: { dim: "model", group: "key" },
  provider_type: { dim: "provider", group: "key" },
  prompt_id: { dim: "prompt", group: "key" },
  status: { dim: "status", group: "substr(key, 1, instr(key, '|') - 1)" },
  error_type: { dim: "status", group: "nullif(substr(key, instr(key, '|') + 1), '')" },
};

const COLUMN_GROUP: Partial<Record<GroupField, string>> = {
  engine: `r.${R.model}`,
  provider_type: `r.${R.provider}`,
  prompt_id: `CAST(r.${R.promptId} AS TEXT)`,
  prompt_version_number: `CAST(r.${R.promptVersionNumber} AS TEXT)`,
  status: `r.${R.status}`,
  error_type: `r.${R.errorType}`,
  // The A/B variant that served the log (narrow to one release with an ab_test_id filter).
  ab_variant: `r.${R.abVariant}`,
};
/** Groupings read from the logs' keyed search values: which kind, and whether its key or value names the group. */
const SIDE_GROUP: Partial<Record<GroupField, { kind: string; by: "key" | "value" }>> = {
  tags: { kind: "tag", by: "value" },
  tool_names: { kind: "tool", by: "value" },
  metadata_keys: { kind: "metadata", by: "key" },
  input_variable_keys: { kind: "input_variable", by: "key" },
  output_keys: { kind: "output", by: "key" },
};
const SR = columnNames(signalResults);
const RESULTS = getTableName(signalResults);
const FIELD_SQL: Partial<Record<MetricField, string>> = {
  input_tokens: `r.${R.inputTokens}`,
  output_tokens: `r.${R.outputTokens}`,
  cost: `r.${R.price}`,
  latency_ms: LATENCY,
  prompt_version_number: `r.${R.promptVersionNumber}`,
};

/** The request-log charts: bars, lines and areas. */
type RequestLogChart = ChartSpec & { chartType: "bar" | "line" | "area" };

/** What a chart's `signal:<name>` field reads: the log's verdict of that signal (1, 0; null without an ok one), by its key. */
function signalFieldSql(field: string, signals: ReadonlyMap<string, number>, params: SqlParams): string {
  const id = signals.get(field.slice(SIGNAL_FIELD_PREFIX.length));
  if (id === undefined) throw new Error(`signal field ${field} was not resolved`);
  return `(SELECT s.${SR.result} FROM ${RESULTS} AS s WHERE s.${SR.requestId} = r.${R.id} AND s.${SR.signalId} = ${params.add(id)})`;
}

/**
 * The charts over the workspace's logs: each database's observations (every period's), drawn together.
 * `signals`: the id of each signal a `signal:<name>` field names (resolved by the caller, which owns them).
 */
export async function customAnalytics(logs: WorkspaceLogs, workspaceId: number, input: AnalyticsInput & { customCharts: RequestLogChart[]; signals?: ReadonlyMap<string, number> }) {
  // Compiled statements (src/filters/ and the analytics plan): their numbered parameters are shared, which drizzle's sql cannot express.
  const ids = new Set<string>();
  input.customCharts.forEach((chart, i) => {
    if (ids.has(chart.id)) throw new ApiError("validation_error", `customCharts.${i}.id: ${chart.id} is used twice`);
    ids.add(chart.id);
    const problem = chartProblem(chart, REQUEST_LOG_CHART_FIELDS);
    if (problem) throw new ApiError("validation_error", `customCharts.${i}.${problem}`);
  });

  const plan = planAnalytics(input);
  const interval = plan.interval;
  // One map of names to ids for the filter group's `signals` filters and the charts' `signal:<name>` fields.
  const signals = new Map([...(await filterSignalIds(logs.control, workspaceId, input.filter_group)), ...(input.signals ?? [])]);
  const perDb = await eachPeriod(logs, async (db) => {
    const estimate = await filterEstimates(db, workspaceId, input.filter_group);
    return Promise.all(
      input.customCharts.map((chart) =>
        servedBySums(chart) ? sourceObservations(db, workspaceId, input, plan, estimate, signals, chart) : logObservations(db, workspaceId, input, chart, interval, estimate, signals),
      ),
    );
  });
  // Observations of one group and period from several databases fold together when drawn.
  const observations = input.customCharts.map((_, i) => perDb.flatMap((charts) => charts[i]));
  return { success: true as const, customCharts: input.customCharts.map((chart, i) => drawChart(chart, observations[i], interval, REQUEST_LOG_CHART_FIELDS)) };
}

/** Counts, sums and latency histograms by group and period, aggregated in the database. */
async function sourceObservations(db: Db, workspaceId: number, input: AnalyticsInput, plan: Plan, estimate: Estimate, signals: ReadonlyMap<string, number>, chart: ChartSpec): Promise<Observation[]> {
  const d1 = d1Of(db);
  const params = new SqlParams();
  const by = chart.groupByField ? DIM_GROUP[chart.groupByField]! : { dim: "all" as const, group: "NULL" };
  const source = dimensionSource(workspaceId, input, plan, by.dim, params, estimate, signals);
  const period = chart.timeSeries ? "period" : "0";
  // Latency buckets only for a chart that draws a percentile: the others' rows are one per group and period.
  const bucket = seriesOf(chart).some((s) => s.metric === "percentile") ? "bucket" : "-1";
  const { results } = await d1
    .prepare(`WITH src AS (${source}) SELECT ${by.group} AS grp, ${period} AS hour, ${bucket} AS bucket, ${SUMS} FROM src GROUP BY 1, 2, 3`)
    .bind(...params.values)
    .all<Parameters<typeof logObservation>[0]>();
  return results.map((r) => logObservation(r));
}

const LOGS = getTableName(requestLogs);

/** The same, read from the logs, with the chart's own field's min, max and sum (and groupings by keyed values, of indexed logs). */
async function logObservations(db: Db, workspaceId: number, input: AnalyticsInput, chart: ChartSpec, interval: Interval, estimate: Estimate, signals: ReadonlyMap<string, number>): Promise<Observation[]> {
  const d1 = d1Of(db);
  const params = new SqlParams();
  const ws = params.add(workspaceId);
  const where = compileRequestLogQuery({ filter_group: input.filter_group, q: input.q }, { params, workspace: ws, estimate, signals });
  const field = seriesOf(chart).find((s) => needsOwnField(s, REQUEST_LOG_CHART_FIELDS))?.metricField;
  const v = !field ? "NULL" : isSignalField(field) ? signalFieldSql(field, signals, params) : FIELD_SQL[field]!;
  const hour = `(r.${R.requestStartTime} - (r.${R.requestStartTime} % ${HOUR}))`;
  const period = chart.timeSeries ? (interval === "day" ? `(r.${R.requestStartTime} - (r.${R.requestStartTime} % ${24 * HOUR}))` : hour) : "0";
  const aggregate = (rows: string) => `SELECT grp, hour, bucket, count(*) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost) AS cost,
      sum(latency_ms) AS latency_ms, min(fv) AS vmin, max(fv) AS vmax, sum(fv) AS vsum, count(fv) AS vcount FROM (${rows}) GROUP BY grp, hour, bucket`;
  const row = (group: string) => `${group} AS grp, ${period} AS hour, ${bucketSql(LATENCY)} AS bucket, r.${R.inputTokens} AS input_tokens, r.${R.outputTokens} AS output_tokens,
      r.${R.price} AS cost, ${LATENCY} AS latency_ms, ${v} AS fv`;
  // A log's keyed values are read from its row (valueSources: its tags or metadata column and its
  // extra_values, disjoint); as every filter on them, a grouping sees indexed logs only. DISTINCT: a
  // tag listed twice in one log counts it once.
  const bySide = (kind: string, by: "key" | "value", keyIs?: string) =>
    valueSources(kind)
      .map((src) => `SELECT DISTINCT r.${R.id} AS id, ${row(by === "key" ? src.key : src.value)} FROM ${LOGS} AS r CROSS JOIN ${src.from}
        WHERE ${where} AND ${src.where}${keyIs ? ` AND ${src.key} = ${keyIs}` : ""} AND ${indexedSql(`r.${R.id}`)}`)
      .join(" UNION ALL ");
  let sql: string;
  if (chart.groupByMetadataKey) sql = aggregate(bySide("metadata", "value", params.add(chart.groupByMetadataKey)));
  else if (chart.groupByField && SIDE_GROUP[chart.groupByField]) {
    const side = SIDE_GROUP[chart.groupByField]!;
    sql = aggregate(bySide(side.kind, side.by));
  } else sql = aggregate(`SELECT ${row(chart.groupByField ? COLUMN_GROUP[chart.groupByField]! : "NULL")} FROM ${LOGS} AS r WHERE ${where}`);
  const { results } = await d1.prepare(sql).bind(...params.values).all<Parameters<typeof logObservation>[0]>();
  return results.map((r) => logObservation(r, field));
}
