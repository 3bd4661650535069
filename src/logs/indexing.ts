// Deferred indexing. A log's row is written before its write answers (readable by id, by every
// tracking call and by add-request-log at once), and nothing else: its keyed search values are in the
// row (tags, metadata, extra_values). What search, suggestions and analytics read beside it (its search entry:
// full text and keyed values, its facet counts, its daily totals) is written afterwards by the
// indexer, many logs to one D1 batch: the queue consumer runs it when a write announces logs
// (src/http/after-answer.ts), the cron's sweeper when logs have waited a few seconds (a lost message,
// a queue that is down, a failed run), and every snapshot (a dataset from a filter, an evaluation, an
// export) before it selects.
//
// Which logs wait needs no row of its own: ids grow in commit order on D1's single writer, so one
// watermark per database (log_index_state.indexed_to) says it. Every log with a larger id waits, every
// other one is indexed (but for the few from before the watermark listed in request_log_unindexed).
// The indexer takes the waiting logs in id order and moves the watermark past them in the same batch.
// Daily totals follow behind a watermark of their own (counted_to), a larger batch at a time: a
// value a batch shares is one upsert, so counting fewer, larger batches writes fewer rows, and
// analytics reads the few logs not counted yet from the logs themselves (src/logs/analytics.ts).
//
// The indexer builds each log's rows from the log row as it is when it runs, so a tracking call that
// lands before indexing (it only changes the row) and one that lands after (it also moves the facet
// counts and the search entry, as src/logs/tracking.ts does for an indexed log) leave the same rows.
// Its batch writes only while the watermark is where it read it and every log it read is at the
// revision it read (request_logs.revision moves with every update): a log is indexed once, two indexers
// racing write once, and a batch that raced a tracking call writes nothing and reads again.
import { getTableName, sql, type SQL } from "drizzle-orm";
import { runBatch, type Statement } from "../db/batch";
import type { Db } from "../db/client";
import { logIndexState, requestLogDaily, requestLogs, requestLogUnindexed, spans } from "../db/schema";
import { col, columnList, columnNames } from "../db/sql";
import { bucketSql } from "../analytics/latency-buckets";
import { isDerived } from "../filters";
import { extraValuesOf, facetRowsOf, indexRowsOf, toolsOf, type FacetRow, type IndexRow } from "./index-rows";
import { decodeBlueprints } from "./row-codec";
import { addFacetCounts, chunkIndexRows, countFacets, insertSearchEntries } from "./search-index";
import { eachPeriod, type WorkspaceLogs } from "./periods";
import type { IndexExtension } from "./index-extension";

export { chunkIndexRows } from "./search-index";

/** Logs indexed in one D1 batch at most. */
const INDEX_BATCH_LOGS = 100;

/** The sweeper indexes logs that have waited this long (the queue's normal delay is a few seconds). */
export const SWEEP_AFTER_MS = 10_000;

/** Logs the sweeper indexes per log database and cron run at most. */
export const SWEEP_MAX_LOGS = 2_000;

/** Batches that write nothing in a row (another indexer, or tracking calls, changing what they read) before giving up; the next run goes on. */
const INDEX_ATTEMPTS = 3;

const R = columnNames(requestLogs);
const NEWEST_LOG_SQL = `(SELECT max(${R.id}) FROM ${getTableName(requestLogs)})`;

/**
 * SQL naming the log its batch has just inserted, for other statements of that batch: inside a batch's
 * transaction that log is max(id) (D1 runs a batch as one transaction on a single writer, and
 * AUTOINCREMENT never reuses ids).
 */
export const NEWEST_LOG: SQL = sql.raw(NEWEST_LOG_SQL);

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

