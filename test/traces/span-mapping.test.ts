// One span → one request log, for every GenAI dialect: recorded spans (test/fixtures/spans) map to
// the expected logs, plus precedence, linking, metadata, errors, non-LLM spans and malformed values.
import { describe, expect, it } from "vitest";
import { PromptBlueprint } from "../../src/lib/schemas";
import { isLlmSpan, normalizeProvider, SPAN_LOG_LIMITS, spanToLog, type AttrValue, type SpanInput } from "../../src/traces/span-mapping";
import attributesOnlyFixture from "../fixtures/spans/genai-attributes-only.json";
import eventsFixture from "../fixtures/spans/genai-events.json";
import messagesFixture from "../fixtures/spans/genai-messages.json";
import openInferenceFixture from "../fixtures/spans/openinference.json";
import openLlmetryFixture from "../fixtures/spans/openllmetry-indexed.json";
import vercelV4Fixture from "../fixtures/spans/vercel-ai-v4.json";
import vercelFixture from "../fixtures/spans/vercel-ai.json";

const spansOf = (fixture: { spans: object }) => fixture.spans as unknown as Record<string, SpanInput>;
const attributesOnly = spansOf(attributesOnlyFixture);
const events = spansOf(eventsFixture);
const messages = spansOf(messagesFixture);
const openInference = spansOf(openInferenceFixture);
const openLlmetry = spansOf(openLlmetryFixture);
const vercel = spansOf(vercelFixture);
const vercelV4 = spansOf(vercelV4Fixture);

/** A copy of a span with fields replaced, attributes dropped, then attributes set. */
function withSpan(span: SpanInput, change: Partial<SpanInput> & { set?: Record<string, AttrValue>; drop?: string[] }): SpanInput {
  const { set, drop, ...fields } = change;
  const attributes: Record<string, AttrValue> = { ...span.attributes };
  for (const k of drop ?? []) delete attributes[k];
  return structuredClone({ ...span, ...fields, attributes: { ...attributes, ...set } });
}

function logOf(span: SpanInput) {
  const mapped = spanToLog(span);
  if (!mapped) throw new Error(`span ${span.name} did not map`);
  return mapped.log;
}

