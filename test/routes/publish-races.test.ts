// Concurrent publishes: every answer describes the version that request wrote.
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "../helpers/api";

const chat = (text: string) => ({ type: "chat", messages: [{ role: "user", content: [{ type: "text", text }] }] });
const N = 20;

describe("concurrent publishes", { timeout: 60_000 }, () => {
  it("POST /rest/prompt-templates: 20 at once, 20 distinct versions, each answer its own content", async () => {
    const ws = await createWorkspace();
    const name = `race-${crypto.randomUUID().slice(0, 8)}`;
    const answers = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat(`c${i}`), commit_message: `c${i}` } } });
        expect(res.status).toBe(200);
        return { i, body: await json(res) };
      }),
    );
    expect(new Set(answers.map((a) => a.body.version_number)).size).toBe(N);
    for (const { i, body } of answers) {
      expect(body.commit_message).toBe(`c${i}`);
      expect(body.prompt_template.messages[0].content[0].text).toBe(`c${i}`);
    }
  });

  it("PATCH /rest/prompt-templates/{identifier}: each answer is the version its patch made", async () => {
    const ws = await createWorkspace();
    const name = `race-${crypto.randomUUID().slice(0, 8)}`;
    await call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat("base") } } });
    const answers = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await call(`/rest/prompt-templates/${name}`, { method: "PATCH", key: ws.key, json: { version: 1, messages: { 0: { role: "user", content: [{ type: "text", text: `p${i}` }] } }, commit_message: `p${i}` } });
        expect(res.status).toBe(201);
        return { i, body: await json(res) };
      }),
    );
    expect(new Set(answers.map((a) => a.body.version_number)).size).toBe(N);
    for (const { i, body } of answers) expect(body.prompt_template.messages[0].content[0].text).toBe(`p${i}`);
  });

  it("POST /api/public/v2/tool-registry/{id}/versions: each answer is the version its request made", async () => {
    const ws = await createWorkspace();
    const created = await json(await call("/api/public/v2/tool-registry", { method: "POST", key: ws.key, json: { name: `t-${crypto.randomUUID().slice(0, 8)}`, tool_definition: { type: "function", function: { name: "t0" } } } }));
    const id = created.tool_registry.id;
    const answers = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await call(`/api/public/v2/tool-registry/${id}/versions`, { method: "POST", key: ws.key, json: { tool_definition: { type: "function", function: { name: `t${i + 1}` } }, commit_message: `v${i}` } });
        expect(res.status).toBe(201);
        return { i, body: await json(res) };
      }),
    );
    expect(new Set(answers.map((a) => a.body.version.version_number)).size).toBe(N);
    for (const { i, body } of answers) {
      expect(body.version.tool_definition.function.name).toBe(`t${i + 1}`);
      expect(body.version.commit_message).toBe(`v${i}`);
    }
  });
});
