// skip_input_variable_rendering and when a fetched template's input variables are filled: POST (the
// SDKs' fetch) fills them in prompt_template and llm_kwargs, missing ones empty, also without
// input_variables when the version has a model; the flag keeps every placeholder as written; GET never fills.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

let ws: TestKey;
const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;
const model = { model: { provider: "openai", name: "gpt-4o", parameters: { temperature: 0.1 } } };

async function publish(name: string, metadata: unknown, jinja = false) {
  const fmt = jinja ? { template_format: "jinja2" } : {};
  const text = jinja ? "Hi {{ name }}, on {{ topic }}" : "Hi {name}, on {topic}";
  const res = await call("/rest/prompt-templates", {
    method: "POST",
    key: ws.key,
    json: {
      prompt_template: { prompt_name: name },
      prompt_version: {
        prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text }], ...fmt }], input_variables: ["name", "topic"] },
        metadata,
      },
    },
  });
  expect(res.status).toBe(200);
}

const fetchPost = async (name: string, body: unknown) => {
  const res = await call(`/prompt-templates/${name}`, { method: "POST", key: ws.key, json: body });
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(200);
  return b;
};
const userText = (b: any) => b.prompt_template.messages[0].content[0].text;
const kwargsText = (b: any) => b.llm_kwargs.messages[0].content;

let plain: string;
let jinja: string;
let bare: string;
beforeAll(async () => {
  ws = await createWorkspace();
  [plain, jinja, bare] = [uniq("render"), uniq("render-j2"), uniq("render-bare")];
  await publish(plain, model);
  await publish(jinja, model, true);
  await publish(bare, null);
});

describe("POST /prompt-templates/{identifier}: filling input variables", () => {
  it("fills the given variables in prompt_template and llm_kwargs, a missing one empty", async () => {
    const b = await fetchPost(plain, { input_variables: { name: "Ada" } });
    expect(userText(b)).toBe("Hi Ada, on ");
    expect(JSON.stringify(kwargsText(b))).toContain("Hi Ada, on ");
  });

  it("keeps every placeholder as written with skip_input_variable_rendering, whatever input_variables say (f-string and jinja2)", async () => {
    const f = await fetchPost(plain, { input_variables: { name: "Ada", topic: "otters" }, skip_input_variable_rendering: true });
    expect(userText(f)).toBe("Hi {name}, on {topic}");
    expect(JSON.stringify(kwargsText(f))).toContain("Hi {name}, on {topic}");
    const j = await fetchPost(jinja, { input_variables: { name: "Ada" }, skip_input_variable_rendering: true });
    expect(userText(j)).toBe("Hi {{ name }}, on {{ topic }}");
    expect(JSON.stringify(kwargsText(j))).toContain("Hi {{ name }}, on {{ topic }}");
  });

  it("without input_variables, fills a version with a model with empties (as PromptLayer does), unless skipped", async () => {
    const filled = await fetchPost(plain, {});
    expect(userText(filled)).toBe("Hi , on ");
    expect(JSON.stringify(kwargsText(filled))).toContain("Hi , on ");
    const skipped = await fetchPost(plain, { skip_input_variable_rendering: true });
    expect(userText(skipped)).toBe("Hi {name}, on {topic}");
    const j = await fetchPost(jinja, {});
    expect(userText(j)).toBe("Hi , on ");
  });

  it("leaves a version without a model (llm_kwargs null) as written when no input_variables are given", async () => {
    const b = await fetchPost(bare, {});
    expect(b.llm_kwargs).toBeNull();
    expect(userText(b)).toBe("Hi {name}, on {topic}");
    expect(userText(await fetchPost(bare, { input_variables: { name: "Ada", topic: "bees" } }))).toBe("Hi Ada, on bees");
  });

  it("skip_input_variable_rendering false or null is the default", async () => {
    expect(userText(await fetchPost(plain, { input_variables: { name: "A", topic: "B" }, skip_input_variable_rendering: false }))).toBe("Hi A, on B");
    expect(userText(await fetchPost(plain, { input_variables: { name: "A", topic: "B" }, skip_input_variable_rendering: null }))).toBe("Hi A, on B");
  });

  it("refuses a skip_input_variable_rendering that is not a boolean with 400", async () => {
    const res = await call(`/prompt-templates/${plain}`, { method: "POST", key: ws.key, json: { skip_input_variable_rendering: "yes" } });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/skip_input_variable_rendering/);
  });
});

describe("GET /prompt-templates/{identifier}: never filled", () => {
  it("answers the placeholders as written, with or without skip_input_variable_rendering", async () => {
    for (const q of ["", "?skip_input_variable_rendering=true", "?skip_input_variable_rendering=false"]) {
      const res = await call(`/prompt-templates/${plain}${q}`, { key: ws.key });
      expect(res.status, q).toBe(200);
      const b = await json(res);
      expect(userText(b), q).toBe("Hi {name}, on {topic}");
      expect(JSON.stringify(kwargsText(b)), q).toContain("Hi {name}, on {topic}");
    }
  });

  it("refuses a skip_input_variable_rendering that is not a boolean with 400", async () => {
    const res = await call(`/prompt-templates/${plain}?skip_input_variable_rendering=maybe`, { key: ws.key });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/skip_input_variable_rendering/);
  });

  it("documents the flag on both routes", async () => {
    const doc = await json(await call("/openapi.json"));
    const names = doc.paths["/prompt-templates/{identifier}"].get.parameters.map((p: any) => p.name);
    expect(names).toContain("skip_input_variable_rendering");
    expect(JSON.stringify(doc.components.schemas.GetPromptTemplate)).toContain("skip_input_variable_rendering");
  });
});
