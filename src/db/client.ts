// One drizzle handle per request over each D1 binding it uses. Queries name their tables from
// ./schema directly; the handle is made without the schema, because drizzle then builds its
// relational-query map of every table for each handle (about 0.15 ms of CPU), and nothing here uses
// relational queries.
import { drizzle } from "drizzle-orm/d1";

export type Db = ReturnType<typeof getDb>;

export function getDb(d1: D1Database) {
  return drizzle(d1);
}

/**
 * The D1 binding under a drizzle handle, for the statements drizzle cannot build (each caller says
 * which). The one place that reaches past drizzle.
 */
export function d1Of(db: Db): D1Database {
  return db.$client;
}
