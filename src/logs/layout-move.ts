// Moving the logs indexed before the search index of issue 37 into it, in the background. The layout
// migration (migrations-logs/0010, migrations/0034) creates the new structures and keeps every count,
// but writes nothing per log: on a large database one statement over every log outlasts D1's 30-second
// limit. The logs it leaves behind, every log with an id up to log_index_state.moved_to that the
// indexer had already indexed (not listed in request_log_unindexed), have their facet counts and
// daily totals, but neither their search entry nor their extra_values yet. This step gives them both,
// newest first (the ones most searched), a batch at a time: each batch's statements write only while
// the cursor is where it read it and every log it read is at the revision it read (a tracking call
// meanwhile makes it write nothing and read again), and the batch moves the cursor below the logs it
// read, so a run that stops anywhere resumes where the last batch committed, and no log is moved
// twice. Nothing is counted: the counts are the old layout's, which already include these logs.
//
// The cron runs it on every log database (MOVE_MAX_LOGS a run); a snapshot (a dataset or a sheet import
// from a filter, an evaluation, an export) finishes it on its workspace's databases before it selects
// (readyForSnapshot),
// so it misses no log. Until then a log still to move is read by id, listed, filtered on its scalar
// fields, suggested and counted as before, and found by text and keyed-value search once moved; a
// search or suggestion that reads the index meanwhile says so (awaitingMove: index_incomplete).
import { sql } from "drizzle-orm";
import { runBatch, type Statement } from "../db/batch";
import type { Db } from "../db/client";
import { logIndexState, requestLogs, requestLogUnindexed } from "../db/schema";
import { col } from "../db/sql";
import { indexBeforeSnapshot, valuesOf, type LogValuesRow } from "./indexing";
import { chunkIndexRows, insertSearchEntries } from "./search-index";
import { eachPeriod, type WorkspaceLogs } from "./periods";
import type { IndexRow } from "./index-rows";

/** Logs read (and moved, but for the few the indexer still owns) in one D1 batch at most. */
const MOVE_BATCH_LOGS = 200;

/** Logs one cron run moves per log database at most (the rest wait for the next minute). */
export const MOVE_MAX_LOGS = 5_000;

/** Batches that write nothing in a row (tracking calls changing what they read) before giving up; the next run goes on. */
const MOVE_ATTEMPTS = 3;

interface OldLog extends LogValuesRow {
  id: number;
  revision: number;
  /** 1 when the log is listed in request_log_unindexed: the indexer's, not this step's. */
  listed: number;
}

const l = requestLogs;
const st = logIndexState;
const u = requestLogUnindexed;
const MOVED_TO = sql`(SELECT ${col(st.movedTo)} FROM ${st} WHERE ${st.id} = 1)`;

/** The cursor and the next logs at or below it, newest first, at most `limit`. */
async function readBatch(logs: Db, limit: number): Promise<{ at: number; rows: OldLog[] }> {
  const [state, rows] = await runBatch(logs, [
    sql`SELECT ${col(st.movedTo)} AS at FROM ${st} WHERE ${st.id} = 1`,
    sql`
      SELECT r.${col(l.id)}, r.${col(l.revision)}, r.${col(l.tags)}, r.${col(l.metadata)}, r.${col(l.extraValues)}, r.${col(l.promptInputVariables)},
             r.${col(l.input)}, r.${col(l.output)}, r.${col(l.parameters)}, r.${col(l.body)}, r.${col(l.inputText)}, r.${col(l.outputText)},
             EXISTS (SELECT 1 FROM ${u} WHERE ${u.requestId} = r.${col(l.id)}) AS listed
      FROM ${l} AS r WHERE r.${col(l.id)} <= ${MOVED_TO} ORDER BY r.${col(l.id)} DESC LIMIT ${limit}`,
  ]);
  const at = (state.results[0] as { at: number } | undefined)?.at;
  if (at === undefined) throw new Error("log_index_state has no row: are the log database's migrations applied?");
  return { at, rows: rows.results as unknown as OldLog[] };
}

/**
 * The statements moving `rows` (read at cursor `at`) and the cursor below them (`next`), each writing
 * only while the cursor is at `at` and every log moved is at the revision read. The extra values
 * last: their UPDATE moves the logs' revisions, so it writes once the cursor is at `next`, per log
 * only at the revision read.
 */
