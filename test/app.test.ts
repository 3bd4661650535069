import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createApp } from "../src/app";
import { toApiError } from "../src/http/api-error";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { call, createWorkspace, json, logInControlDb, logsDb, type TestKey } from "./helpers/api";
import { logBody } from "./helpers/fixtures";

let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
});

/** AUTH_KEY_CACHE_MS as the test pool sets it (vitest.config.ts), plus a margin. */
const KEY_CACHE_MS = Number(env.AUTH_KEY_CACHE_MS) + 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ERROR_SHAPE = { success: false, message: expect.any(String), error: expect.any(String) };

describe("health", () => {
  it("answers without a key, with a request id", async () => {
    const res = await call("/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, status: "ok" });
    expect(res.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("echoes a well-formed incoming X-Request-Id and replaces a bad one", async () => {
    const good = await call("/health", { headers: { "X-Request-Id": "trace-abc-12345" } });
    expect(good.headers.get("X-Request-Id")).toBe("trace-abc-12345");
    const bad = await call("/health", { headers: { "X-Request-Id": "<script>" } });
    expect(bad.headers.get("X-Request-Id")).not.toBe("<script>");
  });
});

describe("authentication", () => {
  it("401 in the error shape without X-API-KEY", async () => {
    const res = await call("/log-request", { method: "POST", json: logBody() });
    expect(res.status).toBe(401);
    const body = await json(res);
    expect(body).toMatchObject({ ...ERROR_SHAPE, error: "unauthorized", message: "X-API-KEY header is missing" });
    // The correlation id is a header only: PromptLayer clients read a body's request_id as a log id.
    expect(res.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(body).not.toHaveProperty("request_id");
  });

  it("401 for an unknown key, and before validating the body", async () => {
    for (const key of ["pe_nope", "x".repeat(300), " "]) {
      const res = await call("/log-request", { method: "POST", key, json: { not: "valid" } });
      expect(res.status, key.slice(0, 10)).toBe(401);
      expect(await json(res)).toMatchObject({ error: "unauthorized" });
    }
    const get = await call("/api/public/v2/requests/1", { key: "pe_nope" });
    expect(get.status).toBe(401);
  });

  it("401 at once after a key is revoked on (cached) log writes into the control database, and on reads once the key cache's time is up", async () => {
    const a = await createWorkspace();
    // A workspace that logs into the control database, whose trigger refuses a revoked key's logs.
    await logInControlDb(a);
    const first = await call("/log-request", { method: "POST", key: a.key, json: logBody() });
    expect(first.status).toBe(201);
    const id = (await json(first)).id;
    expect((await call(`/api/public/v2/requests/${id}`, { key: a.key })).status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE workspace_id = ?").bind(a.workspaceId).run();
    const count = () => env.DB.prepare("SELECT count(*) AS n FROM request_logs WHERE workspace_id = ?").bind(a.workspaceId).first<{ n: number }>();
    const before = await count();
    expect(before!.n).toBe(1);
    for (let i = 0; i < 2; i++) {
      const res = await call("/log-request", { method: "POST", key: a.key, json: logBody({ tags: ["after-revoke"] }) });
      expect(res.status).toBe(401);
      expect(await json(res)).toMatchObject({ error: "unauthorized", message: "X-API-KEY is unknown or revoked" });
    }
    expect(await count()).toEqual(before);
    await sleep(KEY_CACHE_MS);
    expect((await call(`/api/public/v2/requests/${id}`, { key: a.key })).status).toBe(401);
  });

  it("log writes into a log database refuse a revoked key within AUTH_KEY_CACHE_MS of the revocation, though it was cached", async () => {
    const a = await createWorkspace();
    const first = await call("/log-request", { method: "POST", key: a.key, json: logBody() });
    expect(first.status).toBe(201);
    const id = (await json(first)).id;
    const shard = await env.DB.prepare("SELECT log_shard FROM workspaces WHERE id = ?").bind(a.workspaceId).first<{ log_shard: string }>();
    expect(shard!.log_shard).toMatch(/^LOGS_/);
    // The key is cached now (verified by the log write just made).
    expect((await call("/log-request", { method: "POST", key: a.key, json: logBody() })).status).toBe(201);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE workspace_id = ?").bind(a.workspaceId).run();
    const revokedAt = Date.now();
    await sleep(KEY_CACHE_MS);
    const logs = await logsDb(a);
    const count = () => logs.prepare("SELECT count(*) AS n FROM request_logs WHERE workspace_id = ?").bind(a.workspaceId).first<{ n: number }>();
    const before = await count();
    for (let i = 0; i < 2; i++) {
      const res = await call("/log-request", { method: "POST", key: a.key, json: logBody({ tags: ["after-revoke"] }) });
      expect(res.status).toBe(401);
      expect(await json(res)).toMatchObject({ error: "unauthorized", message: "X-API-KEY is unknown or revoked" });
    }
    expect(await count()).toEqual(before);
    expect(Date.now() - revokedAt).toBeLessThan(KEY_CACHE_MS + 5_000);
    expect((await call(`/api/public/v2/requests/${id}`, { key: a.key })).status).toBe(401);
  });

  it("every route refuses a revoked key within AUTH_KEY_CACHE_MS of the revocation, though it was cached", async () => {
    const a = await createWorkspace();
    const logged = await call("/log-request", { method: "POST", key: a.key, json: logBody() });
    const id = (await json(logged)).id;
    const reads = [
      () => call(`/api/public/v2/requests/${id}`, { key: a.key }),
      () => call("/api/public/v2/requests/suggestions?field=engine", { key: a.key }),
      () => call("/api/public/v2/requests/search", { method: "POST", key: a.key, json: { page: 1, per_page: 10 } }),
      () => call("/api/public/v2/folders", { method: "POST", key: a.key, json: { name: `f-${Date.now()}` } }),
    ];
    // Each call verifies (or reuses) the key; all succeed while it is active.
    for (const r of reads) expect([200, 201]).toContain((await r()).status);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE workspace_id = ?").bind(a.workspaceId).run();
    const revokedAt = Date.now();
    await sleep(KEY_CACHE_MS);
    for (const r of reads) {
      const res = await r();
      expect(res.status).toBe(401);
      expect(await json(res)).toMatchObject({ error: "unauthorized", message: "X-API-KEY is unknown or revoked" });
    }
    const folders = await env.DB.prepare("SELECT count(*) AS n FROM folders WHERE workspace_id = ?").bind(a.workspaceId).first<{ n: number }>();
    expect(folders!.n).toBe(1);
    // The refusal came within the documented window (plus this test's own pace), not later.
    expect(Date.now() - revokedAt).toBeLessThan(KEY_CACHE_MS + 5_000);
  });

  it("a key revoked and then refused stays refused (a 401 evicts it from the cache)", async () => {
    const a = await createWorkspace();
    expect((await call("/api/public/v2/requests/suggestions?field=engine", { key: a.key })).status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE workspace_id = ?").bind(a.workspaceId).run();
    await sleep(KEY_CACHE_MS);
    for (let i = 0; i < 3; i++) expect((await call("/api/public/v2/requests/suggestions?field=engine", { key: a.key })).status).toBe(401);
  });

  it("401, never 5xx or 400, for a cached key revoked since: a log without side rows, and an invalid body", async () => {
    const a = await createWorkspace();
    // The log without side rows is refused by the control database's trigger (a log database has none).
    await logInControlDb(a);
    expect((await call("/log-request", { method: "POST", key: a.key, json: logBody() })).status).toBe(201);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE workspace_id = ?").bind(a.workspaceId).run();
    const bare = await call("/log-request", { method: "POST", key: a.key, json: logBody() });
    expect(bare.status).toBe(401);
    expect(await json(bare)).toMatchObject({ error: "unauthorized" });
    const b = await createWorkspace();
    expect((await call("/log-request", { method: "POST", key: b.key, json: logBody() })).status).toBe(201);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE workspace_id = ?").bind(b.workspaceId).run();
    const invalid = await call("/log-request", { method: "POST", key: b.key, json: logBody({ score: 500 }) });
    expect(invalid.status).toBe(401);
  });

  it("refuses, in the control database, any log written under a revoked key", async () => {
    const a = await createWorkspace();
    await logInControlDb(a);
    const key = await env.DB.prepare("SELECT id FROM api_keys WHERE workspace_id = ?").bind(a.workspaceId).first<{ id: number }>();
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE id = ?").bind(key!.id).run();
    const insert = env.DB.prepare(
      "INSERT INTO request_logs (workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_input_variables, request_start_time, request_end_time, api_key_id) VALUES (?, 'p', 'm', '{}', '{}', '{}', '[]', '{}', '{}', 0, 0, ?)",
    );
    await expect(insert.bind(a.workspaceId, key!.id).run()).rejects.toThrow(/api key revoked/);
  });

  it("does not need a key for /health, /openapi.json and /docs", async () => {
    for (const path of ["/health", "/openapi.json", "/docs"]) {
      expect((await call(path)).status, path).toBe(200);
    }
  });
});

describe("errors", () => {
  it("404 in the error shape for an unknown route, with or without a key", async () => {
    for (const key of [undefined, ws.key]) {
      const res = await call("/no/such/route", { key });
      expect(res.status).toBe(404);
      expect(await json(res)).toMatchObject({ ...ERROR_SHAPE, error: "not_found" });
      expect(res.headers.get("X-Request-Id")).toBeTruthy();
    }
  });

  it("405 with Allow for a known path asked with another method, with or without a key", async () => {
    for (const key of [undefined, ws.key]) {
      const res = await call("/log-request", { method: "GET", key });
      expect(res.status).toBe(405);
      expect(res.headers.get("Allow")).toBe("POST");
      expect(await json(res)).toMatchObject({ ...ERROR_SHAPE, error: "method_not_allowed", message: "/log-request does not take GET; it takes POST" });
    }
    const withId = await call("/prompt-templates/some-name", { method: "PUT", key: ws.key });
    expect(withId.status).toBe(405);
    expect(withId.headers.get("Allow")).toBe("GET, HEAD, POST");
    // A path that is not served at all stays a 404.
    expect((await call("/prompt-templates/a/b/c/d", { method: "PUT", key: ws.key })).status).toBe(404);
  });

  it("405 with Allow for GET on a POST-only path that a placeholder route could read as an id, never that route's 400", async () => {
    for (const path of ["/api/public/v2/requests/search", "/api/public/v2/requests/analytics", "/api/public/v2/traces/search"]) {
      for (const key of [undefined, ws.key]) {
        const res = await call(path, { key });
        expect(res.status, path).toBe(405);
        expect(res.headers.get("Allow")).toBe("POST");
        expect(await json(res)).toMatchObject({ ...ERROR_SHAPE, error: "method_not_allowed", message: `${path} does not take GET; it takes POST` });
      }
    }
    const folders = await call("/api/public/v2/folders/entities", { method: "PATCH", key: ws.key });
    expect(folders.status).toBe(405);
    expect(folders.headers.get("Allow")).toBe("DELETE, GET, HEAD, POST");
    // The placeholder route still answers its own ids, and the literal route its own method.
    expect((await call("/api/public/v2/requests/12345", { key: ws.key })).status).toBe(404);
    expect((await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: {} })).status).toBe(200);
  });

  it("names the body fields the API ignored in X-PromptEdge-Ignored-Fields, the answer keeping its shape", async () => {
    const res = await call("/log-request", { method: "POST", key: ws.key, json: logBody({ group_id: 5, span_id: "abc", something_new: { x: 1 }, metadata: { kept: "yes" } }) });
    expect(res.status).toBe(201);
    // logBody's own test_call marker (which tells the fixtures' calls apart) is a field the API ignores too.
    expect(res.headers.get("X-PromptEdge-Ignored-Fields")).toBe("test_call, group_id, span_id, something_new");
    expect(Object.keys(await json(res)).sort()).toEqual(["error_message", "error_type", "id", "prompt_version", "status"]);
    const { test_call: _marker, ...unmarked } = logBody();
    const clean = await call("/log-request", { method: "POST", key: ws.key, json: { ...unmarked, metadata: { call: crypto.randomUUID() } } });
    expect(clean.headers.get("X-PromptEdge-Ignored-Fields")).toBeNull();
    // A refused body names its rules instead.
    const refused = await call("/log-request", { method: "POST", key: ws.key, json: logBody({ model: "", stray: 1 }) });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("X-PromptEdge-Ignored-Fields")).toBeNull();
    // Nested: a dataset-group body with a misspelt field.
    const group = await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: `g-${crypto.randomUUID()}`, descripton: "typo" } });
    expect(group.status).toBe(201);
    expect(group.headers.get("X-PromptEdge-Ignored-Fields")).toBe("descripton");
  });

  it("GET / lists the console and the reference: a page for a browser, the links as JSON for a program", async () => {
    const browser = await call("/", { headers: { Accept: "text/html,application/xhtml+xml" }, redirect: "manual" });
    expect(browser.status).toBe(200);
    expect(browser.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    const page = await browser.text();
    expect(page).toContain('<a href="/console">The console</a>');
    expect(page).toContain('<a href="/docs">The API reference</a>');
    const program = await call("/");
    expect(program.status).toBe(200);
    expect(await json(program)).toMatchObject({ success: true, links: { console: "/console", docs: "/docs", openapi: "/openapi.json" } });
  });

  it("401 that says to use X-API-KEY for an Authorization: Bearer key", async () => {
    const res = await call("/api/public/v2/requests/1", { headers: { Authorization: `Bearer ${ws.key}` } });
    expect(res.status).toBe(401);
    expect((await json(res)).message).toMatch(/X-API-KEY header; an Authorization: Bearer header is not read/);
  });

  it("400 for malformed JSON", async () => {
    for (const body of ["{", "", "nul", '{"a":1}}', "[1,2"]) {
      const res = await call("/log-request", { method: "POST", key: ws.key, body, headers: { "Content-Type": "application/json" } });
      expect(res.status, body).toBe(400);
      expect(await json(res)).toMatchObject({ ...ERROR_SHAPE, error: "validation_error" });
    }
  });

  it("400 naming the body when the JSON is not an object", async () => {
    for (const body of ["[]", "42", '"hi"', "null"]) {
      const res = await call("/log-request", { method: "POST", key: ws.key, body, headers: { "Content-Type": "application/json" } });
      expect(res.status, body).toBe(400);
      expect((await json(res)).message).toMatch(/^body: /);
    }
  });

  it("415 for a body that is not JSON", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const res = await call("/log-request", { method: "POST", key: ws.key, body: "provider=openai", headers: { "Content-Type": type } });
      expect(res.status, type).toBe(415);
      expect(await json(res)).toMatchObject({ ...ERROR_SHAPE, error: "unsupported_media_type", message: "send the body as application/json (with that Content-Type header)" });
    }
    const noType = await call("/log-request", { method: "POST", key: ws.key, body: new TextEncoder().encode(JSON.stringify(logBody())) });
    expect(noType.status).toBe(415);
  });

  it("takes JSON with a charset parameter", async () => {
    const res = await call("/log-request", { method: "POST", key: ws.key, body: JSON.stringify(logBody()), headers: { "Content-Type": "application/json; charset=utf-8" } });
    expect(res.status).toBe(201);
  });

  it("413 over LOG_REQUEST_MAX_BYTES, 201 just under it", async () => {
    const max = Number(env.LOG_REQUEST_MAX_BYTES);
    const padding = (n: number) => JSON.stringify(logBody({ metadata: { pad: "x".repeat(n) } }));
    const base = padding(0).length;
    const under = padding(max - base);
    const over = padding(max - base + 1);
    expect(new TextEncoder().encode(under).length).toBe(max);
    const ok = await call("/log-request", { method: "POST", key: ws.key, body: under, headers: { "Content-Type": "application/json" } });
    expect(ok.status).toBe(201);
    const res = await call("/log-request", { method: "POST", key: ws.key, body: over, headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(413);
    const body = await json(res);
    expect(body).toMatchObject({ ...ERROR_SHAPE, error: "payload_too_large" });
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
    expect(body).not.toHaveProperty("request_id");
  });

  it("413 for an oversized body sent without Content-Length (streamed)", async () => {
    const max = Number(env.LOG_REQUEST_MAX_BYTES);
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (cancelled) return;
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"provider":"'));
        if (sent > max + chunk.length) return controller.close();
        controller.enqueue(chunk);
        sent += chunk.length;
      },
      cancel() {
        cancelled = true;
      },
    });
    // Straight into the app (not through the runtime's HTTP pipe, which would log the aborted upload).
    const req = new Request("http://api.test/log-request", { method: "POST", body: stream, headers: { "Content-Type": "application/json", "X-API-KEY": ws.key } });
    const res = await createApp().fetch(req, env, createExecutionContext());
    expect(res.status).toBe(413);
    expect(sent).toBeLessThan(max + 3 * chunk.length);
  });

  it("never answers 5xx to garbage", async () => {
    const bodies: unknown[] = [
      {},
      { provider: null },
      logBody({ input: null }),
      logBody({ input: { type: "chat", messages: null } }),
      logBody({ input: { type: "chat", messages: [null] } }),
      logBody({ input: { type: "chat", messages: [{ role: "user", content: [null] }] } }),
      logBody({ input: { type: { nested: true } } }),
      logBody({ metadata: { ["k\u0000"]: "\u0000" }, tags: ["\u0000", "😀".repeat(100)] }),
      logBody({ prompt_id: Number.MAX_SAFE_INTEGER, prompt_version_number: Number.MAX_SAFE_INTEGER }),
      logBody({ prompt_id: 1e300 }),
      logBody({ input_tokens: 2 ** 60 }),
      logBody({ price: 1e308, score: 100 }),
      logBody({ request_start_time: "9999-12-31T23:59:59Z", request_end_time: "9999-12-31T23:59:59Z" }),
      logBody({ request_start_time: 1e15, request_end_time: 1e16 }),
      logBody({ prompt_input_variables: { a: { b: { c: [1, { d: null }] } } } }),
      logBody({ prompt_name: "'; DROP TABLE request_logs; --", prompt_version_number: 1 }),
    ];
    for (const body of bodies) {
      const res = await call("/log-request", { method: "POST", key: ws.key, json: body });
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBeLessThan(500);
    }
    const proto = JSON.stringify(logBody({ metadata: { a: "b" } })).replace('"metadata":{', '"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"metadata":{"__proto__":"x",');
    const polluted = await call("/log-request", { method: "POST", key: ws.key, body: proto, headers: { "Content-Type": "application/json" } });
    expect(polluted.status).toBeLessThan(500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const deepBody = JSON.stringify(logBody({ parameters: { x: "__deep__" } })).replace('"__deep__"', deep);
    // Deep free-form JSON is a 400 under the one depth rule (src/lib/json-depth.ts), never a 500, and stores nothing.
    const res = await call("/log-request", { method: "POST", key: ws.key, body: deepBody, headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^parameters\.x(\[0\])+\.…: nests deeper than 100 levels/);
    for (const path of ["/api/public/v2/requests/%00", "/api/public/v2/requests/%ZZ", "/api/public/v2/requests/1e400", "/%2e%2e/%2e%2e"]) {
      const res = await call(path, { key: ws.key });
      expect(res.status, path).toBeLessThan(500);
    }
  });
});

describe("unexpected failures", () => {
  it("500 in the error shape with a generic message, the request id in the header, logged with that id", async () => {
    const app = createApp();
    app.get("/boom", () => {
      throw new Error("secret internals: SELECT * FROM api_keys");
    });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const res = await app.fetch(new Request("http://api.test/boom"), env, createExecutionContext());
      expect(res.status).toBe(500);
      const body = await json(res);
      expect(body).toEqual({ success: false, error: "internal_error", message: expect.not.stringMatching(/secret|SELECT/) });
      const requestId = res.headers.get("X-Request-Id");
      expect(requestId).toBeTruthy();
      const logged = errors.mock.calls.map((c) => JSON.parse(String(c[0])));
      expect(logged).toContainEqual(expect.objectContaining({ level: "error", request_id: requestId, error: ["secret internals: SELECT * FROM api_keys"] }));
    } finally {
      errors.mockRestore();
    }
  });

  it("maps the database's size refusal, found anywhere in the cause chain, to 413", () => {
    const wrapped = new Error("Failed query: insert … params: …", { cause: new Error("D1_ERROR: string or blob too big: SQLITE_TOOBIG") });
    expect(toApiError(wrapped, "rid")).toMatchObject({ status: 413, code: "payload_too_large" });
    const other = new Error("Failed query: params: a value that says too large", { cause: new Error("D1_ERROR: no such table") });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    expect(toApiError(other, "rid")).toMatchObject({ status: 500, code: "internal_error" });
    expect(String(errors.mock.calls[0][0])).not.toContain("a value that says");
    errors.mockRestore();
  });
});

