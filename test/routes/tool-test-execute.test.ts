// POST /api/public/v2/tool-registry/{identifier}/test-execute: a tool's JavaScript in a sandbox isolate.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, scopedKey, type TestKey } from "../helpers/api";

let ws: TestKey;
let other: TestKey;
const def = (name = "add") => ({ type: "function", function: { name, parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } } });
const js = (code: string) => ({ type: "code", language: "javascript", code });

async function tool(key: string, body: Record<string, unknown>): Promise<{ id: number; name: string }> {
  const name = `tool-${crypto.randomUUID().slice(0, 8)}`;
  const res = await call("/api/public/v2/tool-registry", { method: "POST", key, json: { name, tool_definition: def(), ...body } });
  expect(res.status).toBe(201);
  return { id: (await json(res)).tool_registry.id, name };
}
const run = (key: string, identifier: string | number, body: unknown, query = "") =>
  call(`/api/public/v2/tool-registry/${identifier}/test-execute${query}`, { method: "POST", key, json: body });

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

describe("POST /api/public/v2/tool-registry/{identifier}/test-execute", { timeout: 60_000 }, () => {
  it("runs the stored version's function with the inputs and answers its return value and console output", async () => {
    const t = await tool(ws.key, { execution: js("async function add({ a, b }) { console.log('adding', a, b); console.error('careful'); return { sum: a + b }; }") });
    const res = await run(ws.key, t.name, { inputs: { a: 2, b: 3 } });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, result: { status: "success", result: { sum: 5 }, stdout: "adding 2 3", stderr: "careful", error: null } });
    expect(body.result.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("picks the version by number or label, and takes unsaved code and definition from the body", async () => {
    const t = await tool(ws.key, { execution: js("function add({a, b}) { return a + b; }"), release_labels: ["prod"] });
    const v2 = await call(`/api/public/v2/tool-registry/${t.id}/versions`, { method: "POST", key: ws.key, json: { tool_definition: def(), execution: js("function add({a, b}) { return a * b; }") } });
    expect(v2.status).toBe(201);
    const result = async (query: string, body: unknown = { inputs: { a: 3, b: 4 } }) => (await json(await run(ws.key, t.id, body, query))).result;
    expect((await result("")).result).toBe(12);
    expect((await result("?version=1")).result).toBe(7);
    expect((await result("?label=prod")).result).toBe(7);
    const unsaved = await result("", { inputs: { x: "hi" }, execution: js("const shout = ({ x }) => x.toUpperCase();"), tool_definition: def("shout") });
    expect(unsaved).toMatchObject({ status: "success", result: "HI" });
    expect((await run(ws.key, t.id, { inputs: {} }, "?version=9")).status).toBe(404);
    expect((await run(ws.key, t.id, { inputs: {} }, "?label=nope")).status).toBe(404);
  });

  it("reports the code's own failures as results: a throw, a missing function, a syntax error", async () => {
    const t = await tool(ws.key, { execution: js("function add() { throw new TypeError('bad input'); }") });
    expect((await json(await run(ws.key, t.id, { inputs: {} }))).result).toMatchObject({ status: "error", error: { type: "TypeError", message: "bad input" } });
    const missing = await json(await run(ws.key, t.id, { execution: js("function other() {}") }));
    expect(missing.result).toMatchObject({ status: "error", error: { type: "NameError", message: expect.stringMatching(/no function named add/) } });
    const syntax = await json(await run(ws.key, t.id, { execution: js("function add( {") }));
    expect(syntax.result).toMatchObject({ status: "error", error: { type: "ExecutionError" } });
  });

  it("gives the code no network and stops waiting for it at the time limit", async () => {
    const t = await tool(ws.key, { execution: js("async function add() { const r = await fetch('http://fake-llm.test/v1/models'); return r.status; }") });
    const net = await json(await run(ws.key, t.id, { inputs: {} }));
    expect(net.result.status).toBe("error");
    const slow = await json(await run(ws.key, t.id, { execution: js("function add() { return new Promise((r) => setTimeout(r, 60_000)); }") }));
    expect(slow.result).toMatchObject({ status: "error", error: { type: "TimeoutError", message: "the tool ran longer than 2000 ms" } });
  });

  it("a stored version sees the variables it declares (the tool's winning) and no others", async () => {
    const t = await tool(ws.key, { execution: { ...js("function add() { return process.env; }"), env_vars: ["SHARED", "ONLY_WS", "UNSET"] } });
    await call("/api/public/v2/env-vars", { method: "POST", key: ws.key, json: { key: "SHARED", value: "workspace" } });
    await call("/api/public/v2/env-vars", { method: "POST", key: ws.key, json: { key: "ONLY_WS", value: "ws-only" } });
    await call("/api/public/v2/env-vars", { method: "POST", key: ws.key, json: { key: "OPENAI_API_KEY", value: "sk-workspace-secret" } });
    await call(`/api/public/v2/tool-registry/${t.id}/env-vars`, { method: "POST", key: ws.key, json: { key: "SHARED", value: "tool" } });
    expect((await json(await run(ws.key, t.id, { inputs: {} }))).result.result).toEqual({ SHARED: "tool", ONLY_WS: "ws-only" });
    // A version that declares nothing gets nothing.
    const bare = await tool(ws.key, { execution: js("function add() { return process.env; }") });
    expect((await json(await run(ws.key, bare.id, { inputs: {} }))).result.result).toEqual({});
    // Declarations are keys: anything else is a 400.
    const bad = await call("/api/public/v2/tool-registry", { method: "POST", key: ws.key, json: { name: `bad-${crypto.randomUUID().slice(0, 8)}`, tool_definition: def(), execution: { ...js("1"), env_vars: ["A-B"] } } });
    expect(bad.status).toBe(400);
  });

  it("only an admin key stores a version that declares variables; provider credentials never reach the sandbox", async () => {
    const tooler = await scopedKey(ws, ["tools:write"]);
    const declaring = { execution: { ...js("function add() { return process.env; }"), env_vars: ["OPENAI_API_KEY"] } };
    const refused = await call("/api/public/v2/tool-registry", { method: "POST", key: tooler, json: { name: `t-${crypto.randomUUID().slice(0, 8)}`, tool_definition: def(), ...declaring } });
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({ success: false, error: "forbidden", message: expect.stringMatching(/^execution\.env_vars: .*admin/) });
    const plain = await tool(tooler, { execution: js("function add() { return process.env; }") });
    expect((await call(`/api/public/v2/tool-registry/${plain.id}/versions`, { method: "POST", key: tooler, json: { tool_definition: def(), ...declaring } })).status).toBe(403);
    expect((await json(await call(`/api/public/v2/tool-registry/${plain.id}`, { key: ws.key }))).tool_registry.version.version_number).toBe(1);
    expect((await json(await run(tooler, plain.id, { inputs: {} }))).result.result).toEqual({});

    // An admin's version declaring provider credentials: they are left out; the tool's own key is handed on.
    for (const [k, v] of [["OPENAI_API_KEY", "sk-provider-secret"], ["ANTHROPIC_BASE_URL", "http://fake-llm.test"], ["SEARCH_API_KEY", "ws-search-secret"], ["PLAIN", "plain"]]) {
      await call("/api/public/v2/env-vars", { method: "POST", key: ws.key, json: { key: k, value: v } });
    }
    const t = await tool(ws.key, { execution: { ...js("function add() { return process.env; }"), env_vars: ["OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "SEARCH_API_KEY", "WEATHER_API_KEY", "PLAIN"] } });
    await call(`/api/public/v2/tool-registry/${t.id}/env-vars`, { method: "POST", key: ws.key, json: { key: "WEATHER_API_KEY", value: "tool-own-key" } });
    const env = await json(await run(tooler, t.id, { inputs: {} }));
    expect(env.result.result).toEqual({ WEATHER_API_KEY: "tool-own-key", PLAIN: "plain" });
    expect(JSON.stringify(env)).not.toMatch(/sk-provider-secret|ws-search-secret/);
  });

  it("code sent in the request sees no workspace variable, whatever it asks for", async () => {
    await call("/api/public/v2/env-vars", { method: "POST", key: ws.key, json: { key: "OPENAI_API_KEY", value: "sk-workspace-secret" } });
    const t = await tool(ws.key, { execution: { ...js("function add() { return 1; }"), env_vars: ["OPENAI_API_KEY"] } });
    const sent = await json(await run(ws.key, t.id, { inputs: {}, execution: { ...js("function add() { return process.env; }"), env_vars: ["OPENAI_API_KEY"] } }));
    expect(sent.result).toMatchObject({ status: "success", result: {} });
    expect(JSON.stringify(sent)).not.toContain("sk-workspace-secret");
  });

  it("refuses what cannot run with a 400 and another workspace's tool with a 404", async () => {
    const noExec = await tool(ws.key, {});
    const r1 = await run(ws.key, noExec.id, { inputs: {} });
    expect(r1.status).toBe(400);
    expect((await json(r1)).message).toMatch(/^execution: this tool version has no execution config/);
    const py = await run(ws.key, noExec.id, { execution: { type: "code", language: "python", code: "def add(): return 1" } });
    expect(py.status).toBe(400);
    expect((await json(py)).message).toMatch(/python tools cannot run here/);
    const badName = await run(ws.key, noExec.id, { execution: js("x"), tool_definition: { type: "function", function: { name: "not-an-identifier" } } });
    expect(badName.status).toBe(400);
    expect((await run(ws.key, noExec.id, { execution: { type: "code", language: "ruby", code: "" } })).status).toBe(400);
    expect((await run(ws.key, noExec.id, { execution: js("x".repeat(262_145)) })).status).toBe(400);
    const mine = await tool(ws.key, { execution: js("function add() { return 1; }") });
    expect((await run(other.key, mine.id, { inputs: {} })).status).toBe(404);
    expect((await run(other.key, mine.name, { inputs: {} })).status).toBe(404);
  });
});