function moveStatements(rows: OldLog[], at: number, next: number): { statements: Statement[]; mark: number } {
  const moving = rows.filter((r) => !r.listed && r.extra_values === null);
  const made: [number, number, IndexRow[]][] = moving.map((r) => [r.id, r.revision, valuesOf(r).made ?? []]);
  const read = JSON.stringify(moving.map((r) => [r.id, r.revision]));
  const unchanged = sql`${MOVED_TO} = ${at} AND (SELECT count(*) FROM json_each(${read}) AS g
    CROSS JOIN ${l} AS gr ON gr.${col(l.id)} = g.value ->> 0 AND gr.${col(l.revision)} = g.value ->> 1) = ${moving.length}`;
  const statements: Statement[] = chunkIndexRows(made.map(([id, , extra]) => [id, extra])).map((json) => insertSearchEntries(json, unchanged));
  // Its count says whether the batch wrote (the same condition held for every statement before it).
  const mark = statements.length;
  statements.push(sql`UPDATE ${st} SET ${col(st.movedTo)} = ${next} WHERE ${st.id} = 1 AND ${unchanged}`);
  for (const json of chunkIndexRows(made)) {
    statements.push(sql`
      UPDATE ${l} SET ${col(l.extraValues)} = j.value ->> 2 FROM json_each(${json}) AS j
      WHERE ${l.id} = j.value ->> 0 AND ${l.revision} = j.value ->> 1 AND ${MOVED_TO} = ${next}`);
  }
  return { statements, mark };
}

/**
 * Moves this log database's logs from before the layout into it, newest first, at most `max`;
 * returns how many it read past (moved, or left to the indexer). Throws when batches kept writing
 * nothing (the next run takes it up) or D1 failed.
 */
export async function moveToLayout(logs: Db, max = MOVE_MAX_LOGS): Promise<number> {
  let done = 0;
  let idle = 0;
  while (done < max) {
    const limit = Math.min(MOVE_BATCH_LOGS, max - done);
    const { at, rows } = await readBatch(logs, limit);
    if (rows.length === 0) {
      // Nothing left at or below the cursor (logs archived meanwhile): it goes to 0 (the last write).
      if (at > 0) await logs.run(sql`UPDATE ${st} SET ${col(st.movedTo)} = 0 WHERE ${st.id} = 1 AND ${col(st.movedTo)} = ${at}`);
      break;
    }
    const next = rows.length < limit ? 0 : Math.min(...rows.map((r) => r.id)) - 1;
    const { statements, mark } = moveStatements(rows, at, next);
    const results = await runBatch(logs, statements);
    if ((results[mark].meta.changes ?? 0) > 0) {
      done += rows.length;
      idle = 0;
      if (next === 0) break;
    } else if (++idle >= MOVE_ATTEMPTS) {
      throw new Error(`moving ${rows.length} logs to the search index layout: they (or the cursor) changed during each of ${MOVE_ATTEMPTS} attempts`);
    }
  }
  return done;
}

/**
 * SQL: whether this log database still holds logs of the workspace waiting for the move (`waiting`, 1
 * or 0), which text and keyed-value search do not find yet. Nothing read once the move is over
 * (moved_to 0); while it runs, the first of the workspace's logs at or below the cursor (ids from the
 * oldest: the workspace's logs from before the upgrade, if it has any, come first).
 */
export function awaitingMove(workspaceId: number) {
  return sql`SELECT CASE WHEN st.${col(st.movedTo)} > 0
      THEN EXISTS (SELECT 1 FROM ${l} AS m WHERE m.${col(l.workspaceId)} = ${workspaceId} AND m.${col(l.id)} <= st.${col(st.movedTo)})
      ELSE 0 END AS waiting
    FROM ${st} AS st WHERE st.${col(st.id)} = 1`;
}

/** Whether awaitingMove's result says logs wait. */
export const waitingIn = (result: { results: unknown[] }) => ((result.results[0] as { waiting?: number } | undefined)?.waiting ?? 0) === 1;

/**
 * Before a snapshot selects (a dataset version, a sheet import, an evaluation or an export from a
 * filter): every log of the workspace's databases written so far indexed (indexBeforeSnapshot), and
 * the move of the logs from before the layout finished there (a no-op once it is over), so the
 * snapshot holds every log written before it was asked for. Returns how many logs it indexed.
 */
export async function readyForSnapshot(logs: WorkspaceLogs): Promise<number> {
  const indexed = await indexBeforeSnapshot(logs);
  await eachPeriod(logs, (db) => moveToLayout(db, Number.POSITIVE_INFINITY));
  return indexed;
}
