// PATCH /rest/prompt-templates' pure part: lists patched by index or replaced, null removes, and the
// rules that keep chat and completion templates apart.
import { describe, expect, it } from "vitest";
import { applyPromptPatch, patchList } from "../../src/prompts/patch";
import { renderTemplate } from "../../src/prompts/variables";

const text = (t: string) => [{ type: "text", text: t }];
const chat = () => ({
  template: {
    type: "chat",
    messages: [
      { role: "system", content: text("You are terse.") },
      { role: "user", content: text("Hi {name}") },
    ],
    tools: [{ type: "function", function: { name: "a" } }],
    tool_choice: "auto",
  },
  metadata: { model: { provider: "openai", name: "gpt-4o", parameters: { temperature: 1 } } },
});

describe("patchList", () => {
  it("replaces the entries an index names and keeps the rest; an array replaces the whole list", () => {
    expect(patchList("messages", ["a", "b", "c"], { "1": "B" })).toEqual(["a", "B", "c"]);
    expect(patchList("messages", ["a", "b"], ["x"])).toEqual(["x"]);
  });

  it("refuses an index past the end (the last index is fine) and keys that are not indexes", () => {
    expect(patchList("messages", ["a", "b"], { "1": "z" })).toEqual(["a", "z"]);
    expect(() => patchList("messages", ["a", "b"], { "2": "z" })).toThrow("messages.2: index out of range (the base has 2)");
    for (const k of ["-1", "01", "x", "1.0"]) expect(() => patchList("messages", ["a", "b"], { [k]: "z" })).toThrow(/keys must be message indexes/);
  });

  it("does not change the list it was given", () => {
    const current = [{ v: 1 }];
    patchList("messages", current, { "0": { v: 2 } });
    expect(current).toEqual([{ v: 1 }]);
  });
});

describe("applyPromptPatch", () => {
  it("patches one message and leaves the base untouched", () => {
    const base = chat();
    const out = applyPromptPatch(base, { messages: { "0": { role: "system", content: text("Be kind.") } } });
    expect((out.template.messages as { content: unknown }[])[0].content).toEqual(text("Be kind."));
    expect((base.template.messages as { content: unknown }[])[0].content).toEqual(text("You are terse."));
  });

  it("null removes tools and tool_choice; messages and content cannot be null", () => {
    const out = applyPromptPatch(chat(), { tools: null, tool_choice: null });
    expect(out.template).not.toHaveProperty("tools");
    expect(out.template).not.toHaveProperty("tool_choice");
    expect(() => applyPromptPatch(chat(), { messages: null })).toThrow("messages: cannot be null");
  });

  it("keeps chat fields off completion templates and content off chat templates", () => {
    const completion = { template: { type: "completion", content: text("Say {x}") }, metadata: null };
    expect(() => applyPromptPatch(completion, { messages: [] })).toThrow("messages: only chat templates have messages");
    expect(() => applyPromptPatch(chat(), { content: [] })).toThrow(/only completion templates have content/);
    expect(applyPromptPatch(completion, { content: { "0": { type: "text", text: "Say {y}" } } }).template.content).toEqual(text("Say {y}"));
  });

  it("merges model parameters into metadata.model, and response_format on its own or removed", () => {
    const out = applyPromptPatch(chat(), { model_parameters: { max_tokens: 10 }, response_format: { type: "json_object" } });
    expect((out.metadata!.model as { parameters: unknown }).parameters).toEqual({ temperature: 1, max_tokens: 10, response_format: { type: "json_object" } });
    const removed = applyPromptPatch({ ...chat(), metadata: { model: { parameters: { response_format: { type: "json_object" } } } } }, { response_format: null });
    expect((removed.metadata!.model as { parameters: unknown }).parameters).toEqual({});
  });

  it("refuses response_format given twice, and parameters without a model to hold them", () => {
    expect(() => applyPromptPatch(chat(), { model_parameters: { response_format: {} }, response_format: {} })).toThrow(/either on its own or inside model_parameters/);
    expect(() => applyPromptPatch({ ...chat(), metadata: null }, { model_parameters: { temperature: 0 } })).toThrow(/no metadata.model/);
  });
});

describe("renderTemplate", () => {
  it("fills f-string and jinja2 variables in text blocks; a missing one is empty, a non-string is JSON", () => {
    const out = renderTemplate(
      {
        type: "chat",
        messages: [
          { role: "user", content: text("Hi {name}, {missing}!") },
          { role: "user", template_format: "jinja2", content: text("n={{ n }} {name}") },
        ],
      },
      { name: "Ada", n: { a: 1 } },
    );
    const msgs = out.messages as { content: { text: string }[] }[];
    expect(msgs[0].content[0].text).toBe("Hi Ada, !");
    // jinja2 leaves f-string braces alone.
    expect(msgs[1].content[0].text).toBe('n={"a":1} {name}');
  });

  it("renders completion content and leaves non-text blocks as they are", () => {
    const out = renderTemplate({ type: "completion", content: [...text("Say {x}"), { type: "image_url", image_url: { url: "{x}" } }] }, { x: "hi" });
    expect(out.content).toEqual([...text("Say hi"), { type: "image_url", image_url: { url: "{x}" } }]);
  });
});
