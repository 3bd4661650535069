// POST /api/public/v2/requests/analytics. Whole UTC days inside the asked range come from
// request_log_daily (totals per day and dimension, counted by the indexer: src/logs/indexing.ts) when
// the only filters are top-level request_start_time bounds, with the few logs of those days not
// counted yet read from the logs; the partial days at the range's edges, short ranges drawn by the
// hour, and queries with other filters or free text read the matching logs.
// Either way every count and sum is exact, computed inside the database; only percentiles come from
// latency histograms.
import { getTableName } from "drizzle-orm";
import { d1Of, type Db } from "../db/client";
import { logIndexState, requestLogDaily, requestLogs, requestLogUnindexed } from "../db/schema";
import { columnNames } from "../db/sql";
import { compileRequestLogQuery, isGroup, SqlParams, type CompileContext, type FilterGroup } from "../filters";
import { bucketSql } from "../analytics/latency-buckets";
import { intervalOf, summarize, type Interval, type Sums, type Views } from "../analytics/summarize";
import { promptNames } from "./prompt-names";
import { filterEstimates } from "./search";
import { filterSignalIds } from "./signal-names";
import { eachPeriod, type WorkspaceLogs } from "./periods";

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
/** The ids of the signals a filter group names (filterSignalIds). */
export type Signals = CompileContext["signals"];

const R = columnNames(requestLogs);
const D = columnNames(requestLogDaily);
/** A log `r`'s latency in milliseconds, never negative (as the daily totals count it). */
export const LATENCY = `max(r.${R.requestEndTime} - r.${R.requestStartTime}, 0)`;
export type Dim = "all" | "model" | "provider" | "prompt" | "status";
/** How the logs give each dimension's key and bucket, the way the trigger writes them. */
const LOG_KEY: Record<Dim, { key: string; bucket: string }> = {
  all: { key: "''", bucket: bucketSql(LATENCY) },
  model: { key: `r.${R.model}`, bucket: bucketSql(LATENCY) },
  provider: { key: `r.${R.provider}`, bucket: bucketSql(LATENCY) },
  prompt: { key: `CAST(r.${R.promptId} AS TEXT)`, bucket: "-1" },
  status: { key: `r.${R.status} || '|' || coalesce(r.${R.errorType}, '')`, bucket: "-1" },
};

const DAILY = getTableName(requestLogDaily);
const LOGS = getTableName(requestLogs);
const S = columnNames(logIndexState);
const U = columnNames(requestLogUnindexed);
const COUNTED_TO = `(SELECT st.${S.countedTo} FROM ${getTableName(logIndexState)} AS st WHERE st.${S.id} = 1)`;
/**
 * FROM the logs the daily totals do not count yet (alias r): past the counted watermark, or listed
 * from before it (indexing.ts, countDaily). Their ids are the outer loop (CROSS JOIN): a few logs, read
 * by id, never the days' logs tested one by one.
 */
const UNCOUNTED_LOGS = `(SELECT ${R.id} AS id FROM ${LOGS} WHERE ${R.id} > ${COUNTED_TO}
    UNION ALL SELECT ix.${U.requestId} FROM ${getTableName(requestLogUnindexed)} AS ix WHERE ix.${U.requestId} <= ${COUNTED_TO}) AS p CROSS JOIN ${LOGS} AS r ON r.${R.id} = p.id`;

/**
 * One dimension of the matching logs as an SQL source of (period, key, bucket, counts) rows: the
 * daily totals for whole days inside the range (and the logs of those days they do not count yet), one
 * row per log for the rest.
 */

