// SQL fragments the schema and the services share.
import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/** Now, in epoch milliseconds (the unit of every time column). */
export const nowMs = sql`(cast(unixepoch('subsec') * 1000 as integer))`;

/** `column IN (values)` with the list bound as one JSON parameter: any length fits D1's 100 bound parameters. */
export function inJsonList(column: SQLiteColumn | SQL, values: readonly (string | number)[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
}