interface PendingLog {
  id: number;
  ws: number;
  revision: number;
  model: string;
  provider: string;
  status: string;
  prompt_id: number | null;
  prompt_name: string | null;
  trace_id: string | null;
  span_name: string | null;
  tags: string;
  metadata: string;
  extra_values: string | null;
  /** The rest only for a log without extra_values (written before them): what they are made from. */
  prompt_input_variables: string | null;
  input: string | null;
  output: string | null;
  parameters: string | null;
  body: ArrayBuffer | number[] | null;
  input_text: string | null;
  output_text: string | null;
}

const l = requestLogs;
const u = requestLogUnindexed;
const st = logIndexState;
const COUNTED_TO = sql`(SELECT ${col(st.countedTo)} FROM ${st} WHERE ${st.id} = 1)`;
/** Columns read only for a log without extra_values. */
const IF_UNDERIVED = [l.promptInputVariables, l.input, l.output, l.parameters, l.body, l.inputText, l.outputText].map(
  (c) => sql`CASE WHEN r.${col(l.extraValues)} IS NULL THEN r.${col(c)} END AS ${col(c)}`,
);

/**
 * The database's watermark and the next waiting logs in id order, at most `limit` (the ones from before
 * the watermark still listed in request_log_unindexed first, since their ids are smaller), up to `upTo`.
 */
async function readPending(logs: Db, limit: number, upTo: number): Promise<{ at: number; rows: PendingLog[] }> {
  const [state, rows] = await runBatch(logs, [
    sql`SELECT ${col(st.indexedTo)} AS at FROM ${st} WHERE ${st.id} = 1`,
    sql`
      SELECT r.${col(l.id)}, r.${col(l.workspaceId)} AS ws, r.${col(l.revision)}, r.${col(l.model)}, r.${col(l.provider)}, r.${col(l.status)}, r.${col(l.promptId)},
             r.${col(l.promptName)}, r.${col(l.traceId)}, s.${col(spans.name)} AS span_name, r.${col(l.tags)}, r.${col(l.metadata)}, r.${col(l.extraValues)},
             ${sql.join(IF_UNDERIVED, sql`, `)}
      FROM ${l} AS r
      LEFT JOIN ${spans} AS s ON s.${col(spans.workspaceId)} = r.${col(l.workspaceId)} AND s.${col(spans.traceId)} = r.${col(l.traceId)} AND s.${col(spans.spanId)} = r.${col(l.spanId)}
      WHERE (r.${col(l.id)} > (SELECT ${col(st.indexedTo)} FROM ${st} WHERE ${st.id} = 1) OR r.${col(l.id)} IN (SELECT ${col(u.requestId)} FROM ${u}))
        AND r.${col(l.id)} <= ${upTo}
      ORDER BY r.${col(l.id)} LIMIT ${limit}`,
  ]);
  const at = (state.results[0] as { at: number } | undefined)?.at;
  if (at === undefined) throw new Error("log_index_state has no row: are the log database's migrations applied?");
  return { at, rows: rows.results as unknown as PendingLog[] };
}

/** The columns of a log its keyed values are made of (the blueprints' only for a log without extra_values). */
export type LogValuesRow = Pick<PendingLog, "tags" | "metadata" | "extra_values" | "prompt_input_variables" | "input" | "output" | "parameters" | "body" | "input_text" | "output_text">;

/**
 * A log's keyed values (its tags and metadata as they stand, and its extra values), and, for a log
 * written before extra_values, the extra values made now from its row (null otherwise).
 */
export function valuesOf(r: LogValuesRow): { values: IndexRow[]; made: IndexRow[] | null } {
  const tags = JSON.parse(r.tags) as string[];
  const metadata = JSON.parse(r.metadata) as Record<string, string>;
  if (r.extra_values !== null) {
    const fromColumns = indexRowsOf({ tags, metadata, prompt_input_variables: {}, tools: [], outputText: "" }).filter(([kind, key, value]) => isDerived(kind, key, value));
    return { values: [...fromColumns, ...(JSON.parse(r.extra_values) as IndexRow[])], made: null };
  }
  const blueprints = decodeBlueprints({ input: r.input!, output: r.output!, parameters: r.parameters!, body: r.body, inputText: r.input_text!, outputText: r.output_text! });
  const values = indexRowsOf({
    tags,
    metadata,
    prompt_input_variables: JSON.parse(r.prompt_input_variables!) as Record<string, unknown>,
    tools: toolsOf(blueprints),
    outputText: r.output_text!,
  });
  return { values, made: extraValuesOf(values) };
}

