import { describe, expect, it } from "vitest";
import { indexRowsOf, jsonOutputOf, textOf, toolNamesOf, toolsOf, type IndexRow } from "../../src/logs/index-rows";
import { chunkIndexRows } from "../../src/logs/indexing";

const chat = (text: string, extra: Record<string, unknown> = {}) => ({
  type: "chat",
  messages: [{ role: "assistant", content: [{ type: "text", text }] }],
  ...extra,
});

describe("indexRowsOf", () => {
  it("indexes tags, metadata, tools, input variables and JSON outputs, once each", () => {
    const blueprints = {
      input: {
        type: "chat",
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
        tools: [{ type: "function", function: { name: "get_weather" } }, { name: "search" }],
        functions: [{ name: "legacy_fn" }],
      },
      output: {
        type: "chat",
        messages: [
          {
            role: "assistant",
            content: [{ type: "text", text: '{"answer": "42", "score": 0.9, "nested": {"a": 1}}' }],
            tool_calls: [{ id: "1", type: "function", function: { name: "get_weather", arguments: "{}" } }],
            function_call: { name: "legacy_fn" },
          },
        ],
      },
    };
    const rows = indexRowsOf({
      tools: toolsOf(blueprints),
      outputText: textOf(blueprints.output),
      tags: ["prod", "prod", "eu"],
      metadata: { user_id: "u1", session: "s1" },
      prompt_input_variables: { topic: "cats", count: 3, opts: { a: true } },
    });
    expect(rows).toEqual([
      ["tag", "", "prod"],
      ["tag", "", "eu"],
      ["metadata", "user_id", "u1"],
      ["metadata", "session", "s1"],
      ["tool", "", "get_weather"],
      ["tool", "", "search"],
      ["tool", "", "legacy_fn"],
      ["input_variable", "topic", "cats"],
      ["input_variable", "count", "3"],
      ["input_variable", "opts", '{"a":true}'],
      ["output", "answer", "42"],
      ["output", "score", "0.9"],
      ["output", "nested", '{"a":1}'],
    ]);
  });

  it("indexes nothing for a bare log", () => {
    expect(indexRowsOf({ tools: toolsOf({ input: chat("x"), output: chat("plain text") }), outputText: "plain text", tags: [], metadata: {}, prompt_input_variables: {} })).toEqual([]);
  });
});

describe("output helpers", () => {
  it("reads the last assistant message of a chat and the content of a completion", () => {
    const bp = { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: "a" }] }, { role: "user", content: [] }, { role: "assistant", content: [{ type: "text", text: "b" }, { type: "thinking", thinking: "t" }, { type: "text", text: "c" }] }] };
    expect(textOf(bp)).toBe("bc");
    expect(textOf({ type: "completion", content: [{ type: "text", text: "done" }] })).toBe("done");
    expect(textOf({ type: "chat", messages: [] })).toBe("");
  });

  it("treats only a JSON object as a structured output", () => {
    expect(jsonOutputOf(chat(' {"a": 1} '))).toEqual({ a: 1 });
    expect(jsonOutputOf(chat("[1, 2]"))).toBeNull();
    expect(jsonOutputOf(chat("{not json"))).toBeNull();
    expect(jsonOutputOf(chat("hello"))).toBeNull();
  });

  it("ignores tool entries without a name", () => {
    expect(toolNamesOf({ tools: [{}, { function: {} }, "x", null, { function: { name: "" } }] })).toEqual([]);
  });
});

describe("chunkIndexRows", () => {
  it("splits rows into JSON arrays of at most the given size, losing and reordering nothing", () => {
    const rows: IndexRow[] = Array.from({ length: 1000 }, (_, i) => ["tag", "", `t${i}`]);
    const chunks = chunkIndexRows(rows, 1024);
    expect(chunks.length).toBeGreaterThan(10);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(1024);
    expect(chunks.flatMap((c) => JSON.parse(c))).toEqual(rows);
  });

  it("keeps one oversized row whole, and gives nothing for no rows", () => {
    const big: IndexRow = ["metadata", "k", "x".repeat(5000)];
    expect(chunkIndexRows([big], 1024).map((c) => JSON.parse(c))).toEqual([[big]]);
    expect(chunkIndexRows([])).toEqual([]);
  });
});
