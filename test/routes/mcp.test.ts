// POST /mcp, raw JSON-RPC through the Worker's entrypoint: the transport's rules (versions, 405s,
// Origin, parse errors), the tool table against PromptLayer's tool names and parameters and against
// /openapi.json, docs/mcp.md's generated list, keys, errors, isolation, rate limits, prompts and
// resources. The official MCP client against `wrangler dev` is test/node/mcp.test.ts.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { call, callHandler, createWorkspace, json, type TestKey } from "../helpers/api";
import { bulkSpan, logBody } from "../helpers/fixtures";
import plTools from "../fixtures/promptlayer-mcp-tools.json";
import { catalogOf, NO_KEY_MESSAGE, PROMPTEDGE_TOOLS, PROMPTLAYER_TOOLS, TOOL_LIST_END, TOOL_LIST_START, toolListMarkdown, TOOLS, type OpenApiDocument } from "../../src/mcp";
import { withinOneWindow } from "../helpers/rate-limit";

let ws: TestKey;
let other: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

let ids = 0;
const uniq = (p: string) => `${p}-${Date.now()}-${Math.random().toString(36).slice(2, 7)}`;

/** One POST to /mcp; `headers` adds to (or, as null, removes) the defaults an MCP client sends. */
function post(body: unknown, headers: Record<string, string | null> = {}, path = "/mcp") {
  const h: Record<string, string> = { Accept: "application/json, text/event-stream", "Content-Type": "application/json" };
  for (const [k, v] of Object.entries(headers)) {
    if (v === null) delete h[k];
    else h[k] = v;
  }
  return call(path, { method: "POST", headers: h, body: typeof body === "string" ? body : JSON.stringify(body) });
}

async function rpc(method: string, params: unknown, headers: Record<string, string | null> = {}, path = "/mcp") {
  const res = await post({ jsonrpc: "2.0", id: ++ids, method, params }, headers, path);
  expect(res.status, `${method}: ${res.status}`).toBe(200);
  return json(res);
}

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

async function tool(name: string, args: Record<string, unknown>, headers: Record<string, string | null> = {}) {
  const body = await rpc("tools/call", { name, arguments: args }, headers);
  expect(body.error, JSON.stringify(body.error)).toBeUndefined();
  const text: string = body.result.content[0].text;
  return { isError: body.result.isError === true, text, data: body.result.isError ? undefined : JSON.parse(text) };
}

const chat = (text: string) => ({ type: "chat", messages: [{ role: "system", content: [{ type: "text", text: "Be brief." }] }, { role: "user", content: [{ type: "text", text }] }] });

async function publish(key: string, name: string, text: string, extra: Record<string, unknown> = {}) {
  const res = await call("/rest/prompt-templates", { method: "POST", key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat(text) }, ...extra } });
  expect(res.status).toBe(200);
  return json(res);
}

