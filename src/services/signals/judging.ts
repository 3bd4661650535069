// One judgement: the judge prepared for a signal and a log (provider, model, transcript, arguments, the
// cost estimate the budget reserves), then called through the blocks' provider client with the
// workspace's keys. A failure says whether the same call may succeed later (a 429, a 5xx, no answer):
// the consumer retries those and stores the rest as error results with the provider's message.
import { BlockError, pickProvider, ProviderCallError, type LlmProvider, type LlmProviders } from "../../blocks";
import { priceOf } from "../../converters/pricing";
import type { SignalInclude, SignalModel } from "../../db/schema";
import { estimateCall, judgeKwargs, judgeOutputLimit, judgeMessages, quoteVerified, readJudgeAnswer, transcriptOf, VerdictFormatError, type JudgedLog } from "./judge";

/** What of a signal the judge needs. */
export interface JudgeSpec {
  statement: string;
  model: SignalModel | null;
  include: SignalInclude;
}

export interface PreparedJudgement {
  provider: LlmProvider;
  model: string;
  transcript: string;
  kwargs: Record<string, unknown>;
  /** The call's cost at most, as the budget reserves it. */
  estimatedCost: number;
}

export interface Judgement {
  status: "ok" | "error";
  result: boolean | null;
  reasoning: string | null;
  quote: string | null;
  quoteVerified: boolean;
  error: string | null;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  /** For an error: whether the same call may succeed later. */
  transient: boolean;
}

export const errorJudgement = (error: string, model: string | null = null, transient = false): Judgement => ({
  status: "error",
  result: null,
  reasoning: null,
  quote: null,
  quoteVerified: false,
  error,
  model,
  inputTokens: 0,
  outputTokens: 0,
  cost: 0,
  transient,
});

/**
 * The judge for a signal and a log, or an error judgement when it cannot be called (no provider
 * configured: the message says which key to set and where).
 */
export function prepareJudgement(llm: LlmProviders, spec: JudgeSpec, log: JudgedLog): PreparedJudgement | Judgement {
  let provider: LlmProvider;
  try {
    provider = pickProvider(llm, spec.model?.provider ?? null);
  } catch (err) {
    if (err instanceof BlockError) return errorJudgement(`${err.message} (as a workspace environment variable, or a secret of the Worker)`);
    throw err;
  }
  const model = spec.model?.name || llm.defaultModel(provider.name) || "";
  if (!model) return errorJudgement(`no model is named for the judge: give the signal's model.name`);
  const transcript = transcriptOf(log, spec.include);
  const messages = judgeMessages(spec.statement, transcript);
  const kwargs = judgeKwargs(provider.name, model, spec.model?.parameters ?? {}, messages);
  // Reserved for the most the call may answer with: the signal's max_tokens may be above the judge's 512.
  return { provider, model, transcript, kwargs, estimatedCost: estimateCall(model, messages, judgeOutputLimit(kwargs)).cost };
}

export const isPrepared = (p: PreparedJudgement | Judgement): p is PreparedJudgement => "kwargs" in p;

/** Calls the judge once. Never throws for the provider's or the answer's failings: they are error judgements. */
export async function callJudge(p: PreparedJudgement): Promise<Judgement> {
  let raw: Record<string, unknown>;
  try {
    raw = await p.provider.send(p.kwargs);
  } catch (err) {
    if (err instanceof ProviderCallError) return errorJudgement(err.message, p.model, err.transient);
    if (err instanceof BlockError) return errorJudgement(err.message, p.model);
    throw err;
  }
  try {
    const { verdict, inputTokens, outputTokens } = readJudgeAnswer(p.provider.name, raw);
    return {
      status: "ok",
      result: verdict.result,
      reasoning: verdict.reasoning,
      quote: verdict.quote,
      quoteVerified: quoteVerified(verdict.quote, p.transcript),
      error: null,
      model: p.model,
      inputTokens,
      outputTokens,
      cost: priceOf(p.model, inputTokens, outputTokens),
      transient: false,
    };
  } catch (err) {
    if (err instanceof VerdictFormatError) return errorJudgement(err.message, p.model);
    throw err;
  }
}
