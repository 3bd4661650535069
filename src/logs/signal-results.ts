// The log store's part of Signals (docs/signals.md): the judgements owed (signal_pending), the results
// (signal_results) and their daily totals (signal_daily), all in the database of the log they are about.
// A result is stored with its daily totals and the removal of what was owed in one batch, and replaces
// an older one only when newer (a later revision of the signal, or ok over an error of the same
// revision): a message delivered twice, or a retry racing its first delivery, stores and counts once.
import { and, eq, isNull, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { runBatch } from "../db/batch";
import type { Db } from "../db/client";
import { abVariantMetrics, requestLogs, signalDaily, signalPending, signalResults, type SignalPendingRow, type SignalResultRow, type SignalResultStatus } from "../db/schema";
import { col, columnList, inJsonList } from "../db/sql";
import { eachPeriod, type WorkspaceLogs } from "./periods";
import { decodeLogRow, type RequestLog } from "./write";
import { toIso } from "../lib/time";
import { signalNamesOf } from "./signal-names";

/** A judgement owed: the log, the signal, where it came from, and when it may be made. */
export interface PendingJudgement {
  requestId: number;
  signalId: number;
  workspaceId: number;
  hookId: number | null;
  backfillId: number | null;
  notBefore: number;
}

/** Rows per INSERT of pending judgements (9 values a row: D1 binds 100 at most, so JSON carries them). */
const PENDING_CHUNK = 500;

/**
 * Records judgements owed (one per log and signal: one already owed is kept as it is). Returns those
 * written, which the caller announces on the signals queue.
 */
export async function queueJudgements(db: Db, rows: readonly PendingJudgement[], now: number): Promise<PendingJudgement[]> {
  const written: PendingJudgement[] = [];
  for (let at = 0; at < rows.length; at += PENDING_CHUNK) {
    const chunk = rows.slice(at, at + PENDING_CHUNK);
    const inserted = await db
      .insert(signalPending)
      .select(
        sql`SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, NULL, 0, ${now}
            FROM json_each(${JSON.stringify(chunk.map((r) => [r.requestId, r.signalId, r.workspaceId, r.hookId, r.backfillId, r.notBefore]))}) AS j WHERE true`,
      )
      .onConflictDoNothing()
      .returning({ requestId: signalPending.requestId, signalId: signalPending.signalId });
    const got = new Set(inserted.map((r) => `${r.requestId}:${r.signalId}`));
    written.push(...chunk.filter((r) => got.has(`${r.requestId}:${r.signalId}`)));
  }
  return written;
}

/**
 * A backfill's judgements owed for `rows` (its own): logs with an ok result at `revision` or newer are
 * left out, and one already owed by this backfill counts as its own again (a page read twice after a
 * crash), so the rows answered are exactly the backfill's, however often a page is queued.
 */
export async function queueBackfillJudgements(db: Db, rows: readonly PendingJudgement[], revision: number, now: number): Promise<PendingJudgement[]> {
  const owned: PendingJudgement[] = [];
  for (let at = 0; at < rows.length; at += PENDING_CHUNK) {
    const chunk = rows.slice(at, at + PENDING_CHUNK);
    const result = await db.all<{ request_id: number; signal_id: number }>(sql`
      INSERT INTO ${signalPending} (${columnList(signalPending, ["requestId", "signalId", "workspaceId", "hookId", "backfillId", "notBefore", "leaseUntil", "attempts", "createdAt"])})
      SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, NULL, 0, ${now}
      FROM json_each(${JSON.stringify(chunk.map((r) => [r.requestId, r.signalId, r.workspaceId, r.hookId, r.backfillId, r.notBefore]))}) AS j
      WHERE NOT EXISTS (SELECT 1 FROM ${signalResults} AS o WHERE o.${col(signalResults.requestId)} = j.value ->> 0 AND o.${col(signalResults.signalId)} = j.value ->> 1
                          AND o.${col(signalResults.status)} = 'ok' AND o.${col(signalResults.revision)} >= ${revision})
      ON CONFLICT (${col(signalPending.requestId)}, ${col(signalPending.signalId)}) DO UPDATE SET ${col(signalPending.attempts)} = ${signalPending.attempts}
        WHERE ${signalPending.backfillId} IS excluded.${col(signalPending.backfillId)}
      RETURNING ${col(signalPending.requestId)} AS request_id, ${col(signalPending.signalId)} AS signal_id`);
    const got = new Set(result.map((r) => `${r.request_id}:${r.signal_id}`));
    owned.push(...chunk.filter((r) => got.has(`${r.requestId}:${r.signalId}`)));
  }
  return owned;
}

/** The statement recording judgements owed for `rows` inside another batch (the indexer's), each only `when` holds. */
export function queueJudgementsStatement(rows: readonly PendingJudgement[], now: number, when = sql`true`) {
  return sql`INSERT INTO ${signalPending} (${columnList(signalPending, ["requestId", "signalId", "workspaceId", "hookId", "backfillId", "notBefore", "leaseUntil", "attempts", "createdAt"])})
    SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, NULL, 0, ${now}
    FROM json_each(${JSON.stringify(rows.map((r) => [r.requestId, r.signalId, r.workspaceId, r.hookId, r.backfillId, r.notBefore]))}) AS j WHERE ${when}
    ON CONFLICT DO NOTHING
    RETURNING ${col(signalPending.requestId)} AS request_id, ${col(signalPending.signalId)} AS signal_id`;
}

const pendingKey = (requestId: number, signalId: number) => and(eq(signalPending.requestId, requestId), eq(signalPending.signalId, signalId));

/** What a delivery found of the judgement it names. */
export type Claim =
  | { state: "claimed"; row: SignalPendingRow }
  /** Nothing owed: judged already, or forgotten (a cancelled backfill, a deleted signal). */
  | { state: "none" }
  /** Another delivery holds it. */
  | { state: "held" }
  /** Not due yet (the signal's delay): deliver again after waitMs. */
  | { state: "early"; waitMs: number };

/** A message may arrive this early (queue delays are whole seconds) and still be taken as due. */
const DUE_SLACK_MS = 1_000;

/**
 * Claims the judgement owed for a delivery: counts the attempt and holds it for `leaseMs`, one
 * conditional update (two deliveries at once: one wins, the other finds it held).
 */
export async function claimJudgement(db: Db, requestId: number, signalId: number, now: number, leaseMs: number): Promise<Claim> {
  const [row] = await claimStatement(db, requestId, signalId, now, leaseMs);
  return claimOf(db, row, requestId, signalId, now);
}

function claimStatement(db: Db, requestId: number, signalId: number, now: number, leaseMs: number) {
  return db
    .update(signalPending)
    .set({ leaseUntil: now + leaseMs, attempts: sql`${signalPending.attempts} + 1` })
    .where(and(pendingKey(requestId, signalId), or(isNull(signalPending.leaseUntil), lt(signalPending.leaseUntil, now)), lte(signalPending.notBefore, now + DUE_SLACK_MS)))
    .returning();
}

/** The claim a claiming statement made (its row, or why there is none: one more read). */
async function claimOf(db: Db, row: SignalPendingRow | undefined, requestId: number, signalId: number, now: number): Promise<Claim> {
  if (row) return { state: "claimed", row };
  const [owed] = await db.select().from(signalPending).where(pendingKey(requestId, signalId)).limit(1);
  if (!owed) return { state: "none" };
  if (owed.notBefore > now + DUE_SLACK_MS) return { state: "early", waitMs: owed.notBefore - now };
  return { state: "held" };
}

/** The log a judgement is about, as its delivery read it: its start (the daily totals' day) and its blueprints, decoded on demand. */
export interface JudgedLogRow {
  requestStartTime: number;
  /** The log with its blueprints decoded: called inside the claimed judgement, so a log that cannot be read fails as a counted attempt. */
  decode(): RequestLog;
}

/**
 * A delivery's first round trip: the claim, the result stored already (if any) and the log itself, in
 * one batch (drizzle's: every statement is a query builder, the rows come back typed).
 */
export async function openJudgement(db: Db, ws: number, requestId: number, signalId: number, now: number, leaseMs: number): Promise<{ claim: Claim; existing: SignalResultRow | null; log: JudgedLogRow | null }> {
  const [claimed, existing, log] = await db.batch([
    claimStatement(db, requestId, signalId, now, leaseMs),
    db
      .select()
      .from(signalResults)
      .where(and(eq(signalResults.requestId, requestId), eq(signalResults.signalId, signalId)))
      .limit(1),
    db
      .select()
      .from(requestLogs)
      .where(and(eq(requestLogs.id, requestId), eq(requestLogs.workspaceId, ws)))
      .limit(1),
  ]);
  const row = log[0];
  return {
    claim: await claimOf(db, claimed[0], requestId, signalId, now),
    existing: existing[0] ?? null,
    log: row ? { requestStartTime: row.requestStartTime, decode: () => decodeLogRow(row) } : null,
  };
}

/** Lets go of a claim so the next delivery (a retry) may take it. */
export async function releaseJudgement(db: Db, requestId: number, signalId: number): Promise<void> {
  await db.update(signalPending).set({ leaseUntil: null }).where(pendingKey(requestId, signalId));
}

/** Forgets a judgement owed without a result (its signal was disabled or deleted, the log is gone, the budget is spent). */
export async function dropJudgement(db: Db, requestId: number, signalId: number): Promise<void> {
  await db.delete(signalPending).where(pendingKey(requestId, signalId));
}

/** The result stored for a log and signal, if any. */
export async function storedResult(db: Db, requestId: number, signalId: number): Promise<SignalResultRow | null> {
  const [row] = await db
    .select()
    .from(signalResults)
    .where(and(eq(signalResults.requestId, requestId), eq(signalResults.signalId, signalId)))
    .limit(1);
  return row ?? null;
}

export interface NewSignalResult {
  requestId: number;
  signalId: number;
  workspaceId: number;
  hookId: number | null;
  backfillId: number | null;
  revision: number;
  result: boolean | null;
  reasoning: string | null;
  quote: string | null;
  quoteVerified: boolean;
  status: SignalResultStatus;
  error: string | null;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  /** The UTC day of the log's request_start_time. */
  day: number;
}

/** SQL true when the stored result `o` gives way to `r` (a newer revision, or ok over an error of the same one). */
function replacedBy(t: SQL, r: NewSignalResult) {
  return sql`(${t}.${col(signalResults.revision)} < ${r.revision} OR (${t}.${col(signalResults.revision)} = ${r.revision} AND ${t}.${col(signalResults.status)} <> 'ok' AND ${r.status} = 'ok'))`;
}

const AB_METRIC_COLUMNS = columnList(abVariantMetrics, ["workspaceId", "abTestId", "variant", "day", "kind", "name", "n", "sum", "sumSq"]);
const AB_METRIC_ADD = sql.join(
  [abVariantMetrics.n, abVariantMetrics.sum, abVariantMetrics.sumSq].map((c) => sql`${col(c)} = ${col(c)} + excluded.${col(c)}`),
  sql`, `,
);
/** The UTC day of log `t`'s request_start_time (the A/B rollups' day). */
const dayOf = (t: SQL) => sql`${t}.${col(requestLogs.requestStartTime)} - (${t}.${col(requestLogs.requestStartTime)} % 86400000)`;
const DAILY_COLUMNS = columnList(signalDaily, ["signalId", "day", "workspaceId", "trueCount", "falseCount", "errorCount", "cost"]);
const DAILY_ADD = sql.join(
  [signalDaily.trueCount, signalDaily.falseCount, signalDaily.errorCount, signalDaily.cost].map((c) => sql`${col(c)} = ${col(c)} + excluded.${col(c)}`),
  sql`, `,
);

/**
 * Stores a result in one batch: the replaced result taken out of the daily totals, this one added, the
 * result written, the judgement owed removed (unless `keepOwed`). Returns whether this result was written (false: an equal
 * or newer one was already there). `abServed: false` says the log was served by no A/B release (its
 * ab_test_id, set when it was written, never changes): the scorecard's rows are then left alone.
 */
export async function storeResult(db: Db, r: NewSignalResult, now: number, opts: { keepOwed?: boolean; abServed?: boolean } = {}): Promise<boolean> {
  const ab = opts.abServed !== false;
  const key = sql`o.${col(signalResults.requestId)} = ${r.requestId} AND o.${col(signalResults.signalId)} = ${r.signalId}`;
  const target = sql`${col(signalDaily.signalId)}, ${col(signalDaily.day)}`;
  const isTrue = r.status === "ok" && r.result === true ? 1 : 0;
  const isFalse = r.status === "ok" && r.result === false ? 1 : 0;
  const isError = r.status === "error" ? 1 : 0;
  const [, , , , written] = await runBatch(db, [
    sql`INSERT INTO ${signalDaily} (${DAILY_COLUMNS})
        SELECT o.${col(signalResults.signalId)}, o.${col(signalResults.day)}, o.${col(signalResults.workspaceId)},
               -(o.${col(signalResults.status)} = 'ok' AND o.${col(signalResults.result)} = 1), -(o.${col(signalResults.status)} = 'ok' AND o.${col(signalResults.result)} = 0),
               -(o.${col(signalResults.status)} = 'error'), -o.${col(signalResults.cost)}
        FROM ${signalResults} AS o WHERE ${key} AND ${replacedBy(sql`o`, r)}
        ON CONFLICT (${target}) DO UPDATE SET ${DAILY_ADD}`,
    sql`INSERT INTO ${signalDaily} (${DAILY_COLUMNS})
        SELECT ${r.signalId}, ${r.day}, ${r.workspaceId}, ${isTrue}, ${isFalse}, ${isError}, ${r.cost}
        WHERE NOT EXISTS (SELECT 1 FROM ${signalResults} AS o WHERE ${key} AND NOT ${replacedBy(sql`o`, r)})
        ON CONFLICT (${target}) DO UPDATE SET ${DAILY_ADD}`,
    // The A/B scorecard's signal rows (a log an A/B release served), named by the signal's id (the
    // scorecard shows its current name: abSignalMetricName): the replaced verdict taken out, this one added.
    ab ? sql`INSERT INTO ${abVariantMetrics} (${AB_METRIC_COLUMNS})
        SELECT l.${col(requestLogs.workspaceId)}, l.${col(requestLogs.abTestId)}, l.${col(requestLogs.abVariant)}, ${dayOf(sql`l`)}, 'signal', CAST(o.${col(signalResults.signalId)} AS TEXT), -1, -o.${col(signalResults.result)}, -o.${col(signalResults.result)}
        FROM ${signalResults} AS o JOIN ${requestLogs} AS l ON l.${col(requestLogs.id)} = o.${col(signalResults.requestId)}
        WHERE ${key} AND ${replacedBy(sql`o`, r)} AND o.${col(signalResults.status)} = 'ok' AND l.${col(requestLogs.abTestId)} IS NOT NULL
        ON CONFLICT DO UPDATE SET ${AB_METRIC_ADD}` : sql`SELECT 1`,
    ab ? sql`INSERT INTO ${abVariantMetrics} (${AB_METRIC_COLUMNS})
        SELECT l.${col(requestLogs.workspaceId)}, l.${col(requestLogs.abTestId)}, l.${col(requestLogs.abVariant)}, ${dayOf(sql`l`)}, 'signal', ${abSignalMetricName(r.signalId)}, 1, ${isTrue}, ${isTrue}
        FROM ${requestLogs} AS l
        WHERE l.${col(requestLogs.id)} = ${r.requestId} AND ${r.status === "ok" ? sql`1` : sql`0`} AND l.${col(requestLogs.abTestId)} IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM ${signalResults} AS o WHERE ${key} AND NOT ${replacedBy(sql`o`, r)})
        ON CONFLICT DO UPDATE SET ${AB_METRIC_ADD}` : sql`SELECT 1`,
    db
      .insert(signalResults)
      .values({
        requestId: r.requestId,
        signalId: r.signalId,
        workspaceId: r.workspaceId,
        hookId: r.hookId,
        backfillId: r.backfillId,
        revision: r.revision,
        result: r.result === null ? null : r.result ? 1 : 0,
        reasoning: r.reasoning,
        quote: r.quote,
        quoteVerified: r.quoteVerified,
        status: r.status,
        error: r.error,
        model: r.model,
        inputTokens: r.inputTokens,
        outputTokens: r.outputTokens,
        cost: r.cost,
        day: r.day,
        createdAt: now,
      })
      .onConflictDoUpdate({
        target: [signalResults.requestId, signalResults.signalId],
        set: Object.fromEntries(
          (["hookId", "backfillId", "revision", "result", "reasoning", "quote", "quoteVerified", "status", "error", "model", "inputTokens", "outputTokens", "cost", "day", "createdAt"] as const).map((k) => [
            k,
            sql.raw(`excluded.${signalResults[k].name}`),
          ]),
        ),
        setWhere: replacedBy(sql`${signalResults}`, r),
      })
      .returning({ requestId: signalResults.requestId }),
    // Kept when the caller still has to announce the result (signal_triggered): it drops the row once
    // the event is written, so a crash between leaves the judgement owed and a redelivery announces it.
    opts.keepOwed ? sql`SELECT 1` : db.delete(signalPending).where(pendingKey(r.requestId, r.signalId)),
  ]);
  return written.results.length > 0;
}

/** A result as a log's detail shows it (GET /api/public/v2/requests/{id}, the export, the archive's lines). */
export interface Verdict {
  signal_id: number;
  name: string;
  result: boolean | null;
  reasoning: string | null;
  quote: string | null;
  quote_verified: boolean;
  status: SignalResultStatus;
  error: string | null;
  revision: number;
  judged_at: string;
}

/** A result as a verdict, not yet named (shownVerdicts names it). */
function verdictOf(r: SignalResultRow): Verdict {
  return {
    signal_id: r.signalId,
    name: "",
    result: r.result === null ? null : r.result === 1,
    reasoning: r.reasoning ?? null,
    quote: r.quote ?? null,
    quote_verified: r.quoteVerified,
    status: r.status,
    error: r.error ?? null,
    revision: r.revision,
    judged_at: toIso(r.createdAt),
  };
}

/** A log's verdicts in their one order: by signal name (code points), then id. */
export const byName = (a: Verdict, b: Verdict) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.signal_id - b.signal_id);