describe("the transport", () => {
  it("initializes without a key, at the version asked for when it is one it speaks, else the latest, with no session", async () => {
    for (const [asked, answered] of [
      ["2024-11-05", "2024-11-05"],
      ["2025-03-26", "2025-03-26"],
      ["2025-06-18", "2025-06-18"],
      ["2025-11-25", "2025-11-25"],
      ["2099-01-01", "2025-11-25"],
    ]) {
      const res = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: "t", version: "1" } } });
      expect(res.status).toBe(200);
      expect(res.headers.get("mcp-session-id")).toBeNull();
      const body = await json(res);
      expect(body.result.protocolVersion, asked).toBe(answered);
      expect(body.result.serverInfo).toMatchObject({ name: "promptedge" });
      expect(body.result.capabilities).toMatchObject({ tools: {}, prompts: {}, resources: {} });
      expect(body.result.instructions).toMatch(/Authorization: Bearer/);
    }
  });

  it("answers a notification 202, and any Accept (curl's included)", async () => {
    expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202);
    for (const accept of [null, "*/*", "application/json"]) {
      const res = await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { Accept: accept });
      expect(res.status, String(accept)).toBe(200);
    }
  });

  it("refuses GET and DELETE (405, Allow: POST), bad JSON, a body that is not JSON, an unknown protocol version and another origin", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await call("/mcp", { method, headers: { Accept: "text/event-stream" } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("Allow")).toBe("POST");
    }
    const bad = await post("{nope");
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.code).toBe(-32700);
    expect((await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { "Content-Type": "text/plain" })).status).toBe(415);
    const version = await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { "MCP-Protocol-Version": "1999-01-01" });
    expect(version.status).toBe(400);
    expect((await json(version)).error.message).toMatch(/Unsupported protocol version/);
    expect((await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { Origin: "https://evil.example" })).status).toBe(403);
    expect((await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { Origin: "http://api.test" })).status).toBe(200);
    expect((await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, {}, "/mcp?label=")).status).toBe(400);
  });

  it("reads a body it refuses unread (not JSON: 415) to its end before answering, as every route does", async () => {
    // Locally an answer given before the body is read leaves the rest on the connection, and the next
    // request on it fails: `npm run fuzz` saw one 503 ("Your worker restarted mid-request") a run from
    // wrangler dev's proxy after this 415 (docs/reliability.md#fuzzing). The transport reads a copy
    // of the request, so the body the app's own drain would read is no longer the request's.
    const seen = { pulled: 0, cancelled: false };
    const chunks = 100;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (seen.pulled === chunks) return controller.close();
        seen.pulled++;
        controller.enqueue(new TextEncoder().encode("p".repeat(1024)));
      },
      cancel() {
        seen.cancelled = true;
      },
    });
    const res = await callHandler("/mcp", {
      method: "POST",
      headers: { "Content-Type": "text/plain", "Content-Length": String(chunks * 1024), "X-API-KEY": ws.key },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(415);
    expect((await json(res)).error.code).toBe(-32000);
    expect(seen).toEqual({ pulled: chunks, cancelled: false });
  });

  it("caps the body at JSON_MAX_BYTES (413)", async () => {
    const big = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "log-request", arguments: { pad: "x".repeat(1_100_000) } } };
    expect((await post(big)).status).toBe(413);
  });
});

describe("the tool table", () => {
  let doc: OpenApiDocument;
  let listed: any[];
  beforeAll(async () => {
    doc = await json(await call("/openapi.json"));
    listed = (await rpc("tools/list", {})).result.tools;
  });

  it("lists every PromptLayer tool by its name, with each of its parameters, requiring what PromptLayer requires", () => {
    const fixture = plTools.tools as Record<string, { parameters: string[]; required: string[] }>;
    expect(Object.keys(fixture).length).toBe(62);
    const byName = new Map(listed.map((t) => [t.name, t]));
    const missing: string[] = [];
    for (const [name, { parameters, required }] of Object.entries(fixture)) {
      const t = byName.get(name);
      if (!t) {
        missing.push(name);
        continue;
      }
      for (const p of [...parameters, "api_key"]) if (!(p in t.inputSchema.properties)) missing.push(`${name}.${p}`);
      for (const p of required) if (!(t.inputSchema.required ?? []).includes(p)) missing.push(`${name}.${p} (required)`);
    }
    expect(missing).toEqual([]);
    // The table's PromptLayer part is PromptLayer's tools, no more.
    expect(PROMPTLAYER_TOOLS.map((t) => t.name).sort()).toEqual(Object.keys(fixture).sort());
    expect(listed.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    expect(PROMPTEDGE_TOOLS.map((t) => t.name)).toEqual(expect.arrayContaining(["search-traces", "run-prompt", "get-provider-keys"]));
  });

  it("takes each tool's schema from its REST operation, which /openapi.json serves, every reference resolved", () => {
    for (const t of listed) {
      const spec = TOOLS.find((s) => s.name === t.name)!;
      const [method, path] = spec.operation.split(" ");
      expect(doc.paths[path]?.[method.toLowerCase()], spec.operation).toBeDefined();
      expect(t.inputSchema.type).toBe("object");
      for (const [, ref] of JSON.stringify(t.inputSchema).matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g)) expect(t.inputSchema.$defs?.[ref], `${t.name} ${ref}`).toBeDefined();
      expect(JSON.stringify(t.inputSchema)).not.toContain("#/components/");
    }
    // The operation's own rules reach the agent: log-request's score is 0..100, as REST checks it.
    const logRequest = listed.find((t) => t.name === "log-request");
    expect(logRequest.inputSchema.properties.score).toMatchObject({ minimum: 0, maximum: 100 });
    expect(listed.find((t) => t.name === "get-prompt-template").inputSchema.required).toContain("prompt_name");
  });

  it("marks the tools that only read, and only deletes as destructive", () => {
    for (const t of listed) {
      const spec = TOOLS.find((s) => s.name === t.name)!;
      expect(t.annotations.readOnlyHint, t.name).toBe(spec.readOnly);
      if (spec.operation.startsWith("GET ")) expect(spec.readOnly, t.name).toBe(true);
      if (!spec.readOnly) expect(t.annotations.destructiveHint, t.name).toBe(spec.operation.startsWith("DELETE "));
    }
    expect(listed.find((t) => t.name === "search-request-logs").annotations.readOnlyHint).toBe(true);
    expect(listed.find((t) => t.name === "publish-prompt-template").annotations).toEqual({ readOnlyHint: false, destructiveHint: false });
  });

  it("is the list docs/mcp.md shows (npm run docs:mcp writes it)", () => {
    const file = env.MCP_DOC;
    const section = file.slice(file.indexOf(TOOL_LIST_START), file.indexOf(TOOL_LIST_END) + TOOL_LIST_END.length);
    expect(section).toBe(toolListMarkdown(doc));
    expect(catalogOf(doc).size).toBe(TOOLS.length);
  });
});

