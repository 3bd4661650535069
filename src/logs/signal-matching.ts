// Which logs a signal's hook (or backfill) covers, as SQL over request_logs (alias r) through the one
// filter compiler: the hook's scope (every log, a template and optionally one version, or the versions a
// release label names) and its structured filters. The estimate counts with it, a backfill pages with
// it, and the indexer matches new logs with it.
import { getTableName } from "drizzle-orm";
import { d1Of, type Db } from "../db/client";
import { logIndexState, requestLogs, signalPending } from "../db/schema";
import { columnNames } from "../db/sql";
import { compileFilterGroup, SqlParams, type FilterGroup } from "../filters";
import { eachPeriod, type WorkspaceLogs } from "./periods";

const LOGS = getTableName(requestLogs);
const R = columnNames(requestLogs);
const PENDING = getTableName(signalPending);
const P = columnNames(signalPending);
const STATE = getTableName(logIndexState);
const ST = columnNames(logIndexState);

/**
 * What a hook covers, with its references resolved: a template (and version), or the (template,
 * version) pairs a release label names; null fields cover everything.
 */
export interface HookCoverage {
  promptId: number | null;
  versionNumber: number | null;
  /** Scope release_label, or a template narrowed to a label: the versions the label names now. */
  labelVersions: [promptId: number, versionNumber: number][] | null;
  /** With labelVersions: the A/B releases of that label, whose logs are the label's traffic whichever version served them. */
  labelReleases: number[] | null;
  /** Only logs an A/B release served as this variant. */
  abVariant: string | null;
  filter: FilterGroup | null;
}

/** The coverage's condition on `r`, its values added to `p` (the workspace already bound as `ws`). */
export function coverageSql(c: HookCoverage, p: SqlParams, ws: string): string {
  const parts: string[] = [];
  if (c.promptId !== null) parts.push(`r.${R.promptId} = ${p.add(c.promptId)}`);
  if (c.versionNumber !== null) parts.push(`r.${R.promptVersionNumber} = ${p.add(c.versionNumber)}`);
  if (c.labelVersions !== null) {
    const releases = c.labelReleases ?? [];
    if (c.labelVersions.length === 0 && releases.length === 0) return "0";
    const byVersion = `(r.${R.promptId}, r.${R.promptVersionNumber}) IN (SELECT j.value ->> 0, j.value ->> 1 FROM json_each(${p.add(JSON.stringify(c.labelVersions))}) AS j)`;
    parts.push(releases.length > 0 ? `(${byVersion} OR r.${R.abTestId} IN (SELECT value FROM json_each(${p.add(JSON.stringify(releases))})))` : byVersion);
  }
  if (c.abVariant !== null) parts.push(`r.${R.abVariant} = ${p.add(c.abVariant)}`);
  if (c.filter && c.filter.filters.length > 0) parts.push(compileFilterGroup(c.filter, { params: p, workspace: ws }));
  return parts.length > 0 ? parts.join(" AND ") : "1";
}

/** Where a backfill's paging stands in one database: the last (request_start_time, id) read. */
export interface PageCursor {
  start: number;
  id: number;
}

/**
 * The next `limit` logs of the workspace in one database that the coverage matches, started in
 * [from, to), after the cursor, in (request_start_time, id) order.
 */
export async function coveredLogsPage(db: Db, ws: number, c: HookCoverage, from: number, to: number, after: PageCursor | null, limit: number): Promise<PageCursor[]> {
  const { text, values } = coveredLogsPageSql(ws, c, from, to, after, limit);
  const { results } = await d1Of(db)
    .prepare(text)
    .bind(...values)
    .all<PageCursor>();
  return results;
}

function coveredLogsPageSql(ws: number, c: HookCoverage, from: number, to: number, after: PageCursor | null, limit: number): { text: string; values: unknown[] } {
  const p = new SqlParams();
  const w = p.add(ws);
  const start = `r.${R.requestStartTime}`;
  const where = [`r.${R.workspaceId} = ${w}`, `${start} >= ${p.add(from)}`, `${start} < ${p.add(to)}`, coverageSql(c, p, w)];
  if (after) where.push(`(${start}, r.${R.id}) > (${p.add(after.start)}, ${p.add(after.id)})`);
  return { text: `SELECT r.${R.id} AS id, ${start} AS start FROM ${LOGS} AS r WHERE ${where.join(" AND ")} ORDER BY ${start}, r.${R.id} LIMIT ${p.add(limit)}`, values: p.values };
}

/**
 * Throws the compiler's 400 (over D1's 100 parameters, a bad filter) when a coverage could not be
 * compiled into the statements that use it: the indexer's match (with its own parameters before the
 * coverage's) and a backfill's page. Placeholder values that no real value shares count every
 * parameter the real statements could take.
 */
