// Streamed provider answers folded into the objects the same calls answer without streaming, and the
// providers' send() streaming through them (a fake fetch serves the events, split at awkward places).
import { describe, expect, it } from "vitest";
import { createLlmProviders } from "../../src/blocks";
import { anthropicFolder, foldEventStream, openAiFolder } from "../../src/blocks/llm-stream";
import { convertProviderCall } from "../../src/converters";
import { streamOf } from "../helpers/streams";

/** A body that sends `text` in pieces of `size` bytes, so events and characters are cut mid-way. */
const body = (text: string, size = 7) => streamOf(new TextEncoder().encode(text), size);
const sse = (events: [string | null, unknown][]) => events.map(([e, d]) => `${e ? `event: ${e}\n` : ""}data: ${typeof d === "string" ? d : JSON.stringify(d)}\n\n`).join("");

describe("openAiFolder", () => {
  it("joins text deltas (multi-byte characters cut between chunks), tool-call pieces by index, finish reason and usage", async () => {
    const chunk = (delta: unknown, finish: string | null = null) => ({ id: "c1", model: "gpt-4o", created: 1, choices: [{ index: 0, delta, finish_reason: finish }] });
    const stream = sse([
      [null, chunk({ role: "assistant", content: "" })],
      [null, chunk({ content: "Héllo " })],
      [null, chunk({ content: "wörld ✓" })],
      [null, chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_", arguments: '{"ci' } }] })],
      [null, chunk({ tool_calls: [{ index: 0, function: { name: "weather", arguments: 'ty":"Paris"}' } }] })],
      [null, chunk({}, "tool_calls")],
      [null, { id: "c1", choices: [], usage: { prompt_tokens: 11, completion_tokens: 7 } }],
      [null, "[DONE]"],
    ]);
    const seen: string[] = [];
    const out = await foldEventStream(body(stream, 5), openAiFolder(), (t) => void seen.push(t));
    expect(seen).toEqual(["Héllo ", "wörld ✓"]);
    expect(out).toEqual({
      id: "c1",
      model: "gpt-4o",
      created: 1,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          message: { role: "assistant", content: "Héllo wörld ✓", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
        },
      ],
      usage: { prompt_tokens: 11, completion_tokens: 7 },
    });
    // The converters read the folded object as they read an unstreamed answer.
    const log = convertProviderCall({ function_name: "openai.chat.completions.create", kwargs: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }, request_response: out });
    expect(log.ok && log.value).toMatchObject({ input_tokens: 11, output_tokens: 7, status: "SUCCESS" });
  });

  it("fails on an error event or an event that is not JSON", async () => {
    await expect(foldEventStream(body(sse([[null, { error: { message: "overloaded" } }]])), openAiFolder(), () => {})).rejects.toThrow(/openai streamed an error: overloaded/);
    await expect(foldEventStream(body("data: {nope\n\n"), openAiFolder(), () => {})).rejects.toThrow(/not JSON/);
  });
});

describe("anthropicFolder", () => {
  it("folds message_start, text and tool_use blocks and message_delta into a message", async () => {
    const stream = sse([
      ["message_start", { type: "message_start", message: { id: "m1", type: "message", role: "assistant", model: "claude-3-5-haiku-latest", content: [], usage: { input_tokens: 20, output_tokens: 1 } } }],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me " } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "check." } }],
      ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "tu_1", name: "lookup", input: {} } }],
      ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"q":' } }],
      ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '"x"}' } }],
      ["message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 15 } }],
      ["message_stop", { type: "message_stop" }],
    ]);
    const seen: string[] = [];
    const out = await foldEventStream(body(stream), anthropicFolder(), (t) => void seen.push(t));
    expect(seen).toEqual(["Let me ", "check."]);
    expect(out).toMatchObject({
      id: "m1",
      stop_reason: "tool_use",
      content: [
        { type: "text", text: "Let me check." },
        { type: "tool_use", id: "tu_1", name: "lookup", input: { q: "x" } },
      ],
      usage: { input_tokens: 20, output_tokens: 15 },
    });
    await expect(foldEventStream(body(sse([["error", { type: "error", error: { message: "overloaded_error" } }]])), anthropicFolder(), () => {})).rejects.toThrow(/anthropic streamed an error/);
  });
});

describe("a provider's send()", () => {
  it("streams through the provider with stream options and sends the stored arguments as they are otherwise", async () => {
    const sent: Record<string, unknown>[] = [];
    const fetchImpl = (async (_url: string, init: RequestInit) => {
      const b = JSON.parse(String(init.body));
      sent.push(b);
      if (!b.stream) return new Response(JSON.stringify({ choices: [{ message: { content: "whole" } }] }));
      return new Response(sse([[null, { choices: [{ index: 0, delta: { content: "pi" } }] }], [null, { choices: [{ index: 0, delta: { content: "ece" } }] }], [null, "[DONE]"]]));
    }) as typeof fetch;
    const openai = createLlmProviders({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://llm.test/v1" }, fetchImpl).get("openai")!;
    const pieces: string[] = [];
    const streamed = await openai.send({ model: "m", messages: [], stream: false }, (t) => void pieces.push(t));
    expect(pieces).toEqual(["pi", "ece"]);
    expect(streamed).toMatchObject({ choices: [{ message: { content: "piece" } }] });
    expect(sent[0]).toEqual({ model: "m", messages: [], stream: true, stream_options: { include_usage: true } });
    await openai.send({ model: "m", messages: [], stream: true, stream_options: {} });
    expect(sent[1]).toEqual({ model: "m", messages: [] });
  });
});