/** The statements indexing `rows`, each writing only while the watermark is at `at` and every log is at the revision read. */
function indexStatements(rows: PendingLog[], at: number): Statement[] {
  const to = Math.max(at, ...rows.map((r) => r.id));
  const read = JSON.stringify(rows.map((r) => [r.id, r.revision]));
  const ids = JSON.stringify(rows.map((r) => r.id));
  const unchanged = sql`(SELECT ${col(st.indexedTo)} FROM ${st} WHERE ${st.id} = 1) = ${at} AND (SELECT count(*) FROM json_each(${read}) AS g
    CROSS JOIN ${l} AS gr ON gr.${col(l.id)} = g.value ->> 0 AND gr.${col(l.revision)} = g.value ->> 1) = ${rows.length}`;
  const entries: [number, IndexRow[] | null][] = [];
  const facets: [number, FacetRow[]][] = [];
  const made: [number, number, IndexRow[]][] = [];
  for (const r of rows) {
    const { values, made: extra } = valuesOf(r);
    entries.push([r.id, extra]);
    if (extra) made.push([r.id, r.revision, extra]);
    const scalars = { model: r.model, provider: r.provider, status: r.status, promptId: r.prompt_id, promptName: r.prompt_name, traceId: r.trace_id, spanName: r.span_name || null };
    facets.push([r.ws, facetRowsOf(scalars, values)]);
  }
  const theseLogs = sql`json_each(${ids}) AS j CROSS JOIN ${l} AS r ON r.${col(l.id)} = j.value`;
  return [
    // Facet rows first: the search entries' keys are their ids.
    ...addFacetCounts(countFacets(facets), unchanged),
    ...chunkIndexRows(entries).map((json) => insertSearchEntries(json, unchanged)),
    // The daily totals of logs counted before the watermark came (listed in request_log_unindexed);
    // the others are counted later (countDaily).
    dailyTotals(theseLogs, ["all", "model", "provider", "prompt", "status"], 1, sql`${unchanged} AND r.${col(l.id)} <= ${COUNTED_TO}`),
    sql`DELETE FROM ${u} WHERE ${u.requestId} IN (SELECT value FROM json_each(${ids})) AND ${unchanged}`,
    // Its count says whether the batch wrote (the same condition held for every statement before it).
    sql`UPDATE ${st} SET ${col(st.indexedTo)} = ${to} WHERE ${st.id} = 1 AND ${unchanged}`,
    // A log written before extra_values existed keeps the ones made now (read by filters, suggestions
    // with a filter, groupings and the tracking calls), once the batch has written.
    ...made.map(
      ([id, revision, values]) =>
        sql`UPDATE ${l} SET ${col(l.extraValues)} = ${JSON.stringify(values)} WHERE ${l.id} = ${id} AND ${l.revision} = ${revision} AND (SELECT ${col(st.indexedTo)} FROM ${st} WHERE ${st.id} = 1) = ${to}`,
    ),
  ];
}

export interface IndexOptions {
  /** Logs indexed at most (the caller's budget); every waiting log when absent. */
  limit?: number;
  /** Only logs up to this id (a snapshot's mark); every waiting log when absent. */
  upTo?: number;
  /** Now, for whether the indexed logs' daily totals are due (countDaily); not counted when absent. */
  now?: number;
  /** Work added to each index batch (the queue consumer's and the sweeper's: src/queue/). */
  extension?: IndexExtension;
}