describe("the request log line", () => {
  it("is one JSON line per request with method, path, status, duration, request id and workspace id", async () => {
    const logs = vi.spyOn(console, "log");
    try {
      const res = await call("/log-request", { method: "POST", key: ws.key, json: logBody() });
      const unauth = await call("/api/public/v2/requests/1");
      const lines = logs.mock.calls.map((c) => JSON.parse(String(c[0]))).filter((l) => l.msg === "request");
      expect(lines).toEqual([
        { level: "info", msg: "request", method: "POST", path: "/log-request", status: 201, duration_ms: expect.any(Number), request_id: res.headers.get("X-Request-Id"), workspace_id: ws.workspaceId },
        { level: "info", msg: "request", method: "GET", path: "/api/public/v2/requests/1", status: 401, duration_ms: expect.any(Number), request_id: unauth.headers.get("X-Request-Id"), workspace_id: null },
      ]);
    } finally {
      logs.mockRestore();
    }
  });
});

describe("API document", () => {
  it("is OpenAPI 3.1 and lists every route with its schemas and error responses", async () => {
    const res = await call("/openapi.json");
    expect(res.status).toBe(200);
    const doc = await json(res);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.ApiKeyAuth).toEqual({ type: "apiKey", in: "header", name: "X-API-KEY" });
    expect(doc.components.schemas.LogRequestResponse.properties.prompt_version).toEqual({ anyOf: [{ $ref: "#/components/schemas/PromptVersion" }, { type: "null" }] });
    expect(doc.components.schemas.LogRequest.properties.input_tokens).toMatchObject({ minimum: 0, default: 0 });
    expect(doc.components.schemas.LogRequest.properties.status).toMatchObject({ default: "SUCCESS" });
    const post = doc.paths["/log-request"].post;
    expect(post.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/LogRequest");
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "413", "415", "500"]));
    expect(post.responses["400"].content["application/json"].schema.$ref).toBe("#/components/schemas/Error");
    expect(post.security).toEqual([{ ApiKeyAuth: [] }]);
    const get = doc.paths["/api/public/v2/requests/{request_id}"].get;
    expect(get.parameters[0]).toMatchObject({ name: "request_id", in: "path", required: true });
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "404"]));
    expect(doc.paths["/health"].get.security).toEqual([]);
    const schema = doc.components.schemas.LogRequest;
    expect(schema.required).toEqual(expect.arrayContaining(["provider", "model", "input", "output", "request_start_time", "request_end_time"]));
    expect(schema.properties.score).toMatchObject({ minimum: 0, maximum: 100 });
    expect(schema.properties.error_message.anyOf ?? [schema.properties.error_message]).toEqual(
      expect.arrayContaining([expect.objectContaining({ maxLength: 1024 })]),
    );
  });

  it("lists every route the app serves", async () => {
    const doc = await json(await call("/openapi.json"));
    const documented = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item as object).map((m) => `${m.toUpperCase()} ${p}`));
    const served = createApp()
      .routes.filter((r) => r.method !== "ALL")
      .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z_]+)/g, "{$1}")}`);
    expect(new Set(documented)).toEqual(new Set(served));
    expect(documented).toEqual(expect.arrayContaining(["GET /health", "POST /log-request", "POST /api/public/v2/requests/search"]));
  });

  it("documents the 404 of every route taking a workspace_id query parameter (another workspace's is a 404)", async () => {
    const doc = await json(await call("/openapi.json"));
    const taking = Object.entries<any>(doc.paths).flatMap(([p, item]) =>
      Object.entries<any>(item)
        .filter(([, op]) => (op.parameters ?? []).some((q: { name: string; in: string }) => q.in === "query" && q.name === "workspace_id"))
        .map(([m, op]) => ({ route: `${m.toUpperCase()} ${p}`, statuses: Object.keys(op.responses) })),
    );
    expect(taking.map((t) => t.route)).toEqual(expect.arrayContaining(["GET /api/public/v2/datasets", "GET /api/public/v2/evaluations"]));
    expect(taking.filter((t) => !t.statuses.includes("404")).map((t) => t.route)).toEqual([]);
  });

  it("documents the filter group as a recursive schema", async () => {
    const doc = await json(await call("/openapi.json"));
    const group = doc.components.schemas.StructuredFilterGroup;
    expect(group.required).toEqual(["filters"]);
    expect(group.properties.filters.items.oneOf).toEqual([{ $ref: "#/components/schemas/StructuredFilter" }, { $ref: "#/components/schemas/StructuredFilterGroup" }]);
    expect(doc.components.schemas.StructuredFilter.properties.operator.enum).toContain("key_contains");
    const search = doc.paths["/api/public/v2/requests/search"].post;
    expect(search.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/SearchRequestLogsRequest");
    const suggestions = doc.paths["/api/public/v2/requests/suggestions"].get;
    expect(Object.keys(suggestions.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "429"]));
    expect(suggestions.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["field", "prefix", "metadata_key", "prompt_id", "filter_group", "limit", "include_counts"]),
    );
  });

});
