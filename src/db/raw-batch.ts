// One atomic D1 batch of drizzle query builders and raw `sql` statements. drizzle's own db.batch()
// cannot carry a parameterized db.run(sql`…`) (no prepared statement behind it), which the
// INSERT … SELECT statements that number versions and attach mappings need.
import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import type { Db } from "./client";

const dialect = new SQLiteAsyncDialect();

type Statement = SQL | { toSQL(): { sql: string; params: unknown[] } };

/** A D1 prepared statement from a drizzle `sql` template or query builder, for env.DB.batch(). */
export function statement(db: Db, s: Statement): D1PreparedStatement {
  const q = "toSQL" in s ? s.toSQL() : dialect.sqlToQuery(s);
  return (db as unknown as { $client: D1Database }).$client.prepare(q.sql).bind(...q.params);
}

/** Runs the statements in order in one transaction; any failure rolls all of them back. */
export async function rawBatch(db: Db, statements: Statement[]): Promise<D1Result[]> {
  return (db as unknown as { $client: D1Database }).$client.batch(statements.map((s) => statement(db, s)));
}
