// The blocks that reach outside: ENDPOINT (HTTP) and the LLM blocks (PROMPT_TEMPLATE, LLM_ASSERTION,
// AI_DATA_EXTRACTION), all through the context so tests can inject fakes.
import { z } from "zod";
import { callEndpoint, DEFAULT_ENDPOINT_POLICY, endpointUrlProblem } from "../endpoint";
import { llmOf, pickProvider } from "../llm";
import { blueprintVariables, renderBlueprint, type ChatMessage } from "../template";
import { BlockError, defineBlock, type BlockContext, type BlockInputs, type BlockDefinition, type PromptRef } from "../types";
import { input, toText, tryParseJson } from "../values";
import { SourceName } from "./data";

const Engine = z
  .looseObject({
    provider: z.string().min(1).nullish(),
    model: z.string().min(1).nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  })
  .nullish();
type Engine = z.output<typeof Engine>;

async function complete(ctx: BlockContext, engine: Engine, messages: ChatMessage[], fallback?: { provider?: unknown; model?: unknown; parameters?: unknown }) {
  const providerName = engine?.provider ?? (typeof fallback?.provider === "string" ? fallback.provider : undefined);
  const llm = await llmOf(ctx);
  const provider = pickProvider(llm, providerName);
  const model = engine?.model ?? (typeof fallback?.model === "string" ? fallback.model : undefined) ?? llm?.defaultModel(provider.name);
  if (!model) throw new BlockError(`no model given for ${provider.name}: set engine.model or LLM_DEFAULT_MODEL`);
  const baseParams = fallback?.parameters && typeof fallback.parameters === "object" ? (fallback.parameters as Record<string, unknown>) : {};
  const res = await provider.chat({ model, messages, parameters: { ...baseParams, ...(engine?.parameters ?? {}) } });
  return res.text;
}