/**
 * Verdicts as shown: each under its signal's current name (`names`: id → name, signalNamesOf), those of
 * a signal that no longer exists left out, by name. Verdicts read back from an archived line are
 * named again the same way.
 */
export function shownVerdicts(verdicts: readonly Verdict[], names: ReadonlyMap<number, string>): Verdict[] {
  return verdicts
    .flatMap((v) => {
      const name = names.get(v.signal_id);
      return name === undefined ? [] : [{ ...v, name }];
    })
    .sort(byName);
}

/** A log's results (rows of resultsQuery) as shown (shownVerdicts). */
export function verdictsOf(rows: readonly SignalResultRow[], names: ReadonlyMap<number, string>): Verdict[] {
  return shownVerdicts(rows.map(verdictOf), names);
}

/** The query of a log's results (its key range), for a batch that reads the log too. */
export function resultsQuery(db: Db, ws: number, requestId: number) {
  return db
    .select()
    .from(signalResults)
    .where(and(eq(signalResults.requestId, requestId), eq(signalResults.workspaceId, ws)));
}

/**
 * Each log's verdicts (logs of this database), under their signals' current names (`control`: the
 * control database, read once for the signals the rows name), by name: two queries at most.
 */
export async function verdictsByLog(db: Db, control: Db, ws: number, requestIds: readonly number[]): Promise<Map<number, Verdict[]>> {
  const out = new Map<number, Verdict[]>(requestIds.map((id) => [id, []]));
  if (requestIds.length === 0) return out;
  const rows = await db
    .select()
    .from(signalResults)
    .where(and(inJsonList(signalResults.requestId, requestIds), eq(signalResults.workspaceId, ws)));
  if (rows.length === 0) return out;
  const names = await signalNamesOf(control, ws, rows.map((r) => r.signalId));
  const byLog = new Map<number, SignalResultRow[]>();
  for (const r of rows) byLog.set(r.requestId, [...(byLog.get(r.requestId) ?? []), r]);
  for (const [id, list] of byLog) out.set(id, verdictsOf(list, names));
  return out;
}

