// A cost cap the service can hold. limits.daily_cost_usd is held by reserving each judge call's cost,
// estimated from the one price table (src/converters/pricing.ts), before the call: a model the table
// does not price costs 0 there, so a cap on it would never stop a call. Such a cap is refused (a 400
// naming the model) when it is set, and when the model changes under it; so is a cap whose judge model
// cannot be told at all (no model named and no provider configured). The model is the one the judge
// would run now: the signal's model.name, else its provider's default (LLM_DEFAULT_MODEL, or the
// provider's own), as the judge resolves it (judging.ts).
import type { LlmProviders } from "../../blocks";
import { workspaceLlm } from "../../base-deps";
import { pricedAs } from "../../converters/pricing";
import type { SignalModel } from "../../db/schema";
import type { Deps } from "../../env";
import { ApiError } from "../../lib/errors";
import { requireSignal, type SignalInput, type SignalPatch } from "./definitions";

/** The model the judge runs for `model` with these providers; null when none can be told (no name, no provider). */
export function judgeModelOf(llm: Pick<LlmProviders, "defaultProvider" | "defaultModel">, model: SignalModel | null | undefined): string | null {
  if (model?.name) return model.name;
  const provider = model?.provider ?? llm.defaultProvider ?? null;
  return (provider && llm.defaultModel(provider)) || null;
}

/** Whether the price table prices `model` (a cost estimated for it is a real one). */
export const isPriced = (model: string | null): model is string => model !== null && pricedAs(model) !== null;

const bad = (field: string, rule: string) => new ApiError("validation_error", `${field}: ${rule}`, { details: [{ field, rule }] });

/** Refuses a daily_cost_usd cap on the judge model `model` resolves to when the price table does not price it (or it cannot be told). */
async function checkPricedJudge(deps: Pick<Deps, "env" | "db">, ws: number, model: SignalModel | null, field: string): Promise<void> {
  const name = model?.name ? model.name : judgeModelOf(await workspaceLlm(deps.env, deps.db, ws), model);
  if (name === null) {
    throw bad(field, "a daily cost cap needs a judge model the service can price, and none is named (model.name) nor any LLM provider configured for this workspace; name the model, or cap daily_runs instead");
  }
  if (!isPriced(name)) {
    throw bad(field, `the judge model ${JSON.stringify(name)} has no price in the service's price table, so a daily cost cap on it could not be held; use a priced model, or cap daily_runs instead`);
  }
}

/** A new signal's cost cap, when it has one, checked against its judge model. */
export async function checkCostCapOnCreate(deps: Pick<Deps, "env" | "db">, ws: number, input: Pick<SignalInput, "model" | "limits">): Promise<void> {
  if (input.limits?.daily_cost_usd == null) return;
  await checkPricedJudge(deps, ws, input.model ?? null, "limits.daily_cost_usd");
}

/**
 * A PATCH that sets a cost cap, or changes the model of a signal that keeps one, checked against the
 * judge model the signal has after it. Other changes are not held to it (a signal stored before this
 * rule keeps working). An unknown signal is left to the update (its 404).
 */
export async function checkCostCapOnPatch(deps: Pick<Deps, "env" | "db">, ws: number, id: number, patch: Pick<SignalPatch, "model" | "limits">): Promise<void> {
  const capSet = patch.limits != null && patch.limits.daily_cost_usd != null;
  if (!capSet && patch.model === undefined) return;
  if (patch.limits === null) return;
  let current;
  try {
    current = await requireSignal(deps.db, ws, id);
  } catch {
    return;
  }
  const cap = patch.limits?.daily_cost_usd !== undefined ? patch.limits.daily_cost_usd : current.dailyCostUsd;
  if (cap == null) return;
  const model = patch.model !== undefined ? patch.model : (current.model ?? null);
  await checkPricedJudge(deps, ws, model, capSet ? "limits.daily_cost_usd" : "model");
}