describe("keys", () => {
  it("a tool call without a key is a tool error saying how to pass one; prompts and resources a JSON-RPC error", async () => {
    const r = await tool("list-prompt-templates", {});
    expect(r).toMatchObject({ isError: true, text: `Error: ${NO_KEY_MESSAGE}` });
    for (const method of ["prompts/list", "resources/list"]) {
      const body = await rpc(method, {});
      expect(body.error, method).toMatchObject({ code: -32600, message: expect.stringMatching(/Authorization: Bearer/) });
    }
  });

  it("takes the key as Bearer, as X-API-KEY, or as the api_key argument, which wins", async () => {
    const name = uniq("keyed");
    await publish(ws.key, name, "hi");
    const asBearer = await tool("get-prompt-template-raw", { identifier: name }, bearer(ws.key));
    expect(asBearer.data).toMatchObject({ prompt_name: name });
    expect((await tool("get-prompt-template-raw", { identifier: name }, { "X-API-KEY": ws.key })).data).toMatchObject({ prompt_name: name });
    expect((await tool("get-prompt-template-raw", { identifier: name, api_key: ws.key })).data).toMatchObject({ prompt_name: name });
    // The argument wins over a header naming another key (here an unknown one, then another workspace's).
    expect((await tool("get-prompt-template-raw", { identifier: name, api_key: ws.key }, bearer("pe_unknown"))).isError).toBe(false);
    const foreign = await tool("get-prompt-template-raw", { identifier: name, api_key: other.key }, bearer(ws.key));
    expect(foreign).toMatchObject({ isError: true, text: expect.stringMatching(/not found.*HTTP 404 not_found/) });
  });

  it("an unknown key is a clear tool error, and a revoked one too", async () => {
    const r = await tool("list-prompt-templates", {}, bearer("pe_0000"));
    expect(r).toMatchObject({ isError: true, text: "Error: the API key is unknown or revoked (HTTP 401 unauthorized)" });
    const gone = await createWorkspace();
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE workspace_id = ?").bind(gone.workspaceId).run();
    expect((await tool("list-prompt-templates", {}, bearer(gone.key))).text).toMatch(/unknown or revoked/);
    expect((await rpc("resources/read", { uri: "promptedge://requests/1" }, bearer(gone.key))).error.message).toMatch(/unknown or revoked/);
  });

  it("rate limits are the REST route's, per key: the 11th suggestions call of a minute is a tool error naming the 429", async () => {
    const w = await createWorkspace();
    await withinOneWindow();
    for (let i = 0; i < 10; i++) expect((await tool("get-request-search-suggestions", { field: "engine" }, bearer(w.key))).isError, `call ${i + 1}`).toBe(false);
    const limited = await tool("get-request-search-suggestions", { field: "engine" }, bearer(w.key));
    expect(limited).toMatchObject({ isError: true, text: expect.stringMatching(/HTTP 429 rate_limited; retry after \d+ s/) });
  });
});