export interface SignalTotals {
  true: number;
  false: number;
  errors: number;
  cost: number;
}

/** One database's totals of these signals (the ids one JSON parameter: a page of 100 signals fits D1's 100 parameters). */
export function signalTotalsQuery(db: Db, ws: number, signalIds: readonly number[]) {
  return db
    .select({
      signalId: signalDaily.signalId,
      t: sql<number>`sum(${signalDaily.trueCount})`,
      f: sql<number>`sum(${signalDaily.falseCount})`,
      e: sql<number>`sum(${signalDaily.errorCount})`,
      cost: sql<number>`sum(${signalDaily.cost})`,
    })
    .from(signalDaily)
    .where(and(eq(signalDaily.workspaceId, ws), inJsonList(signalDaily.signalId, signalIds)))
    .groupBy(signalDaily.signalId);
}

/** Each signal's totals over every day and every database of the workspace. */
export async function signalTotals(logs: WorkspaceLogs, ws: number, signalIds: readonly number[]): Promise<Map<number, SignalTotals>> {
  const out = new Map<number, SignalTotals>();
  if (signalIds.length === 0) return out;
  const perPeriod = await eachPeriod(logs, (db) => signalTotalsQuery(db, ws, signalIds));
  for (const rows of perPeriod) {
    for (const r of rows) {
      const t = out.get(r.signalId) ?? { true: 0, false: 0, errors: 0, cost: 0 };
      t.true += r.t ?? 0;
      t.false += r.f ?? 0;
      t.errors += r.e ?? 0;
      t.cost += r.cost ?? 0;
      out.set(r.signalId, t);
    }
  }
  return out;
}

