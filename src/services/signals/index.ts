// Signals: yes/no questions an LLM answers about production logs (docs/signals.md). Definitions and
// hooks (definitions.ts), which logs they cover (coverage.ts), deterministic sampling (sampling.ts),
// the judge (judge.ts pure, judging.ts the call), daily budgets reserved atomically (budget.ts), the
// signals queue's consumer (consumer.ts), backfill jobs (backfills.ts), tests and estimates
// (trials.ts), totals (totals.ts) and the cron's part (maintenance.ts); cost caps only on a model the
// price table prices (cost-cap.ts). Route folder: signals.
// Rule: results live beside their logs and are read and written through the log store (src/logs/).
export {
  addHook,
  checkHookShape,
  createSignal,
  deleteHook,
  deleteSignal,
  getSignal,
  listSignals,
  MAX_DELAY_SECONDS,
  MAX_ENABLED_SIGNALS,
  MAX_HOOKS_PER_SIGNAL,
  MAX_INCLUDE_CHARS,
  MAX_NAME_LENGTH,
  MAX_STATEMENT_LENGTH,
  DEFAULT_SAMPLE_RATE,
  requireSignal,
  signalIdsByName,
  updateHook,
  updateSignal,
  type HookInput,
  type HookView,
  type SignalInput,
  type SignalListQuery,
  type SignalPatch,
  type SignalView,
} from "./definitions";
export { cancelBackfill, createBackfill, DEFAULT_BACKFILL_LOGS, failBackfill, getBackfill, listBackfills, MAX_BACKFILL_LOGS, MAX_OPEN_BACKFILLS, MAX_OPEN_BACKFILLS_PER_WORKSPACE, BACKFILL_WINDOW, runBackfill, type BackfillInput, type BackfillStep, type BackfillView } from "./backfills";
export { handleJudgeBatch, judgeOne, judgeRetryDelay, JUDGE_LEASE_MS, MAX_JUDGE_ATTEMPTS, type JudgeOutcome } from "./consumer";
export { DEFAULT_INCLUDE } from "./judge";
export { purgeDeletedSignal, resendOverdueJudgements, RESEND_AFTER_MS } from "./maintenance";
export { estimateSignal, MAX_TEST_LOGS, testSignal, type EstimateInput } from "./trials";
export { trueRateSeries, withTotals, type Totals } from "./totals";
export { isSampled, unitDraw } from "./sampling";
export { signalMatcher } from "./matching";
export { reserve, refund, settle, spendToday } from "./budget";
export { checkCostCapOnCreate, checkCostCapOnPatch, isPriced, judgeModelOf } from "./cost-cap";
