// Names and labels: no control characters, no lone surrogates, not only white space; the same rule
// and message on every name field.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
});
const chat = { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "x" }] }] };
/** A raw JSON body, so a lone surrogate travels as the \\ud800 escape a client would send. */
const post = (path: string, body: string, method = "POST") => call(path, { method, key: ws.key, body, headers: { "Content-Type": "application/json" } });
const BAD: [string, RegExp][] = [
  ['"a\\u0000b"', /must not contain control characters/],
  ['"line\\nbreak"', /must not contain control characters/],
  ['"tab\\there"', /must not contain control characters/],
  ['"   "', /must not be only white space/],
  ['"x\\ud800y"', /must not contain lone UTF-16 surrogates/],
  ['"\\udc00"', /must not contain lone UTF-16 surrogates/],
];

describe("name rules", () => {
  const cases: [string, string, (name: string) => string, string][] = [
    ["folder", "/api/public/v2/folders", (n) => `{"name":${n}}`, "name"],
    ["prompt template", "/rest/prompt-templates", (n) => `{"prompt_template":{"prompt_name":${n}},"prompt_version":{"prompt_template":${JSON.stringify(chat)}}}`, "prompt_template.prompt_name"],
    ["release label", "/rest/prompt-templates", (n) => `{"prompt_template":{"prompt_name":"labelled-${crypto.randomUUID()}"},"prompt_version":{"prompt_template":${JSON.stringify(chat)}},"release_labels":[${n}]}`, "release_labels[0]"],
    ["tool", "/api/public/v2/tool-registry", (n) => `{"name":${n},"tool_definition":{"type":"function","function":{"name":"t"}}}`, "name"],
    ["dataset group", "/api/public/v2/dataset-groups", (n) => `{"name":${n}}`, "name"],
  ];
  it.each(cases)("%s names refuse control characters, lone surrogates and white space (400, nothing made)", async (_what, path, body, field) => {
    for (const [bad, rule] of BAD) {
      const res = await post(path, body(bad));
      expect(res.status, bad).toBe(400);
      const msg = (await json(res)).message;
      expect(msg, bad).toMatch(rule);
      expect(msg, bad).toContain(field);
    }
    // Names with spaces inside, accents, emoji (a surrogate pair) and symbols are fine.
    const ok = await post(path, body(JSON.stringify(`Ok name é 😀 #${crypto.randomUUID().slice(0, 6)}`)));
    expect(ok.status).toBeLessThan(300);
  });

  it("a single-space release label is refused on label creation too", async () => {
    const made = await json(await post("/rest/prompt-templates", `{"prompt_template":{"prompt_name":"p-${crypto.randomUUID()}"},"prompt_version":{"prompt_template":${JSON.stringify(chat)}}}`));
    const res = await post(`/prompts/${made.id}/label`, '{"prompt_version_number":1,"name":" "}');
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/name: must not be only white space/);
  });
});
