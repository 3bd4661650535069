// The signals queue's consumer: each message names a log and a signal whose judgement is owed
// (signal_pending, beside the log). A delivery claims the judgement (two copies of a message never both
// call the judge), reserves the budget, calls the judge and stores the result in one batch with the
// daily totals and the removal of what was owed. A 429, a 5xx or no answer gives the budget back and
// retries with backoff; the last allowed attempt stores an error result with the provider's message.
// Anything else that throws once the judgement is claimed (before the budget is reserved as after) ends
// the same way: the budget given back, the same backoff, an error result at the last attempt.
// A true result announces signal_triggered through the webhook outbox, once per log, signal and revision;
// its owed row is removed only after the event is written, so a delivery that stops between is redelivered
// (the cron resends what is owed) and writes the event then.
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { signals, type SignalRow } from "../../db/schema";
import type { Deps } from "../../env";
import { chainForLog } from "../../lib/error-text";
import { SignalJudgeMessage } from "../../lib/jobs";
import { dropJudgement, openJudgement, releaseJudgement, storeResult, type NewSignalResult } from "../../logs";
import { eventStatement } from "../webhooks";
import { dayOf, refund, reserve, settle, type Reservation } from "./budget";
import { callJudge, errorJudgement, isPrepared, prepareJudgement, type Judgement } from "./judging";
import { workspaceLlm } from "../../base-deps";
import type { LlmProviders } from "../../blocks";

/** Deliveries a judgement gets before a failure that may pass is stored as an error result. */
export const MAX_JUDGE_ATTEMPTS = 4;
/** How long a delivery holds a judgement: longer than a judge call may take (LLM_TIMEOUT_MS, 60 s by default). */
export const JUDGE_LEASE_MS = 150_000;
const RETRY_MAX_SECONDS = 300;

/** Seconds before the next attempt after `attempts` failed ones: base, 2×base, 4×base … at most five minutes. */
export function judgeRetryDelay(attempts: number, baseSeconds: number): number {
  return Math.min(RETRY_MAX_SECONDS, baseSeconds * 2 ** Math.max(0, Math.min(attempts - 1, 10)));
}

function retryBase(deps: Deps): number {
  const n = Number(deps.env.SIGNAL_RETRY_BASE_SECONDS);
  return deps.env.SIGNAL_RETRY_BASE_SECONDS !== undefined && Number.isFinite(n) && n >= 0 ? n : 5;
}

/** What became of one message. */
export type JudgeOutcome = "stored" | "unchanged" | "skipped_budget" | "retry" | "nothing_owed" | "dropped";

