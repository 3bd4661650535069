// Provider calls → request logs, and blueprints → provider arguments, on recorded shapes.
import { describe, expect, it } from "vitest";
import { convertProviderCall, llmKwargsFor } from "../../src/converters";
import { priceOf } from "../../src/converters/pricing";
import { PromptBlueprint } from "../../src/lib/schemas";
import * as f from "./fixtures";

const ok = (call: unknown) => {
  const r = convertProviderCall(call as never);
  if (!r.ok) throw new Error(r.error);
  // Every converted blueprint is one POST /log-request accepts.
  expect(PromptBlueprint.safeParse(r.value.input).success, JSON.stringify(r.value.input)).toBe(true);
  expect(PromptBlueprint.safeParse(r.value.output).success, JSON.stringify(r.value.output)).toBe(true);
  return r.value;
};

describe("provider calls to request logs", () => {
  it("OpenAI chat completions: messages, images, tool calls and results, tools, tokens, price", () => {
    const v = ok(f.openaiChat);
    expect(v).toMatchObject({ provider: "openai", model: "gpt-4o-2024-08-06", api_type: "chat-completions", input_tokens: 1000, output_tokens: 500, status: "SUCCESS", parameters: { temperature: 0.2 } });
    expect(v.parameters).not.toHaveProperty("stream");
    expect(v.price).toBeCloseTo((1000 * 2.5 + 500 * 10) / 1e6, 9);
    const msgs = v.input.messages as any[];
    expect(msgs.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(msgs[1].content).toEqual([{ type: "text", text: "Weather in Paris?" }, { type: "image_url", image_url: { url: "https://example.com/p.png" } }]);
    expect(msgs[2]).toEqual({ role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] });
    expect(msgs[3]).toMatchObject({ role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "18C" }] });
    expect(v.input.tools).toHaveLength(1);
    expect(v.output).toEqual({ type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: "18C and sunny." }] }] });
    expect(ok(f.openaiChatToolReply).output.messages).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "call_9", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }] },
    ]);
  });

  it("Azure OpenAI takes its provider from provider_type or the function name", () => {
    expect(ok({ ...f.openaiChat, function_name: "openai.AzureOpenAI.chat.completions.create", provider_type: undefined }).provider).toBe("openai.azure");
    expect(ok({ ...f.openaiChat, provider_type: "openai.azure" }).provider).toBe("openai.azure");
  });

  it("every client class of the Python SDK's wrappers, sync and async: the class's cloud wins over the wrappers' generic provider_type", () => {
    const openai: [string, string][] = [
      ["OpenAI", "openai"], ["AsyncOpenAI", "openai"], ["Client", "openai"], ["AsyncClient", "openai"],
      ["AzureOpenAI", "openai.azure"], ["AsyncAzureOpenAI", "openai.azure"],
    ];
    for (const [cls, provider] of openai) {
      for (const method of ["chat.completions.create", "chat.completions.parse", "beta.chat.completions.parse"]) {
        const v = ok({ ...f.openaiChat, function_name: `openai.${cls}.${method}`, provider_type: "openai" });
        expect(v, `${cls}.${method}`).toMatchObject({ provider, api_type: "chat-completions", input_tokens: 1000 });
      }
      expect(ok({ ...f.openaiResponses, function_name: `openai.${cls}.responses.create`, provider_type: "openai" })).toMatchObject({ provider, api_type: "responses" });
    }
    const anthropic: [string, string][] = [
      ["Anthropic", "anthropic"], ["AsyncAnthropic", "anthropic"], ["Client", "anthropic"], ["AsyncClient", "anthropic"],
      ["AnthropicBedrock", "anthropic.bedrock"], ["AsyncAnthropicBedrock", "anthropic.bedrock"],
      ["AnthropicVertex", "anthropic.vertex"], ["AsyncAnthropicVertex", "anthropic.vertex"],
      ["AnthropicFoundry", "anthropic"], ["AsyncAnthropicFoundry", "anthropic"],
    ];
    for (const [cls, provider] of anthropic) {
      for (const method of ["messages.create", "beta.messages.create"]) {
        expect(ok({ ...f.anthropicMessages, function_name: `anthropic.${cls}.${method}`, provider_type: "anthropic" }), `${cls}.${method}`).toMatchObject({ provider, input_tokens: 2000 });
      }
    }
    // A provider_type that says more than the family (run() with a cloud provider) is kept.
    expect(ok({ ...f.anthropicMessages, function_name: "anthropic.messages.create", provider_type: "anthropic.bedrock" }).provider).toBe("anthropic.bedrock");
    // Names that are not a class of the module, or a method read nowhere, stay refused.
    for (const fn of ["openai.Anthropic.chat.completions.create", "openai.OpenAI.embeddings.create", "anthropic.AzureOpenAI.messages.create", "openai.OpenAI", "constructor.messages.create"]) {
      expect(convertProviderCall({ function_name: fn, kwargs: { model: "m" }, request_response: {} }), fn).toMatchObject({ ok: false, error: expect.stringMatching(/^function_name: /) });
    }
  });

  it("the chunk that ended an OpenAI stream (what the Python SDK's wrappers post): its delta is the reply", () => {
    const chunk = (delta: object) => ({
      function_name: "openai.OpenAI.chat.completions.create",
      provider_type: "openai",
      kwargs: { model: "gpt-4o", messages: [{ role: "user", content: "Hi" }], stream: true },
      request_response: { id: "c", object: "chat.completion.chunk", model: "gpt-4o", choices: [{ index: 0, delta, finish_reason: "stop" }], usage: null },
    });
    expect(ok(chunk({ content: "tail.", role: null })).output).toEqual({ type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: "tail." }] }] });
    expect(ok(chunk({ content: null, role: null, tool_calls: null }))).toMatchObject({ status: "SUCCESS", input_tokens: 0, output: { type: "chat", messages: [{ role: "assistant", content: [] }] } });
  });

  it("OpenAI responses: instructions, string input, reasoning summary and output text", () => {
    const v = ok(f.openaiResponses);
    expect(v).toMatchObject({ model: "gpt-4.1-2025-04-14", api_type: "responses", input_tokens: 12, output_tokens: 3, parameters: { max_output_tokens: 50 } });
    expect(v.input.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: [{ type: "text", text: "Name a color." }] },
    ]);
    expect(v.output.messages).toEqual([{ role: "assistant", content: [{ type: "thinking", thinking: "Pick one." }, { type: "text", text: "Blue." }] }]);
  });

  it("Anthropic messages: system, tool use and results, tools, thinking, errors", () => {
    const v = ok(f.anthropicMessages);
    expect(v).toMatchObject({ provider: "anthropic", model: "claude-sonnet-4-20250514", input_tokens: 2000, output_tokens: 100, status: "SUCCESS", parameters: { max_tokens: 1024 } });
    expect(v.price).toBeCloseTo((2000 * 3 + 100 * 15) / 1e6, 9);
    const msgs = v.input.messages as any[];
    expect(msgs.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(msgs[2].tool_calls).toEqual([{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }]);
    expect(msgs[3]).toEqual({ role: "tool", tool_call_id: "toolu_1", content: [{ type: "text", text: "18C" }] });
    expect(v.input.tools).toEqual([{ type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }]);
    expect(v.output.messages).toEqual([{ role: "assistant", content: [{ type: "thinking", thinking: "Easy.", signature: "sig" }, { type: "text", text: "18C." }] }]);
    const e = ok(f.anthropicError);
    expect(e).toMatchObject({ status: "ERROR", error_type: "PROVIDER_ERROR", error_message: "Overloaded", output: { type: "chat", messages: [] } });
  });

  it("Gemini, Mistral and Bedrock converse", () => {
    const g = ok(f.gemini);
    expect(g).toMatchObject({ provider: "google", model: "gemini-2.0-flash", input_tokens: 4, output_tokens: 6, parameters: { temperature: 0.5 } });
    expect(g.input.messages).toEqual([{ role: "system", content: [{ type: "text", text: "Be nice." }] }, { role: "user", content: [{ type: "text", text: "Hi" }] }]);
    expect(g.output.messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "Hello!" }], tool_calls: [{ id: null, type: "function", function: { name: "wave", arguments: '{"times":2}' } }] }]);
    expect(ok(f.mistral)).toMatchObject({ provider: "mistral", model: "mistral-large-latest", output: { messages: [{ role: "assistant", content: [{ type: "text", text: "Salut" }] }] } });
    const b = ok(f.bedrock);
    expect(b).toMatchObject({ provider: "amazon.bedrock", model: "anthropic.claude-3-5-sonnet-20240620-v1:0", input_tokens: 7, output_tokens: 2, parameters: { maxTokens: 100 } });
    expect(b.price).toBeGreaterThan(0);
  });

  it("refuses what it cannot read with a message fit for a 400", () => {
    expect(convertProviderCall({ function_name: "openai.images.generate", kwargs: {}, request_response: {} })).toMatchObject({ ok: false, error: expect.stringMatching(/^function_name: "openai.images.generate" is not/) });
    expect(convertProviderCall({ function_name: "openai.chat.completions.create", kwargs: [] as never, request_response: {} })).toMatchObject({ ok: false, error: expect.stringMatching(/^kwargs:/) });
    expect(convertProviderCall({ function_name: "openai.chat.completions.create", kwargs: { messages: [] }, request_response: {} })).toMatchObject({ ok: false, error: expect.stringMatching(/^kwargs.model/) });
  });

  it("prices known models by family and leaves unknown ones at 0", () => {
    expect(priceOf("gpt-4o-mini-2024-07-18", 1e6, 0)).toBe(0.15);
    expect(priceOf("gpt-4o-2024-08-06", 1e6, 0)).toBe(2.5);
    expect(priceOf("us.anthropic.claude-3-5-haiku-20241022-v1:0", 0, 1e6)).toBe(4);
    expect(priceOf("my-local-model", 1e6, 1e6)).toBe(0);
  });
});

