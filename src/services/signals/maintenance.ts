// What keeps Signals whole behind the queue: the cron sends again the judgements whose message was lost
// (owed beside their log, due for a while, held by no delivery); a deleted signal's results, judgements
// owed and daily totals are purged from the log databases, and a renamed signal's name carried to its
// results, a chunk at a time.
import type { Db } from "../../db/client";
import type { Deps } from "../../env";
import { sendJudgements } from "../../lib/jobs";
import { overdueJudgements, purgeSignal, renameSignalResults } from "../../logs";
import { and, eq } from "drizzle-orm";
import { signals } from "../../db/schema";

/** A judgement due this long and held by no delivery lost its message (or waits out a retry's backoff, which a resend only shortens). */
export const RESEND_AFTER_MS = 120_000;
/** Judgements sent again per log database and cron run at most. */
const RESEND_MAX = 1_000;

/** Sends again the overdue judgements of one log database; answers how many. */
export async function resendOverdueJudgements(deps: Pick<Deps, "signalsQueue">, logs: Db, now: number): Promise<number> {
  const rows = await overdueJudgements(logs, now, RESEND_AFTER_MS, RESEND_MAX);
  await sendJudgements(
    deps.signalsQueue,
    rows.map((r) => ({ workspaceId: r.workspaceId, requestId: r.requestId, signalId: r.signalId, delaySeconds: 0 })),
  );
  return rows.length;
}

/** Purge statements per database and delivery at most; the job is queued again while rows are left. */
const PURGE_ROUNDS = 10;

/** One delivery of a deleted signal's purge: "continue" while anything was left to delete. */
export async function purgeDeletedSignal(deps: Pick<Deps, "logs">, ws: number, signalId: number): Promise<"done" | "continue"> {
  const store = await deps.logs(ws);
  let deleted = 0;
  for (const period of store.periods) {
    for (let round = 0; round < PURGE_ROUNDS; round++) {
      const n = await purgeSignal(period.db, signalId);
      deleted += n;
      if (n === 0) break;
    }
  }
  return deleted > 0 ? "continue" : "done";
}

/** One delivery of a rename: the signal's current name carried to its results; "continue" while any were left. */
export async function renameSignal(deps: Pick<Deps, "db" | "logs">, ws: number, signalId: number): Promise<"done" | "continue"> {
  const [signal] = await deps.db
    .select({ name: signals.name })
    .from(signals)
    .where(and(eq(signals.workspaceId, ws), eq(signals.id, signalId)));
  // Deleted meanwhile: the purge takes its results.
  if (!signal) return "done";
  const store = await deps.logs(ws);
  let renamed = 0;
  for (const period of store.periods) {
    for (let round = 0; round < PURGE_ROUNDS; round++) {
      const n = await renameSignalResults(period.db, signalId, signal.name);
      renamed += n;
      if (n === 0) break;
    }
  }
  return renamed > 0 ? "continue" : "done";
}
