// The one way a service writes several statements atomically: drizzle query builders, drizzle `sql`
// templates and prepared statements, in order, in one D1 batch (one transaction: any failure rolls
// all of them back). drizzle's own db.batch() cannot carry a parameterized `sql` statement (no
// prepared statement behind it), which the INSERT … SELECT statements that number versions need.
import { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { d1Of, type Db } from "./client";

const dialect = new SQLiteAsyncDialect();

export type Statement = SQL | { toSQL(): { sql: string; params: unknown[] } } | D1PreparedStatement;

/** A D1 prepared statement from a drizzle `sql` template or query builder (a prepared one as it is). */
export function statement(db: Db, s: Statement): D1PreparedStatement {
  if (s instanceof SQL) {
    const q = dialect.sqlToQuery(s);
    return d1Of(db).prepare(q.sql).bind(...q.params);
  }
  if ("toSQL" in s) {
    const q = s.toSQL();
    return d1Of(db).prepare(q.sql).bind(...q.params);
  }
  return s;
}

/**
 * Runs the statements in order in one transaction. Each result's `results` holds the rows a
 * statement returned (RETURNING or SELECT), under their SQL column names.
 */
export async function runBatch(db: Db, statements: readonly Statement[]): Promise<D1Result[]> {
  if (statements.length === 0) return [];
  return d1Of(db).batch(statements.map((s) => statement(db, s)));
}
