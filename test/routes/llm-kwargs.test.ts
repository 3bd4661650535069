// GET|POST /prompt-templates/{identifier} carry llm_kwargs: the provider-ready arguments run() sends.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
});
const chat = (text: string) => ({ type: "chat", messages: [{ role: "system", content: [{ type: "text", text: "Be {tone}." }] }, { role: "user", content: [{ type: "text", text }] }] });
const publish = (name: string, metadata: unknown) =>
  call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat("Hi {name}"), metadata } } });

describe("llm_kwargs", () => {
  it("is the OpenAI or Anthropic call for the version's model, with input variables filled in", async () => {
    const name = `kw-${crypto.randomUUID().slice(0, 8)}`;
    expect((await publish(name, { model: { provider: "openai", name: "gpt-4o", parameters: { temperature: 0.1 } } })).status).toBe(200);
    const got = await json(await call(`/prompt-templates/${name}`, { method: "POST", key: ws.key, json: { input_variables: { tone: "kind", name: "Ada" } } }));
    expect(got.llm_kwargs).toEqual({ model: "gpt-4o", temperature: 0.1, messages: [{ role: "system", content: "Be kind." }, { role: "user", content: "Hi Ada" }] });
    await publish(name, { model: { provider: "anthropic", name: "claude-3-5-haiku-latest", parameters: { max_tokens: 50 } } });
    const v2 = await json(await call(`/prompt-templates/${name}`, { key: ws.key }));
    expect(v2.llm_kwargs).toEqual({ model: "claude-3-5-haiku-latest", max_tokens: 50, system: "Be {tone}.", messages: [{ role: "user", content: [{ type: "text", text: "Hi {name}" }] }] });
    const listed = await json(await call(`/prompt-templates?name=${name}`, { key: ws.key }));
    expect(listed.items[0].llm_kwargs).toMatchObject({ model: "claude-3-5-haiku-latest" });
  });

  it("is null when the version names no model", async () => {
    const name = `kw-${crypto.randomUUID().slice(0, 8)}`;
    await publish(name, null);
    expect((await json(await call(`/prompt-templates/${name}`, { key: ws.key }))).llm_kwargs).toBeNull();
  });
});

describe("run()'s overrides on POST /prompt-templates/{identifier}", () => {
  const get = (name: string, body: unknown) => call(`/prompt-templates/${name}`, { method: "POST", key: ws.key, json: body });
  const openaiModel = { provider: "openai", name: "gpt-4o", parameters: { temperature: 0.1, max_tokens: 100 }, api_type: "chat-completions" };

  it("merges model_parameter_overrides over the version's parameters (null removes one) and replaces the model", async () => {
    const name = `ov-${crypto.randomUUID().slice(0, 8)}`;
    await publish(name, { model: openaiModel });
    const got = await json(await get(name, { model_parameter_overrides: { temperature: 0.9, top_p: 0.5, max_tokens: null }, model: "gpt-4o-mini" }));
    expect(got.metadata.model).toEqual({ provider: "openai", name: "gpt-4o-mini", parameters: { temperature: 0.9, top_p: 0.5 }, api_type: "chat-completions" });
    expect(got.llm_kwargs).toMatchObject({ model: "gpt-4o-mini", temperature: 0.9, top_p: 0.5 });
    expect(got.llm_kwargs).not.toHaveProperty("max_tokens");
    // Without overrides, and afterwards: the stored version's values.
    const plain = await json(await get(name, {}));
    expect(plain.metadata.model).toEqual(openaiModel);
    expect(plain.llm_kwargs).toMatchObject({ model: "gpt-4o", temperature: 0.1, max_tokens: 100 });
    // The empty object and nulls override nothing.
    expect((await json(await get(name, { model_parameter_overrides: {}, model: null, provider: null }))).llm_kwargs).toEqual(plain.llm_kwargs);
  });

  it("a provider switch converts the blueprint as that provider's version would; api_type stays only within the OpenAI family", async () => {
    const name = `ov-${crypto.randomUUID().slice(0, 8)}`;
    await publish(name, { model: { ...openaiModel, api_type: "responses" } });
    const vars = { input_variables: { tone: "kind", name: "Ada" } };
    const anthropic = await json(await get(name, { ...vars, provider: "anthropic", model: "claude-haiku-4-5" }));
    expect(anthropic.metadata.model).toEqual({ provider: "anthropic", name: "claude-haiku-4-5", parameters: { temperature: 0.1, max_tokens: 100 } });
    expect(anthropic.llm_kwargs).toEqual({ model: "claude-haiku-4-5", temperature: 0.1, max_tokens: 100, system: "Be kind.", messages: [{ role: "user", content: [{ type: "text", text: "Hi Ada" }] }] });
    const azure = await json(await get(name, { ...vars, provider: "openai.azure" }));
    expect(azure.metadata.model).toMatchObject({ provider: "openai.azure", name: "gpt-4o", api_type: "responses" });
    expect(azure.llm_kwargs).toMatchObject({ model: "gpt-4o", instructions: "Be kind.", input: [{ role: "user", content: "Hi Ada" }] });
    // The same provider named again changes nothing.
    expect((await json(await get(name, { ...vars, provider: "openai" }))).metadata.model).toEqual({ ...openaiModel, api_type: "responses" });
  });

  it("refuses a provider it cannot build arguments for and an empty model with a 400, and still 404s an unknown template", async () => {
    const name = `ov-${crypto.randomUUID().slice(0, 8)}`;
    await publish(name, { model: openaiModel });
    for (const [body, message] of [
      [{ provider: "openrouter" }, /^provider: must be one of openai, /],
      [{ provider: 7 }, /^provider: /],
      [{ model: "" }, /^model: must not be empty/],
      [{ model_parameter_overrides: [1] }, /^model_parameter_overrides: /],
    ] as const) {
      const res = await get(name, body);
      const b = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(b.message).toMatch(message);
    }
    expect((await get(`missing-${name}`, { model: "gpt-4o-mini" })).status).toBe(404);
    const other = await createWorkspace();
    expect((await call(`/prompt-templates/${name}`, { method: "POST", key: other.key, json: { model: "gpt-4o-mini" } })).status).toBe(404);
  });
});