describe("blueprints to provider arguments (llm_kwargs)", () => {
  const blueprint = {
    type: "chat",
    messages: [
      { role: "system", content: [{ type: "text", text: "You are {tone}." }] },
      { role: "user", content: [{ type: "text", text: "Weather in {city}?" }] },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "18C" }] },
    ],
    tools: [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: {} } } }],
  };
  const meta = (provider: string, name: string, extra: Record<string, unknown> = {}) => ({ model: { provider, name, parameters: { temperature: 0.3 }, ...extra } });

  it("OpenAI: messages with string content, tools, parameters; a completion is a prompt", () => {
    const k = llmKwargsFor(blueprint, meta("openai", "gpt-4o"))!;
    expect(k).toMatchObject({ model: "gpt-4o", temperature: 0.3, tools: blueprint.tools });
    expect((k.messages as any[])[0]).toEqual({ role: "system", content: "You are {tone}." });
    expect((k.messages as any[])[2]).toEqual({ role: "assistant", content: null, tool_calls: blueprint.messages[2].tool_calls });
    expect((k.messages as any[])[3]).toEqual({ role: "tool", content: "18C", tool_call_id: "c1" });
    expect(llmKwargsFor({ type: "completion", content: [{ type: "text", text: "Say hi" }] }, meta("openai", "gpt-3.5-turbo-instruct"))).toEqual({ model: "gpt-3.5-turbo-instruct", prompt: "Say hi", temperature: 0.3 });
    expect(llmKwargsFor(blueprint, meta("openai", "gpt-4.1", { api_type: "responses" }))).toMatchObject({ model: "gpt-4.1", instructions: "You are {tone}." });
  });

  it("Anthropic: system apart, tool calls as tool_use, results as tool_result, max_tokens by default", () => {
    const k = llmKwargsFor(blueprint, meta("anthropic", "claude-sonnet-4-20250514"))!;
    expect(k).toMatchObject({ model: "claude-sonnet-4-20250514", system: "You are {tone}.", max_tokens: 1024, temperature: 0.3 });
    expect(k.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in {city}?" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "get_weather", input: { city: "Paris" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: [{ type: "text", text: "18C" }] }] },
    ]);
    expect(k.tools).toEqual([{ name: "get_weather", description: "Weather", input_schema: { type: "object", properties: {} } }]);
  });

  it("round trip: blueprint → OpenAI and Anthropic arguments → log input keeps the conversation", () => {
    for (const [provider, fn, name] of [["openai", "openai.chat.completions.create", "gpt-4o"], ["anthropic", "anthropic.messages.create", "claude-3-5-haiku"]] as const) {
      const kwargs = llmKwargsFor(blueprint, meta(provider, name))!;
      const back = convertProviderCall({ function_name: fn, kwargs, request_response: { model: name } });
      if (!back.ok) throw new Error(back.error);
      const roles = (back.value.input.messages as any[]).map((m) => m.role);
      expect(roles, provider).toEqual(["system", "user", "assistant", "tool"]);
      expect((back.value.input.messages as any[])[1].content, provider).toEqual([{ type: "text", text: "Weather in {city}?" }]);
      expect((back.value.input.messages as any[])[2].tool_calls[0].function, provider).toEqual({ name: "get_weather", arguments: '{"city":"Paris"}' });
    }
  });

  it("Gemini and Bedrock arguments; no model or an unknown provider gives null", () => {
    expect(llmKwargsFor(blueprint, meta("google", "gemini-2.0-flash"))).toMatchObject({ model: "gemini-2.0-flash", contents: [{ role: "user", parts: [{ text: "Weather in {city}?" }] }, { role: "model", parts: [] }, { role: "user", parts: [{ text: "18C" }] }], config: { systemInstruction: "You are {tone}.", temperature: 0.3 } });
    expect(llmKwargsFor(blueprint, meta("amazon.bedrock", "anthropic.claude-3-5-sonnet", { parameters: { max_tokens: 10 } }))).toMatchObject({ modelId: "anthropic.claude-3-5-sonnet", inferenceConfig: { maxTokens: 10 } });
    expect(llmKwargsFor(blueprint, null)).toBeNull();
    expect(llmKwargsFor(blueprint, meta("cohere", "command"))).toBeNull();
  });
});