describe("tool calls", () => {
  it("put each argument where the operation takes it: path (renamed), query (lists repeated) and body", async () => {
    const name = uniq("routed");
    const made = await tool("publish-prompt-template", { prompt_template: { prompt_name: name, tags: ["a", "b"] }, prompt_version: { prompt_template: chat("Hi {who}") } }, bearer(ws.key));
    expect(made.data).toMatchObject({ prompt_name: name, version_number: 1 });
    const filled = await tool("get-prompt-template", { prompt_name: name, input_variables: { who: "Ada" } }, bearer(ws.key));
    expect(filled.data.prompt_template.messages[1].content[0].text).toBe("Hi Ada");
    const listed = await tool("list-prompt-templates", { tags: ["a", "b"], name, per_page: 5 }, bearer(ws.key));
    expect(listed.data.items.map((i: { prompt_name: string }) => i.prompt_name)).toEqual([name]);
    expect((await tool("list-prompt-templates", { tags: ["a", "zzz"], name }, bearer(ws.key))).data.items).toEqual([]);
    const label = await tool("create-prompt-label", { prompt_id: made.data.id, name: "prod", prompt_version_number: 1 }, bearer(ws.key));
    expect(label.data).toMatchObject({ name: "prod", prompt_version_number: 1 });
    // A 204 answers {success: true}.
    expect((await tool("delete-prompt-label", { prompt_label_id: label.data.id }, bearer(ws.key))).data).toEqual({ success: true });
    expect((await json(await call(`/prompt-templates/${name}/labels`, { key: ws.key }))).release_labels).toEqual([]);
  });

  it("bad arguments are tool errors naming the argument, and change nothing", async () => {
    const count = async () => (await env.DB.prepare("SELECT count(*) AS n FROM prompt_templates WHERE workspace_id = ?").bind(ws.workspaceId).first<{ n: number }>())!.n;
    const before = await count();
    const noVersion = await tool("publish-prompt-template", { prompt_template: { prompt_name: uniq("bad") } }, bearer(ws.key));
    expect(noVersion).toMatchObject({ isError: true, text: expect.stringMatching(/^Error: prompt_version: is required \(HTTP 400 validation_error\)$/) });
    const badBlueprint = await tool("publish-prompt-template", { prompt_template: { prompt_name: uniq("bad") }, prompt_version: { prompt_template: { type: "chat", messages: "no" } } }, bearer(ws.key));
    expect(badBlueprint.text).toMatch(/prompt_version\.prompt_template\.messages/);
    expect(await count()).toBe(before);
    expect((await tool("get-request", { request_id: "abc" }, bearer(ws.key))).text).toMatch(/^Error: request_id: must be a positive integer/);
    expect((await tool("get-request", {}, bearer(ws.key))).text).toBe("Error: request_id: is required (nothing was sent)");
    // A renamed argument is named as the tool names it, not as the route does.
    expect((await tool("get-prompt-template", { prompt_name: "x".repeat(600) }, bearer(ws.key))).text).toMatch(/^Error: prompt_name: must be at most 512 characters/);
    const unknownTool = await rpc("tools/call", { name: "no-such-tool", arguments: {} }, bearer(ws.key));
    expect(unknownTool.error).toMatchObject({ code: -32602 });
  });

  it("no tool answers a 5xx, whatever is missing: each call succeeds or is a 4xx naming what is wrong", async () => {
    const w = await createWorkspace();
    const failures: string[] = [];
    for (const t of TOOLS) {
      const r = await tool(t.name, {}, bearer(w.key));
      if (r.isError && !/^Error: .+ \((HTTP 4\d\d [a-z_]+|nothing was sent)\)$/s.test(r.text)) failures.push(`${t.name}: ${r.text}`);
    }
    expect(failures).toEqual([]);
  });

  it("get-provider-keys says where each provider's key comes from for the calling workspace, never the key", async () => {
    const w = await createWorkspace();
    expect((await call("/api/public/v2/env-vars", { method: "POST", key: w.key, json: { key: "OPENAI_API_KEY", value: "workspace-secret-key" } })).status).toBe(201);
    const sources = async (key: string) => {
      const r = await tool("get-provider-keys", {}, bearer(key));
      expect(r.isError).toBe(false);
      expect(r.text).not.toContain("workspace-secret-key");
      return Object.fromEntries(r.data.providers.map((p: { provider: string; source: string | null }) => [p.provider, p.source]));
    };
    expect(await sources(w.key)).toEqual({ openai: "workspace", anthropic: null });
    // Another workspace sees the deployment's key (vitest.config.ts gives the Worker OPENAI_API_KEY), not w's.
    expect(await sources(other.key)).toEqual({ openai: "worker", anthropic: null });
  });

  it("another workspace's ids are not found, through tools, prompts and resources", async () => {
    const logged = await json(await call("/log-request", { method: "POST", key: ws.key, json: logBody() }));
    const name = uniq("mine");
    await publish(ws.key, name, "secret {x}");
    expect((await tool("get-request", { request_id: logged.id }, bearer(ws.key))).data).toMatchObject({ request_id: logged.id });
    const theirs = await tool("get-request", { request_id: logged.id }, bearer(other.key));
    expect(theirs).toMatchObject({ isError: true, text: expect.stringMatching(/HTTP 404 not_found/) });
    expect((await rpc("resources/read", { uri: `promptedge://requests/${logged.id}` }, bearer(other.key))).error).toMatchObject({ code: -32002 });
    expect((await rpc("prompts/get", { name, arguments: { x: "1" } }, bearer(other.key))).error).toMatchObject({ code: -32602, message: expect.stringMatching(/no prompt template named/) });
  });

  it("log each call the REST route serves as its own line, tied to the MCP request's id", async () => {
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      const res = await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list-workflows", arguments: {} } }, { ...bearer(ws.key), "X-Request-Id": "mcp-request-0001" });
      expect(res.status).toBe(200);
      const lines = logs.mock.calls.map((c) => JSON.parse(String(c[0]))).filter((l) => l.msg === "request");
      expect(lines).toEqual([
        expect.objectContaining({ method: "GET", path: "/workflows", status: 200, request_id: "mcp-request-0001.1", workspace_id: ws.workspaceId }),
        expect.objectContaining({ method: "POST", path: "/mcp", status: 200, request_id: "mcp-request-0001" }),
      ]);
    } finally {
      logs.mockRestore();
    }
  });
});

