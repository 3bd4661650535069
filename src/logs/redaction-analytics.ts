// POST /api/public/v2/requests/analytics/redactions: how many values each redaction detector replaced
// in the logs a filter group selects, in total and per hour or day (the analytics' interval). Reads
// only logs that have counts (the partial index request_logs_workspace_redacted holds just those), so
// a workspace without a policy, or with few findings, reads next to nothing.
import { getTableName } from "drizzle-orm";
import { d1Of } from "../db/client";
import { requestLogs } from "../db/schema";
import { columnNames } from "../db/sql";
import { compileRequestLogQuery, SqlParams } from "../filters";
import { toIso } from "../lib/time";
import { planAnalytics, type AnalyticsInput } from "./analytics";
import { eachPeriod, type WorkspaceLogs } from "./periods";
import { filterEstimates } from "./search";
import { filterSignalIds } from "./signal-names";

const R = columnNames(requestLogs);
const LOGS = getTableName(requestLogs);
const DAY = 86_400_000;
const HOUR = 3_600_000;

interface Row {
  period: number;
  detector: string;
  redacted: number;
  logs: number;
}

export async function redactionAnalytics(logs: WorkspaceLogs, workspaceId: number, input: AnalyticsInput) {
  const plan = planAnalytics(input);
  const size = plan.interval === "day" ? DAY : HOUR;
  const signals = await filterSignalIds(logs.control, workspaceId, input.filter_group);
  const perDb = await eachPeriod(logs, async (db) => {
    const params = new SqlParams();
    const ws = params.add(workspaceId);
    const estimate = await filterEstimates(db, workspaceId, input.filter_group);
    const where = compileRequestLogQuery({ filter_group: input.filter_group, q: input.q }, { params, workspace: ws, estimate, signals });
    // Compiled SQL (src/filters/): its numbered parameters are shared, which drizzle's sql cannot express.
    const query = `SELECT (r.${R.requestStartTime} - (r.${R.requestStartTime} % ${size})) AS period, d.key AS detector, sum(d.value) AS redacted, count(*) AS logs
      FROM ${LOGS} AS r, json_each(r.${R.redactions}) AS d
      WHERE r.${R.redactions} IS NOT NULL AND ${where}
      GROUP BY 1, 2`;
    const res = await d1Of(db).prepare(query).bind(...params.values).all<Row>();
    return res.results;
  });
  const series = new Map<string, Row>();
  for (const rows of perDb) {
    for (const r of rows) {
      const k = `${r.period}\u0000${r.detector}`;
      const had = series.get(k);
      if (had) {
        had.redacted += r.redacted;
        had.logs += r.logs;
      } else series.set(k, { ...r });
    }
  }
  const rows = [...series.values()].sort((a, b) => a.period - b.period || (a.detector < b.detector ? -1 : 1));
  const totals: Record<string, number> = {};
  for (const r of rows) totals[r.detector] = (totals[r.detector] ?? 0) + r.redacted;
  return {
    success: true as const,
    interval: plan.interval,
    totals,
    series: rows.map((r) => ({ period: toIso(r.period), detector: r.detector, redacted: r.redacted, logs: r.logs })),
  };
}