export function dimensionSource(workspaceId: number, input: AnalyticsInput, plan: Plan, dim: Dim, params: SqlParams, estimate: Estimate, signals: Signals): string {
  const ws = params.add(workspaceId);
  const parts: string[] = [];
  const period = plan.interval === "day" ? `(r.${R.requestStartTime} - (r.${R.requestStartTime} % ${DAY}))` : `(r.${R.requestStartTime} - (r.${R.requestStartTime} % ${HOUR}))`;
  if (plan.inner) {
    parts.push(`SELECT r.${D.day} AS period, r.${D.key} AS key, r.${D.bucket} AS bucket, r.${D.requests} AS requests, r.${D.inputTokens} AS input_tokens, r.${D.outputTokens} AS output_tokens,
        r.${D.cost} AS cost, r.${D.latencyMs} AS latency_ms
      FROM ${DAILY} AS r WHERE r.${D.workspaceId} = ${ws} AND r.${D.dim} = '${dim}' AND r.${D.day} >= ${params.add(plan.inner.from)} AND r.${D.day} < ${params.add(plan.inner.to)}`);
  }
  const filtered = compileRequestLogQuery({ filter_group: input.filter_group, q: input.q }, { params, workspace: ws, estimate, signals }) + (dim === "prompt" ? ` AND r.${R.promptId} IS NOT NULL` : "");
  const logRows = (from: string, where: string) => `SELECT ${period} AS period, ${LOG_KEY[dim].key} AS key, ${LOG_KEY[dim].bucket} AS bucket, 1 AS requests, r.${R.inputTokens} AS input_tokens,
      r.${R.outputTokens} AS output_tokens, r.${R.price} AS cost, ${LATENCY} AS latency_ms
    FROM ${from} WHERE ${where}`;
  if (!plan.inner) parts.push(logRows(`${LOGS} AS r`, filtered));
  else {
    const inside = `r.${R.requestStartTime} >= ${params.add(plan.inner.from)} AND r.${R.requestStartTime} < ${params.add(plan.inner.to)}`;
    parts.push(logRows(`${LOGS} AS r`, `${filtered} AND NOT (${inside})`), logRows(UNCOUNTED_LOGS, `${filtered} AND ${inside}`));
  }
  return parts.join(" UNION ALL ");
}

export const SUMS = "sum(requests) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost) AS cost, sum(latency_ms) AS latency_ms";

type Row = Sums & Record<string, number | string>;
const SUM_FIELDS = ["requests", "input_tokens", "output_tokens", "cost", "latency_ms"] as const;

/** Rows of several databases as one: the sums of the rows that share every other column. */
export function sumRows<R extends Row>(parts: readonly (readonly R[])[]): R[] {
  const out = new Map<string, R>();
  for (const rows of parts) {
    for (const r of rows) {
      const key = JSON.stringify(Object.entries(r).filter(([c]) => !(SUM_FIELDS as readonly string[]).includes(c)));
      const had = out.get(key);
      if (!had) out.set(key, { ...r });
      else for (const f of SUM_FIELDS) (had as Sums)[f] += r[f];
    }
  }
  return [...out.values()];
}

const byRequests = (a: Row, b: Row) => b.requests - a.requests || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** `db` is the control database (prompt names), `logs` the workspace's log databases. */
export async function requestAnalytics(db: Db, logs: WorkspaceLogs, workspaceId: number, input: AnalyticsInput) {
  const plan = planAnalytics(input);
  const signals = await filterSignalIds(logs.control, workspaceId, input.filter_group);
  const views = logs.spread ? await periodViews(logs, workspaceId, input, plan, signals) : await viewsOf(logs.current, workspaceId, input, plan, signals);
  const names = await promptNames(db, workspaceId, views.promptTotals.map((r) => Number(r.key)));
  return summarize(views, plan.interval, names);
}

/** The dimensions whose daily rows (and so their sources) split by latency bucket. */
const BUCKETED: ReadonlySet<Dim> = new Set(["all", "model", "provider"]);

/**
 * Runs `queries` on one database in one statement. The matching logs the daily totals do not answer
 * are read once (lg, materialized: every dimension's key and the latency bucket of each). A query reads
 * its dimension's rows by name: "src", the daily rows and those logs together (as dimensionSource gives
 * them); "daily" and "logs", the two apart ("daily" is empty when the logs answer everything); "tot",
 * src's totals per key (key and the sums), grouped once however many queries read them. It gives the
 * columns period, key, bucket and the sums (NULL where it has none), and may bind `extra` where it says
 * ?extra. Before, each query was a statement of its own that read the logs and the daily rows again:
 * eight reads of the same rows per answer.
 */
