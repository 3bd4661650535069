// Deferred indexing. A log's row is written before its write answers (readable by id, by every
// tracking call and by add-request-log at once), together with a row in request_log_unindexed. What
// search, suggestions and analytics read beside it (its search side rows, its full-text entry, its
// facet counts, its daily totals) is written afterwards by the indexer, many logs to one D1 batch:
// the queue consumer runs it on the ids each write announces (src/http/after-answer.ts), the cron's sweeper on
// whatever is still unindexed a few seconds on (a lost message, a queue that is down, a failed run).
//
// The indexer builds each log's rows from the log row as it is when it runs, so a tracking call that
// lands before indexing (it only changes the row) and one that lands after (it also moves the side
// rows, as src/logs/tracking.ts does for an indexed log) leave the same rows. Its batch writes only
// while every log it read is still unindexed at the revision it read (request_logs.revision moves
// with every update), and deletes their unindexed rows in the same transaction: a log is indexed once,
// a redelivered message finds nothing to do, and a batch that raced a tracking call writes nothing and
// reads again.
import { getTableName, sql, type SQL } from "drizzle-orm";
import { runBatch, type Statement } from "../db/batch";
import { d1Of, type Db } from "../db/client";
import { REQUEST_LOGS_FTS, REQUEST_LOGS_FTS_COLUMNS, requestLogDaily, requestLogFacets, requestLogs, requestLogUnindexed, requestLogValues, spans } from "../db/schema";
import { col, columnList, columnNames } from "../db/sql";
import { bucketSql } from "../analytics/latency-buckets";
import { facetRowsOf, indexRowsOf, type FacetRow, type IndexRow } from "./index-rows";

/**
 * Side rows travel as JSON text in one bound parameter per statement. D1 caps a value at 2 MB and
 * short tags grow ~4x as JSON rows, so rows are split into statements of at most this many bytes.
 */
const INDEX_CHUNK_BYTES = 256 * 1024;

export function chunkIndexRows(rows: readonly unknown[], maxBytes = INDEX_CHUNK_BYTES): string[] {
  const chunks: string[] = [];
  let parts: string[] = [];
  let size = 2;
  for (const row of rows) {
    const text = JSON.stringify(row);
    if (parts.length > 0 && size + text.length + 1 > maxBytes) {
      chunks.push(`[${parts.join(",")}]`);
      parts = [];
      size = 2;
    }
    parts.push(text);
    size += text.length + 1;
  }
  if (parts.length > 0) chunks.push(`[${parts.join(",")}]`);
  return chunks;
}

/** Logs indexed in one D1 batch at most. */
const INDEX_BATCH_LOGS = 100;

/** The sweeper indexes logs left unindexed this long (the queue's normal delay is about a second). */
export const SWEEP_AFTER_MS = 10_000;

/** Logs the sweeper indexes per log database and cron run at most. */
export const SWEEP_MAX_LOGS = 2_000;

/** How often one batch of logs is read again when tracking calls keep changing it, before giving up (the sweeper goes on). */
const INDEX_ATTEMPTS = 3;

/**
 * The statement giving the mark of the log its batch has just inserted (request_logs' insert trigger
 * marks every new log unindexed, with no tool names) its blueprints' tool names. Inside a batch's
 * transaction that log is max(id): D1 runs a batch as one transaction on a single writer, and
 * AUTOINCREMENT never reuses ids. Prepared as plain SQL: it is on log-request's hot path.
 */
export function markNewestUnindexed(db: Db, tools: readonly string[]): D1PreparedStatement {
  return d1Of(db).prepare(MARK_NEWEST).bind(JSON.stringify(tools));
}
const R = columnNames(requestLogs);
const U = columnNames(requestLogUnindexed);
const NEWEST_LOG_SQL = `(SELECT max(${R.id}) FROM ${getTableName(requestLogs)})`;
// An upsert: the insert trigger of request_logs has marked the log already, without its tool names.
const MARK_NEWEST = `INSERT INTO ${getTableName(requestLogUnindexed)} (${U.requestId}, ${U.tools}) VALUES (${NEWEST_LOG_SQL}, ?) ON CONFLICT(${U.requestId}) DO UPDATE SET ${U.tools} = excluded.${U.tools}`;