/**
 * Indexes this log database's waiting logs (any workspace's), INDEX_BATCH_LOGS a batch, oldest first;
 * returns how many it indexed. Another indexer running at the same time takes its share: a batch that
 * finds the watermark moved reads again, for as long as the others progress. Throws when batches kept
 * writing nothing with the watermark standing still (a log rewritten during each attempt; the caller's
 * retry, or the sweeper, takes it up later) or D1 failed.
 */
export async function indexPending(logs: Db, opts: IndexOptions = {}): Promise<number> {
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  const upTo = opts.upTo ?? Number.MAX_SAFE_INTEGER;
  let indexed = 0;
  let idle = 0;
  let lastAt: number | null = null;
  while (indexed < limit) {
    const { at, rows } = await readPending(logs, Math.min(INDEX_BATCH_LOGS, limit - indexed), upTo);
    if (rows.length === 0) break;
    // A watermark that moved since the last read is another indexer's progress, not a stall: a
    // snapshot racing busy consumers waits for them rather than failing.
    if (at !== lastAt) idle = 0;
    lastAt = at;
    const own = indexStatements(rows, at);
    // The watermark's move: last but the extra values' updates; an extension's statements go before it.
    const mark = own.length - 1 - rows.filter((r) => r.extra_values === null).length;
    const extra = opts.extension ? await opts.extension.batch(logs, rows.map((r) => ({ id: r.id, workspaceId: r.ws, revision: r.revision, promptId: r.prompt_id })), at) : null;
    const added = extra?.statements ?? [];
    const results = await runBatch(logs, [...own.slice(0, mark), ...added, ...own.slice(mark)]);
    const wrote = results[mark + added.length].meta.changes ?? 0;
    if (wrote > 0) {
      indexed += rows.length;
      idle = 0;
      if (extra) await extra.committed(results.slice(mark, mark + added.length));
    } else if (++idle >= INDEX_ATTEMPTS) {
      throw new Error(`indexing ${rows.length} logs: they (or the watermark) changed during each of ${INDEX_ATTEMPTS} attempts`);
    }
  }
  if (opts.now !== undefined) await countDaily(logs, opts.now);
  return indexed;
}

/** Daily totals are counted once this many indexed logs wait for them … */
const COUNT_BATCH_LOGS = 500;
/** … or once the oldest has waited this long. */
export const COUNT_AFTER_MS = 30_000;
/** Logs counted in one D1 batch at most. */
const COUNT_MAX_LOGS = 5_000;

/**
 * Adds the indexed logs not counted yet to the daily totals, when enough of them wait (or the oldest
 * has waited long enough), COUNT_MAX_LOGS a batch; returns how many it counted. The totals are made
 * in SQL from the rows as they are then, and the batch writes only while the watermark is where it
 * read it: a log is counted once. A tracking call moves a log's prompt in the totals only once it is
 * counted, so a call before or after counting leaves the same totals.
 */