interface QueueMessage {
  readonly body: unknown;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

/** A batch of the signals queue: every message at once (judge calls wait on the provider, not on CPU). */
export async function handleJudgeBatch(deps: Deps, messages: readonly QueueMessage[]): Promise<void> {
  const signalsById = new Map<number, Promise<SignalRow | null>>();
  const signalOf = (ws: number, id: number) => {
    let p = signalsById.get(id);
    if (!p) signalsById.set(id, (p = loadSignal(deps.db, ws, id)));
    return p;
  };
  // The workspace's provider settings (its environment variables, decrypted) once per batch, not once
  // per judgement: a batch's judgements are mostly one workspace's (a log's signals). A failed read is
  // not kept, so each judgement that needs it tries again.
  const llmByWorkspace = new Map<number, Promise<LlmProviders>>();
  const llmOf = (ws: number) => {
    let p = llmByWorkspace.get(ws);
    if (!p) {
      llmByWorkspace.set(ws, (p = workspaceLlm(deps.env, deps.db, ws)));
      p.catch(() => llmByWorkspace.delete(ws));
    }
    return p;
  };
  await Promise.all(
    messages.map(async (msg) => {
      const parsed = SignalJudgeMessage.safeParse(msg.body);
      if (!parsed.success) {
        console.error(JSON.stringify({ level: "error", msg: "invalid signal message dropped", issues: parsed.error.issues.slice(0, 5) }));
        msg.ack();
        return;
      }
      try {
        const outcome = await judgeOne(deps, parsed.data, await signalOf(parsed.data.workspace_id, parsed.data.signal_id), () => llmOf(parsed.data.workspace_id));
        if (typeof outcome === "object") msg.retry({ delaySeconds: outcome.retryAfter });
        else msg.ack();
      } catch (err) {
        console.error(JSON.stringify({ level: "error", msg: "signal judgement failed, retrying", request_id: parsed.data.request_id, signal_id: parsed.data.signal_id, error: chainForLog(err) }));
        msg.retry({ delaySeconds: judgeRetryDelay(1, retryBase(deps)) });
      }
    }),
  );
}

async function loadSignal(db: Db, ws: number, id: number): Promise<SignalRow | null> {
  const [row] = await db
    .select()
    .from(signals)
    .where(and(eq(signals.workspaceId, ws), eq(signals.id, id)))
    .limit(1);
  return row ?? null;
}

/**
 * Makes the judgement a message names, if it is still owed. Answers what became of it, or
 * `{retryAfter}` when it should be delivered again after that many seconds.
 */
export async function judgeOne(
  deps: Deps,
  m: SignalJudgeMessage,
  signal: SignalRow | null,
  llm: () => Promise<LlmProviders> = () => workspaceLlm(deps.env, deps.db, m.workspace_id),
): Promise<JudgeOutcome | { retryAfter: number }> {
  const ws = m.workspace_id;
  const store = await deps.logs(ws);
  const logs = await store.holding(m.request_id);
  if (!logs) return "nothing_owed";
  if (!signal) {
    await dropJudgement(logs, m.request_id, m.signal_id);
    return "dropped";
  }
  const now = deps.now();
  const { claim, existing, log: row } = await openJudgement(logs, ws, m.request_id, m.signal_id, now, JUDGE_LEASE_MS);
  if (claim.state === "none" || claim.state === "held") return "nothing_owed";
  if (claim.state === "early") return { retryAfter: Math.ceil(claim.waitMs / 1000) };
  const owed = claim.row;
  // Reserved and not yet kept by a stored result: given back if anything throws before it is stored (the
  // judgement is made again).
  let reserved: Reservation | null = null;
  // A result is stored (or, with an ok one already there, being announced): a failure now leaves the
  // judgement owed for a redelivery to announce, instead of counting as a failed attempt.
  let stored = false;
  const resultOf = (judgement: Judgement): NewSignalResult => ({
    requestId: m.request_id,
    signalId: signal.id,
    workspaceId: ws,
    hookId: owed.hookId,
    backfillId: owed.backfillId,
    revision: signal.revision,
    result: judgement.result,
    reasoning: judgement.reasoning,
    quote: judgement.quote,
    quoteVerified: judgement.quoteVerified,
    status: judgement.status,
    error: judgement.error,
    model: judgement.model,
    inputTokens: judgement.inputTokens,
    outputTokens: judgement.outputTokens,
    cost: judgement.cost,
    day: dayOf(row?.requestStartTime ?? now),
  });
  // The next attempt, after the backoff of the attempts made: a provider's failure that may pass, or anything that threw.
  const again = async () => {
    await releaseJudgement(logs, m.request_id, m.signal_id);
    return { retryAfter: judgeRetryDelay(owed.attempts, retryBase(deps)) };
  };
  try {
    // A hook's judgement waits on the signal being enabled; a backfill's runs regardless (test, then backfill, then enable).
    if (owed.backfillId === null && !signal.enabled) {
      await dropJudgement(logs, m.request_id, m.signal_id);
      return "dropped";
    }
    const log = row ? row.decode() : null;
    if (existing && existing.status === "ok" && existing.revision >= signal.revision) {
      // A true result at this revision whose owed row is still there: its event may not have been written
      // (the delivery that stored it stopped before). Writing it again is harmless (one id per log, signal, revision).
      stored = true;
      if (existing.result === 1 && existing.revision === signal.revision) {
        await deps.db.run(triggeredEvent(ws, signal, m.request_id, { reasoning: existing.reasoning, quote: existing.quote, quoteVerified: existing.quoteVerified }, log));
      }
      await dropJudgement(logs, m.request_id, m.signal_id);
      return "unchanged";
    }
    if (!log) {
      // Moved to the archive (or never there): nothing left to read.
      await dropJudgement(logs, m.request_id, m.signal_id);
      return "dropped";
    }
    const prepared = prepareJudgement(await llm(), signal, log);
    let judgement: Judgement;
    if (!isPrepared(prepared)) judgement = prepared;
    else {
      const limits = { dailyRuns: signal.dailyRuns ?? null, dailyCostUsd: signal.dailyCostUsd ?? null };
      const reservation = await reserve(deps.db, signal.id, limits, prepared.estimatedCost, now, owed.backfillId);
      if (!reservation) {
        await dropJudgement(logs, m.request_id, m.signal_id);
        return "skipped_budget";
      }
      reserved = reservation;
      judgement = await callJudge(prepared);
      if (judgement.status === "error" && judgement.transient && owed.attempts < MAX_JUDGE_ATTEMPTS) {
        reserved = null;
        await refund(deps.db, reservation);
        return await again();
      }
      // Settled to what the call cost only under a cost cap: without one the day's spend keeps the
      // estimate (an upper bound: a cap set later that day then counts these calls at most at it), and a
      // judgement costs one write less.
      if (limits.dailyCostUsd !== null) await settle(deps.db, reservation, judgement.cost);
      if (judgement.status === "error" && judgement.transient) judgement = { ...judgement, error: `${judgement.error} (gave up after ${owed.attempts} attempts)` };
    }
    const triggered = judgement.status === "ok" && judgement.result === true;
    const written = await storeResult(logs, resultOf(judgement), deps.now(), { keepOwed: triggered, abServed: log.abTestId !== null });
    reserved = null;
    stored = true;
    if (!written) {
      if (triggered) await dropJudgement(logs, m.request_id, m.signal_id);
      return "unchanged";
    }
    if (triggered) {
      await deps.db.run(triggeredEvent(ws, signal, m.request_id, judgement, log));
      await dropJudgement(logs, m.request_id, m.signal_id);
    }
    return "stored";
  } catch (err) {
    // Not a provider's failing (those are error judgements above), wherever it is thrown once the
    // judgement is claimed (before the budget is reserved, by the judge's answer, storing the result):
    // the budget given back, and the judgement retried like a provider's failure that may pass, with
    // the same backoff and up to the same number of attempts; the last one stores an error result, so
    // a judgement that always throws is never delivered for ever.
    if (reserved) await refund(deps.db, reserved).catch(() => undefined);
    // Once a result is being stored or announced, the owed row stays: a redelivery finds the result and announces it.
    if (stored) {
      await releaseJudgement(logs, m.request_id, m.signal_id).catch(() => undefined);
      throw err;
    }
    console.error(JSON.stringify({ level: "error", msg: "signal judgement threw", request_id: m.request_id, signal_id: m.signal_id, attempt: owed.attempts, error: chainForLog(err) }));
    if (owed.attempts < MAX_JUDGE_ATTEMPTS) return again();
    const failed = errorJudgement(`the judgement failed: ${err instanceof Error ? err.message : String(err)} (gave up after ${owed.attempts} attempts)`);
    await storeResult(logs, resultOf(failed), now);
    return "stored";
  }
}

/** The signal_triggered event of a true result: one per log, signal and revision, however often it is written. */
function triggeredEvent(
  ws: number,
  signal: SignalRow,
  requestId: number,
  v: { reasoning: string | null; quote: string | null; quoteVerified: boolean },
  log: { promptId: number | null; promptVersionNumber: number | null } | null,
) {
  return eventStatement({
    workspaceId: ws,
    type: "signal_triggered",
    userId: null,
    id: `evt_sig_${signal.id}_${requestId}_r${signal.revision}`,
    details: {
      signal_id: signal.id,
      signal_name: signal.name,
      signal_revision: signal.revision,
      request_id: requestId,
      result: true,
      reasoning: v.reasoning,
      quote: v.quote,
      quote_verified: v.quoteVerified,
      prompt_template_id: log?.promptId ?? null,
      prompt_version_number: log?.promptVersionNumber ?? null,
    },
  });
}