/** SQL naming the log its batch has just inserted, for other statements of that batch (the same rule as markNewestUnindexed). */
export const NEWEST_LOG: SQL = sql.raw(NEWEST_LOG_SQL);

/** SQL true while the log (an id or an id expression) has had its index rows written. */
export function isIndexed(requestId: SQL | number): SQL {
  return sql`NOT EXISTS (SELECT 1 FROM ${requestLogUnindexed} AS ix WHERE ix.${col(requestLogUnindexed.requestId)} = ${requestId})`;
}

// ---- statements shared with the tracking calls ----

/** A side row with its log and workspace: [request_id, workspace_id, kind, key, value]. */
export type SideRow = [requestId: number, workspaceId: number, ...row: IndexRow];

/** Statements inserting side rows, each only `when` holds (SQL evaluated in the statement). */
export function insertSideRows(db: Db, rows: readonly SideRow[], when: SQL = sql`true`) {
  return chunkIndexRows(rows).map((json) =>
    db.insert(requestLogValues).select(sql`
      SELECT NULL, j.value ->> 1, j.value ->> 0, j.value ->> 2, j.value ->> 3, j.value ->> 4
      FROM json_each(${json}) AS j WHERE ${when}`),
  );
}

/** A facet count to add: [workspace_id, field, key, value, value_fold, n]. */
export type FacetCount = [workspaceId: number, ...row: FacetRow, n: number];

/** Facet rows of many logs of one workspace or several, counted: each (workspace, field, key, value) once with its number. */
export function countFacets(perLog: Iterable<[workspaceId: number, rows: readonly FacetRow[]]>): FacetCount[] {
  const counts = new Map<string, FacetCount>();
  for (const [ws, rows] of perLog) {
    for (const row of rows) {
      const id = JSON.stringify([ws, row[0], row[1], row[2]]);
      const c = counts.get(id);
      if (c) c[5] += 1;
      else counts.set(id, [ws, ...row, 1]);
    }
  }
  return [...counts.values()];
}

/** Statements adding facet counts (a row missing is created at its count), each only `when` holds. */
export function addFacetCounts(db: Db, counts: readonly FacetCount[], when: SQL = sql`true`) {
  return chunkIndexRows(counts).map((json) =>
    db
      .insert(requestLogFacets)
      .select(sql`
        SELECT NULL, j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5
        FROM json_each(${json}) AS j WHERE ${when}`)
      .onConflictDoUpdate({
        target: [requestLogFacets.workspaceId, requestLogFacets.field, requestLogFacets.key, requestLogFacets.value],
        set: { count: sql`${requestLogFacets.count} + excluded.count` },
      }),
  );
}

/** The daily totals' dimensions (ROLLUP_DIMS): each dimension's key of a log `r`, and whether its rows have latency buckets. */
const DAILY_DIMS: Record<string, { key: string; buckets: boolean }> = {
  all: { key: "''", buckets: true },
  model: { key: `r.${R.model}`, buckets: true },
  provider: { key: `r.${R.provider}`, buckets: true },
  prompt: { key: `CAST(r.${R.promptId} AS TEXT)`, buckets: false },
  status: { key: `r.${R.status} || '|' || coalesce(r.${R.errorType}, '')`, buckets: false },
};
const LATENCY = `max(r.${R.requestEndTime} - r.${R.requestStartTime}, 0)`;

/**
 * The statement adding (sign 1) or taking back (sign -1) the logs `r` of `from` (a FROM clause naming
 * request_logs AS r) in the daily totals of `dims`, counted in the database, only `when` holds. A
 * take-back can leave rows at zero requests: dropEmptyDailyTotals removes them.
 */
