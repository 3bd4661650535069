// The judge's pure parts: the transcript (what is included, the cut at max_chars), the provider
// arguments with structured output, reading a verdict from either provider, quote verification and the
// cost estimate.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_INCLUDE,
  estimateCall,
  judgeKwargs,
  judgeMessages,
  quoteVerified,
  readJudgeAnswer,
  transcriptOf,
  VERDICT_NAME,
  VerdictFormatError,
  type JudgedLog,
} from "../../../src/services/signals/judge";
import { isPrepared, prepareJudgement } from "../../../src/services/signals/judging";
import type { LlmProvider, LlmProviders } from "../../../src/blocks/types";

const text = (t: string) => [{ type: "text", text: t }];
const log: JudgedLog = {
  input: {
    type: "chat",
    messages: [
      { role: "system", content: text("You are a support bot.") },
      { role: "user", content: text("¿Cómo cambio mi contraseña?") },
    ],
    tools: [{ type: "function", function: { name: "reset_password", parameters: {} } }],
  },
  output: {
    type: "chat",
    messages: [{ role: "assistant", content: text("Puede cambiarla en Ajustes."), tool_calls: [{ id: "c1", type: "function", function: { name: "reset_password", arguments: '{"user":"u1"}' } }] }],
  },
  metadata: { user_id: "u1", plan: "pro" },
};

describe("transcriptOf", () => {
  it("has the input's and output's turns with their roles, tool calls and declared tools, and no metadata by default", () => {
    const t = transcriptOf(log, DEFAULT_INCLUDE);
    expect(t).toContain("## Input\nsystem: You are a support bot.\nuser: ¿Cómo cambio mi contraseña?");
    expect(t).toContain("[tools available: reset_password]");
    expect(t).toContain("## Output\nassistant: Puede cambiarla en Ajustes.\n[calls reset_password({\"user\":\"u1\"})]");
    expect(t).not.toContain("plan");
  });

  it("includes only what the signal includes", () => {
    const t = transcriptOf(log, { ...DEFAULT_INCLUDE, input: false, tools: false, metadata: true });
    expect(t).not.toContain("## Input");
    expect(t).not.toContain("reset_password");
    expect(t).toContain('"plan": "pro"');
  });

  it("cuts at max_chars and says so", () => {
    const t = transcriptOf(log, { ...DEFAULT_INCLUDE, max_chars: 30 });
    expect(t.startsWith("## Input\nsystem: You are a sup")).toBe(true);
    expect(t).toContain("cut at the signal's max_chars");
    expect(transcriptOf(log, { ...DEFAULT_INCLUDE, max_chars: 100_000 })).not.toContain("cut at");
  });

  it("reads a completion's content", () => {
    expect(transcriptOf({ input: { type: "completion", content: text("2+2=") }, output: { type: "completion", content: text("4") }, metadata: {} }, DEFAULT_INCLUDE)).toBe("## Input\n2+2=\n\n## Output\n4");
  });
});

describe("judgeKwargs", () => {
  const messages = judgeMessages("Did it reply in the user's language?", "user: hola");

  it("asks OpenAI for the verdict's JSON schema, strictly, with the statement and the log fenced as data", () => {
    const k = judgeKwargs("openai", "gpt-4o-mini", {}, messages) as any;
    expect(k.model).toBe("gpt-4o-mini");
    expect(k.response_format).toMatchObject({ type: "json_schema", json_schema: { name: VERDICT_NAME, strict: true } });
    expect(k.response_format.json_schema.schema.required).toEqual(["result", "reasoning", "quote"]);
    expect(k.messages[0].content).toContain("Statement: Did it reply in the user's language?");
    expect(k.messages[1].content).toContain("<log>\nuser: hola\n</log>");
  });

  it("asks Anthropic for a forced tool call, the system prompt apart", () => {
    const k = judgeKwargs("anthropic", "claude-3-5-haiku-latest", { temperature: 0.2 }, messages) as any;
    expect(k.tool_choice).toEqual({ type: "tool", name: VERDICT_NAME });
    expect(k.tools[0].input_schema.required).toEqual(["result", "reasoning", "quote"]);
    expect(k.system).toContain("Statement:");
    expect(k.messages.every((m: any) => m.role !== "system")).toBe(true);
    expect(k.temperature).toBe(0.2);
  });
});