/** A signal's daily totals in [from, to) (days of the judged logs), added up over the workspace's databases, oldest first. */
export async function signalSeries(logs: WorkspaceLogs, ws: number, signalId: number, from: number, to: number): Promise<({ day: number } & SignalTotals)[]> {
  const perPeriod = await eachPeriod(logs, (db) =>
    db
      .select()
      .from(signalDaily)
      .where(and(eq(signalDaily.signalId, signalId), eq(signalDaily.workspaceId, ws), sql`${signalDaily.day} >= ${from - (from % 86_400_000)}`, lt(signalDaily.day, to))),
  );
  const byDay = new Map<number, { day: number } & SignalTotals>();
  for (const rows of perPeriod) {
    for (const r of rows) {
      const d = byDay.get(r.day) ?? { day: r.day, true: 0, false: 0, errors: 0, cost: 0 };
      d.true += r.trueCount;
      d.false += r.falseCount;
      d.errors += r.errorCount;
      d.cost += r.cost;
      byDay.set(r.day, d);
    }
  }
  return [...byDay.values()].sort((a, b) => a.day - b.day);
}

/** Judgements owed whose message was lost: due for `graceMs` and not held by a delivery. At most `limit`, oldest first. */
export async function overdueJudgements(db: Db, now: number, graceMs: number, limit: number): Promise<SignalPendingRow[]> {
  return db
    .select()
    .from(signalPending)
    .where(and(lte(signalPending.notBefore, now - graceMs), or(isNull(signalPending.leaseUntil), lt(signalPending.leaseUntil, now))))
    .orderBy(signalPending.notBefore)
    .limit(limit);
}