export function dailyTotals(from: SQL, dims: readonly (keyof typeof DAILY_DIMS)[], sign: 1 | -1, when: SQL = sql`true`): SQL {
  const dimRows = sql.raw(dims.map((d) => `SELECT '${d}' AS dim`).join(" UNION ALL "));
  const keyOf = sql.raw(`CASE d.dim ${dims.map((d) => `WHEN '${d}' THEN ${DAILY_DIMS[d].key}`).join(" ")} END`);
  const bucketOf = sql.raw(`CASE WHEN d.dim IN (${dims.filter((d) => DAILY_DIMS[d].buckets).map((d) => `'${d}'`).join(", ") || "NULL"}) THEN ${bucketSql(LATENCY)} ELSE -1 END`);
  return sql`
    INSERT INTO ${requestLogDaily} (${columnList(requestLogDaily, ["workspaceId", "dim", "day", "key", "bucket", "requests", "inputTokens", "outputTokens", "cost", "latencyMs"])})
    SELECT * FROM (
      SELECT r.${col(requestLogs.workspaceId)}, d.dim, r.${col(requestLogs.requestStartTime)} - (r.${col(requestLogs.requestStartTime)} % 86400000) AS day, ${keyOf} AS k, ${bucketOf} AS b,
             ${sign} * count(*), ${sign} * sum(r.${col(requestLogs.inputTokens)}), ${sign} * sum(r.${col(requestLogs.outputTokens)}), ${sign} * sum(r.${col(requestLogs.price)}), ${sign} * sum(${sql.raw(LATENCY)})
      FROM ${from} CROSS JOIN (${dimRows}) AS d
      WHERE ${when}
      GROUP BY r.${col(requestLogs.workspaceId)}, d.dim, day, k, b
    ) WHERE k IS NOT NULL
    ON CONFLICT (${DAILY_KEY}) DO UPDATE SET ${DAILY_ADD}`;
}

/** The daily totals' unique key, and the SET adding an insert's sums to the row already there. */
const DAILY_KEY = sql.join([requestLogDaily.workspaceId, requestLogDaily.dim, requestLogDaily.key, requestLogDaily.day, requestLogDaily.bucket].map(col), sql`, `);
const DAILY_ADD = sql.join(
  [requestLogDaily.requests, requestLogDaily.inputTokens, requestLogDaily.outputTokens, requestLogDaily.cost, requestLogDaily.latencyMs].map((c) => sql`${col(c)} = ${col(c)} + excluded.${col(c)}`),
  sql`, `,
);

/** Removes the daily rows of `dim` of the logs `r` of `from` (as dailyTotals) that a take-back left at zero requests. */
export function dropEmptyDailyTotals(from: SQL, dim: keyof typeof DAILY_DIMS, when: SQL = sql`true`): SQL {
  const d = requestLogDaily;
  return sql`DELETE FROM ${d} WHERE ${col(d.requests)} <= 0 AND (${col(d.workspaceId)}, ${col(d.dim)}, ${col(d.key)}, ${col(d.day)}) IN (
    SELECT r.${col(requestLogs.workspaceId)}, ${dim}, ${sql.raw(DAILY_DIMS[dim].key)}, r.${col(requestLogs.requestStartTime)} - (r.${col(requestLogs.requestStartTime)} % 86400000) FROM ${from} WHERE ${when})`;
}

// ---- the indexer ----

interface UnindexedLog {
  id: number;
  ws: number;
  revision: number;
  model: string;
  provider: string;
  status: string;
  prompt_id: number | null;
  prompt_name: string | null;
  tags: string;
  metadata: string;
  prompt_input_variables: string;
  tools: string;
  /** The answer's text when it may be a JSON object, else ''. */
  answer: string;
  trace_id: string | null;
  span_name: string | null;
}

