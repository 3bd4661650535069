// POST /api/public/v2/requests/analytics. Whole hours inside the asked range come from the hourly
// rollups (kept exact by a trigger on request_logs) when every filter is one the rollups carry
// (model, provider, prompt, status, and top-level time bounds); the partial hours at the
// range's edges, and any query with other filters or free text, read the matching logs themselves.
// Either way the answer counts exactly the matching logs; only percentiles come from histograms.
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import { promptTemplates } from "../db/schema";
import { compileFilterGroup, compileRequestLogQuery, isGroup, SqlParams, type Filter, type FilterGroup } from "../filters";
import { bucketSql } from "../analytics/latency-buckets";
import { intervalFor, summarize, type GroupedRow } from "../analytics/summarize";
import { filterEstimates } from "./request-search";

const HOUR = 3_600_000;
/** Fields the rollups hold under the logs' own column names. */
const ROLLUP_FIELDS = new Set(["engine", "provider_type", "prompt_id", "status"]);
const TIME_BOUNDS = new Set(["gt", "gte", "after", "lt", "lte", "before", "between"]);

export interface AnalyticsInput {
  filter_group?: FilterGroup | null;
  q?: string | null;
}

interface Plan {
  /** Whole hours [from, to) read from the rollups; null when the rollups cannot serve the query. */
  inner: { from: number; to: number } | null;
  /** The filters other than the time bounds, for the rollup query. */
  rest: FilterGroup | null;
  from: number | null;
  to: number | null;
}

/** How the query splits between rollups and logs (exported for its tests). */
export function planAnalytics(input: AnalyticsInput): Plan {
  const group = input.filter_group;
  const top = group?.filters ?? [];
  // Alternatives (OR) cannot be split by time: the logs answer them whole.
  if (group && group.logic === "OR" && top.length > 1) return { inner: null, rest: null, from: null, to: null };
  let from: number | null = null;
  let fromStrict = false;
  let to: number | null = null;
  const rest: (Filter | FilterGroup)[] = [];
  const onRollups = (f: Filter | FilterGroup): boolean => (isGroup(f) ? f.filters.every(onRollups) : ROLLUP_FIELDS.has(f.field));
  let servable = !input.q;
  for (const f of top) {
    if (!isGroup(f) && f.field === "request_start_time" && TIME_BOUNDS.has(f.operator)) {
      const v = f.value as number | number[];
      const strict = f.operator === "gt" || f.operator === "after";
      const lo = f.operator === "between" ? (v as number[])[0] : ["gt", "gte", "after"].includes(f.operator) ? (v as number) : null;
      const hi = f.operator === "between" ? (v as number[])[1] : ["lt", "lte", "before"].includes(f.operator) ? (v as number) : null;
      if (lo !== null && (from === null || lo > from)) [from, fromStrict] = [lo, strict];
      else if (lo !== null && lo === from) fromStrict ||= strict;
      if (hi !== null && (to === null || hi < to)) to = hi;
      continue;
    }
    if (!onRollups(f)) servable = false;
    rest.push(f);
  }
  if (!servable) return { inner: null, rest: null, from, to };
  // A whole hour is inside the range when every instant of it is: from the first hour starting at
  // or after `from` (after it, for a strict bound) up to the hour holding `to`, which the logs answer.
  const start = from === null ? Number.MIN_SAFE_INTEGER : Math.ceil((from + (fromStrict ? 1 : 0)) / HOUR) * HOUR;
  const end = to === null ? Number.MAX_SAFE_INTEGER : Math.floor(to / HOUR) * HOUR;
  return { inner: start < end ? { from: start, to: end } : null, rest: rest.length ? { logic: "AND", filters: rest } : null, from, to };
}

const LATENCY = "max(r.request_end_time - r.request_start_time, 0)";
const GROUP_COLUMNS = "hour, model, provider, prompt_id, status, error_type, bucket";

/** The matching logs grouped by hour, model, provider, prompt, status, error type and latency bucket. */
export async function groupedRows(d1: D1Database, workspaceId: number, input: AnalyticsInput): Promise<{ rows: GroupedRow[]; plan: Plan }> {
  const plan = planAnalytics(input);
  const statements: D1PreparedStatement[] = [];

  if (plan.inner) {
    const params = new SqlParams();
    const ws = params.add(workspaceId);
    const conds = [`r.workspace_id = ${ws}`, `r.hour >= ${params.add(plan.inner.from)}`, `r.hour < ${params.add(plan.inner.to)}`];
    if (plan.rest) conds.push(compileFilterGroup(plan.rest, { params, workspace: ws }));
    statements.push(
      d1
        .prepare(
          `SELECT r.hour AS hour, r.model AS model, r.provider AS provider, r.prompt_id AS prompt_id, r.status AS status, r.error_type AS error_type,
                  r.latency_bucket AS bucket, sum(r.requests) AS requests, sum(r.input_tokens) AS input_tokens, sum(r.output_tokens) AS output_tokens,
                  sum(r.cost) AS cost, sum(r.latency_ms) AS latency_ms
           FROM request_log_rollups AS r WHERE ${conds.join(" AND ")} GROUP BY ${GROUP_COLUMNS}`,
        )
        .bind(...params.values),
    );
  }

  // The logs the rollups did not answer for: the edges of the range, or everything.
  const params = new SqlParams();
  const ws = params.add(workspaceId);
  const estimate = await filterEstimates(d1, workspaceId, input.filter_group);
  let where = compileRequestLogQuery({ filter_group: input.filter_group, q: input.q }, { params, workspace: ws, estimate });
  if (plan.inner) where += ` AND NOT (r.request_start_time >= ${params.add(plan.inner.from)} AND r.request_start_time < ${params.add(plan.inner.to)})`;
  statements.push(
    d1
      .prepare(
        `SELECT r.request_start_time - (r.request_start_time % ${HOUR}) AS hour, r.model AS model, r.provider AS provider, r.prompt_id AS prompt_id,
                r.status AS status, r.error_type AS error_type, ${bucketSql(LATENCY)} AS bucket, count(*) AS requests,
                sum(r.input_tokens) AS input_tokens, sum(r.output_tokens) AS output_tokens, sum(r.price) AS cost, sum(${LATENCY}) AS latency_ms
         FROM request_logs AS r WHERE ${where} GROUP BY ${GROUP_COLUMNS}`,
      )
      .bind(...params.values),
  );

  const results = await d1.batch<GroupedRow>(statements);
  return { rows: results.flatMap((r) => r.results), plan };
}

export async function requestAnalytics(db: Db, d1: D1Database, workspaceId: number, input: AnalyticsInput) {
  const { rows, plan } = await groupedRows(d1, workspaceId, input);
  const promptIds = [...new Set(rows.map((r) => r.prompt_id).filter((id): id is number => id !== null))];
  const names = new Map<number, string>();
  for (let i = 0; i < promptIds.length; i += 90) {
    const found = await db
      .select({ id: promptTemplates.id, name: promptTemplates.name })
      .from(promptTemplates)
      .where(and(eq(promptTemplates.workspaceId, workspaceId), inArray(promptTemplates.id, promptIds.slice(i, i + 90))));
    for (const f of found) names.set(f.id, f.name);
  }
  return summarize(rows, intervalFor(plan.from, plan.to, rows), names);
}
