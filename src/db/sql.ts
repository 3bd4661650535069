// SQL fragments the schema and the services share.
import { getTableColumns, getTableName, sql, type Name, type SQL } from "drizzle-orm";
import { SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { chainIncludes } from "../lib/error-text";

/** Now, in epoch milliseconds (the unit of every time column). */
export const nowMs = sql`(cast(unixepoch('subsec') * 1000 as integer))`;

/** `column IN (values)` with the list bound as one JSON parameter: any length fits D1's 100 bound parameters. */
export function inJsonList(column: SQLiteColumn | SQL, values: readonly (string | number)[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
}

// Table and column names reach SQL text from the schema, never as bare words, so a rename fails the
// compiler (test/node/sql-names.test.ts greps for bare table names). In a `sql` template a table is
// `${table}` and a column `${table.column}` ("table"."column"); SQL built as text takes a table's name
// from drizzle's getTableName, and its columns' names from columnNames, once at module load, unquoted as
// before (the text sent to D1 does not change). Only the FTS table's columns, which drizzle does not know,
// are named as constants (REQUEST_LOGS_FTS_COLUMNS in db/schema/requests.ts).

/** A column's bare name, for where SQLite wants it unqualified: after an alias (`v.${col(t.c)}`), a SET target. */
export function col(column: SQLiteColumn): Name {
  return sql.identifier(column.name);
}

/**
 * `"table"."column"` wherever it stands. `${table.column}` gives the same, except at the top of a select field
 * of a one-table query, where drizzle drops the table: inside a subquery there the column would bind to the
 * subquery's own table.
 */
export function qualified(column: SQLiteColumn): SQL {
  return sql`${sql.identifier(getTableName(column.table))}.${sql.identifier(column.name)}`;
}

/** `"a", "b", …`: the SQL names of a table's columns by their drizzle keys, for an INSERT's column list. */
export function columnList<T extends SQLiteTable>(table: T, keys: readonly (keyof T["$inferInsert"] & string)[]): SQL {
  const columns = getTableColumns(table) as Record<string, SQLiteColumn>;
  return sql.join(
    keys.map((k) => sql.identifier(columns[k].name)),
    sql`, `,
  );
}

/** A table's SQL column names by their drizzle keys, unquoted: for SQL built as text, taken once at module load. */
export function columnNames<T extends SQLiteTable>(table: T): { readonly [K in keyof T["_"]["columns"]]: string } {
  const columns = getTableColumns(table) as Record<string, SQLiteColumn>;
  return Object.fromEntries(Object.entries(columns).map(([key, c]) => [key, c.name])) as { [K in keyof T["_"]["columns"]]: string };
}

/** Whether a write failed on the NOT NULL constraint of this column (a guard that refuses a whole batch writes NULL there). */
export function isNotNullViolation(err: unknown, column: SQLiteColumn): boolean {
  return chainIncludes(err, `NOT NULL constraint failed: ${getTableName(column.table)}.${column.name}`);
}

/**
 * Whether a write failed on a UNIQUE constraint of a table (SQLite names the constraint's columns as
 * `table.column` in its message); given a column, on a constraint that includes that column.
 */
export function isUniqueViolation(err: unknown, of: SQLiteTable | SQLiteColumn): boolean {
  if (!(of instanceof SQLiteColumn)) return chainIncludes(err, `UNIQUE constraint failed: ${getTableName(of)}.`);
  return chainIncludes(err, new RegExp(`UNIQUE constraint failed: [^:]*\\b${getTableName(of.table)}\\.${of.name}\\b`));
}