describe("prompts", () => {
  it("lists each template with its input variables as arguments, at prod or else the latest version, and fills them", async () => {
    const w = await createWorkspace();
    const snip = uniq("snip");
    await publish(w.key, snip, "Mind {tone}.");
    const greet = uniq("greet");
    await publish(w.key, greet, `Hello {name}. @@@${snip}@@@`, { release_labels: ["prod"] });
    await publish(w.key, greet, "Version two {other}");
    const list = (await rpc("prompts/list", {}, bearer(w.key))).result;
    expect(list.nextCursor).toBeUndefined();
    const byName = new Map(list.prompts.map((p: { name: string }) => [p.name, p]));
    expect(byName.get(greet)).toMatchObject({ description: expect.stringMatching(/version 1 \(label prod\)/), arguments: [{ name: "name", required: true }, { name: "tone", required: true }] });
    expect(byName.get(snip)).toMatchObject({ description: expect.stringMatching(/version 1 \(latest; no prod label\)/), arguments: [{ name: "tone" }] });
    const got = (await rpc("prompts/get", { name: greet, arguments: { name: "Ada", tone: "kind" } }, bearer(w.key))).result;
    expect(got.messages).toEqual([
      { role: "user", content: { type: "text", text: "Be brief." } },
      // The snippet (a chat template) is its messages' text, joined by blank lines.
      { role: "user", content: { type: "text", text: "Hello Ada. Be brief.\n\nMind kind." } },
    ]);
    // Another label for the connection: a template without it is served at its latest.
    const staged = (await rpc("prompts/get", { name: greet, arguments: { other: "x" } }, bearer(w.key), "/mcp?label=staging")).result;
    expect(staged.messages[1].content.text).toBe("Version two x");
    const missing = await rpc("prompts/get", { name: greet, arguments: { name: "Ada" } }, bearer(w.key));
    expect(missing.error).toMatchObject({ code: -32602, message: expect.stringMatching(/missing arguments: tone/) });
  });
});

