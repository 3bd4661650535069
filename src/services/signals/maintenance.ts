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

/** Purge or rename statements per database and delivery at most; the job is queued again while rows are left. */
const ROUNDS = 10;

/** Runs `step` on each of the workspace's databases until it answers 0 (or ROUNDS times); answers whether anything was left. */
async function inChunks(deps: Pick<Deps, "logs">, ws: number, step: (db: Db) => Promise<number>): Promise<"done" | "continue"> {
  const store = await deps.logs(ws);
  let changed = 0;
  for (const period of store.periods) {
    for (let round = 0; round < ROUNDS; round++) {
      const n = await step(period.db);
      changed += n;
      if (n === 0) break;
    }
  }
  return changed > 0 ? "continue" : "done";
}

/** One delivery of a deleted signal's purge (its results named `name`): "continue" while anything was left to delete. */
export function purgeDeletedSignal(deps: Pick<Deps, "logs">, ws: number, signalId: number, name: string): Promise<"done" | "continue"> {
  return inChunks(deps, ws, (db) => purgeSignal(db, ws, signalId, name));
}

/**
 * One delivery of a rename: the signal's results still named `from` take its current name (several
 * renames in a row each carry their own `from` to the latest name); a signal deleted meanwhile has them
 * purged instead. "continue" while any were left.
 */
export async function renameSignal(deps: Pick<Deps, "db" | "logs">, ws: number, signalId: number, from: string): Promise<"done" | "continue"> {
  const [signal] = await deps.db
    .select({ name: signals.name })
    .from(signals)
    .where(and(eq(signals.workspaceId, ws), eq(signals.id, signalId)));
  if (!signal) return purgeDeletedSignal(deps, ws, signalId, from);
  return inChunks(deps, ws, (db) => renameSignalResults(db, ws, signalId, from, signal.name));
}