/** How many judgements a backfill still owes (queued, not made yet), over the workspace's databases: its window's fill. */
export async function backfillOwed(logs: WorkspaceLogs, backfillId: number): Promise<number> {
  const perPeriod = await eachPeriod(logs, async (db) => {
    const [owed] = await db.select({ n: sql<number>`count(*)` }).from(signalPending).where(eq(signalPending.backfillId, backfillId));
    return owed.n;
  });
  return perPeriod.reduce((a, b) => a + b, 0);
}

/** A backfill's judgements: those still owed, and the results it stored with their errors and cost, over the workspace's databases. */
export async function backfillCounts(logs: WorkspaceLogs, backfillId: number): Promise<{ owed: number; done: number; errors: number; cost: number }> {
  const perPeriod = await eachPeriod(logs, async (db) => {
    const [owed] = await db.select({ n: sql<number>`count(*)` }).from(signalPending).where(eq(signalPending.backfillId, backfillId));
    const [done] = await db
      .select({ n: sql<number>`count(*)`, e: sql<number>`coalesce(sum(${signalResults.status} = 'error'), 0)`, cost: sql<number>`coalesce(sum(${signalResults.cost}), 0)` })
      .from(signalResults)
      .where(eq(signalResults.backfillId, backfillId));
    return { owed: owed.n, done: done.n, errors: done.e, cost: done.cost };
  });
  return perPeriod.reduce((a, b) => ({ owed: a.owed + b.owed, done: a.done + b.done, errors: a.errors + b.errors, cost: a.cost + b.cost }));
}

