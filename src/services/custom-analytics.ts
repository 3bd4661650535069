// POST /api/public/v2/requests/analytics/custom-analytics: charts over the logs a filter group
// selects. Charts made of counts, sums, averages and latency percentiles by model, provider, prompt,
// status or error type share one read of the grouped rows (rollups for whole hours, as analytics
// does); the others (min, max, prompt_version_number, side-table groupings) read the logs per chart.
import { compileRequestLogQuery, SqlParams } from "../filters";
import { bucketSql } from "../analytics/latency-buckets";
import { chartProblem, drawChart, needsOwnField, seriesOf, servedBySums, type ChartSpec, type GroupField, type MetricField, type Observation } from "../analytics/custom-charts";
import { intervalFor, type GroupedRow } from "../analytics/summarize";
import { ApiError } from "../lib/errors";
import { groupedRows, planAnalytics, type AnalyticsInput } from "./request-analytics";
import { filterEstimates } from "./request-search";

const HOUR = 3_600_000;
const LATENCY = "max(r.request_end_time - r.request_start_time, 0)";

const ROW_GROUP: Partial<Record<GroupField, (r: GroupedRow) => string | null>> = {
  engine: (r) => r.model,
  provider_type: (r) => r.provider,
  prompt_id: (r) => (r.prompt_id === null ? null : String(r.prompt_id)),
  status: (r) => r.status,
  error_type: (r) => r.error_type,
};

const COLUMN_GROUP: Partial<Record<GroupField, string>> = {
  engine: "r.model",
  provider_type: "r.provider",
  prompt_id: "CAST(r.prompt_id AS TEXT)",
  prompt_version_number: "CAST(r.prompt_version_number AS TEXT)",
  status: "r.status",
  error_type: "r.error_type",
};
/** Groupings read from the search side table: which kind of row, and whether its key or value names the group. */
const SIDE_GROUP: Partial<Record<GroupField, { kind: string; by: "key" | "value" }>> = {
  tags: { kind: "tag", by: "value" },
  tool_names: { kind: "tool", by: "value" },
  metadata_keys: { kind: "metadata", by: "key" },
  input_variable_keys: { kind: "input_variable", by: "key" },
  output_keys: { kind: "output", by: "key" },
};
const FIELD_SQL: Partial<Record<MetricField, string>> = {
  input_tokens: "r.input_tokens",
  output_tokens: "r.output_tokens",
  cost: "r.price",
  latency_ms: LATENCY,
  prompt_version_number: "r.prompt_version_number",
};

export async function customAnalytics(d1: D1Database, workspaceId: number, input: AnalyticsInput & { customCharts: ChartSpec[] }) {
  const ids = new Set<string>();
  input.customCharts.forEach((chart, i) => {
    if (ids.has(chart.id)) throw new ApiError("validation_error", `customCharts.${i}.id: ${chart.id} is used twice`);
    ids.add(chart.id);
    const problem = chartProblem(chart);
    if (problem) throw new ApiError("validation_error", `customCharts.${i}.${problem}`);
  });

  let shared: Promise<Awaited<ReturnType<typeof groupedRows>>> | undefined;
  const observations = await Promise.all(
    input.customCharts.map(async (chart): Promise<Observation[]> => {
      if (servedBySums(chart)) {
        shared ??= groupedRows(d1, workspaceId, input);
        const { rows } = await shared;
        const group = chart.groupByField ? ROW_GROUP[chart.groupByField]! : () => null;
        return rows.map((r) => ({ ...r, group: group(r) }));
      }
      return logObservations(d1, workspaceId, input, chart);
    }),
  );
  const plan = planAnalytics(input);
  const hours = observations.flat().map((o) => ({ hour: o.hour }) as GroupedRow);
  const interval = intervalFor(plan.from, plan.to, hours);
  return { success: true as const, customCharts: input.customCharts.map((chart, i) => drawChart(chart, observations[i], interval)) };
}

async function logObservations(d1: D1Database, workspaceId: number, input: AnalyticsInput, chart: ChartSpec): Promise<Observation[]> {
  const params = new SqlParams();
  const ws = params.add(workspaceId);
  const estimate = await filterEstimates(d1, workspaceId, input.filter_group);
  const where = compileRequestLogQuery({ filter_group: input.filter_group, q: input.q }, { params, workspace: ws, estimate });
  let join = "";
  let group = "NULL";
  if (chart.groupByMetadataKey) {
    join = `JOIN request_log_values AS v ON v.workspace_id = ${ws} AND v.kind = 'metadata' AND v.key = ${params.add(chart.groupByMetadataKey)} AND v.request_id = r.id`;
    group = "v.value";
  } else if (chart.groupByField && SIDE_GROUP[chart.groupByField]) {
    const side = SIDE_GROUP[chart.groupByField]!;
    join = `JOIN request_log_values AS v ON v.workspace_id = ${ws} AND v.kind = '${side.kind}' AND v.request_id = r.id`;
    group = `v.${side.by}`;
  } else if (chart.groupByField) {
    group = COLUMN_GROUP[chart.groupByField]!;
  }
  const field = seriesOf(chart).find((s) => needsOwnField(s))?.metricField;
  const v = field ? FIELD_SQL[field]! : "NULL";
  const sql = `SELECT ${group} AS grp, r.request_start_time - (r.request_start_time % ${HOUR}) AS hour, ${bucketSql(LATENCY)} AS bucket, count(*) AS requests,
      sum(r.input_tokens) AS input_tokens, sum(r.output_tokens) AS output_tokens, sum(r.price) AS cost, sum(${LATENCY}) AS latency_ms,
      min(${v}) AS vmin, max(${v}) AS vmax, sum(${v}) AS vsum, count(${v}) AS vcount
    FROM request_logs AS r ${join} WHERE ${where} GROUP BY grp, hour, bucket`;
  const { results } = await d1.prepare(sql).bind(...params.values).all<Observation & { grp: string | null }>();
  return results.map((r) => ({ ...r, group: r.grp }));
}
