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
