// Ids unique in a deployment. Every database that holds request logs and request groups (each log
// database, and the control database for the workspaces that log there) numbers them in a range of
// its own: range r holds the ids from r × 2^40 + 1 to (r + 1) × 2^40 − 1. The shard map gives a
// database its range the first time it is seen (log_shards.id_range, in order of first sight, so
// reordering LOG_SHARDS changes nothing), and the range says which database holds an id.
//
// A database is moved into its range once, before this isolate hands it out: its AUTOINCREMENT
// counters of request_logs and request_groups are raised to the range's base by inserting a
// placeholder row with that id and deleting it again in the same transaction (SQLite never numbers a
// row at or below the largest id the table ever held). That uses ordinary inserts and deletes of our
// own tables only, nothing D1 could refuse; the database records its base (log_id_range) in the same
// transaction. Concurrent inserts need nothing more: AUTOINCREMENT numbers them on the database's
// single writer, as before.
//
// Range 0 is the ids given before ranges existed: rows keep them (nothing moves), and no database
// numbers in range 0 again. They were given per database, so two workspaces on different databases
// may each hold an old id of the same number; a workspace's own ids were unique in it then as now.
// JavaScript numbers are exact to 2^53, which bounds the ranges at 8191 databases of 2^40 ids each
// (a trillion ids: decades of a database's single writer at full speed).
import { and, eq, sql } from "drizzle-orm";
import { runBatch } from "../db/batch";
import { getDb } from "../db/client";
import { promisesByKey } from "../lib/collections";
import { logIdRange, logShards, requestGroups, requestLogs, requestLogUnindexed } from "../db/schema";

/** Ids a database's range holds: its ids are its range's number times this, plus 1 and up. */
export const ID_RANGE_SIZE = 2 ** 40;

/** The largest range (8191): its last id, 2^53 − 1, is the last integer a JavaScript number holds exactly. */
export const MAX_ID_RANGE = 2 ** 53 / ID_RANGE_SIZE - 1;

/** The range an id is in (0: an id given before ranges existed). */
export function idRangeOf(id: number): number {
  return Math.floor(id / ID_RANGE_SIZE);
}

/** What a database's rows need from the deployment: the control database, and the database itself. */
export interface IdRangeEnv {
  DB: D1Database;
}

/** Ranges never change once given: each isolate keeps the ones it has read. */
const knownRanges = new Map<string, number>();
/** The databases this isolate has seen moved into their range (binding → base); a failure is not remembered. */
const ensured = promisesByKey<string, number>();

/**
 * The range of the database bound as `binding`, given now (the next free one) when the shard map has
 * none for it. One statement: concurrent first sights of two databases get two ranges, and of one
 * database, one.
 */
export async function idRangeFor(control: D1Database, binding: string): Promise<number> {
  const known = knownRanges.get(binding);
  if (known !== undefined) return known;
  const db = getDb(control);
  const [row] = await db
    .insert(logShards)
    .values({ binding, idRange: sql`(SELECT coalesce(max(${logShards.idRange}), 0) + 1 FROM ${logShards})` })
    .onConflictDoUpdate({ target: logShards.binding, set: { idRange: sql`coalesce(${logShards.idRange}, excluded.id_range)` } })
    .returning({ idRange: logShards.idRange });
  const range = row.idRange!;
  if (range > MAX_ID_RANGE) throw new Error(`log database ${binding}: id range ${range} is past the last one (${MAX_ID_RANGE}); ids would pass 2^53`);
  knownRanges.set(binding, range);
  return range;
}

/**
 * Makes sure the database bound as `binding` (`d1`) numbers new logs and groups in its range, once
 * per isolate; answers the range's base. A database that records another base than the shard map
 * gives its binding is bound under the wrong name: refused, since its ids would be read as another
 * database's.
 */
export function ensureIdRange(env: IdRangeEnv, binding: string, d1: D1Database): Promise<number> {
  return ensured(binding, () => moveIntoRange(env.DB, binding, d1));
}

async function moveIntoRange(control: D1Database, binding: string, d1: D1Database): Promise<number> {
  const base = (await idRangeFor(control, binding)) * ID_RANGE_SIZE;
  const db = getDb(d1);
  const recorded = async () => (await db.select({ base: logIdRange.base }).from(logIdRange)).map((r) => r.base);
  let bases = await recorded();
  if (bases.length === 0) {
    const placeholderLog = {
      id: base,
      workspaceId: 0,
      provider: "",
      model: "",
      input: "",
      output: "",
      parameters: "",
      tags: [],
      metadata: {},
      promptInputVariables: {},
      requestStartTime: 0,
      requestEndTime: 0,
    };
    await runBatch(db, [
      // The control database keeps its foreign keys to workspaces: workspace 0 is none, and its rows
      // are gone before the transaction ends.
      sql`PRAGMA defer_foreign_keys = on`,
      db.insert(logIdRange).values({ id: 1, base }).onConflictDoNothing(),
      db.insert(requestGroups).values({ id: base, workspaceId: 0 }).onConflictDoNothing(),
      db.delete(requestGroups).where(and(eq(requestGroups.id, base), eq(requestGroups.workspaceId, 0))),
      db.insert(requestLogs).values(placeholderLog).onConflictDoNothing(),
      // Marked unindexed, as every new log is: it never had a full-text entry, so its delete must not
      // take one out (the delete trigger skips an unindexed log and takes the mark with it).
      db.insert(requestLogUnindexed).values({ requestId: base, tools: [] }).onConflictDoNothing(),
      db.delete(requestLogs).where(and(eq(requestLogs.id, base), eq(requestLogs.workspaceId, 0))),
    ]);
    bases = await recorded();
  }
  if (bases.length !== 1 || bases[0] !== base) {
    throw new Error(`log database ${binding} numbers ids from ${bases.join(", ")}, but the shard map gives ${binding} the range from ${base}: is another database bound under this name?`);
  }
  return base;
}

/**
 * Ids a range keeps spare: a database whose ids come this close to its range's end is full (shards.ts),
 * so its workspaces move on long before an id could leave the range.
 */
const ID_RANGE_SPARE = 2 ** 32;

/** Whether `used`, a database's largest id, is within ID_RANGE_SPARE of the end of its range. */
export function nearRangeEnd(range: number, used: number): boolean {
  return used > (range + 1) * ID_RANGE_SIZE - ID_RANGE_SPARE;
}