/** The logs among `ids` still unindexed, as their rows are now (and the name of the span a log was made from or for). */
async function readUnindexed(logs: Db, ids: readonly number[]): Promise<UnindexedLog[]> {
  return logs.all<UnindexedLog>(sql`
    SELECT r.${col(requestLogs.id)}, r.${col(requestLogs.workspaceId)} AS ws, r.${col(requestLogs.revision)}, r.${col(requestLogs.model)}, r.${col(requestLogs.provider)}, r.${col(requestLogs.status)}, r.${col(requestLogs.promptId)}, r.${col(requestLogs.promptName)},
           r.${col(requestLogs.tags)}, r.${col(requestLogs.metadata)}, r.${col(requestLogs.promptInputVariables)}, u.${col(requestLogUnindexed.tools)},
           CASE WHEN instr(r.${col(requestLogs.outputText)}, '{') > 0 THEN r.${col(requestLogs.outputText)} ELSE '' END AS answer,
           r.${col(requestLogs.traceId)}, s.${col(spans.name)} AS span_name
    FROM json_each(${JSON.stringify(ids)}) AS j
    CROSS JOIN ${requestLogUnindexed} AS u ON u.${col(requestLogUnindexed.requestId)} = j.value
    CROSS JOIN ${requestLogs} AS r ON r.${col(requestLogs.id)} = u.${col(requestLogUnindexed.requestId)}
    LEFT JOIN ${spans} AS s ON s.${col(spans.workspaceId)} = r.${col(requestLogs.workspaceId)} AND s.${col(spans.traceId)} = r.${col(requestLogs.traceId)} AND s.${col(spans.spanId)} = r.${col(requestLogs.spanId)}`);
}

const FTS = REQUEST_LOGS_FTS_COLUMNS;
const FTS_COLUMNS = `${FTS.rowid}, ${FTS.inputText}, ${FTS.outputText}`;

/** The statements indexing `rows`, every one of them writing only while each log is unindexed at the revision read. */
function indexStatements(logs: Db, rows: UnindexedLog[]): Statement[] {
  const ids = JSON.stringify(rows.map((r) => r.id));
  const read = JSON.stringify(rows.map((r) => [r.id, r.revision]));
  const unchanged = sql`(SELECT count(*) FROM json_each(${read}) AS g
    CROSS JOIN ${requestLogUnindexed} AS gu ON gu.${col(requestLogUnindexed.requestId)} = g.value ->> 0
    CROSS JOIN ${requestLogs} AS gr ON gr.${col(requestLogs.id)} = gu.${col(requestLogUnindexed.requestId)} AND gr.${col(requestLogs.revision)} = g.value ->> 1) = ${rows.length}`;
  const sideRows: SideRow[] = [];
  const facets: [number, FacetRow[]][] = [];
  for (const r of rows) {
    const indexRows = indexRowsOf({
      tags: JSON.parse(r.tags) as string[],
      metadata: JSON.parse(r.metadata) as Record<string, string>,
      prompt_input_variables: JSON.parse(r.prompt_input_variables) as Record<string, unknown>,
      tools: JSON.parse(r.tools) as string[],
      outputText: r.answer,
    });
    for (const row of indexRows) sideRows.push([r.id, r.ws, ...row]);
    const scalars = { model: r.model, provider: r.provider, status: r.status, promptId: r.prompt_id, promptName: r.prompt_name, traceId: r.trace_id, spanName: r.span_name || null };
    facets.push([r.ws, facetRowsOf(scalars, indexRows)]);
  }
  const theseLogs = sql`json_each(${ids}) AS j CROSS JOIN ${requestLogs} AS r ON r.${col(requestLogs.id)} = j.value`;
  return [
    ...insertSideRows(logs, sideRows, unchanged),
    ...addFacetCounts(logs, countFacets(facets), unchanged),
    sql`INSERT INTO ${sql.identifier(REQUEST_LOGS_FTS)} (${sql.raw(FTS_COLUMNS)}) SELECT r.${col(requestLogs.id)}, r.${col(requestLogs.inputText)}, r.${col(requestLogs.outputText)} FROM ${theseLogs} WHERE ${unchanged}`,
    dailyTotals(theseLogs, ["all", "model", "provider", "prompt", "status"], 1, unchanged),
    // Last: its count says whether the batch wrote (the same condition held for every statement).
    sql`DELETE FROM ${requestLogUnindexed} WHERE ${requestLogUnindexed.requestId} IN (SELECT value FROM json_each(${ids})) AND ${unchanged}`,
  ];
}

