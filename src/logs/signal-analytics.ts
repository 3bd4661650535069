// Signals in POST /api/public/v2/requests/analytics (its `signals` field): each asked signal's true-rate
// over the logs the filter group and free text select, per period (as the analytics series) and per
// prompt template and version. Read from the matching logs joined to their results beside them (one
// query per log database, aggregated there): verdicts have no daily totals by prompt.
import { getTableName } from "drizzle-orm";
import { d1Of } from "../db/client";
import { requestLogs, signalResults } from "../db/schema";
import { columnNames } from "../db/sql";
import { compileRequestLogQuery, SqlParams } from "../filters";
import { bucketKey } from "../analytics/summarize";
import { planAnalytics, type AnalyticsInput } from "./analytics";
import { filterEstimates } from "./search";
import { filterSignalIds } from "./signal-names";
import { eachPeriod, type WorkspaceLogs } from "./periods";

const R = columnNames(requestLogs);
const S = columnNames(signalResults);
const LOGS = getTableName(requestLogs);
const RESULTS = getTableName(signalResults);
const DAY = 86_400_000;
const HOUR = 3_600_000;

interface Row {
  sid: number;
  period: number;
  pid: number | null;
  ver: number | null;
  t: number;
  n: number;
}

export interface SignalRate {
  /** Logs with an ok verdict. */
  judged: number;
  true: number;
  /** true / judged; null before a verdict. */
  trueRate: number | null;
}

export interface SignalAnalytics extends SignalRate {
  trueRateByDay: [string, number | null][];
  byPromptVersion: ({ promptId: string | null; promptVersionNumber: number | null } & SignalRate)[];
}

const rate = (t: number, n: number): SignalRate => ({ judged: n, true: t, trueRate: n > 0 ? Math.round((t / n) * 1e6) / 1e6 : null });

/** Per signal (by the name asked, its id given): its verdicts over the selected logs. */
export async function signalAnalytics(logs: WorkspaceLogs, workspaceId: number, input: AnalyticsInput, signals: ReadonlyMap<string, number>): Promise<Record<string, SignalAnalytics>> {
  if (signals.size === 0) return {};
  const { interval } = planAnalytics(input);
  const size = interval === "day" ? DAY : HOUR;
  const named = await filterSignalIds(logs.control, workspaceId, input.filter_group);
  const rows = (
    await eachPeriod(logs, async (db) => {
      const estimate = await filterEstimates(db, workspaceId, input.filter_group);
      const params = new SqlParams();
      const ws = params.add(workspaceId);
      const where = compileRequestLogQuery({ filter_group: input.filter_group, q: input.q }, { params, workspace: ws, estimate, signals: named });
      const ids = params.add(JSON.stringify([...new Set(signals.values())]));
      const start = `r.${R.requestStartTime}`;
      const { results } = await d1Of(db)
        .prepare(
          `SELECT s.${S.signalId} AS sid, (${start} - (${start} % ${size})) AS period, r.${R.promptId} AS pid, r.${R.promptVersionNumber} AS ver,
                  coalesce(sum(s.${S.result}), 0) AS t, count(s.${S.result}) AS n
           FROM ${LOGS} AS r JOIN ${RESULTS} AS s ON s.${S.requestId} = r.${R.id} AND s.${S.signalId} IN (SELECT value FROM json_each(${ids}))
           WHERE ${where} AND s.${S.status} = 'ok' GROUP BY 1, 2, 3, 4`,
        )
        .bind(...params.values)
        .all<Row>();
      return results;
    })
  ).flat();
  const out: Record<string, SignalAnalytics> = {};
  for (const [name, id] of signals) {
    const mine = rows.filter((r) => r.sid === id);
    const sum = (list: Row[]) => list.reduce((a, r) => [a[0] + r.t, a[1] + r.n], [0, 0]);
    const byPeriod = new Map<number, Row[]>();
    const byVersion = new Map<string, Row[]>();
    for (const r of mine) {
      byPeriod.set(r.period, [...(byPeriod.get(r.period) ?? []), r]);
      const k = JSON.stringify([r.pid, r.ver]);
      byVersion.set(k, [...(byVersion.get(k) ?? []), r]);
    }
    const [t, n] = sum(mine);
    out[name] = {
      ...rate(t, n),
      trueRateByDay: [...byPeriod]
        .sort(([a], [b]) => a - b)
        .map(([p, list]) => [bucketKey(p, interval), rate(...(sum(list) as [number, number])).trueRate]),
      byPromptVersion: [...byVersion.values()]
        .map((list) => ({ promptId: list[0].pid === null ? null : String(list[0].pid), promptVersionNumber: list[0].ver, ...rate(...(sum(list) as [number, number])) }))
        .sort((a, b) => b.judged - a.judged || String(a.promptId).localeCompare(String(b.promptId)) || (a.promptVersionNumber ?? 0) - (b.promptVersionNumber ?? 0)),
    };
  }
  return out;
}