const text = (t: string) => ({ type: "text", text: t });
const chat = (...messages: object[]) => ({ type: "chat", messages });
const WEATHER_TOOL = {
  type: "function",
  function: { name: "get_weather", description: "Current weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};
const SYSTEM = { role: "system", content: [text("You are a concise assistant.")] };
const HELLO = { role: "user", content: [text("Say hello")] };
const HELLO_REPLY = { role: "assistant", content: [text("Hello! How can I help you today?")] };
const ASK_WEATHER = { role: "user", content: [text("What's the weather in Paris?")] };
const CALL = { id: "call_abc123", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } };
const CALLS_TOOL = { role: "assistant", content: null, tool_calls: [CALL] };
const TOOL_RESULT = { role: "tool", content: [text('{"temp_c":18,"sky":"sunny"}')], tool_call_id: "call_abc123" };
const WEATHER_REPLY = { role: "assistant", content: [text("It is 18°C and sunny in Paris.")] };

/** Every log's input and output must be a blueprint POST /log-request would take. */
function expectValidBlueprints(log: { input: unknown; output: unknown }) {
  expect(PromptBlueprint.safeParse(log.input).success, JSON.stringify(log.input)).toBe(true);
  expect(PromptBlueprint.safeParse(log.output).success, JSON.stringify(log.output)).toBe(true);
}

describe("current gen_ai.* message attributes (OpenLLMetry 0.27)", () => {
  it("maps a plain chat call: messages, model, provider, tokens, parameters, price, times", () => {
    const span = messages.text;
    const mapped = spanToLog(span)!;
    expect(mapped.promptLabel).toBeNull();
    expect(mapped.log).toEqual({
      provider: "openai",
      model: "gpt-4o-mini",
      api_type: null,
      input: chat(SYSTEM, HELLO),
      output: chat(HELLO_REPLY),
      parameters: { max_tokens: 50, temperature: 0.2, top_p: 0.9 },
      tags: [],
      metadata: {},
      prompt_name: null,
      prompt_id: null,
      prompt_version_number: null,
      prompt_input_variables: {},
      input_tokens: 19,
      output_tokens: 9,
      price: 0.00000825,
      function_name: "chat gpt-4o-mini",
      score: 0,
      score_name: null,
      status: "SUCCESS",
      error_type: null,
      error_message: null,
      request_start_time: Math.round(span.startTimeMs),
      request_end_time: Math.round(span.endTimeMs),
    });
    expectValidBlueprints(mapped.log);
  });

  it("maps a tool call to tool-call content and the tool definitions to input.tools", () => {
    const log = logOf(messages.tool_call);
    expect(log.input).toEqual({ ...chat(ASK_WEATHER), tools: [WEATHER_TOOL] });
    expect(log.output).toEqual(chat(CALLS_TOOL));
    expect([log.input_tokens, log.output_tokens]).toEqual([48, 15]);
    expectValidBlueprints(log);
  });

  it("maps a tool result to a role tool message", () => {
    const log = logOf(messages.tool_result);
    expect(log.input).toEqual({ ...chat(ASK_WEATHER, CALLS_TOOL, TOOL_RESULT), tools: [WEATHER_TOOL] });
    expect(log.output).toEqual(chat(WEATHER_REPLY));
    expectValidBlueprints(log);
  });

  it("reads the messages when they arrive structured (kvlists and arrays) rather than as JSON text", () => {
    const span = withSpan(messages.tool_result, {
      set: {
        "gen_ai.input.messages": JSON.parse(messages.tool_result.attributes["gen_ai.input.messages"] as string),
        "gen_ai.output.messages": JSON.parse(messages.tool_result.attributes["gen_ai.output.messages"] as string),
      },
    });
    expect(logOf(span).input).toEqual(logOf(messages.tool_result).input);
    expect(logOf(span).output).toEqual(chat(WEATHER_REPLY));
  });

  it("puts gen_ai.system_instructions first, as JSON parts or plain text", () => {
    const parts = withSpan(messages.tool_call, { set: { "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: "Be brief." }]) } });
    expect((logOf(parts).input.messages as object[])[0]).toEqual({ role: "system", content: [text("Be brief.")] });
    const plain = withSpan(messages.tool_call, { set: { "gen_ai.system_instructions": "Be brief." } });
    expect(logOf(plain).input.messages).toEqual([{ role: "system", content: [text("Be brief.")] }, ASK_WEATHER]);
  });

  it("maps reasoning, image and tool-response parts, tool results before the text of the same turn", () => {
    const span = withSpan(messages.text, {
      set: {
        "gen_ai.input.messages": JSON.stringify([
          { role: "user", parts: [{ type: "text", content: "Look" }, { type: "uri", modality: "image", uri: "https://example.com/cat.png" }, { type: "blob", modality: "image", mime_type: "image/jpeg", content: "AAAA" }] },
          { role: "user", parts: [{ type: "tool_call_response", id: "t1", response: { ok: true } }, { type: "text", content: "and now?" }] },
        ]),
        "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "reasoning", content: "thinking…" }, { type: "text", content: "Done" }], finish_reason: "stop" }]),
      },
    });
    const log = logOf(span);
    expect(log.input.messages).toEqual([
      { role: "user", content: [text("Look"), { type: "image_url", image_url: { url: "https://example.com/cat.png" } }, { type: "image_url", image_url: { url: "data:image/jpeg;base64,AAAA" } }] },
      { role: "tool", content: [text('{"ok":true}')], tool_call_id: "t1" },
      { role: "user", content: [text("and now?")] },
    ]);
    expect(log.output.messages).toEqual([{ role: "assistant", content: [{ type: "thinking", thinking: "thinking…" }, text("Done")] }]);
    expectValidBlueprints(log);
  });

  it("marks a reply cut at max_tokens as a WARNING, as provider calls are", () => {
    const span = withSpan(messages.text, { set: { "gen_ai.response.finish_reasons": ["length"] } });
    const log = logOf(span);
    expect(log.status).toBe("WARNING");
    expect(log.error_type).toBeNull();
    expect(log.error_message).toBe("the reply was cut at max_tokens");
  });
});

describe("the event-based convention (@opentelemetry/instrumentation-openai)", () => {
  it("maps a span without content: no messages, but model, provider (gen_ai.system), tokens and parameters", () => {
    const log = logOf(attributesOnly.text);
    expect(log).toMatchObject({
      provider: "openai",
      model: "gpt-4o-mini",
      input: chat(),
      output: chat(),
      parameters: { max_tokens: 50, temperature: 0.2, top_p: 0.9 },
      input_tokens: 19,
      output_tokens: 9,
      status: "SUCCESS",
    });
    expectValidBlueprints(log);
  });

  it("maps the message events and the choice event", () => {
    expect(logOf(events.text)).toMatchObject({ input: chat(SYSTEM, HELLO), output: chat(HELLO_REPLY), input_tokens: 19, output_tokens: 9 });
    expect(logOf(events.tool_call)).toMatchObject({ input: chat(ASK_WEATHER), output: chat(CALLS_TOOL) });
    const log = logOf(events.tool_result);
    expect(log.input).toEqual(chat(ASK_WEATHER, CALLS_TOOL, TOOL_RESULT));
    expect(log.output).toEqual(chat(WEATHER_REPLY));
    expectValidBlueprints(log);
  });

  it("reads event bodies flattened into the event attributes too", () => {
    const flatten = (span: SpanInput): SpanInput => ({
      ...span,
      events: span.events.map((e) => {
        const { ["gen_ai.event.content"]: body, ...rest } = e.attributes;
        const fields = JSON.parse(body as string) as Record<string, unknown>;
        return { ...e, attributes: { ...rest, ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === "object" ? JSON.stringify(v) : (v as AttrValue)])) } };
      }),
    });
    expect(logOf(flatten(events.tool_result)).input).toEqual(chat(ASK_WEATHER, CALLS_TOOL, TOOL_RESULT));
    expect(logOf(flatten(events.tool_call)).output).toEqual(chat(CALLS_TOOL));
  });

  it("orders gen_ai.choice events by index", () => {
    const choice = (index: number, content: string) => ({ name: "gen_ai.choice", timeMs: 0, attributes: { index, finish_reason: "stop", message: JSON.stringify({ content }) } });
    const span = { ...attributesOnly.text, events: [choice(1, "second"), choice(0, "first")] };
    expect(logOf(span).output.messages).toEqual([
      { role: "assistant", content: [text("first")] },
      { role: "assistant", content: [text("second")] },
    ]);
  });

  it("prefers the attributes over the events, side by side", () => {
    // Both forms on one span: the attribute form wins.
    const both: SpanInput = { ...messages.tool_result, events: events.text.events };
    expect(logOf(both).input.messages).toEqual([ASK_WEATHER, CALLS_TOOL, TOOL_RESULT]);
    expect(logOf(both).output.messages).toEqual([WEATHER_REPLY]);
    // Input only as attributes, output only as events: each side takes what it has.
    const mixed = withSpan({ ...messages.tool_result, events: events.text.events }, { drop: ["gen_ai.output.messages"] });
    expect(logOf(mixed).input.messages).toEqual([ASK_WEATHER, CALLS_TOOL, TOOL_RESULT]);
    expect(logOf(mixed).output.messages).toEqual([HELLO_REPLY]);
  });

  it("reads the inference details event of the current conventions", () => {
    const span: SpanInput = {
      ...attributesOnly.text,
      events: [
        {
          name: "gen_ai.client.inference.operation.details",
          timeMs: 0,
          attributes: {
            "gen_ai.input.messages": [{ role: "user", parts: [{ type: "text", content: "Hi" }] }],
            "gen_ai.output.messages": [{ role: "assistant", parts: [{ type: "text", content: "Hello" }], finish_reason: "stop" }],
          },
        },
      ],
    };
    expect(logOf(span)).toMatchObject({ input: chat({ role: "user", content: [text("Hi")] }), output: chat({ role: "assistant", content: [text("Hello")] }) });
  });

  it("reads the oldest gen_ai.content.prompt / gen_ai.content.completion events", () => {
    const span: SpanInput = {
      ...attributesOnly.text,
      events: [
        { name: "gen_ai.content.prompt", timeMs: 0, attributes: { "gen_ai.prompt": JSON.stringify([{ role: "user", content: "Hi" }]) } },
        { name: "gen_ai.content.completion", timeMs: 0, attributes: { "gen_ai.completion": JSON.stringify([{ role: "assistant", content: "Hello" }]) } },
      ],
    };
    expect(logOf(span)).toMatchObject({ input: chat({ role: "user", content: [text("Hi")] }), output: chat({ role: "assistant", content: [text("Hello")] }) });
  });
});

describe("OpenLLMetry indexed attributes (gen_ai.prompt.N / gen_ai.completion.N)", () => {
  it("maps the recorded calls: older token names, the capitalised system, functions as tools", () => {
    expect(logOf(openLlmetry.text)).toMatchObject({
      provider: "openai",
      model: "gpt-4o-mini",
      input: chat(SYSTEM, HELLO),
      output: chat(HELLO_REPLY),
      parameters: { max_tokens: 50, temperature: 0.2, top_p: 0.9 },
      input_tokens: 19,
      output_tokens: 9,
      function_name: "openai.chat",
    });
    const call = logOf(openLlmetry.tool_call);
    expect(call.input).toEqual({ ...chat(ASK_WEATHER), tools: [WEATHER_TOOL] });
    // This version records no tool call ids.
    expect(call.output).toEqual(chat({ role: "assistant", content: null, tool_calls: [{ ...CALL, id: null }] }));
    const result = logOf(openLlmetry.tool_result);
    // The assistant turn's null content was recorded as the text "null" and its tool calls not at all.
    expect(result.input.messages).toEqual([ASK_WEATHER, { role: "assistant", content: [] }, { role: "tool", content: [text('{"temp_c":18,"sky":"sunny"}')] }]);
    expect(result.output).toEqual(chat(WEATHER_REPLY));
    for (const span of Object.values(openLlmetry)) expectValidBlueprints(logOf(span));
  });

  it("maps tool calls with ids, tool_call_id and content parts, as the other OpenLLMetry packages write them", () => {
    const span = withSpan(openLlmetry.text, {
      drop: Object.keys(openLlmetry.text.attributes).filter((k) => /^gen_ai\.(prompt|completion)\./.test(k)),
      set: {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": JSON.stringify([{ type: "text", text: "What's the weather in Paris?" }]),
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.id": "call_abc123",
        "gen_ai.prompt.1.tool_calls.0.name": "get_weather",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"city":"Paris"}',
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.tool_call_id": "call_abc123",
        "gen_ai.prompt.2.content": '{"temp_c":18,"sky":"sunny"}',
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.finish_reason": "tool_calls",
        "gen_ai.completion.0.tool_calls.0.id": "call_2",
        "gen_ai.completion.0.tool_calls.0.name": "get_weather",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"city":"Lyon"}',
      },
    });
    const log = logOf(span);
    expect(log.input.messages).toEqual([ASK_WEATHER, CALLS_TOOL, TOOL_RESULT]);
    expect(log.output.messages).toEqual([{ role: "assistant", content: null, tool_calls: [{ id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Lyon"}' } }] }]);
  });

  it("keeps text that merely looks like JSON as text", () => {
    const span = withSpan(openLlmetry.text, { set: { "gen_ai.prompt.1.content": "[1, 2, 3]" } });
    expect((logOf(span).input.messages as object[])[1]).toEqual({ role: "user", content: [text("[1, 2, 3]")] });
  });
});

describe("OpenInference llm.* attributes", () => {
  it("maps the recorded calls: llm.model_name, llm.system, token counts, invocation parameters, tools", () => {
    expect(logOf(openInference.text)).toMatchObject({
      provider: "openai",
      model: "gpt-4o-mini-2024-07-18",
      input: chat(SYSTEM, HELLO),
      output: chat(HELLO_REPLY),
      parameters: { temperature: 0.2, max_tokens: 50, top_p: 0.9 },
      input_tokens: 19,
      output_tokens: 9,
      price: 0.00000825,
      function_name: "OpenAI Chat Completions",
      status: "SUCCESS",
    });
    const call = logOf(openInference.tool_call);
    expect(call.input).toEqual({ ...chat(ASK_WEATHER), tools: [WEATHER_TOOL] });
    expect(call.output).toEqual(chat(CALLS_TOOL));
    // The tools and the model are the call's, not its parameters.
    expect(call.parameters).toEqual({ temperature: 0 });
    const result = logOf(openInference.tool_result);
    expect(result.input).toEqual({ ...chat(ASK_WEATHER, CALLS_TOOL, TOOL_RESULT), tools: [WEATHER_TOOL] });
    expect(result.output).toEqual(chat(WEATHER_REPLY));
    for (const span of Object.values(openInference)) expectValidBlueprints(logOf(span));
  });

  it("prefers llm.provider (where the model is hosted) to llm.system", () => {
    expect(logOf(withSpan(openInference.text, { set: { "llm.provider": "azure" } })).provider).toBe("openai.azure");
  });

  it("reads message contents lists", () => {
    const span = withSpan(openInference.text, {
      drop: ["llm.input_messages.1.message.content"],
      set: {
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": "Say hello",
        "llm.input_messages.1.message.contents.1.message_content.type": "image",
        "llm.input_messages.1.message.contents.1.message_content.image.image.url": "https://example.com/a.png",
      },
    });
    expect((logOf(span).input.messages as object[])[1]).toEqual({ role: "user", content: [text("Say hello"), { type: "image_url", image_url: { url: "https://example.com/a.png" } }] });
  });

  it("maps an error span (status and exception event)", () => {
    const span = withSpan(openInference.text, {
      status: { code: 2, message: "429 Rate limit reached" },
      events: [{ name: "exception", timeMs: openInference.text.endTimeMs, attributes: { "exception.type": "RateLimitError", "exception.message": "429 Rate limit reached" } }],
      drop: Object.keys(openInference.text.attributes).filter((k) => k.startsWith("llm.output_messages.") || k.startsWith("llm.token_count.")),
    });
    expect(logOf(span)).toMatchObject({ status: "ERROR", error_type: "RateLimitError", error_message: "429 Rate limit reached", output: chat(), input_tokens: 0 });
  });

  it("maps only spans of kind LLM", () => {
    for (const kind of ["CHAIN", "TOOL", "RETRIEVER", "EMBEDDING", "AGENT"]) {
      expect(spanToLog(withSpan(openInference.text, { set: { "openinference.span.kind": kind } }))).toBeNull();
    }
    expect(isLlmSpan(withSpan(openInference.text, { set: { "openinference.span.kind": "llm" } }))).toBe(true);
  });
});

describe("Vercel AI SDK ai.* spans", () => {
  it("maps only the do* spans: the outer generateText/streamText span and the tool span are not calls", () => {
    for (const fixture of [vercel, vercelV4]) {
      for (const [key, span] of Object.entries(fixture)) {
        const isCall = /\.step\d$/.test(key);
        expect(isLlmSpan(span), key).toBe(isCall);
        expect(spanToLog(span) !== null, key).toBe(isCall);
      }
    }
  });

  it("maps a generateText step: ai.prompt.messages, ai.response.text, provider openai.chat → openai", () => {
    const log = logOf(vercel["text.step1"]);
    expect(log).toMatchObject({
      provider: "openai",
      model: "gpt-4o-mini",
      input: chat(SYSTEM, HELLO),
      output: chat(HELLO_REPLY),
      parameters: { max_tokens: 50, temperature: 0.2, top_p: 0.9 },
      input_tokens: 19,
      output_tokens: 9,
      function_name: "ai.generateText.doGenerate",
      status: "SUCCESS",
      // Vercel's telemetry metadata is the log's metadata.
      metadata: { userId: "u-42" },
    });
    expectValidBlueprints(log);
  });

  it("maps the two steps of a tool loop: the tool call, then the tool result (v5+ output and v4 result)", () => {
    for (const fixture of [vercel, vercelV4]) {
      const first = logOf(fixture["tools.step1"]);
      expect(first.input).toEqual({ ...chat(ASK_WEATHER), tools: [WEATHER_TOOL] });
      expect(first.output).toEqual(chat(CALLS_TOOL));
      expect([first.input_tokens, first.output_tokens]).toEqual([48, 15]);
      const second = logOf(fixture["tools.step2"]);
      expect(second.input).toEqual({ ...chat(ASK_WEATHER, CALLS_TOOL, TOOL_RESULT), tools: [WEATHER_TOOL] });
      expect(second.output).toEqual(chat(WEATHER_REPLY));
      expectValidBlueprints(second);
    }
  });

  it("maps a streamText doStream span", () => {
    expect(logOf(vercel["stream.step1"])).toMatchObject({ input: chat(SYSTEM, HELLO), output: chat(HELLO_REPLY), input_tokens: 19, output_tokens: 9, function_name: "ai.streamText.doStream" });
  });

  it("maps a failed call with the exception's type and message", () => {
    const span = vercel["error.step1"];
    expect(logOf(span)).toMatchObject({
      status: "ERROR",
      error_type: "AI_APICallError",
      error_message: "Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3.",
      input: chat({ role: "user", content: [text("Please fail")] }),
      output: chat(),
      input_tokens: 0,
      output_tokens: 0,
      price: 0,
    });
  });

  it("reads the older token names (ai.usage.promptTokens / completionTokens) alone", () => {
    const span = withSpan(vercelV4["text.step1"], { drop: ["gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"] });
    expect(logOf(span)).toMatchObject({ input_tokens: 19, output_tokens: 9 });
  });

  it("maps reasoning and structured output", () => {
    const span = withSpan(vercel["text.step1"], { drop: ["ai.response.text"], set: { "ai.response.reasoning": "hmm", "ai.response.object": '{"a":1}' } });
    expect(logOf(span).output.messages).toEqual([{ role: "assistant", content: [{ type: "thinking", thinking: "hmm" }, text('{"a":1}')] }]);
  });
});

describe("errors", () => {
  it("takes error.type and the status message of an error span", () => {
    expect(logOf(attributesOnly.error)).toMatchObject({
      status: "ERROR",
      error_type: "RateLimitError",
      error_message: "429 Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3.",
      input_tokens: 0,
      output_tokens: 0,
    });
  });

  it("falls back to the exception event, then to UNKNOWN_ERROR with no message", () => {
    const bare = withSpan(attributesOnly.error, { drop: ["error.type"], status: { code: 2, message: null } });
    expect(logOf(bare)).toMatchObject({ status: "ERROR", error_type: "UNKNOWN_ERROR", error_message: null });
    const withException = { ...bare, events: [{ name: "exception", timeMs: 0, attributes: { "exception.type": "TimeoutError", "exception.message": "timed out" } }] };
    expect(logOf(withException)).toMatchObject({ error_type: "TimeoutError", error_message: "timed out" });
  });

  it("cuts the error type at 64 characters and the message at 1024", () => {
    const span = withSpan(attributesOnly.error, { set: { "error.type": "E".repeat(65) }, status: { code: 2, message: "m".repeat(1025) } });
    const log = logOf(span);
    expect(log.error_type).toBe("E".repeat(SPAN_LOG_LIMITS.errorType));
    expect(log.error_message).toBe("m".repeat(SPAN_LOG_LIMITS.errorMessage));
    const exact = logOf(withSpan(attributesOnly.error, { set: { "error.type": "E".repeat(64) }, status: { code: 2, message: "m".repeat(1024) } }));
    expect([exact.error_type, exact.error_message]).toEqual(["E".repeat(64), "m".repeat(1024)]);
  });

  it("is a success when the status is unset or ok, whatever the exception events say", () => {
    for (const code of [0, 1]) {
      const span = { ...withSpan(messages.text, { status: { code, message: null } }), events: [{ name: "exception", timeMs: 0, attributes: { "exception.type": "Retried" } }] };
      expect(logOf(span)).toMatchObject({ status: "SUCCESS", error_type: null, error_message: null });
    }
  });
});

describe("prompt link, metadata and tags", () => {
  it("links by prompt name and version", () => {
    const mapped = spanToLog(withSpan(messages.text, { set: { "promptlayer.prompt.name": "weather", "promptlayer.prompt.version": 3 } }))!;
    expect(mapped.log).toMatchObject({ prompt_name: "weather", prompt_id: null, prompt_version_number: 3 });
    expect(mapped.promptLabel).toBeNull();
  });

  it("links by prompt id (a number or a string of digits) and a label the caller resolves", () => {
    for (const id of [12, "12"]) {
      const mapped = spanToLog(withSpan(messages.text, { set: { "promptlayer.prompt.id": id, "promptlayer.prompt.label": "prod" } }))!;
      expect(mapped.log).toMatchObject({ prompt_name: null, prompt_id: 12, prompt_version_number: null });
      expect(mapped.promptLabel).toBe("prod");
    }
  });

  it("lets a version number win over a label", () => {
    const mapped = spanToLog(withSpan(messages.text, { set: { "promptlayer.prompt.name": "weather", "promptlayer.prompt.version": "2", "promptlayer.prompt.label": "prod" } }))!;
    expect(mapped.log.prompt_version_number).toBe(2);
    expect(mapped.promptLabel).toBeNull();
  });

  it("ignores link values that cannot name a prompt", () => {
    for (const bad of [0, -1, 1.5, "abc", "", true, [1], { a: 1 }, null] as AttrValue[]) {
      const mapped = spanToLog(withSpan(messages.text, { set: { "promptlayer.prompt.id": bad, "promptlayer.prompt.version": bad } }))!;
      expect([mapped.log.prompt_id, mapped.log.prompt_version_number], JSON.stringify(bad)).toEqual([null, null]);
    }
    const long = spanToLog(withSpan(messages.text, { set: { "promptlayer.prompt.name": "n".repeat(513), "promptlayer.prompt.label": "l".repeat(256) } }))!;
    expect([long.log.prompt_name, long.promptLabel]).toEqual([null, null]);
    const atLimit = spanToLog(withSpan(messages.text, { set: { "promptlayer.prompt.name": "n".repeat(512), "promptlayer.prompt.label": "l".repeat(255) } }))!;
    expect([atLimit.log.prompt_name, atLimit.promptLabel]).toEqual(["n".repeat(512), "l".repeat(255)]);
  });

  it("maps user.id and gen_ai.conversation.id, with enduser.id and session.id as fallbacks", () => {
    expect(logOf(withSpan(messages.text, { set: { "user.id": "u1", "enduser.id": "e1", "gen_ai.conversation.id": "c1", "session.id": "s1" } })).metadata).toEqual({ user_id: "u1", conversation_id: "c1" });
    expect(logOf(withSpan(messages.text, { set: { "enduser.id": "e1", "session.id": "s1" } })).metadata).toEqual({ user_id: "e1", conversation_id: "s1" });
  });

  it("lets promptlayer.metadata.<key> win over the standard attributes", () => {
    const span = withSpan(messages.text, { set: { "user.id": "u1", "promptlayer.metadata.user_id": "override", "promptlayer.metadata.plan": "pro" } });
    expect(logOf(span).metadata).toEqual({ user_id: "override", plan: "pro" });
  });

  it("applies resource attributes to the span, the span's own winning", () => {
    const span = withSpan(messages.text, {
      resource: { "service.name": "weather-bot", "user.id": "from-resource", "promptlayer.metadata.team": "search", "promptlayer.metadata.env": "prod", "promptlayer.tags": ["nightly"] },
      set: { "promptlayer.metadata.env": "staging" },
    });
    const log = logOf(span);
    expect(log.metadata).toEqual({ user_id: "from-resource", team: "search", env: "staging" });
    expect(log.tags).toEqual(["nightly"]);
    // Resource attributes alone never make a span an LLM call.
    expect(spanToLog({ ...attributesOnly.text, attributes: { "http.method": "GET" }, resource: { "gen_ai.request.model": "gpt-4o" } })).toBeNull();
  });

  it("stores metadata values as text and keeps the trace's ids out", () => {
    const span = withSpan(messages.text, { set: { "promptlayer.metadata.n": 3, "promptlayer.metadata.ok": true, "promptlayer.metadata.list": ["a", 1], "promptlayer.metadata.obj": { k: "v" }, "promptlayer.metadata.none": null, "user.id": 42 } });
    const metadata = logOf(span).metadata;
    expect(metadata).toEqual({ user_id: "42", n: "3", ok: "true", list: '["a",1]', obj: '{"k":"v"}' });
    expect(Object.values(metadata).join(" ")).not.toContain(span.traceId);
    expect(Object.values(metadata).join(" ")).not.toContain(span.spanId);
  });

  it("drops metadata keys longer than 1024 characters and keeps those at the limit", () => {
    const span = withSpan(messages.text, { set: { [`promptlayer.metadata.${"k".repeat(1024)}`]: "kept", [`promptlayer.metadata.${"x".repeat(1025)}`]: "dropped", "promptlayer.metadata.": "no key" } });
    expect(logOf(span).metadata).toEqual({ ["k".repeat(1024)]: "kept" });
  });

  it("takes a key named __proto__ as a plain key", () => {
    const metadata = logOf(withSpan(messages.text, { set: { "promptlayer.metadata.__proto__": "x" } })).metadata;
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
    expect(Object.entries(metadata)).toEqual([["__proto__", "x"]]);
  });

  it("reads tags from a list, a JSON list or a single string, dropping non-strings, blanks and tags over 512 characters", () => {
    expect(logOf(withSpan(messages.text, { set: { "promptlayer.tags": ["a", "b", "a"] } })).tags).toEqual(["a", "b"]);
    expect(logOf(withSpan(messages.text, { set: { "promptlayer.tags": '["a","b"]' } })).tags).toEqual(["a", "b"]);
    expect(logOf(withSpan(messages.text, { set: { "promptlayer.tags": "nightly" } })).tags).toEqual(["nightly"]);
    expect(logOf(withSpan(messages.text, { set: { "promptlayer.tags": ["t".repeat(512), "t".repeat(513), " ", 7, null, { a: 1 }] } })).tags).toEqual(["t".repeat(512), "7"]);
    expect(logOf(withSpan(messages.text, { set: { "promptlayer.tags": 5 } })).tags).toEqual([]);
  });

  it("reads the dialects' own metadata below the standard keys (OpenInference metadata, OpenLLMetry association properties)", () => {
    const span = withSpan(messages.text, { set: { metadata: JSON.stringify({ plan: "pro", user_id: "oi" }), "traceloop.association.properties.chat_id": "c9", "user.id": "u1" } });
    expect(logOf(span).metadata).toEqual({ plan: "pro", user_id: "u1", chat_id: "c9" });
  });
});

describe("model, provider, times", () => {
  it("takes gen_ai.request.model, else gen_ai.response.model", () => {
    expect(logOf(messages.text).model).toBe("gpt-4o-mini");
    expect(logOf(withSpan(messages.text, { drop: ["gen_ai.request.model"] })).model).toBe("gpt-4o-mini-2024-07-18");
    expect(logOf(withSpan(messages.text, { drop: ["gen_ai.request.model"], set: { "gen_ai.response.model": "" } })).model).toBe("unknown");
  });

  it("normalises provider names to this service's", () => {
    const cases: [string, string][] = [
      ["openai", "openai"],
      ["OpenAI", "openai"],
      ["openai.chat", "openai"],
      ["openai.responses", "openai"],
      ["anthropic.messages", "anthropic"],
      ["aws.bedrock", "amazon.bedrock"],
      ["amazon-bedrock", "amazon.bedrock"],
      ["azure.ai.openai", "openai.azure"],
      ["gcp.gemini", "google"],
      ["google.generative-ai", "google"],
      ["gcp.vertex_ai", "vertexai"],
      ["google.vertex.chat", "vertexai"],
      ["mistral_ai", "mistral"],
      ["groq.chat", "groq"],
      ["deepseek", "deepseek"],
    ];
    for (const [raw, want] of cases) expect(normalizeProvider(raw), raw).toBe(want);
  });

  it("prefers gen_ai.provider.name to gen_ai.system, and guesses from the model when none is given", () => {
    expect(logOf(withSpan(messages.text, { set: { "gen_ai.system": "az.ai.inference" } })).provider).toBe("openai");
    const none = withSpan(messages.text, { drop: ["gen_ai.provider.name"], set: { "gen_ai.request.model": "claude-sonnet-4-5" } });
    expect(logOf(none)).toMatchObject({ provider: "anthropic", model: "claude-sonnet-4-5" });
    expect(logOf(withSpan(none, { set: { "gen_ai.request.model": "llama-3" } })).provider).toBe("unknown");
  });

  it("rounds the span's times to milliseconds and never ends before it starts", () => {
    const span = withSpan(messages.text, { startTimeMs: 1_700_000_000_000.4, endTimeMs: 1_700_000_000_250.6 });
    expect(logOf(span)).toMatchObject({ request_start_time: 1_700_000_000_000, request_end_time: 1_700_000_000_251 });
    const backwards = withSpan(messages.text, { startTimeMs: 1_700_000_000_500, endTimeMs: 1_700_000_000_000 });
    expect(logOf(backwards)).toMatchObject({ request_start_time: 1_700_000_000_500, request_end_time: 1_700_000_000_500 });
  });

  it("names renamed parameters as the providers do and keeps the model out of them", () => {
    const span = withSpan(messages.text, { set: { "gen_ai.request.stop_sequences": ["\n"], "gen_ai.request.choice.count": 2, "gen_ai.request.seed": 7 } });
    expect(logOf(span).parameters).toEqual({ max_tokens: 50, temperature: 0.2, top_p: 0.9, stop: ["\n"], n: 2, seed: 7 });
  });
});

describe("spans that are not LLM calls", () => {
  const base: SpanInput = {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    parentSpanId: null,
    name: "GET /weather",
    kind: 2,
    startTimeMs: 1_700_000_000_000,
    endTimeMs: 1_700_000_000_100,
    status: { code: 0, message: null },
    attributes: { "http.request.method": "GET", "url.full": "https://api.example.com/weather" },
    events: [],
    resource: { "service.name": "weather-bot" },
  };

  it("maps HTTP, database and custom spans to null", () => {
    expect(isLlmSpan(base)).toBe(false);
    expect(spanToLog(base)).toBeNull();
    expect(spanToLog({ ...base, attributes: {} })).toBeNull();
    expect(spanToLog({ ...base, attributes: { "gen_ai.system": "openai" } })).toBeNull();
    expect(spanToLog({ ...base, name: "workflow", attributes: { "traceloop.span.kind": "workflow", "traceloop.entity.input": "{}" } })).toBeNull();
  });

  it("maps tool executions, agents and embeddings to null", () => {
    for (const op of ["execute_tool", "invoke_agent", "create_agent", "embeddings"]) {
      expect(spanToLog({ ...base, attributes: { "gen_ai.operation.name": op, "gen_ai.request.model": "gpt-4o" } }), op).toBeNull();
    }
    expect(spanToLog({ ...base, attributes: { "llm.request.type": "embedding", "gen_ai.request.model": "text-embedding-3-small" } })).toBeNull();
    expect(spanToLog({ ...base, name: "ai.embed.doEmbed", attributes: { "ai.operationId": "ai.embed.doEmbed", "ai.model.id": "text-embedding-3-small" } })).toBeNull();
  });

  it("takes a span with only a model, usage or message events as a call", () => {
    expect(isLlmSpan({ ...base, attributes: { "gen_ai.request.model": "gpt-4o" } })).toBe(true);
    expect(isLlmSpan({ ...base, attributes: { "gen_ai.usage.input_tokens": 3 } })).toBe(true);
    expect(isLlmSpan({ ...base, events: [{ name: "gen_ai.user.message", timeMs: 0, attributes: { content: "hi" } }] })).toBe(true);
  });
});

describe("values of the wrong type", () => {
  const GARBAGE: AttrValue[] = [null, 0, -5, 1.5, true, "", "   ", "not json", "{", "[", "[1,2]", '{"a":1}', "null", [], [null], [1, "a"], [[]], {}, { role: 5 }, { parts: "x" }, [{ role: "user", parts: [null, 5, { type: "tool_call" }, { type: "text", content: 7 }] }]];
  const KEYS = [
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.request.model",
    "gen_ai.response.model",
    "gen_ai.provider.name",
    "gen_ai.system",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.response.finish_reasons",
    "gen_ai.tool.definitions",
    "gen_ai.prompt",
    "gen_ai.prompt.0.content",
    "gen_ai.prompt.0.role",
    "gen_ai.prompt.0.tool_calls.0.arguments",
    "gen_ai.completion.0.content",
    "llm.input_messages.0.message.content",
    "llm.input_messages.0.message.role",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
    "llm.invocation_parameters",
    "llm.tools.0.tool.json_schema",
    "llm.model_name",
    "ai.prompt.messages",
    "ai.prompt.tools",
    "ai.response.toolCalls",
    "ai.response.text",
    "metadata",
    "promptlayer.tags",
    "promptlayer.prompt.name",
    "promptlayer.prompt.id",
    "promptlayer.prompt.version",
    "promptlayer.prompt.label",
    "promptlayer.metadata.k",
    "user.id",
    "session.id",
    "error.type",
  ];

  it("never throws and always yields valid blueprints, text metadata and whole token counts", () => {
    const spans = [messages.tool_result, openLlmetry.text, openInference.tool_result, vercel["tools.step2"]];
    for (const span of spans) {
      for (const key of KEYS) {
        for (const value of GARBAGE) {
          const mapped = spanToLog(withSpan(span, { set: { [key]: value }, status: { code: 2, message: null } }));
          expect(mapped, `${key}=${JSON.stringify(value)}`).not.toBeNull();
          const log = mapped!.log;
          expectValidBlueprints(log);
          expect(Object.values(log.metadata).every((v) => typeof v === "string")).toBe(true);
          expect(log.tags.every((t) => typeof t === "string")).toBe(true);
          expect(Number.isSafeInteger(log.input_tokens) && log.input_tokens >= 0).toBe(true);
          expect(typeof log.model === "string" && log.model.length > 0).toBe(true);
        }
      }
    }
  });

  it("falls back to the next dialect when a messages attribute is not valid JSON", () => {
    const span = withSpan(messages.tool_call, { set: { "gen_ai.input.messages": "[{not json", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "fallback" } });
    expect(logOf(span).input.messages).toEqual([{ role: "user", content: [text("fallback")] }]);
    expect(logOf(withSpan(messages.tool_call, { set: { "gen_ai.input.messages": "[{not json" } })).input.messages).toEqual([]);
  });

  it("reads token counts given as strings of digits and ignores other values", () => {
    expect(logOf(withSpan(messages.text, { set: { "gen_ai.usage.input_tokens": "21" } })).input_tokens).toBe(21);
    for (const bad of ["abc", -3, 2.5, true, [5]] as AttrValue[]) {
      expect(logOf(withSpan(messages.text, { set: { "gen_ai.usage.input_tokens": bad } })).input_tokens, JSON.stringify(bad)).toBe(0);
    }
  });

  it("stringifies a number where a string is expected", () => {
    const log = logOf(withSpan(messages.text, { set: { "gen_ai.request.model": 4, "promptlayer.prompt.name": 7 } }));
    expect([log.model, log.prompt_name]).toEqual(["4", "7"]);
  });

  it("survives a span whose attributes, events or status are missing", () => {
    const broken = { ...messages.text, attributes: null, events: null, resource: null, status: null, name: 5 } as unknown as SpanInput;
    expect(() => spanToLog(broken)).not.toThrow();
    expect(spanToLog(broken)).toBeNull();
    const noStatus = { ...messages.text, status: undefined, events: [null, { name: 3 }, { name: "exception", attributes: null }] } as unknown as SpanInput;
    expect(logOf(noStatus).status).toBe("SUCCESS");
  });
});