describe("readJudgeAnswer", () => {
  it("reads OpenAI's JSON content and usage", () => {
    const a = readJudgeAnswer("openai", {
      choices: [{ message: { content: '{"result": true, "reasoning": "Spanish both ways.", "quote": "¿Cómo cambio"}' } }],
      usage: { prompt_tokens: 120, completion_tokens: 30 },
    });
    expect(a).toEqual({ verdict: { result: true, reasoning: "Spanish both ways.", quote: "¿Cómo cambio" }, inputTokens: 120, outputTokens: 30 });
  });

  it("reads Anthropic's tool call and usage", () => {
    const a = readJudgeAnswer("anthropic", { content: [{ type: "tool_use", name: VERDICT_NAME, input: { result: false, reasoning: "no", quote: "" } }], usage: { input_tokens: 80, output_tokens: 12 } });
    expect(a.verdict.result).toBe(false);
    expect([a.inputTokens, a.outputTokens]).toEqual([80, 12]);
  });

  it("refuses an answer without a boolean result, text that is not JSON, and a refusal", () => {
    expect(() => readJudgeAnswer("openai", { choices: [{ message: { content: "yes" } }] })).toThrow(VerdictFormatError);
    expect(() => readJudgeAnswer("openai", { choices: [{ message: { content: '{"result": "yes"}' } }] })).toThrow(/boolean result/);
    expect(() => readJudgeAnswer("openai", { choices: [{ message: { content: null, refusal: "I can't" } }] })).toThrow(/refused/);
    expect(() => readJudgeAnswer("openai", {})).toThrow(VerdictFormatError);
  });
});

describe("quoteVerified", () => {
  const transcript = transcriptOf(log, DEFAULT_INCLUDE);

  it("finds a quote in the text the judge read, case, white space and typographic quotes aside", () => {
    expect(quoteVerified("¿Cómo cambio mi contraseña?", transcript)).toBe(true);
    expect(quoteVerified("  puede   CAMBIARLA en ajustes ", transcript)).toBe(true);
    expect(quoteVerified("“Puede cambiarla en Ajustes.”", transcript)).toBe(true);
    expect(quoteVerified("…cambiarla en Ajustes…", transcript)).toBe(true);
  });

  it("does not verify a quote the log does not hold, nor an empty one", () => {
    expect(quoteVerified("You can change it in Settings.", transcript)).toBe(false);
    expect(quoteVerified("", transcript)).toBe(false);
    expect(quoteVerified(" \" ", transcript)).toBe(false);
  });
});

describe("estimateCall", () => {
  it("estimates a byte a third of a token plus the most the judge may answer, priced from the table", () => {
    const m = [{ role: "user" as const, content: "x".repeat(3000) }];
    const e = estimateCall("gpt-4o-mini", m);
    expect(e.inputTokens).toBe(1064);
    expect(e.outputTokens).toBe(512);
    expect(e.cost).toBeCloseTo((1064 * 0.15 + 512 * 0.6) / 1e6, 12);
    expect(estimateCall("an-unknown-model", m).cost).toBe(0);
  });
});

describe("prepareJudgement's reservation", () => {
  it("reserves the signal's max_tokens (or max_completion_tokens) when above the judge's 512, and 512 otherwise", () => {
    const provider = { name: "openai" } as LlmProvider;
    const llm: LlmProviders = { get: () => provider, configured: ["openai"], defaultProvider: "openai", defaultModel: () => "gpt-4o-mini" };
    const cost = (parameters: Record<string, unknown>) => {
      const p = prepareJudgement(llm, { statement: "s", model: { provider: "OpenAI", name: "gpt-4o-mini", parameters }, include: DEFAULT_INCLUDE }, log);
      if (!isPrepared(p)) throw new Error("not prepared");
      return { cost: p.estimatedCost, messages: judgeMessages("s", p.transcript) };
    };
    const base = cost({});
    expect(base.cost).toBeCloseTo(estimateCall("gpt-4o-mini", base.messages, 512).cost, 12);
    expect(cost({ max_tokens: 100 }).cost).toBeCloseTo(base.cost, 12);
    expect(cost({ max_tokens: 4096 }).cost).toBeCloseTo(estimateCall("gpt-4o-mini", base.messages, 4096).cost, 12);
    expect(cost({ max_completion_tokens: 8192 }).cost).toBeCloseTo(estimateCall("gpt-4o-mini", base.messages, 8192).cost, 12);
    expect(cost({ max_tokens: 4096 }).cost).toBeGreaterThan(base.cost);
  });
});
