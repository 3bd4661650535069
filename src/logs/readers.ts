// The log store's readers for other features: a sheet import reads matching logs page by page, and an
// import or a fill fixes the logs that exist when it starts (a mark) so a run started again reads the
// same ones. Compiled statements: their numbered parameters are shared (src/filters/), which
// drizzle's sql cannot express.
import { eq, getTableName, sql } from "drizzle-orm";
import { d1Of, type Db } from "../db/client";
import { requestLogs } from "../db/schema";
import { columnNames } from "../db/sql";
import { compileRequestLogQuery, SqlParams, type Filter, type FilterGroup, type Scalar } from "../filters";
import { LOGS_BY_IDS } from "./by-ids";
import { ID_RANGE_SIZE, idRangeOf } from "./id-ranges";
import { readyForSnapshot } from "./layout-move";
import { eachPeriod, type WorkspaceLogs } from "./periods";
import { filterSignalIds } from "./signal-names";

/**
 * The logs that exist at one moment. An array: the newest id of each of the workspace's databases
 * then (its range's base when it had none); a log is in the mark when its id is at most the newest of
 * its own range, or from before ranges existed (range 0). A bare number is a mark taken before
 * ranges: every id up to it.
 */
export type LogMark = number | number[];

const LOGS = getTableName(requestLogs);
const R = columnNames(requestLogs);

/** The workspace's logs as they are now, as a mark. */
export async function logMark(logs: WorkspaceLogs, ws: number): Promise<number[]> {
  return eachPeriod(logs, async (db, i) => {
    const [newest] = await db
      .select({ id: sql<number | null>`max(${requestLogs.id})` })
      .from(requestLogs)
      .where(eq(requestLogs.workspaceId, ws));
    const base = logs.periods[i].range * ID_RANGE_SIZE;
    // Only ids of the database's own range count (older ones are in the mark anyway).
    return Math.max(base, newest?.id ?? 0);
  });
}

/** A mark's condition on `col` (pure), its values added to `params`. */
export function markSql(mark: LogMark, params: SqlParams, col = `r.${R.id}`): string {
  if (!Array.isArray(mark)) return `${col} <= ${params.add(mark)}`;
  const ranges = mark.filter((m) => idRangeOf(m) > 0).map((m) => `${col} BETWEEN ${params.add(idRangeOf(m) * ID_RANGE_SIZE + 1)} AND ${params.add(m)}`);
  return `(${[`${col} < ${params.add(ID_RANGE_SIZE)}`, ...ranges].join(" OR ")})`;
}

/** A mark as a filter of a filter group (pl_id is the log's id), for a stored filter that fixes the logs. */
export function markFilter(mark: LogMark): Filter | FilterGroup {
  if (!Array.isArray(mark)) return { field: "pl_id", operator: "lte", value: mark };
  const range = (m: number): FilterGroup => ({
    logic: "AND",
    filters: [
      { field: "pl_id", operator: "gt", value: idRangeOf(m) * ID_RANGE_SIZE },
      { field: "pl_id", operator: "lte", value: m },
    ],
  });
  return { logic: "OR", filters: [{ field: "pl_id", operator: "lt", value: ID_RANGE_SIZE }, ...mark.filter((m) => idRangeOf(m) > 0).map(range)] };
}

/**
 * The logs a filter matches, as stored rows: counted once (over every period), then read a page at a
 * time, period by period from the oldest, in id order within each; both once every log written so far
 * is indexed (a snapshot misses none, however recent). `columns`: what a page selects of each log
 * (SQL from constants, over the alias r; its id always among them). `compile()` compiles the filter
 * without reading a log: a caller that must refuse a filter before it answers awaits it first.
 */
export function matchingLogPages<Row extends { id: number }>(logs: WorkspaceLogs, ws: number, filter: FilterGroup, pageSize: number, columns = "r.*") {
  let indexed: Promise<number> | null = null;
  const ready = () => (indexed ??= readyForSnapshot(logs));
  // Compiled once, with the ids of the signals the filter names (read from the control database first).
  let compiled: Promise<{ where: string; query: string; values: Scalar[]; afterIndex: number }> | null = null;
  const compile = () =>
    (compiled ??= filterSignalIds(logs.control, ws, filter).then((signals) => {
      const params = new SqlParams();
      const where = compileRequestLogQuery({ filter_group: filter }, { params, workspace: params.add(ws), signals });
      const after = params.add(-1);
      const afterIndex = params.values.length - 1;
      const limit = params.add(pageSize);
      return { where, query: `SELECT ${columns} FROM ${LOGS} AS r WHERE ${where} AND r.${R.id} > ${after} ORDER BY r.${R.id} LIMIT ${limit}`, values: params.values, afterIndex };
    }));
  /** The pages with the database they were read from. */
  async function* databasePages(): AsyncGenerator<{ db: Db; rows: Row[] }> {
    await ready();
    const { query, values: bound, afterIndex } = await compile();
    for (const { db } of [...logs.periods].reverse()) {
      const values = [...bound];
      for (;;) {
        const { results } = await d1Of(db)
          .prepare(query)
          .bind(...values)
          .all<Row>();
        if (results.length > 0) yield { db, rows: results };
        if (results.length < pageSize) break;
        values[afterIndex] = results[results.length - 1].id;
      }
    }
  }
  return {
    async compile(): Promise<void> {
      await compile();
    },
    async count(): Promise<number> {
      await ready();
      const { where, values, afterIndex } = await compile();
      const counts = await eachPeriod(logs, async (db) => {
        const counted = await d1Of(db)
          .prepare(`SELECT count(*) AS n FROM ${LOGS} AS r WHERE ${where}`)
          .bind(...values.slice(0, afterIndex))
          .first<{ n: number }>();
        return counted?.n ?? 0;
      });
      return counts.reduce((a, b) => a + b, 0);
    },
    databasePages,
    async *pages(): AsyncGenerator<Row[]> {
      for await (const page of databasePages()) yield page.rows;
    },
  };
}

/**
 * The workspace's logs among `ids` that are in the mark, as stored rows in the order of `ids`,
 * `pageSize` ids at a time (another workspace's ids, or unknown ones, are skipped).
 */
export async function* logsInOrder<Row extends { id: number }>(logs: WorkspaceLogs, ws: number, ids: readonly number[], mark: LogMark, pageSize: number): AsyncGenerator<Row[]> {
  const params = new SqlParams();
  const [idsAt, wsAt] = [params.add("[]"), params.add(ws)];
  const query = `SELECT r.* FROM ${LOGS_BY_IDS(idsAt, wsAt)} WHERE ${markSql(mark, params)} ORDER BY j.key`;
  for (let at = 0; at < ids.length; at += pageSize) {
    const page = ids.slice(at, at + pageSize);
    const found = new Map<number, Row>();
    for (const [db, mine] of await logs.byDatabase(page)) {
      const values = [...params.values];
      values[0] = JSON.stringify(mine);
      for (const r of (await d1Of(db).prepare(query).bind(...values).all<Row>()).results) found.set(r.id, r);
    }
    yield page.flatMap((id) => found.get(id) ?? []);
  }
}
