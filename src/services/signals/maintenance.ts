// What keeps Signals whole behind the queue: the cron sends again the judgements whose message was lost
// (owed beside their log, due for a while, held by no delivery); a deleted signal's results, judgements
// owed, daily totals and A/B scorecard rows are purged from the log databases, a chunk at a time (every
// reader leaves them out already: results are shown only for signals that exist).
import type { Db } from "../../db/client";
import type { Deps } from "../../env";
import { sendJudgements } from "../../lib/jobs";
import { overdueJudgements, purgeSignal } from "../../logs";

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

/** One delivery of a deleted signal's purge: "continue" while anything was left to delete. */
export function purgeDeletedSignal(deps: Pick<Deps, "logs">, ws: number, signalId: number): Promise<"done" | "continue"> {
  return inChunks(deps, ws, (db) => purgeSignal(db, ws, signalId));
}