export function checkCoverageCompiles(c: HookCoverage): void {
  const unique = (n: number) => -1_000_000_007 - n;
  matchSql({ workspaceId: unique(1), signalId: unique(2), hookId: unique(3), notBefore: unique(4), indexedTo: unique(5), coverage: c, logs: [{ id: unique(6), revision: unique(7) }] }, unique(8));
  coveredLogsPageSql(unique(1), c, unique(2), unique(3), { start: unique(4), id: unique(5) }, unique(6));
}

/** Per coverage: the logs it matched in [from, to) over the workspace's databases, and their text's mean length. */
export async function coverageCounts(logs: WorkspaceLogs, ws: number, coverages: readonly HookCoverage[], from: number, to: number): Promise<{ matches: number; meanChars: number }[]> {
  const perPeriod = await eachPeriod(logs, (db) =>
    Promise.all(
      coverages.map(async (c) => {
        const p = new SqlParams();
        const w = p.add(ws);
        const start = `r.${R.requestStartTime}`;
        const row = await d1Of(db)
          .prepare(
            `SELECT count(*) AS n, coalesce(avg(length(r.${R.inputText}) + length(r.${R.outputText})), 0) AS chars FROM ${LOGS} AS r
             WHERE r.${R.workspaceId} = ${w} AND ${start} >= ${p.add(from)} AND ${start} < ${p.add(to)} AND ${coverageSql(c, p, w)}`,
          )
          .bind(...p.values)
          .first<{ n: number; chars: number }>();
        return { matches: row?.n ?? 0, chars: row?.chars ?? 0 };
      }),
    ),
  );
  return coverages.map((_, i) => {
    const matches = perPeriod.reduce((n, period) => n + period[i].matches, 0);
    const chars = perPeriod.reduce((n, period) => n + period[i].matches * period[i].chars, 0);
    return { matches, meanChars: matches > 0 ? chars / matches : 0 };
  });
}

/** One hook's judgements to owe in an index batch: the sampled logs (with the revision the indexer read) and when they are due. */
export interface HookMatch {
  workspaceId: number;
  signalId: number;
  hookId: number;
  notBefore: number;
  /** The index watermark the batch read: its judgements are owed only while it is there (the batch writes). */
  indexedTo: number;
  coverage: HookCoverage;
  logs: readonly { id: number; revision: number }[];
}

/**
 * The statement owing the hook's judgements for those of its sampled logs that its coverage matches,
 * inside the indexer's batch: each log only at the revision read and while the index watermark is where
 * the batch read it (a tracking call or another indexer landing meanwhile has the batch read again). It answers the judgements it made owed, and
 * those an earlier, undone run of the same batch left owed and untouched (to announce them again).
 */
export function matchStatement(db: Db, m: HookMatch, now: number): D1PreparedStatement {
  const { text, values } = matchSql(m, now);
  return d1Of(db)
    .prepare(text)
    .bind(...values);
}

function matchSql(m: HookMatch, now: number): { text: string; values: unknown[] } {
  const p = new SqlParams();
  const ws = p.add(m.workspaceId);
  const text = `INSERT INTO ${PENDING} (${[P.requestId, P.signalId, P.workspaceId, P.hookId, P.backfillId, P.notBefore, P.leaseUntil, P.attempts, P.createdAt].join(", ")})
    SELECT r.${R.id}, ${p.add(m.signalId)}, ${ws}, ${p.add(m.hookId)}, NULL, ${p.add(m.notBefore)}, NULL, 0, ${p.add(now)}
    FROM json_each(${p.add(JSON.stringify(m.logs.map((l) => [l.id, l.revision])))}) AS j
    CROSS JOIN ${LOGS} AS r ON r.${R.id} = j.value ->> 0 AND r.${R.revision} = j.value ->> 1
    WHERE r.${R.workspaceId} = ${ws} AND (SELECT st.${ST.indexedTo} FROM ${STATE} AS st WHERE st.${ST.id} = 1) = ${p.add(m.indexedTo)} AND ${coverageSql(m.coverage, p, ws)}
    ON CONFLICT (${P.requestId}, ${P.signalId}) DO UPDATE SET ${P.attempts} = ${PENDING}.${P.attempts}
      WHERE ${PENDING}.${P.attempts} = 0 AND ${PENDING}.${P.leaseUntil} IS NULL AND ${PENDING}.${P.backfillId} IS NULL
    RETURNING ${P.requestId} AS request_id, ${P.signalId} AS signal_id, ${P.workspaceId} AS workspace_id, ${P.notBefore} AS not_before`;
  return { text, values: p.values };
}
