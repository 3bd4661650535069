// POST /api/public/v2/requests/analytics. Whole UTC days inside the asked range come from
// request_log_daily (totals per day and dimension, kept exact by a trigger on request_logs) when the
// only filters are top-level request_start_time bounds; the partial days at the range's edges, short
// ranges drawn by the hour, and queries with other filters or free text read the matching logs.
// Either way every count and sum is exact, computed inside the database; only percentiles come from
// latency histograms.
import { d1Of, type Db } from "../db/client";
import { compileRequestLogQuery, isGroup, SqlParams, type CompileContext, type FilterGroup } from "../filters";
import { bucketSql } from "../analytics/latency-buckets";
import { intervalOf, summarize, type Interval, type Views } from "../analytics/summarize";
import { promptNames } from "./prompt-names";
import { filterEstimates } from "./search";
import { runBatch } from "../db/batch";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const TIME_BOUNDS = new Set(["gt", "gte", "after", "lt", "lte", "before", "between"]);
/** Per-period series by model, provider and prompt are drawn for the busiest few. */
export const SERIES_TOP = 10;
/** Breakdown lists (models, providers, prompts) stop at this many entries. */
export const BREAKDOWN_TOP = 50;

export interface AnalyticsInput {
  filter_group?: FilterGroup | null;
  q?: string | null;
}

export interface Plan {
  /** Whole days [from, to) read from request_log_daily; null when the logs answer everything. */
  inner: { from: number; to: number } | null;
  from: number | null;
  to: number | null;
  interval: Interval;
}

/** How a query splits between the daily totals and the logs (exported for its tests). */
export function planAnalytics(input: AnalyticsInput): Plan {
  const group = input.filter_group;
  const top = group?.filters ?? [];
  let from: number | null = null;
  let fromStrict = false;
  let to: number | null = null;
  let onlyTime = !input.q && (!group || group.logic === "AND" || top.length <= 1);
  for (const f of top) {
    if (isGroup(f) || f.field !== "request_start_time" || !TIME_BOUNDS.has(f.operator) || (group!.logic === "OR" && top.length > 1)) {
      onlyTime = false;
      continue;
    }
    const v = f.value as number | number[];
    const strict = f.operator === "gt" || f.operator === "after";
    const lo = f.operator === "between" ? (v as number[])[0] : ["gt", "gte", "after"].includes(f.operator) ? (v as number) : null;
    const hi = f.operator === "between" ? (v as number[])[1] : ["lt", "lte", "before"].includes(f.operator) ? (v as number) : null;
    if (lo !== null && (from === null || lo > from)) [from, fromStrict] = [lo, strict];
    else if (lo !== null && lo === from) fromStrict ||= strict;
    if (hi !== null && (to === null || hi < to)) to = hi;
  }
  if (group && group.logic === "OR" && top.length > 1) [from, to] = [null, null];
  const interval = intervalOf(from, to);
  if (!onlyTime || interval === "hour") return { inner: null, from, to, interval };
  // A whole day is inside the range when every instant of it is: from the first day starting at or
  // after `from` (after it, for a strict bound) up to the day holding `to`, which the logs answer.
  const start = from === null ? Number.MIN_SAFE_INTEGER : Math.ceil((from + (fromStrict ? 1 : 0)) / DAY) * DAY;
  const end = to === null ? Number.MAX_SAFE_INTEGER : Math.floor(to / DAY) * DAY;
  return { inner: start < end ? { from: start, to: end } : null, from, to, interval };
}

export type Estimate = CompileContext["estimate"];

const LATENCY = "max(r.request_end_time - r.request_start_time, 0)";
export type Dim = "all" | "model" | "provider" | "prompt" | "status";
/** How the logs give each dimension's key and bucket, the way the trigger writes them. */
const LOG_KEY: Record<Dim, { key: string; bucket: string }> = {
  all: { key: "''", bucket: bucketSql(LATENCY) },
  model: { key: "r.model", bucket: bucketSql(LATENCY) },
  provider: { key: "r.provider", bucket: bucketSql(LATENCY) },
  prompt: { key: "CAST(r.prompt_id AS TEXT)", bucket: "-1" },
  status: { key: "r.status || '|' || coalesce(r.error_type, '')", bucket: "-1" },
};