const ENDPOINT = defineBlock({
  computes: true,
  configSchema: z.looseObject({
    url: z.string().superRefine((u, ctx) => {
      const problem = endpointUrlProblem(u, true);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"], { error: "must be GET, POST, PUT, PATCH or DELETE" }).default("POST"),
    headers: z.record(z.string(), z.string({ error: "header values must be strings" })).nullish(),
    timeout_ms: z.int().min(1, "must be at least 1").max(120_000, "must be at most 120000").nullish(),
  }),
  sources: () => [],
  evaluate: (c, inputs, ctx) => {
    const policy = { ...DEFAULT_ENDPOINT_POLICY, ...ctx.endpoint };
    // A config may ask for less time than the service allows, never more.
    if (c.timeout_ms) policy.timeoutMs = Math.min(policy.timeoutMs, c.timeout_ms);
    return callEndpoint({ url: c.url, method: c.method, headers: c.headers ?? {}, body: { ...inputs } }, policy, ctx.fetch);
  },
});

const TemplateRef = z
  .looseObject({
    name: z.string().min(1).max(512).nullish(),
    prompt_name: z.string().min(1).max(512).nullish(),
    version_number: z.int().positive("must be a positive integer").nullish(),
    label: z.string().min(1).max(512).nullish(),
    prompt_template: z.record(z.string(), z.unknown()).nullish(),
  })
  .superRefine((t, ctx) => {
    const named = t.name ?? t.prompt_name;
    if (!named && !t.prompt_template) ctx.addIssue({ code: "custom", message: "needs name (a stored prompt) or prompt_template (an inline one)" });
    if (named && t.prompt_template) ctx.addIssue({ code: "custom", message: "give either name or prompt_template, not both" });
    if (t.version_number != null && t.label != null) ctx.addIssue({ code: "custom", path: ["label"], message: "give either version_number or label, not both" });
    if (t.prompt_template) {
      const pt = t.prompt_template;
      if (pt.type === "chat" ? !Array.isArray(pt.messages) : pt.type === "completion" ? pt.content === undefined : true) {
        ctx.addIssue({ code: "custom", path: ["prompt_template"], message: 'must be a chat blueprint (type "chat", messages) or a completion one (type "completion", content)' });
      }
    }
  });

const PROMPT_TEMPLATE = defineBlock({
  computes: true,
  configSchema: z.looseObject({
    template: TemplateRef,
    prompt_template_variable_mappings: z.record(z.string(), SourceName).nullish(),
    engine: Engine,
  }),
  sources: (c) => {
    const mapped = Object.values(c.prompt_template_variable_mappings ?? {});
    const mappedVars = new Set(Object.keys(c.prompt_template_variable_mappings ?? {}));
    const inline = c.template.prompt_template ? blueprintVariables(c.template.prompt_template).filter((v) => !mappedVars.has(v)) : [];
    return [...new Set([...mapped, ...inline])];
  },
  // A stored template named by label or as "latest" can change under an unchanged config.
  externalState: async (c, ctx) => (c.template.prompt_template || !ctx.resolvePrompt ? null : ((await ctx.resolvePrompt(storedRef(c.template))) ?? null)),
  evaluate: async (c, inputs, ctx) => {
    let blueprint: Record<string, unknown>;
    let metadata: Record<string, unknown> | null | undefined;
    if (c.template.prompt_template) blueprint = c.template.prompt_template;
    else {
      if (!ctx.resolvePrompt) throw new BlockError("stored prompt templates are not available here");
      const ref = storedRef(c.template);
      const name = ref.name;
      const found = await ctx.resolvePrompt(ref);
      if (!found) {
        const which = c.template.version_number ? ` version ${c.template.version_number}` : c.template.label ? ` label "${c.template.label}"` : "";
        throw new BlockError(`prompt template "${name}"${which} not found`);
      }
      blueprint = found.prompt_template;
      metadata = found.metadata;
    }
    const vars = templateVars(blueprint, c.prompt_template_variable_mappings ?? {}, inputs);
    const messages = renderBlueprint(blueprint, vars);
    const model = (metadata?.model ?? null) as { provider?: unknown; name?: unknown; parameters?: unknown } | null;
    return complete(ctx, c.engine, messages, model ? { provider: model.provider, model: model.name, parameters: model.parameters } : undefined);
  },
});

/** The stored prompt a PROMPT_TEMPLATE config names (by name, then version number or label). */
function storedRef(t: { name?: unknown; prompt_name?: unknown; version_number?: number | null; label?: string | null }): PromptRef {
  return { name: (t.name ?? t.prompt_name) as string, version_number: t.version_number, label: t.label };
}

/** Each template variable's value: its mapped input, else the input of the same name (when there is one). */
function templateVars(blueprint: Record<string, unknown>, mappings: Record<string, string>, inputs: BlockInputs): Record<string, unknown> {
  const vars: Record<string, unknown> = {};
  for (const v of blueprintVariables(blueprint)) {
    if (mappings[v] !== undefined) vars[v] = input(inputs, mappings[v]);
    else if (Object.prototype.hasOwnProperty.call(inputs, v)) vars[v] = inputs[v];
  }
  return vars;
}

const ASSERTION_SYSTEM =
  "You are a strict evaluator. Decide whether the assertion holds for the content. " +
  'Answer with exactly one word: "true" if it holds, "false" if it does not.';

/** Reads an evaluator's verdict: a JSON boolean or {result}, or a leading true/false/yes/no/pass/fail. */
export function parseVerdict(answer: string): boolean {
  const t = answer.trim();
  const p = tryParseJson(t);
  if (p.ok) {
    if (typeof p.value === "boolean") return p.value;
    const r = (p.value as { result?: unknown } | null)?.result;
    if (typeof r === "boolean") return r;
  }
  const m = /\b(true|false|yes|no|pass|fail|passed|failed)\b/i.exec(t);
  if (!m) throw new BlockError(`the evaluator's answer is not true or false: ${t.slice(0, 80)}`);
  return ["true", "yes", "pass", "passed"].includes(m[1].toLowerCase());
}

const LLM_ASSERTION = defineBlock({
  computes: true,
  configSchema: z
    .looseObject({ source: SourceName, prompt: z.string().min(1).nullish(), prompt_source: SourceName.nullish(), engine: Engine })
    .superRefine((c, ctx) => {
      if ((c.prompt != null) === (c.prompt_source != null)) ctx.addIssue({ code: "custom", path: ["prompt"], message: "give exactly one of prompt or prompt_source" });
    }),
  sources: (c) => [c.source, ...(c.prompt_source ? [c.prompt_source] : [])],
  evaluate: async (c, inputs, ctx) => {
    const content = toText(input(inputs, c.source));
    const ask = async (assertion: string) =>
      parseVerdict(
        await complete(ctx, c.engine, [
          { role: "system", content: ASSERTION_SYSTEM },
          { role: "user", content: `Content:\n<content>\n${content}\n</content>\n\nAssertion: ${assertion}` },
        ]),
      );
    if (c.prompt) return ask(c.prompt);
    // A prompt_source holding a list (or JSON text of one) runs each assertion: {assertion: verdict}.
    let prompts = input(inputs, c.prompt_source as string);
    if (typeof prompts === "string" && prompts.trim().startsWith("[")) {
      const p = tryParseJson(prompts.trim());
      if (p.ok) prompts = p.value;
    }
    if (Array.isArray(prompts)) {
      const out: Record<string, boolean> = {};
      for (const a of prompts.map(toText)) out[a] = await ask(a);
      return out;
    }
    const one = toText(prompts).trim();
    if (!one) throw new BlockError(`${c.prompt_source} holds no assertion`);
    return ask(one);
  },
});

const EXTRACTION_SYSTEM =
  "Extract the requested information from the content. Answer with the extracted value only: no explanation, no quotes, no formatting.";

const AI_DATA_EXTRACTION = defineBlock({
  computes: true,
  configSchema: z.looseObject({ source: SourceName, query: z.string().min(1, "must be a non-empty query"), engine: Engine }),
  sources: (c) => [c.source],
  evaluate: async (c, inputs, ctx) => {
    const content = toText(input(inputs, c.source));
    const answer = await complete(ctx, c.engine, [
      { role: "system", content: EXTRACTION_SYSTEM },
      { role: "user", content: `Content:\n<content>\n${content}\n</content>\n\nExtract: ${c.query}` },
    ]);
    return answer.trim();
  },
});

export const EFFECT_BLOCKS = { ENDPOINT, PROMPT_TEMPLATE, LLM_ASSERTION, AI_DATA_EXTRACTION } satisfies Record<string, BlockDefinition>;