async function runViews(logs: Db, workspaceId: number, input: AnalyticsInput, plan: Plan, signals: Signals, queries: ViewQuery[]) {
  // Compiled statements (src/filters/ and the analytics plan): their numbered parameters are shared, which drizzle's sql cannot express.
  const estimate = await filterEstimates(logs, workspaceId, input.filter_group);
  const params = new SqlParams();
  const ws = params.add(workspaceId);
  const period = plan.interval === "day" ? `(r.${R.requestStartTime} - (r.${R.requestStartTime} % ${DAY}))` : `(r.${R.requestStartTime} - (r.${R.requestStartTime} % ${HOUR}))`;
  const filtered = compileRequestLogQuery({ filter_group: input.filter_group, q: input.q }, { params, workspace: ws, estimate, signals });
  const columns = `${period} AS period, ${(Object.keys(LOG_KEY) as Dim[]).map((d) => `${LOG_KEY[d].key} AS k_${d}`).join(", ")}, ${bucketSql(LATENCY)} AS b,
      r.${R.inputTokens} AS input_tokens, r.${R.outputTokens} AS output_tokens, r.${R.price} AS cost, ${LATENCY} AS latency_ms`;
  let daily = (_dim: Dim) => `SELECT NULL AS period, NULL AS key, NULL AS bucket, 0 AS requests, 0 AS input_tokens, 0 AS output_tokens, 0 AS cost, 0 AS latency_ms WHERE false`;
  let wheres = [`${LOGS} AS r WHERE ${filtered}`];
  if (plan.inner) {
    const [from, to] = [params.add(plan.inner.from), params.add(plan.inner.to)];
    const inside = `r.${R.requestStartTime} >= ${from} AND r.${R.requestStartTime} < ${to}`;
    wheres = [`${LOGS} AS r WHERE ${filtered} AND NOT (${inside})`, `${UNCOUNTED_LOGS} WHERE ${filtered} AND ${inside}`];
    daily = (dim) => `SELECT d.${D.day} AS period, d.${D.key} AS key, d.${D.bucket} AS bucket, d.${D.requests} AS requests, d.${D.inputTokens} AS input_tokens,
        d.${D.outputTokens} AS output_tokens, d.${D.cost} AS cost, d.${D.latencyMs} AS latency_ms
      FROM ${DAILY} AS d WHERE d.${D.workspaceId} = ${ws} AND d.${D.dim} = '${dim}' AND d.${D.day} >= ${from} AND d.${D.day} < ${to}`;
  }
  const lg = `lg AS MATERIALIZED (${wheres.map((w) => `SELECT ${columns} FROM ${w}`).join(" UNION ALL ")})`;
  const dims = [...new Set(queries.map((q) => q.dim))];
  const uses = (dim: Dim, name: string) => queries.reduce((n, q) => n + (q.dim === dim ? (q.sql.match(new RegExp(`FROM ${name} `, "g"))?.length ?? 0) : 0), 0);
  const sources = dims.flatMap((dim) => {
    const fromLogs = `SELECT period, k_${dim} AS key, ${BUCKETED.has(dim) ? "b" : "-1"} AS bucket, 1 AS requests, input_tokens, output_tokens, cost, latency_ms
      FROM lg${dim === "prompt" ? " WHERE k_prompt IS NOT NULL" : ""}`;
    // A source read by more than one query (tot reads src once) is made once; the rest are read where
    // they are used (NOT MATERIALIZED: SQLite would copy a CTE read twice, the daily rows included).
    const srcReads = uses(dim, "src") + (uses(dim, "tot") > 0 ? 1 : 0);
    return [
      `daily_${dim} AS NOT MATERIALIZED (${daily(dim)})`,
      `logs_${dim} AS NOT MATERIALIZED (${fromLogs})`,
      `src_${dim} AS ${srcReads > 1 ? "" : "NOT "}MATERIALIZED (${plan.inner ? `SELECT * FROM daily_${dim} UNION ALL ` : ""}SELECT * FROM logs_${dim})`,
      ...(uses(dim, "tot") > 0 ? [`tot_${dim} AS MATERIALIZED (SELECT key, ${SUMS} FROM src_${dim} GROUP BY key)`] : []),
    ];
  });
  // Each query's rows as one JSON array (D1 allows few terms in a compound SELECT), in the query's order.
  const views = queries.map(({ dim, sql, extra, order }, i) => {
    const q = sql.replace(/FROM (src|daily|logs|tot) /g, (_, name: string) => `FROM ${name}_${dim} `).replaceAll("?extra", extra === undefined ? "NULL" : params.add(extra));
    return `(SELECT json_group_array(json_array(${VIEW_COLUMNS.join(", ")})${order ? ` ORDER BY ${order}` : ""}) FROM (${q})) AS v${i}`;
  });
  const row = await d1Of(logs)
    .prepare(`WITH ${[lg, ...sources].join(", ")} SELECT ${views.join(", ")}`)
    .bind(...params.values)
    .first<Record<string, string>>();
  return queries.map((_, i) =>
    (JSON.parse(row![`v${i}`]) as (number | string | null)[][]).map((values) => Object.fromEntries(VIEW_COLUMNS.map((c, k) => [c, values[k]])) as Row),
  );
}

/** A view query: over its dimension's rows (src, daily, logs, tot: runViews), `extra` bound where it says ?extra, its rows kept in `order`. */
interface ViewQuery {
  dim: Dim;
  sql: string;
  extra?: string;
  order?: string;
}

