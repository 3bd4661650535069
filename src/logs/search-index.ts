// A log's search index, the statements every writer of it shares (the indexer, the tracking calls, a
// span's log records, span ingestion): its keyed values as facet counts and as the `keys` of its
// request_log_search entry, and whether it is indexed yet. D1 bills every row and index entry a
// statement writes, so the layout is one entry per log in the full-text table (its texts and its keys
// together) and one clustered row per distinct value in request_log_facets, counted a batch of logs at
// a time (docs/storage.md says what each costs).
import { getTableName, sql, type SQL } from "drizzle-orm";
import { logIndexState, REQUEST_LOGS_FTS, REQUEST_LOGS_FTS_COLUMNS, requestLogFacets, requestLogs } from "../db/schema";
import { col, columnList } from "../db/sql";
import { countedSql, indexedSql, logValuesSql } from "../filters";
import type { FacetRow } from "./index-rows";

/**
 * Rows travel as JSON text in one bound parameter per statement. D1 caps a value at 2 MB and short
 * tags grow ~4x as JSON rows, so rows are split into statements of at most this many bytes.
 */
const CHUNK_BYTES = 256 * 1024;

export function chunkIndexRows(rows: readonly unknown[], maxBytes = CHUNK_BYTES): string[] {
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

/**
 * SQL true while the log is indexed: `id` a log id, or SQL text of an id expression built from the
 * schema's names (`r.id`). The rule is the filter compiler's (indexedSql), stated once.
 */
export function isIndexed(id: number | string): SQL {
  return sql.raw(indexedSql(typeof id === "number" ? String(Math.trunc(id)) : id));
}

/** SQL true while the log is counted in the daily totals too (countedSql), `id` as for isIndexed. */
export function isCounted(id: number | string): SQL {
  return sql.raw(countedSql(typeof id === "number" ? String(Math.trunc(id)) : id));
}

// ---- facet counts ----

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

const f = requestLogFacets;
const NEXT_ID = sql`(SELECT st.${col(logIndexState.nextFacetId)} FROM ${logIndexState} AS st WHERE st.${col(logIndexState.id)} = 1)`;
const FACET_KEY = columnList(f, ["workspaceId", "field", "key", "value"]);

/**
 * Statements adding facet counts, each only `when` holds: a value seen for the first time gets its row
 * and the next free ids (log_index_state.next_facet_id, moved on by as many as the statements could
 * have taken), a value already there its count added.
 */
export function addFacetCounts(counts: readonly FacetCount[], when: SQL = sql`true`): SQL[] {
  if (counts.length === 0) return [];
  // Each row carries its place among all the rows, so the ids of every chunk are distinct.
  const rows = counts.map((c, i) => [...c, i]);
  return [
    ...chunkIndexRows(rows).map(
      (json) => sql`
      INSERT INTO ${f} (${columnList(f, ["workspaceId", "field", "key", "value", "valueFold", "count", "id"])})
      SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, ${NEXT_ID} + (j.value ->> 6)
      FROM json_each(${json}) AS j WHERE ${when}
      ON CONFLICT (${FACET_KEY}) DO UPDATE SET ${col(f.count)} = ${col(f.count)} + excluded.${col(f.count)}`,
    ),
    takeFacetIds(counts.length, when),
  ];
}

/**
 * Statements adding the facet counts an SQL query gives (rows of workspace, field, key, value, fold,
 * count, at most `maxRows` of them), as addFacetCounts does.
 */
export function addFacetCountsFrom(select: SQL, maxRows: number, when: SQL = sql`true`): SQL[] {
  return [
    sql`INSERT INTO ${f} (${columnList(f, ["workspaceId", "field", "key", "value", "valueFold", "count", "id"])})
      SELECT c.*, ${NEXT_ID} + row_number() OVER () FROM (${select}) AS c WHERE ${when}
      ON CONFLICT (${FACET_KEY}) DO UPDATE SET ${col(f.count)} = ${col(f.count)} + excluded.${col(f.count)}`,
    takeFacetIds(maxRows, when),
  ];
}

/** Moves the next free facet id on by `n` (ids a statement took or could have taken), only `when` holds. */
export function takeFacetIds(n: number, when: SQL = sql`true`): SQL {
  return sql`UPDATE ${logIndexState} SET ${col(logIndexState.nextFacetId)} = ${col(logIndexState.nextFacetId)} + ${n} WHERE ${logIndexState.id} = 1 AND ${when}`;
}

/** The facet counts `match` (SQL over the table) selects go down by one, only `when` holds; then those at 0 are removed. */
export function facetsDown(workspaceId: number, match: SQL, when: SQL): SQL[] {
  return [
    sql`UPDATE ${f} SET ${col(f.count)} = ${col(f.count)} - 1 WHERE ${f.workspaceId} = ${workspaceId} AND ${match} AND ${when}`,
    sql`DELETE FROM ${f} WHERE ${f.workspaceId} = ${workspaceId} AND ${match} AND ${f.count} <= 0`,
  ];
}

/**
 * SQL: the facet rows (field, key, value) of the keyed values `values` (a subquery of (kind, key,
 * value) rows, logValuesSql) as rows of a subquery: a tag or tool name counts under `tags` or
 * `tool_names`, a metadata, input variable or output value under `<kind>_values` with its key, and that
 * key under `<kind>_keys`. The same mapping facetRowsOf makes in JavaScript.
 */
export function facetsOfValues(values: SQL): SQL {
  return sql`(
    SELECT CASE e.kind WHEN 'tag' THEN 'tags' WHEN 'tool' THEN 'tool_names' ELSE e.kind || '_values' END AS field,
           CASE WHEN e.kind IN ('tag', 'tool') THEN '' ELSE e.key END AS key, e.value AS value
    FROM ${values} AS e
    UNION
    SELECT e.kind || '_keys', '', e.key FROM ${values} AS e WHERE e.kind NOT IN ('tag', 'tool'))`;
}

/**
 * SQL: the `keys` of a log's search entry, the tokens "v" + id of the facet rows of its keyed values
 * (`values`, a subquery of (kind, key, value) rows) in workspace `ws`. Every value of an indexed log has
 * its facet row (its count includes the log), so every value has its token.
 */
export function keysOf(ws: SQL, values: SQL): SQL {
  return sql`(SELECT group_concat('v' || kf.${col(f.id)}, ' ') FROM ${facetsOfValues(values)} AS kv
    CROSS JOIN ${f} AS kf ON kf.${col(f.workspaceId)} = ${ws} AND kf.${col(f.field)} = kv.field AND kf.${col(f.key)} = kv.key AND kf.${col(f.value)} = kv.value)`;
}

/** SQL: the keyed values of the log aliased `alias` in an enclosing query (logValuesSql), `extra` standing for its extra_values when given. */
export function valuesOfLog(alias: string, extra?: string): SQL {
  return sql.raw(logValuesSql(alias, extra));
}

/** SQL: the keyed values of the workspace's log `id` as its row is when the statement runs (logValuesSql). */
export function valuesOfLogId(ws: number, id: number): SQL {
  const r = requestLogs;
  const of = { from: `${getTableName(r)} AS lr`, where: `lr.${r.id.name} = ${Math.trunc(id)} AND lr.${r.workspaceId.name} = ${Math.trunc(ws)}` };
  return sql.raw(logValuesSql("lr", undefined, of));
}

const FTS = sql.identifier(REQUEST_LOGS_FTS);
const FC = REQUEST_LOGS_FTS_COLUMNS;
const FTS_COLUMNS = sql.raw(`${FC.rowid}, ${FC.inputText}, ${FC.outputText}, ${FC.keys}`);

/**
 * The statement giving the indexed log `id` its search entry as its row is now (its texts, its keyed
 * values' tokens): after a call that changed them. Nothing for a log still unindexed (the indexer
 * writes its entry from the row); the facet rows of its new values must be written before it.
 */
export function refreshSearchEntry(id: number, when: SQL = sql`true`): SQL {
  const r = requestLogs;
  const ofLog = sql`FROM ${r} AS r WHERE r.${col(r.id)} = ${id}`;
  // A contentless table's UPDATE sets every column, by rowid.
  return sql`UPDATE ${FTS} SET ${sql.raw(FC.inputText)} = (SELECT r.${col(r.inputText)} ${ofLog}), ${sql.raw(FC.outputText)} = (SELECT r.${col(r.outputText)} ${ofLog}),
    ${sql.raw(FC.keys)} = (SELECT ${keysOf(sql`r.${col(r.workspaceId)}`, valuesOfLog("r"))} ${ofLog})
    WHERE ${sql.raw(FC.rowid)} = ${id} AND ${isIndexed(id)} AND ${when}`;
}

/**
 * The statement inserting the search entries of the logs `logs` ([id, extra values] each, as JSON; the
 * extra values null but for a log whose row has none yet) from their rows, only `when` holds.
 */
export function insertSearchEntries(logs: string, when: SQL): SQL {
  const r = requestLogs;
  const values = valuesOfLog("r", `coalesce(r.${r.extraValues.name}, j.value -> 1)`);
  return sql`INSERT INTO ${FTS} (${FTS_COLUMNS})
    SELECT r.${col(r.id)}, r.${col(r.inputText)}, r.${col(r.outputText)}, ${keysOf(sql`r.${col(r.workspaceId)}`, values)}
    FROM json_each(${logs}) AS j CROSS JOIN ${r} AS r ON r.${col(r.id)} = j.value ->> 0 WHERE ${when}`;
}
