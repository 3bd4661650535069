// Scoped keys: every route of /openapi.json declares the scope it needs (a new route without one
// fails here, and cannot be declared without one: defineRoute's type asks for it), and the scope is
// enforced before anything else is read: a read-only key is refused every write with a 403 naming
// the scope, and reaches every read.
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { grants, SCOPES, type Scope } from "../../src/lib/scopes";
import { TOOLS } from "../../src/mcp";
import { callHandler, createWorkspace, json, scopedKey, type TestKey } from "../helpers/api";

interface Operation {
  method: string;
  path: string;
  scope: Scope | null;
  alsoScope?: Scope;
  description: string;
}

let ops: Operation[];
let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
  const doc = await json(await callHandler("/openapi.json"));
  ops = [];
  for (const [path, item] of Object.entries<Record<string, { security?: unknown[]; "x-scope"?: Scope; "x-also-scope"?: Scope; description?: string }>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      ops.push({ method: method.toUpperCase(), path, scope: isPublic ? null : (op["x-scope"] ?? ("MISSING" as Scope)), alsoScope: op["x-also-scope"], description: op.description ?? "" });
    }
  }
});

/**
 * The routes that need no key: the health check, the docs, the console, the realtime socket (its token
 * is its key) and /mcp (listing tools needs none; each tool call runs the REST route it names with the
 * caller's key, so that route's scope holds: tested below).
 */
const PUBLIC = new Set(["GET /health", "GET /", "GET /openapi.json", "GET /docs", "GET /console", "GET /connection/websocket", "POST /mcp"]);

const concrete = (path: string) =>
  path.replace(/\{([^}]+)\}/g, (_, name: string) => (/table_id|sheet_id|column_id|cell_id|skill_collection_id|operation_id|version_id|calculation_id/.test(name) ? crypto.randomUUID() : "1"));

describe("every route declares its scope", () => {
  it("each operation of /openapi.json is public (a short, named list) or names a known scope, shown in its description", () => {
    expect(ops.length).toBeGreaterThan(150);
    const problems: string[] = [];
    for (const op of ops) {
      const key = `${op.method} ${op.path}`;
      if (op.scope === null) {
        if (!PUBLIC.has(key)) problems.push(`${key}: public, but not one of the routes that may be`);
        continue;
      }
      if (!(SCOPES as readonly string[]).includes(op.scope)) problems.push(`${key}: scope ${op.scope}`);
      else if (!op.description.includes(`**Scope:** \`${op.scope}\``)) problems.push(`${key}: its description does not name its scope`);
    }
    expect(problems).toEqual([]);
  });

  it("every route the app serves is in /openapi.json (so none escapes the check above), but the console's and docs' own files", () => {
    const documented = new Set(ops.map((o) => `${o.method} ${o.path.replace(/\{([^}]+)\}/g, ":$1")}`));
    const undocumented = createApp()
      .routes.filter((r) => r.method !== "ALL" && !r.path.includes("*"))
      .map((r) => `${r.method} ${r.path}`)
      .filter((k) => !documented.has(k));
    expect([...new Set(undocumented)]).toEqual([]);
  });

  it("the routes of other areas that read or copy logs' contents need logs:read as well (x-also-scope, named in their description)", async () => {
    const also = ops.filter((o) => o.alsoScope).map((o) => `${o.method} ${o.path} ${o.alsoScope}`);
    expect(also.sort()).toEqual(
      [
        "POST /api/public/v2/dataset-versions/add-request-log logs:read",
        "POST /api/public/v2/dataset-versions/add-trace logs:read",
        "POST /api/public/v2/dataset-versions/from-filter-params logs:read",
        "POST /api/public/v2/dataset-versions/from-filter-params/preview logs:read",
        "POST /api/public/v2/tables/{table_id}/sheets/{sheet_id}/imports/request-logs logs:read",
      ].sort(),
    );
    for (const o of ops.filter((x) => x.alsoScope)) expect(o.description, o.path).toContain(`and \`${o.alsoScope}\``);
    // A key of those areas without logs:read is refused each of them, and a sheet made from request logs, naming logs:read.
    const key = await scopedKey(ws, ["datasets:write", "tables:write"]);
    for (const o of ops.filter((x) => x.alsoScope)) {
      const res = await callHandler(concrete(o.path), { method: o.method, key, json: {} });
      expect(res.status, o.path).toBe(403);
      expect((await json(res)).message, o.path).toContain("logs:read");
    }
    const table = await json(await callHandler("/api/public/v2/tables", { method: "POST", key, json: { title: "t" } }));
    const sheet = await callHandler(`/api/public/v2/tables/${table.table.id}/sheets`, { method: "POST", key, json: { source: { type: "request_logs", request_log_ids: [1] } } });
    expect(sheet.status).toBe(403);
    expect((await json(sheet)).message).toMatch(/logs:read/);
    expect((await callHandler(`/api/public/v2/tables/${table.table.id}/sheets`, { method: "POST", key, json: { title: "blank" } })).status).toBe(201);
  });

  it("reads need a read scope and writes a write (or admin) scope", () => {
    const wrong = ops.filter((o) => o.scope && o.method === "GET" && !o.scope.endsWith(":read") && o.scope !== "admin").map((o) => `${o.method} ${o.path} ${o.scope}`);
    expect(wrong).toEqual([]);
  });
});