/**
 * One dimension of the matching logs as an SQL source of (period, key, bucket, counts) rows: the
 * daily totals for whole days inside the range, one row per log for the rest.
 */
export function dimensionSource(workspaceId: number, input: AnalyticsInput, plan: Plan, dim: Dim, params: SqlParams, estimate: Estimate): string {
  const ws = params.add(workspaceId);
  const parts: string[] = [];
  const period = plan.interval === "day" ? `(r.request_start_time - (r.request_start_time % ${DAY}))` : `(r.request_start_time - (r.request_start_time % ${HOUR}))`;
  if (plan.inner) {
    parts.push(`SELECT r.day AS period, r.key AS key, r.bucket AS bucket, r.requests AS requests, r.input_tokens AS input_tokens, r.output_tokens AS output_tokens,
        r.cost AS cost, r.latency_ms AS latency_ms
      FROM request_log_daily AS r WHERE r.workspace_id = ${ws} AND r.dim = '${dim}' AND r.day >= ${params.add(plan.inner.from)} AND r.day < ${params.add(plan.inner.to)}`);
  }
  let where = compileRequestLogQuery({ filter_group: input.filter_group, q: input.q }, { params, workspace: ws, estimate });
  if (plan.inner) where += ` AND NOT (r.request_start_time >= ${params.add(plan.inner.from)} AND r.request_start_time < ${params.add(plan.inner.to)})`;
  if (dim === "prompt") where += " AND r.prompt_id IS NOT NULL";
  parts.push(`SELECT ${period} AS period, ${LOG_KEY[dim].key} AS key, ${LOG_KEY[dim].bucket} AS bucket, 1 AS requests, r.input_tokens AS input_tokens,
      r.output_tokens AS output_tokens, r.price AS cost, ${LATENCY} AS latency_ms
    FROM request_logs AS r WHERE ${where}`);
  return parts.join(" UNION ALL ");
}

export const SUMS = "sum(requests) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost) AS cost, sum(latency_ms) AS latency_ms";

/** `db` is the control database (prompt names), `logs` the workspace's log database. */
export async function requestAnalytics(db: Db, logs: Db, workspaceId: number, input: AnalyticsInput) {
  // Compiled statements (src/filters/ and the analytics plan): their numbered parameters are shared, which drizzle's sql cannot express.
  const d1 = d1Of(logs);
  const plan = planAnalytics(input);
  const estimate = await filterEstimates(logs, workspaceId, input.filter_group);
  const statement = (dim: Dim, query: string) => {
    const params = new SqlParams();
    const source = dimensionSource(workspaceId, input, plan, dim, params, estimate);
    return d1.prepare(`WITH src AS (${source}) ${query}`).bind(...params.values);
  };
  const busiest = `key IN (SELECT key FROM src GROUP BY key ORDER BY sum(requests) DESC, key LIMIT ${SERIES_TOP})`;
  const queries: [keyof Views, Dim, string][] = [
    ["all", "all", `SELECT period, bucket, ${SUMS} FROM src GROUP BY 1, 2`],
    ["status", "status", `SELECT period, key, ${SUMS} FROM src GROUP BY 1, 2`],
    ...(["model", "provider", "prompt"] as const).flatMap((dim): [keyof Views, Dim, string][] => [
      [`${dim}Totals`, dim, `SELECT key, ${SUMS} FROM src GROUP BY 1 ORDER BY requests DESC, key LIMIT ${BREAKDOWN_TOP}`],
      [`${dim}Series`, dim, `SELECT period, key, bucket, ${SUMS} FROM src WHERE ${busiest} GROUP BY 1, 2, 3`],
    ]),
  ];
  const results = await runBatch(logs, queries.map(([, dim, q]) => statement(dim, q)));
  const views = Object.fromEntries(queries.map(([name], i) => [name, results[i].results])) as unknown as Views;
  const names = await promptNames(db, workspaceId, views.promptTotals.map((r) => Number(r.key)));
  return summarize(views, plan.interval, names);
}
