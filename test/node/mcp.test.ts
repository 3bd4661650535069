// The official MCP client (@modelcontextprotocol/sdk's Client over its Streamable HTTP transport)
// against a real `wrangler dev` of this Worker: what an agent such as Claude Code does. A scripted
// agent session publishes a prompt version, moves a label, logs and searches a request, builds a
// dataset, runs a workflow and reads its result, each step checked through REST; then prompts,
// resources, the three ways of passing a key, and the failures an agent must be able to read.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedApi, sharedKey } from "./helpers/shared-api";
import plTools from "../fixtures/promptlayer-mcp-tools.json";

const api = sharedApi("mcp-test");
/** A key of another workspace. */
const otherKey = sharedKey("mcp-other");

const clients: Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

/** A connected client, the key sent the way `headers` say (none: no key). */
async function connect(headers: Record<string, string> = {}, path = "/mcp"): Promise<Client> {
  const client = new Client({ name: "promptedge-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}${path}`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

const bearer = () => ({ Authorization: `Bearer ${api.key}` });

type ToolAnswer = { isError: boolean; text: string; data: any };

async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  const res = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
  const text = res.content[0].text;
  return { isError: res.isError === true, text, data: res.isError ? undefined : JSON.parse(text) };
}

/** A tool call that must succeed: its JSON. */
async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const r = await callTool(client, name, args);
  expect(r.isError, `${name}: ${r.text}`).toBe(false);
  return r.data;
}

/** A REST call, to check what a tool did. */
async function rest(path: string, init: { method?: string; body?: unknown; key?: string } = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${api.url}${path}`, {
    method: init.method ?? "GET",
    headers: { "X-API-KEY": init.key ?? api.key, ...(init.body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Calls `fn` until `done` says its answer is final (a background job, a search index), for up to `timeoutMs`. */
async function until<T>(fn: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const chat = (system: string, user: string) => ({
  type: "chat",
  messages: [
    { role: "system", content: [{ type: "text", text: system }] },
    { role: "user", content: [{ type: "text", text: user }] },
  ],
});
const name = `support-${Date.now()}`;

describe("connecting without a key", () => {
  it("initializes (no session), tells how the pieces fit, and lists every PromptLayer tool with its parameters", async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: "promptedge" });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, prompts: {}, resources: {} });
    expect(client.getInstructions()).toMatch(/publish-prompt-template/);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const missing: string[] = [];
    for (const [tool, { parameters, required }] of Object.entries(plTools.tools as Record<string, { parameters: string[]; required: string[] }>)) {
      const t = byName.get(tool);
      if (!t) missing.push(tool);
      else {
        for (const p of [...parameters, "api_key"]) if (!(p in (t.inputSchema.properties ?? {}))) missing.push(`${tool}.${p}`);
        for (const p of required) if (!(t.inputSchema.required ?? []).includes(p)) missing.push(`${tool}.${p}*`);
      }
    }
    expect(missing).toEqual([]);
    expect(byName.get("get-request")?.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get("publish-prompt-template")?.annotations).toMatchObject({ readOnlyHint: false });
  });

  it("a tool call without a key is a tool error saying how to pass one", async () => {
    const client = await connect();
    const r = await callTool(client, "list-prompt-templates", {});
    expect(r).toMatchObject({ isError: true, text: expect.stringMatching(/No API key: .*Authorization: Bearer <key>.*X-API-KEY: <key>.*api_key/) });
    await expect(client.listPrompts()).rejects.toThrow(/No API key/);
  });
});

describe("an agent session (Bearer key), each step checked through REST", () => {
  let agent: Client;
  let promptId: number;
  let requestId: number;
  beforeAll(async () => {
    agent = await connect(bearer());
  });

  it("publishes a prompt version with the prod label, publishes a fix, and moves prod onto it", async () => {
    const v1 = await ok(agent, "publish-prompt-template", {
      prompt_template: { prompt_name: name, tags: ["support"] },
      prompt_version: { prompt_template: chat("You answer {product} questions.", "Question: {question}"), commit_message: "first" },
      release_labels: ["prod"],
    });
    promptId = v1.id;
    expect(v1).toMatchObject({ prompt_name: name, version_number: 1, release_labels: ["prod"] });
    const v2 = await ok(agent, "publish-prompt-template", {
      prompt_template: { prompt_name: name },
      prompt_version: { prompt_template: chat("You answer {product} questions, briefly.", "Question: {question}"), commit_message: "be brief" },
    });
    expect(v2.version_number).toBe(2);
    const stored = await rest(`/prompt-templates/${name}`);
    expect(stored.body).toMatchObject({ version: 2, commit_message: "be brief" });

    const labels = await ok(agent, "list-prompt-template-labels", { identifier: name });
    const prod = labels.release_labels.find((l: { release_label: string }) => l.release_label === "prod");
    expect(prod.prompt_version_number).toBe(1);
    await ok(agent, "move-prompt-label", { prompt_label_id: prod.release_label_id, prompt_version_number: 2 });
    expect((await rest(`/prompt-templates/${name}?label=prod`)).body).toMatchObject({ version: 2 });
  });

  it("logs a request against the template, finds it by search, and reads it", async () => {
    const logged = await ok(agent, "log-request", {
      provider: "openai",
      model: "gpt-4o",
      input: chat("You answer Acme questions, briefly.", "Question: where is my order?"),
      output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: "It ships today." }] }] },
      request_start_time: new Date(Date.now() - 2000).toISOString(),
      request_end_time: new Date().toISOString(),
      prompt_name: name,
      prompt_version_number: 2,
      prompt_input_variables: { product: "Acme", question: "where is my order?" },
      tags: ["mcp-session"],
      metadata: { ticket: "T-1" },
    });
    requestId = logged.id;
    expect((await rest(`/api/public/v2/requests/${requestId}`)).body).toMatchObject({ request_id: requestId, tags: ["mcp-session"], metadata: { ticket: "T-1" } });
    const found = await until(
      () => ok(agent, "search-request-logs", { filter_group: { logic: "AND", filters: [{ field: "tags", operator: "in", value: ["mcp-session"] }] }, q: "order" }),
      (page) => page.items.length > 0,
    );
    expect(found.items.map((i: { id: number }) => i.id)).toEqual([requestId]);
    const read = await ok(agent, "get-request", { request_id: requestId });
    expect(read).toMatchObject({ request_id: requestId, prompt_version_number: 2 });
  });

  it("builds a dataset from the request", async () => {
    const group = await ok(agent, "create-dataset-group", { name: `from-mcp-${Date.now()}` });
    const groupId = group.dataset_group.id;
    await ok(agent, "add-request-log-to-dataset", { dataset_group_id: groupId, request_log_id: requestId });
    const saved = await ok(agent, "save-draft-dataset-version", { dataset_group_id: groupId });
    expect(saved.version_number).toBe(1);
    const listed = await rest(`/api/public/v2/datasets?dataset_group_id=${groupId}`);
    const dataset = listed.body.datasets.find((d: { version_number: number }) => d.version_number === 1);
    expect(dataset).toBeDefined();
    const rows = await rest(`/api/public/v2/datasets/${dataset.id}/rows`);
    expect(JSON.stringify(rows.body)).toContain("Acme");
  });

  it("runs a workflow and reads its result", async () => {
    const wf = `wf-${Date.now()}`;
    const made = await ok(agent, "create-workflow", {
      name: wf,
      nodes: [{ name: "answer", node_type: "VARIABLE", is_output_node: true, configuration: { value: { type: "string", value: "Done by MCP" } }, dependencies: [] }],
    });
    expect(made).toMatchObject({ success: true });
    const run = await ok(agent, "run-workflow", { workflow_name: wf, input_variables: {} });
    const executionId = run.workflow_version_execution_id;
    expect(executionId).toEqual(expect.any(Number));
    const result = await until(
      () => callTool(agent, "get-workflow-version-execution-results", { workflow_version_execution_id: executionId }),
      (r) => r.data === "Done by MCP",
    );
    expect(result.data).toBe("Done by MCP");
    const viaRest = await rest(`/workflow-version-execution-results?workflow_version_execution_id=${executionId}`);
    expect(viaRest).toEqual({ status: 200, body: "Done by MCP" });
  });

  it("serves the template as an MCP prompt at prod, its variables as arguments, filled by prompts/get", async () => {
    const { prompts } = await agent.listPrompts();
    const prompt = prompts.find((p) => p.name === name);
    expect(prompt).toMatchObject({ description: expect.stringMatching(/version 2 \(label prod\)/) });
    expect(prompt?.arguments?.map((a) => a.name)).toEqual(["product", "question"]);
    const got = await agent.getPrompt({ name, arguments: { product: "Acme", question: "Can I return it?" } });
    expect(got.messages).toEqual([
      { role: "user", content: { type: "text", text: "You answer Acme questions, briefly." } },
      { role: "user", content: { type: "text", text: "Question: Can I return it?" } },
    ]);
  });

  it("reads back the template, the request and a trace as resources", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    await ok(agent, "create-spans-bulk", {
      spans: [
        {
          name: "support-run",
          context: { trace_id: traceId, span_id: "00f067aa0ba902b7", trace_state: "" },
          kind: "SpanKind.INTERNAL",
          parent_id: null,
          start_time: "1700000000000000000",
          end_time: "1700000002000000000",
          status: { status_code: "StatusCode.OK", description: null },
          attributes: {},
          events: [],
          links: [],
          resource: { attributes: { "service.name": "mcp-test" }, schema_url: "" },
        },
      ],
    });
    const text = async (uri: string) => JSON.parse(((await agent.readResource({ uri })).contents[0] as { text: string }).text);
    expect(await text(`promptedge://prompts/${name}?version=1`)).toMatchObject({ prompt_name: name, version: 1 });
    expect(await text(`promptedge://requests/${requestId}`)).toMatchObject({ request_id: requestId });
    expect(JSON.stringify(await text(`promptedge://traces/${traceId}`))).toContain("00f067aa0ba902b7");
    const listed = await agent.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain(`promptedge://prompts/${encodeURIComponent(name)}`);
    const { resourceTemplates } = await agent.listResourceTemplates();
    expect(resourceTemplates).toHaveLength(3);
  });

  it("bad arguments are tool errors naming the argument, and change nothing", async () => {
    const before = (await rest(`/prompt-templates/${name}`)).body.version;
    const r = await callTool(agent, "patch-prompt-template-version", { identifier: name, commit_message: "x".repeat(100) });
    expect(r).toMatchObject({ isError: true, text: expect.stringMatching(/commit_message: must be at most 72 characters/) });
    expect((await rest(`/prompt-templates/${name}`)).body.version).toBe(before);
    const label = await callTool(agent, "create-prompt-label", { prompt_id: promptId, name: "staging" });
    expect(label.text).toMatch(/prompt_version_number: is required/);
    expect((await rest(`/prompt-templates/${name}/labels`)).body.release_labels.map((l: { release_label: string }) => l.release_label)).toEqual(["prod"]);
  });
});