/** The columns every view query gives (NULL where it has none). */
const VIEW_COLUMNS = ["period", "key", "bucket", "requests", "input_tokens", "output_tokens", "cost", "latency_ms"];

const SERIES_DIMS = ["model", "provider", "prompt"] as const;

/**
 * The views of one database: every total and series in one statement, the busiest values chosen there.
 * A dimension's totals per value are grouped once (tot) and give both its breakdown and its busiest
 * values; the series of those values take the daily rows as they are (one per day, value and bucket
 * already) and group only the logs' rows: summarize adds up rows of the same period, value and bucket.
 */
async function viewsOf(logs: Db, workspaceId: number, input: AnalyticsInput, plan: Plan, signals: Signals): Promise<Views> {
  const TOP_FIRST = "requests DESC, key";
  const busiest = `key IN (SELECT key FROM tot ORDER BY ${TOP_FIRST} LIMIT ${SERIES_TOP})`;
  const ROW = "requests, input_tokens, output_tokens, cost, latency_ms";
  const queries: [keyof Views, ViewQuery][] = [
    ["all", { dim: "all", sql: `SELECT period, NULL AS key, bucket, ${SUMS} FROM src GROUP BY 1, 3` }],
    ["status", { dim: "status", sql: `SELECT period, key, NULL AS bucket, ${SUMS} FROM src GROUP BY 1, 2` }],
    ...SERIES_DIMS.flatMap((dim): [keyof Views, ViewQuery][] => [
      [`${dim}Totals`, { dim, sql: `SELECT NULL AS period, key, NULL AS bucket, ${ROW} FROM tot ORDER BY ${TOP_FIRST} LIMIT ${BREAKDOWN_TOP}`, order: TOP_FIRST }],
      [`${dim}Series`, { dim, sql: `SELECT period, key, bucket, ${ROW} FROM daily WHERE ${busiest} UNION ALL SELECT period, key, bucket, ${SUMS} FROM logs WHERE ${busiest} GROUP BY 1, 2, 3` }],
    ]),
  ];
  const results = await runViews(logs, workspaceId, input, plan, signals, queries.map(([, q]) => q));
  return Object.fromEntries(queries.map(([name], i) => [name, results[i]])) as unknown as Views;
}

/**
 * The views over several periods: first every database's totals per value (all values, not the top
 * ones: a value's total is the sum over periods), added up; then the series of the values busiest
 * over all periods, from each database, added up.
 */
async function periodViews(logs: WorkspaceLogs, workspaceId: number, input: AnalyticsInput, plan: Plan, signals: Signals): Promise<Views> {
  const totals: ViewQuery[] = [
    { dim: "all", sql: `SELECT period, NULL AS key, bucket, ${SUMS} FROM src GROUP BY 1, 3` },
    { dim: "status", sql: `SELECT period, key, NULL AS bucket, ${SUMS} FROM src GROUP BY 1, 2` },
    ...SERIES_DIMS.map((dim): ViewQuery => ({ dim, sql: `SELECT NULL AS period, key, NULL AS bucket, ${SUMS} FROM src GROUP BY 2` })),
  ];
  const perDb = await eachPeriod(logs, (db) => runViews(db, workspaceId, input, plan, signals, totals));
  const [all, status, ...dimTotals] = totals.map((_, i) => sumRows(perDb.map((r) => r[i])));
  const busiest = dimTotals.map((rows) => rows.sort(byRequests).slice(0, SERIES_TOP).map((r) => r.key));
  // As viewsOf's series: the daily rows as they are, the logs' grouped (sumRows adds up the rest).
  const chosen = "key IN (SELECT value FROM json_each(?extra))";
  const seriesQuery = `SELECT period, key, bucket, requests, input_tokens, output_tokens, cost, latency_ms FROM daily WHERE ${chosen}
    UNION ALL SELECT period, key, bucket, ${SUMS} FROM logs WHERE ${chosen} GROUP BY 1, 2, 3`;
  const series = await eachPeriod(logs, (db) =>
    runViews(db, workspaceId, input, plan, signals, SERIES_DIMS.map((dim, i): ViewQuery => ({ dim, sql: seriesQuery, extra: JSON.stringify(busiest[i]) }))),
  );
  const views: Record<string, Row[]> = { all, status };
  SERIES_DIMS.forEach((dim, i) => {
    views[`${dim}Totals`] = dimTotals[i].slice(0, BREAKDOWN_TOP);
    views[`${dim}Series`] = sumRows(series.map((r) => r[i]));
  });
  return views as unknown as Views;
}
