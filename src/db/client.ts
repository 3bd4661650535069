// One drizzle handle per request over the D1 binding.
import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = ReturnType<typeof getDb>;

export function getDb(d1: D1Database) {
  return drizzle(d1, { schema });
}

/**
 * The D1 binding under a drizzle handle, for the statements drizzle cannot build (each caller says
 * which). The one place that reaches past drizzle.
 */
export function d1Of(db: Db): D1Database {
  return db.$client;
}