describe("resources", () => {
  it("reads a template at a label or version, a request and a trace; pages through templates, requests and traces", async () => {
    const w = await createWorkspace();
    const name = uniq("res");
    await publish(w.key, name, "one", { release_labels: ["prod"] });
    await publish(w.key, name, "two");
    const logged = await json(await call("/log-request", { method: "POST", key: w.key, json: logBody() }));
    const read = async (uri: string) => {
      const body = await rpc("resources/read", { uri }, bearer(w.key));
      return body.error ?? JSON.parse(body.result.contents[0].text);
    };
    expect((await read(`promptedge://prompts/${name}`)).version).toBe(2);
    expect((await read(`promptedge://prompts/${name}?label=prod`)).version).toBe(1);
    expect((await read(`promptedge://prompts/${name}?version=2`)).prompt_template.messages[1].content[0].text).toBe("two");
    expect((await read(`promptedge://requests/${logged.id}`)).request_id).toBe(logged.id);
    expect(await read("promptedge://requests/99999999999")).toMatchObject({ code: -32002 });
    expect(await read("promptedge://elsewhere/1")).toMatchObject({ code: -32002 });
    expect(await read("promptedge://requests/abc")).toMatchObject({ code: -32602, message: expect.stringMatching(/request_id/) });
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    expect((await call("/spans-bulk", { method: "POST", key: w.key, json: { spans: [bulkSpan(traceId, "b7ad6b7169203331")] } })).status).toBe(201);
    expect(JSON.stringify(await read(`promptedge://traces/${traceId}`))).toContain("b7ad6b7169203331");

    const templates = (await rpc("resources/templates/list", {}, bearer(w.key))).result.resourceTemplates;
    expect(templates.map((t: { uriTemplate: string }) => t.uriTemplate)).toEqual(["promptedge://prompts/{name}{?label,version}", "promptedge://requests/{id}", "promptedge://traces/{id}"]);
    const first = (await rpc("resources/list", {}, bearer(w.key))).result;
    expect(first.resources.map((r: { uri: string }) => r.uri)).toEqual([`promptedge://prompts/${name}`]);
    expect(first.nextCursor).toBe("requests:1");
    // The log becomes searchable a moment after it is written.
    let second: any;
    for (let i = 0; i < 100; i++) {
      second = (await rpc("resources/list", { cursor: first.nextCursor }, bearer(w.key))).result;
      if (second.resources[0]?.uri === `promptedge://requests/${logged.id}`) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(second.resources.map((r: { uri: string }) => r.uri)).toEqual([`promptedge://requests/${logged.id}`]);
    const third = (await rpc("resources/list", { cursor: second.nextCursor }, bearer(w.key))).result;
    expect(third.resources.map((r: { uri: string }) => r.uri)).toEqual([`promptedge://traces/${traceId}`]);
    expect(third.nextCursor).toBeUndefined();
    expect((await rpc("resources/list", { cursor: "bogus" }, bearer(w.key))).error).toMatchObject({ code: -32602 });
  });
});
