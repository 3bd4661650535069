// Where a trace lives: a trace stays in one log database, the newest period's that already holds a
// span or a log record of it (a new trace: the current period's), so a trace begun before a period
// change goes on where it began and its reads and its joins find it whole.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { groupBy } from "../lib/collections";
import { spans, traceLogRecords } from "../db/schema";
import { eachPeriod, type WorkspaceLogs } from "./periods";

/** Each trace among `traceIds` that has spans or log records in the workspace: the newest period's database holding some. */
export async function traceHomes(store: WorkspaceLogs, ws: number, traceIds: string[]): Promise<Map<string, Db>> {
  const homes = new Map<string, Db>();
  if (traceIds.length === 0) return homes;
  const ids = JSON.stringify(traceIds);
  const found = await eachPeriod(store, (db) =>
    db
      .selectDistinct({ traceId: spans.traceId })
      .from(spans)
      .where(and(eq(spans.workspaceId, ws), sql`${spans.traceId} IN (SELECT value FROM json_each(${ids}))`))
      .union(
        db
          .selectDistinct({ traceId: traceLogRecords.traceId })
          .from(traceLogRecords)
          .where(and(eq(traceLogRecords.workspaceId, ws), sql`${traceLogRecords.traceId} IN (SELECT value FROM json_each(${ids}))`)),
      ),
  );
  store.periods.forEach((p, i) => {
    for (const r of found[i]) if (!homes.has(r.traceId)) homes.set(r.traceId, p.db);
  });
  return homes;
}

/** The workspace's items grouped by the database their trace lives in (a new trace's: the current period's). */
export async function byTraceHome<T>(store: WorkspaceLogs, ws: number, items: readonly T[], traceOf: (item: T) => string): Promise<Map<Db, T[]>> {
  if (!store.spread) return new Map(items.length ? [[store.current, [...items]]] : []);
  const homes = await traceHomes(store, ws, [...new Set(items.map(traceOf))]);
  return groupBy(items, (item) => homes.get(traceOf(item)) ?? store.current);
}
