// The prompt editor's draft: a stored version as fields and back, keeping what the editor does not
// show, and the JSON fields that do not parse named instead of sent.
import { describe, expect, it } from "vitest";
import { draftOf, draftVariables, versionOf } from "../../console/src/draft";
import { PromptBlueprint } from "../../src/lib/schemas";

const image = { type: "image_url", image_url: { url: "https://example.com/a.png" } };
const stored = {
  type: "chat",
  messages: [
    { role: "system", content: [{ type: "text", text: "You help with {topic}." }], template_format: "f-string" },
    { role: "user", content: [{ type: "text", text: "Look: " }, image, { type: "text", text: "{question}" }], name: "alice" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
  ],
  tools: [{ type: "function", function: { name: "f" } }],
  input_variables: ["stale"],
};
const metadata = { model: { provider: "openai", name: "gpt-4o", parameters: { temperature: 0.2, response_format: { type: "json_object" } } }, owner: "team-a" };

describe("draftOf / versionOf", () => {
  it("round-trips a version unchanged but for the variables it lists, keeping images, tool calls and other fields", () => {
    const d = draftOf(stored, metadata);
    expect(d.messages.map((m) => [m.role, m.text])).toEqual([
      ["system", "You help with {topic}."],
      ["user", "Look: {question}"],
      ["assistant", ""],
    ]);
    expect(JSON.parse(d.parameters)).toEqual({ temperature: 0.2 });
    expect(JSON.parse(d.responseFormat)).toEqual({ type: "json_object" });
    const v = versionOf(d);
    if (!v.ok) throw new Error("did not build");
    expect(v.metadata).toEqual(metadata);
    const msgs = v.prompt_template.messages as Record<string, unknown>[];
    expect(msgs[1]).toMatchObject({ role: "user", name: "alice", content: [{ type: "text", text: "Look: {question}" }, image] });
    expect(msgs[2]).toMatchObject({ role: "assistant", content: [], tool_calls: stored.messages[2].tool_calls });
    expect(v.prompt_template.tools).toEqual(stored.tools);
    expect(v.prompt_template.input_variables).toEqual(["topic", "question"]);
    expect(PromptBlueprint.safeParse(v.prompt_template).success).toBe(true);
  });

  it("applies edits: roles, text, jinja2 variables, model, parameters, no tools, no response format", () => {
    const d = draftOf(stored, metadata);
    const edited = {
      ...d,
      messages: [{ ...d.messages[0], role: "developer", text: "Help with {{ topic }}" }],
      templateFormat: "jinja2" as const,
      model: "claude-3-5-haiku-latest",
      provider: "anthropic",
      parameters: '{"max_tokens": 100}',
      tools: "",
      responseFormat: "",
    };
    const v = versionOf(edited);
    if (!v.ok) throw new Error("did not build");
    expect(v.prompt_template).toEqual({ type: "chat", messages: [{ role: "developer", content: [{ type: "text", text: "Help with {{ topic }}" }], template_format: "jinja2" }], input_variables: ["topic"] });
    expect(v.metadata).toEqual({ owner: "team-a", model: { provider: "anthropic", name: "claude-3-5-haiku-latest", parameters: { max_tokens: 100 } } });
    expect(draftVariables(edited)).toEqual(["topic"]);
  });

  it("names the JSON fields that do not parse, or are not the kind of value they must be, and builds nothing", () => {
    const d = draftOf(null, null);
    expect(versionOf({ ...d, parameters: "{temperature: 1}", tools: '{"a": 1}', responseFormat: "[]" })).toEqual({
      ok: false,
      problems: { parameters: expect.stringMatching(/^is not JSON/), tools: "must be a JSON array", responseFormat: "must be a JSON object" },
    });
  });

  it("starts a new template as a system and a user message for gpt-4o-mini, and edits a completion template's text", () => {
    const d = draftOf(null, null);
    expect(d.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect([d.provider, d.model]).toEqual(["openai", "gpt-4o-mini"]);
    const completion = draftOf({ type: "completion", content: [{ type: "text", text: "Say {x}" }] }, null);
    const v = versionOf({ ...completion, content: "Say {y} now" });
    expect(v.ok && v.prompt_template).toEqual({ type: "completion", content: [{ type: "text", text: "Say {y} now" }], template_format: "f-string", input_variables: ["y"] });
  });
});