/** A log of an index batch as an extension sees it: its id, workspace, the revision read, and its prompt. */
export interface IndexedLog {
  id: number;
  workspaceId: number;
  revision: number;
  promptId: number | null;
}

/**
 * Work another feature does where logs become searchable (Signals matches new logs against its hooks):
 * statements run inside each index batch's transaction, before its last statement, so they commit
 * with the logs' index rows or not at all; `committed` hears their results once the batch committed.
 * Its statements must be safe to run again (a batch that raced a tracking call is read and run again).
 */
export interface IndexExtension {
  batch(logs: Db, batch: readonly IndexedLog[]): Promise<{ statements: Statement[]; committed(results: readonly D1Result[]): Promise<void> } | null>;
}

/**
 * Indexes the logs among `ids` that are still unindexed in this log database (any workspace's), a
 * batch of INDEX_BATCH_LOGS at a time; returns how many it indexed. Ids already indexed, unknown or
 * deleted are skipped, so a repeated call is harmless. Throws when a batch kept changing under it
 * (the caller's retry, or the sweeper, takes it up later) or D1 failed. `extension` adds its work to
 * each batch (every caller that indexes new logs passes the Worker's: src/queue/).
 */
export async function indexLogs(logs: Db, ids: readonly number[], extension?: IndexExtension): Promise<number> {
  const unique = [...new Set(ids)];
  let indexed = 0;
  for (let at = 0; at < unique.length; at += INDEX_BATCH_LOGS) {
    const chunk = unique.slice(at, at + INDEX_BATCH_LOGS);
    for (let attempt = 1; ; attempt++) {
      const rows = await readUnindexed(logs, chunk);
      if (rows.length === 0) break;
      const own = indexStatements(logs, rows);
      const extra = extension ? await extension.batch(logs, rows.map((r) => ({ id: r.id, workspaceId: r.ws, revision: r.revision, promptId: r.prompt_id }))) : null;
      const statements = extra ? [...own.slice(0, -1), ...extra.statements, own[own.length - 1]] : own;
      const results = await runBatch(logs, statements);
      if ((results[results.length - 1].meta.changes ?? 0) > 0) {
        indexed += rows.length;
        if (extra) await extra.committed(results.slice(own.length - 1, own.length - 1 + extra.statements.length));
        break;
      }
      if (attempt >= INDEX_ATTEMPTS) throw new Error(`indexing ${rows.length} logs: they changed during each of ${INDEX_ATTEMPTS} attempts`);
    }
  }
  return indexed;
}

/**
 * The sweeper's part for one log database: indexes logs unindexed for SWEEP_AFTER_MS or more, oldest
 * first, at most SWEEP_MAX_LOGS a run. Returns how many it indexed.
 */
export async function indexLeftBehind(logs: Db, now: number, extension?: IndexExtension): Promise<number> {
  const rows = await logs
    .select({ id: requestLogUnindexed.requestId })
    .from(requestLogUnindexed)
    .where(sql`${requestLogUnindexed.createdAt} <= ${now - SWEEP_AFTER_MS}`)
    .orderBy(requestLogUnindexed.requestId)
    .limit(SWEEP_MAX_LOGS);
  return rows.length > 0 ? indexLogs(logs, rows.map((r) => r.id), extension) : 0;
}