describe("keys", () => {
  it("take X-API-KEY, and the api_key argument over the header", async () => {
    const viaHeader = await connect({ "X-API-KEY": api.key });
    expect((await ok(viaHeader, "get-prompt-template-raw", { identifier: name })).prompt_name).toBe(name);
    const wrongHeader = await connect({ Authorization: "Bearer pe_not_a_key" });
    expect((await ok(wrongHeader, "get-prompt-template-raw", { identifier: name, api_key: api.key })).prompt_name).toBe(name);
    expect(await callTool(wrongHeader, "get-prompt-template-raw", { identifier: name })).toMatchObject({
      isError: true,
      text: expect.stringMatching(/the API key is unknown or revoked \(HTTP 401/),
    });
  });

  it("another workspace's key finds none of this workspace's ids", async () => {
    const foreign = await connect({ Authorization: `Bearer ${otherKey}` });
    const r = await callTool(foreign, "get-prompt-template-raw", { identifier: name });
    expect(r).toMatchObject({ isError: true, text: expect.stringMatching(/HTTP 404 not_found/) });
    expect((await foreign.listPrompts()).prompts.map((p) => p.name)).not.toContain(name);
    await expect(foreign.readResource({ uri: `promptedge://prompts/${name}` })).rejects.toThrow(/Resource not found/);
  });
});