/** Forgets what a cancelled backfill still owed (its queued messages then find nothing to do). */
export async function dropBackfillJudgements(logs: WorkspaceLogs, backfillId: number): Promise<void> {
  await eachPeriod(logs, (db) => db.delete(signalPending).where(eq(signalPending.backfillId, backfillId)));
}

/** Rows one purge statement deletes at most (a statement stays short however many results a signal has). */
const PURGE_CHUNK = 2_000;

/** The name of a signal's rows in the A/B scorecard's metrics (ab_variant_metrics, kind 'signal'): its id, as text. */
export function abSignalMetricName(signalId: number): string {
  return String(signalId);
}

/**
 * Deletes a deleted signal's results, judgements owed, daily totals and A/B scorecard rows from one
 * database, a chunk at a time; returns how many rows it deleted (0: nothing left). Until it has run,
 * readers leave them out already (they show only the verdicts of signals that exist).
 */
export async function purgeSignal(db: Db, ws: number, signalId: number): Promise<number> {
  const [results, pending, daily, ab] = await runBatch(db, [
    sql`DELETE FROM ${signalResults} WHERE (${signalResults.requestId}, ${signalResults.signalId}) IN (
          SELECT ${col(signalResults.requestId)}, ${col(signalResults.signalId)} FROM ${signalResults}
          WHERE ${col(signalResults.workspaceId)} = ${ws} AND ${col(signalResults.signalId)} = ${signalId} LIMIT ${PURGE_CHUNK})`,
    db.delete(signalPending).where(eq(signalPending.signalId, signalId)),
    db.delete(signalDaily).where(eq(signalDaily.signalId, signalId)),
    db.delete(abVariantMetrics).where(and(eq(abVariantMetrics.workspaceId, ws), eq(abVariantMetrics.kind, "signal"), eq(abVariantMetrics.name, abSignalMetricName(signalId)))),
  ]);
  return (results.meta.changes ?? 0) + (pending.meta.changes ?? 0) + (daily.meta.changes ?? 0) + (ab.meta.changes ?? 0);
}
