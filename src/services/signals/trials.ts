// Trying a signal before enabling it: judge up to 20 chosen logs and store nothing (no result, no
// budget, no event), and estimate what its hooks would judge per day and what that would cost.
import type { Deps } from "../../env";
import { ApiError } from "../../lib/errors";
import { coverageCounts, readRequestLog } from "../../logs";
import { coverageOf } from "./coverage";
import { checkHook, type HookInput } from "./definitions";
import { isPriced, judgeModelOf } from "./cost-cap";
import { DEFAULT_INCLUDE, estimateCall, judgeMessages } from "./judge";
import { callJudge, isPrepared, prepareJudgement, type JudgeSpec } from "./judging";
import { workspaceLlm } from "../../base-deps";
import { DEFAULT_SAMPLE_RATE } from "./definitions";
import type { SignalInclude, SignalModel } from "../../db/schema";

export const MAX_TEST_LOGS = 20;
/** Judge calls a test makes at once. */
const TEST_CONCURRENCY = 5;

export async function testSignal(deps: Deps, ws: number, spec: JudgeSpec, requestIds: readonly number[]) {
  const ids = [...new Set(requestIds)];
  const store = await deps.logs(ws);
  const logs = await Promise.all(ids.map((id) => readRequestLog(store, deps.blobs, ws, id)));
  const missing = ids.filter((_, i) => logs[i] === null);
  if (missing.length > 0) throw new ApiError("not_found", `request log${missing.length > 1 ? "s" : ""} ${missing.join(", ")} not found`);
  const llm = await workspaceLlm(deps.env, deps.db, ws);
  const results = new Array(ids.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < ids.length; i = next++) {
      const log = logs[i]!;
      const prepared = prepareJudgement(llm, spec, { input: log.input, output: log.output, metadata: log.metadata });
      const j = isPrepared(prepared) ? await callJudge(prepared) : prepared;
      results[i] = {
        request_id: ids[i],
        result: j.result,
        reasoning: j.reasoning,
        quote: j.quote,
        quote_verified: j.quoteVerified,
        status: j.status,
        error: j.error,
        model: j.model,
        input_tokens: j.inputTokens,
        output_tokens: j.outputTokens,
        cost_usd: j.cost,
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(TEST_CONCURRENCY, ids.length) }, worker));
  return results;
}

export interface EstimateInput {
  hooks: HookInput[];
  window_days: number;
  statement?: string;
  model?: SignalModel | null;
  include?: Partial<SignalInclude>;
}

/** Tokens a typical verdict takes (the estimate's; a call reserves the most it may take). */
const TYPICAL_ANSWER_TOKENS = 150;

/**
 * What the hooks would have matched and sampled per day over the window, and what judging that would
 * cost. Hooks are checked as a signal's are at create (a template, version or label that is not the
 * workspace's is a 400 naming it). A judge model the price table does not price (or none) makes every
 * cost null: unknown, not free.
 */
export async function estimateSignal(deps: Deps, ws: number, input: EstimateInput) {
  for (const [i, h] of input.hooks.entries()) await checkHook(deps.db, ws, h, `hooks[${i}].`);
  const now = deps.now();
  const from = now - input.window_days * 86_400_000;
  const coverages = await Promise.all(input.hooks.map((h) => coverageOf(deps.db, ws, h)));
  const counts = await coverageCounts(await deps.logs(ws), ws, coverages, from, now);
  const include = { ...DEFAULT_INCLUDE, ...input.include };
  const llm = await workspaceLlm(deps.env, deps.db, ws);
  const model = judgeModelOf(llm, input.model);
  const priced = isPriced(model);
  const perHook = input.hooks.map((h, i) => {
    const rate = h.sample_rate ?? DEFAULT_SAMPLE_RATE;
    const perDay = counts[i].matches / input.window_days;
    const chars = Math.min(counts[i].meanChars + 200, include.max_chars);
    const perCall = priced ? round(estimateCall(model, judgeMessages(input.statement ?? "", "x".repeat(Math.round(chars))), TYPICAL_ANSWER_TOKENS).cost, 8) : null;
    return { matches: counts[i].matches, matches_per_day: round(perDay), sampled_per_day: round(perDay * rate), cost_per_judgement_usd: perCall };
  });
  const sampled = perHook.reduce((n, h) => n + h.sampled_per_day, 0);
  const cost = priced ? perHook.reduce((n, h) => n + h.sampled_per_day * (h.cost_per_judgement_usd ?? 0), 0) : null;
  return {
    window_days: input.window_days,
    from: new Date(from).toISOString(),
    to: new Date(now).toISOString(),
    model,
    hooks: perHook,
    sampled_per_day: round(sampled),
    cost_usd_per_day: cost === null ? null : round(cost, 6),
  };
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