describe("a read-only key", () => {
  it("is refused every write with a 403 naming the scope, before its body is read; every read lets it through", async () => {
    const readKey = await scopedKey(ws, ["read"]);
    const refused: string[] = [];
    const letThrough: string[] = [];
    for (const op of ops) {
      if (op.scope === null) continue;
      const res = await callHandler(concrete(op.path), {
        method: op.method,
        key: readKey,
        ...(op.method === "GET" || op.method === "DELETE" ? {} : { json: {} }),
      });
      const body = await res.text();
      const should = grants(["read"], op.scope);
      if (!should && res.status !== 403) refused.push(`${op.method} ${op.path}: ${res.status}`);
      if (!should && res.status === 403) expect(JSON.parse(body), `${op.method} ${op.path}`).toMatchObject({ error: "forbidden", message: expect.stringContaining(op.scope) });
      if (should && res.status === 403) letThrough.push(`${op.method} ${op.path}: ${body}`);
    }
    expect(refused).toEqual([]);
    expect(letThrough).toEqual([]);
  }, 180_000);
});

describe("scopes", () => {
  it("admin includes everything, read every read, an area's write its read; nothing else", () => {
    expect(grants(["admin"], "admin")).toBe(true);
    expect(grants(["admin"], "logs:write")).toBe(true);
    expect(grants(["read"], "prompts:read")).toBe(true);
    expect(grants(["read"], "prompts:write")).toBe(false);
    expect(grants(["read"], "admin")).toBe(false);
    expect(grants(["logs:write"], "logs:read")).toBe(true);
    expect(grants(["logs:write"], "prompts:read")).toBe(false);
    expect(grants(["prompts:read"], "prompts:write")).toBe(false);
    expect(grants([], "logs:read")).toBe(false);
  });

  it("an application key that only logs can log, and cannot read logs or prompts; one that only fetches templates cannot log", async () => {
    const logger = await scopedKey(ws, ["logs:write"]);
    const body = {
      provider: "openai",
      model: "gpt-4o",
      input: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
      output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: "hello" }] }] },
      request_start_time: Date.now() / 1000,
      request_end_time: Date.now() / 1000,
    };
    const logged = await callHandler("/log-request", { method: "POST", key: logger, json: body });
    expect(logged.status).toBe(201);
    const id = (await json(logged)).id;
    expect((await callHandler(`/api/public/v2/requests/${id}`, { key: logger })).status).toBe(200);
    const prompts = await callHandler("/prompt-templates", { key: logger });
    expect(prompts.status).toBe(403);
    expect((await json(prompts)).message).toContain("prompts:read");

    const reader = await scopedKey(ws, ["prompts:read"]);
    expect((await callHandler("/prompt-templates", { key: reader })).status).toBe(200);
    const refused = await callHandler("/log-request", { method: "POST", key: reader, json: { ...body, request_start_time: body.request_start_time + 1 } });
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toContain("logs:write");
    // The SDK's tracking calls send the key in the body: the same scopes hold.
    const viaBody = await callHandler("/track-request", { method: "POST", json: { api_key: reader, function_name: "openai.chat.completions.create", kwargs: {}, request_response: {} } });
    expect(viaBody.status).toBe(403);
  });

  it("a key without scopes (none granted) is refused everything but stays a known key (403, not 401)", async () => {
    const none = await scopedKey(ws, []);
    const res = await callHandler("/prompt-templates", { key: none });
    expect(res.status).toBe(403);
  });
});

describe("through /mcp (its tools call the REST routes in-process with the caller's key)", () => {
  /** A tool call with the arguments it names as missing filled in ("1"), so it reaches its route. */
  const rpc = async (key: string, name: string) => {
    const args: Record<string, string> = {};
    for (;;) {
      const res = await callHandler("/mcp", {
        method: "POST",
        headers: { Accept: "application/json, text/event-stream", Authorization: `Bearer ${key}` },
        json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } },
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
      const missing = /(\w+): is required \(nothing was sent\)/.exec(body.result.content[0]?.text ?? "");
      if (!missing || missing[1] in args) return body;
      args[missing[1]] = "1";
    }
  };

  it("each tool that writes needs its route's write scope and each that only reads a read scope", () => {
    const byOperation = new Map(ops.map((o) => [`${o.method} ${o.path}`, o.scope]));
    const wrong = TOOLS.filter((t) => {
      const scope = byOperation.get(t.operation);
      // A tool that reads needs a read scope, or admin for what only admins read (the audit log).
      return !scope || (t.readOnly ? !grants(["read"], scope) && scope !== "admin" : grants(["read"], scope));
    }).map((t) => `${t.name}: ${t.operation} ${byOperation.get(t.operation)}`);
    expect(wrong).toEqual([]);
  });

  it("a read-only key reads through every read tool and is refused every write tool, with the scope it lacks", async () => {
    const fresh = await createWorkspace();
    const readKey = await scopedKey(fresh, ["read"]);
    const refused: string[] = [];
    for (const t of TOOLS) {
      const body = await rpc(readKey, t.name);
      const text = body.result.content[0]?.text ?? "";
      const forbidden = body.result.isError === true && /lacks the scope/.test(text);
      const adminOnly = ops.find((o) => `${o.method} ${o.path}` === t.operation)?.scope === "admin";
      if (t.readOnly && !adminOnly && forbidden) refused.push(`${t.name} (reads) refused: ${text}`);
      if ((!t.readOnly || adminOnly) && !forbidden) refused.push(`${t.name} (${t.readOnly ? "admin reads" : "writes"}) not refused: ${text.slice(0, 200)}`);
    }
    expect(refused).toEqual([]);
    const logs = await callHandler("/api/public/v2/requests/search", { method: "POST", key: readKey, json: {} });
    expect((await json(logs)).total).toBe(0);
  }, 120_000);
});
