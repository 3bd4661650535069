// One row into a table by a statement whose SQL text is made once per table and set of columns, for
// the hottest write path (a request log's 36 columns). drizzle builds its query objects again for
// every insert: a profile of `npm run bench:log` put that at about a tenth of the Worker's CPU on
// log-request. Values reach D1 as drizzle's columns map them (JSON columns as text); columns left out
// take their SQL defaults, as with drizzle's insert.
import { getTableColumns, getTableName, type InferInsertModel } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { d1Of, type Db } from "./client";

const texts = new WeakMap<SQLiteTable, Map<string, string>>();

/** The prepared INSERT of `values` into `table`, RETURNING the `returning` columns (SQL names) when given. */
export function insertRow<T extends SQLiteTable>(db: Db, table: T, values: InferInsertModel<T>, returning: readonly string[] = []): D1PreparedStatement {
  const columns = getTableColumns(table);
  const keys = Object.keys(values).filter((k) => (values as Record<string, unknown>)[k] !== undefined);
  const id = `${keys.join(",")}|${returning.join(",")}`;
  let byKeys = texts.get(table);
  if (!byKeys) texts.set(table, (byKeys = new Map()));
  let text = byKeys.get(id);
  if (!text) {
    const names = keys.map((k) => `"${columns[k].name}"`).join(", ");
    const back = returning.length > 0 ? ` RETURNING ${returning.map((r) => `"${r}"`).join(", ")}` : "";
    text = `INSERT INTO "${getTableName(table)}" (${names}) VALUES (${keys.map(() => "?").join(", ")})${back}`;
    byKeys.set(id, text);
  }
  const params = keys.map((k) => {
    const v = (values as Record<string, unknown>)[k];
    return v === null ? null : columns[k].mapToDriverValue(v);
  });
  return d1Of(db).prepare(text).bind(...params);
}
