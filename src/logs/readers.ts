// The log store's readers for other features: a sheet import reads matching logs page by page.
// Compiled statements: their numbered parameters are shared (src/filters/), which drizzle's sql cannot express.
import { eq, sql } from "drizzle-orm";
import { d1Of, type Db } from "../db/client";
import { requestLogs } from "../db/schema";
import { compileRequestLogQuery, SqlParams, type FilterGroup } from "../filters";
import { LOGS_BY_IDS } from "./datasets";

/** The workspace's newest log id (0 without logs): an import takes the logs that exist when it starts. */
export async function newestLogId(db: Db, ws: number): Promise<number> {
  const [newest] = await db
    .select({ id: sql<number | null>`max(${requestLogs.id})` })
    .from(requestLogs)
    .where(eq(requestLogs.workspaceId, ws));
  return newest?.id ?? 0;
}

/** The logs a filter matches, as stored rows, in id order: counted once, then read a page at a time. */
export function matchingLogPages<Row extends { id: number }>(db: Db, ws: number, filter: FilterGroup, pageSize: number) {
  const d1 = d1Of(db);
  const params = new SqlParams();
  const where = compileRequestLogQuery({ filter_group: filter }, { params, workspace: params.add(ws) });
  const after = params.add(-1);
  const afterIndex = params.values.length - 1;
  const limit = params.add(pageSize);
  const query = `SELECT r.* FROM request_logs AS r WHERE ${where} AND r.id > ${after} ORDER BY r.id LIMIT ${limit}`;
  return {
    async count(): Promise<number> {
      const counted = await d1
        .prepare(`SELECT count(*) AS n FROM request_logs AS r WHERE ${where}`)
        .bind(...params.values.slice(0, afterIndex))
        .first<{ n: number }>();
      return counted?.n ?? 0;
    },
    async *pages(): AsyncGenerator<Row[]> {
      const values = [...params.values];
      for (;;) {
        const { results } = await d1.prepare(query).bind(...values).all<Row>();
        if (results.length > 0) yield results;
        if (results.length < pageSize) return;
        values[afterIndex] = results[results.length - 1].id;
      }
    },
  };
}

/**
 * The workspace's logs among `ids` with an id of at most `maxId`, as stored rows in the order of `ids`,
 * `pageSize` ids at a time (another workspace's ids, or unknown ones, are skipped).
 */
export async function* logsInOrder<Row extends { id: number }>(db: Db, ws: number, ids: readonly number[], maxId: number, pageSize: number): AsyncGenerator<Row[]> {
  const d1 = d1Of(db);
  const query = `SELECT r.* FROM ${LOGS_BY_IDS("?1", "?2")} WHERE r.id <= ?3 ORDER BY j.key`;
  for (let at = 0; at < ids.length; at += pageSize) {
    const { results } = await d1.prepare(query).bind(JSON.stringify(ids.slice(at, at + pageSize)), ws, maxId).all<Row>();
    yield results;
  }
}