export async function countDaily(logs: Db, now: number): Promise<number> {
  let counted = 0;
  for (let due = true; due; ) {
    const [state] = await logs.all<{ from: number; n: number; oldest: number | null; to: number | null }>(sql`
      SELECT c.from_id AS "from", (SELECT count(*) FROM (SELECT 1 FROM ${l} WHERE ${l.id} > c.from_id AND ${l.id} <= c.indexed LIMIT ${COUNT_MAX_LOGS})) AS n,
             (SELECT ${col(l.createdAt)} FROM ${l} WHERE ${l.id} > c.from_id AND ${l.id} <= c.indexed ORDER BY ${l.id} LIMIT 1) AS oldest,
             (SELECT max(id) FROM (SELECT ${col(l.id)} AS id FROM ${l} WHERE ${l.id} > c.from_id AND ${l.id} <= c.indexed ORDER BY ${l.id} LIMIT ${COUNT_MAX_LOGS})) AS "to"
      FROM (SELECT ${col(st.countedTo)} AS from_id, ${col(st.indexedTo)} AS indexed FROM ${st} WHERE ${st.id} = 1) AS c`);
    if (!state || state.n === 0 || state.to === null) break;
    if (state.n < COUNT_BATCH_LOGS && (state.oldest ?? now) > now - COUNT_AFTER_MS) break;
    const unchanged = sql`${COUNTED_TO} = ${state.from}`;
    // Logs from before the watermark still listed as waiting are counted by the indexer itself.
    const these = sql`${l} AS r`;
    const range = sql`r.${col(l.id)} > ${state.from} AND r.${col(l.id)} <= ${state.to} AND r.${col(l.id)} NOT IN (SELECT ${col(u.requestId)} FROM ${u}) AND ${unchanged}`;
    const results = await runBatch(logs, [
      dailyTotals(these, ["all", "model", "provider", "prompt", "status"], 1, range),
      sql`UPDATE ${st} SET ${col(st.countedTo)} = ${state.to} WHERE ${st.id} = 1 AND ${unchanged}`,
    ]);
    if ((results[1].meta.changes ?? 0) === 0) break;
    counted += state.n;
    due = state.n >= COUNT_MAX_LOGS;
  }
  return counted;
}

/**
 * Before a snapshot selects (a dataset version or a sheet import from a filter): indexes every log of
 * the workspace's databases written so far (and the other workspaces' waiting before them), so the
 * snapshot holds every log written before it was asked for, however recently; the request's index
 * extension (Signals) sees those logs as the queue's indexing would. Returns how many it indexed.
 */
export async function indexBeforeSnapshot(logs: WorkspaceLogs): Promise<number> {
  const counts = await eachPeriod(logs, async (db) => {
    const [newest] = await db.all<{ id: number | null }>(sql`SELECT max(${col(l.id)}) AS id FROM ${l}`);
    return newest?.id == null ? 0 : indexPending(db, { upTo: newest.id, extension: logs.indexExtension });
  });
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * Indexes the logs a write announced (`ids`, of this database) and every log waiting before them:
 * the index queue's consumer. Returns how many it indexed; ids indexed already cost nothing.
 */
export async function indexLogs(logs: Db, ids: readonly number[], now?: number, extension?: IndexExtension): Promise<number> {
  return ids.length === 0 ? 0 : indexPending(logs, { upTo: Math.max(...ids), now, extension });
}

/**
 * The sweeper's part for one log database: indexes the waiting logs once the oldest has waited
 * SWEEP_AFTER_MS, at most SWEEP_MAX_LOGS a run. Returns how many it indexed.
 */
export async function indexLeftBehind(logs: Db, now: number, extension?: IndexExtension): Promise<number> {
  const [oldest] = await logs.all<{ created: number }>(sql`
    SELECT r.${col(l.createdAt)} AS created FROM ${l} AS r
    WHERE r.${col(l.id)} > (SELECT ${col(st.indexedTo)} FROM ${st} WHERE ${st.id} = 1) OR r.${col(l.id)} IN (SELECT ${col(u.requestId)} FROM ${u})
    ORDER BY r.${col(l.id)} LIMIT 1`);
  if (oldest && oldest.created <= now - SWEEP_AFTER_MS) return indexPending(logs, { limit: SWEEP_MAX_LOGS, now, extension });
  await countDaily(logs, now);
  return 0;
}

/** How many logs of this database wait for the indexer (the watermark's distance to the newest, and the listed ones). */
export async function waitingLogs(logs: Db): Promise<number> {
  const [row] = await logs.all<{ n: number }>(sql`
    SELECT (SELECT count(*) FROM ${l} WHERE ${l.id} > (SELECT ${col(st.indexedTo)} FROM ${st} WHERE ${st.id} = 1))
         + (SELECT count(*) FROM ${u} WHERE ${u.requestId} <= (SELECT ${col(st.indexedTo)} FROM ${st} WHERE ${st.id} = 1)) AS n`);
  return row?.n ?? 0;
}
