// A signal's daily budget (limits.daily_runs, limits.daily_cost_usd), reserved before each judge call
// by one conditional upsert on the signal's row of the UTC day: D1 runs statements one at a time on
// its single writer, so however many consumers reserve at once, exactly as many as the caps allow are
// granted and the rest are counted as skipped. The cost is reserved as the call's upper estimate and,
// under a cost cap, settled to the provider's usage afterwards (without one the day keeps the estimate:
// a cap set later that day stops early, never late); a call that fails and will be retried gives its
// reservation back.
import { and, eq, sql } from "drizzle-orm";
import { runBatch, type Statement } from "../../db/batch";
import type { Db } from "../../db/client";
import { signalBackfills, signalSpend } from "../../db/schema";
import { col } from "../../db/sql";

export const DAY_MS = 86_400_000;

export const dayOf = (ms: number) => ms - (ms % DAY_MS);

export interface Limits {
  dailyRuns: number | null;
  dailyCostUsd: number | null;
}

export interface Reservation {
  signalId: number;
  day: number;
  cost: number;
}

/**
 * Reserves one judgement of estimated cost `cost` for today. Null when a cap turns it away (then it is
 * counted as skipped, on the backfill too when `backfillId` is given, in the same transaction).
 */
export async function reserve(db: Db, signalId: number, limits: Limits, cost: number, now: number, backfillId: number | null = null): Promise<Reservation | null> {
  const day = dayOf(now);
  const runs = col(signalSpend.runs);
  const spent = col(signalSpend.cost);
  const fits = sql`((${limits.dailyRuns} IS NULL OR ${runs} < ${limits.dailyRuns}) AND (${limits.dailyCostUsd} IS NULL OR ${spent} + ${cost} <= ${limits.dailyCostUsd}))`;
  // The first reservation of the day inserts the row: the same caps, from zero.
  const first = (limits.dailyRuns === null || limits.dailyRuns > 0) && (limits.dailyCostUsd === null || cost <= limits.dailyCostUsd);
  const statements: Statement[] = [
    db
      .insert(signalSpend)
      .values({ signalId, day, runs: first ? 1 : 0, cost: first ? cost : 0, skipped: first ? 0 : 1, lastGranted: first ? 1 : 0 })
      .onConflictDoUpdate({
        target: [signalSpend.signalId, signalSpend.day],
        set: {
          runs: sql`${runs} + CASE WHEN ${fits} THEN 1 ELSE 0 END`,
          cost: sql`${spent} + CASE WHEN ${fits} THEN ${cost} ELSE 0 END`,
          skipped: sql`${col(signalSpend.skipped)} + CASE WHEN ${fits} THEN 0 ELSE 1 END`,
          lastGranted: sql`CASE WHEN ${fits} THEN 1 ELSE 0 END`,
        },
      })
      .returning({ granted: signalSpend.lastGranted }),
  ];
  if (backfillId !== null) {
    statements.push(
      db
        .update(signalBackfills)
        .set({ skipped: sql`${signalBackfills.skipped} + 1` })
        .where(
          and(
            eq(signalBackfills.id, backfillId),
            sql`(SELECT ${signalSpend.lastGranted} FROM ${signalSpend} WHERE ${signalSpend.signalId} = ${signalId} AND ${signalSpend.day} = ${day}) = 0`,
          ),
        ),
    );
  }
  const [granted] = await runBatch(db, statements);
  return (granted.results[0] as { last_granted: number } | undefined)?.last_granted === 1 ? { signalId, day, cost } : null;
}

const spendRow = (r: Reservation) => and(eq(signalSpend.signalId, r.signalId), eq(signalSpend.day, r.day));

/** Gives a reservation back (the call failed and will be retried: the retry reserves again). */
export async function refund(db: Db, r: Reservation): Promise<void> {
  await db
    .update(signalSpend)
    .set({ runs: sql`max(${signalSpend.runs} - 1, 0)`, cost: sql`max(${signalSpend.cost} - ${r.cost}, 0)` })
    .where(spendRow(r));
}

/** Replaces a reservation's estimated cost by what the call cost. */
export async function settle(db: Db, r: Reservation, actualCost: number): Promise<void> {
  if (actualCost === r.cost) return;
  await db
    .update(signalSpend)
    .set({ cost: sql`max(${signalSpend.cost} - ${r.cost} + ${actualCost}, 0)` })
    .where(spendRow(r));
}

/** Each signal's skipped judgements, over every day. */
export async function skippedTotals(db: Db, signalIds: readonly number[]): Promise<Map<number, number>> {
  if (signalIds.length === 0) return new Map();
  const rows = await db
    .select({ signalId: signalSpend.signalId, n: sql<number>`sum(${signalSpend.skipped})` })
    .from(signalSpend)
    .where(sql`${signalSpend.signalId} IN (SELECT value FROM json_each(${JSON.stringify(signalIds)}))`)
    .groupBy(signalSpend.signalId);
  return new Map(rows.map((r) => [r.signalId, r.n ?? 0]));
}

/** Today's spend of a signal: judgements reserved and their cost so far. */
export async function spendToday(db: Db, signalId: number, now: number): Promise<{ runs: number; cost: number; skipped: number }> {
  const [row] = await db.select().from(signalSpend).where(and(eq(signalSpend.signalId, signalId), eq(signalSpend.day, dayOf(now))));
  return { runs: row?.runs ?? 0, cost: row?.cost ?? 0, skipped: row?.skipped ?? 0 };
}
