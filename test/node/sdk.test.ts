// The official promptlayer SDK and the keys CLI against a real `wrangler dev` of this Worker.
import { execFileSync } from "node:child_process";
import { request as httpRequest } from "node:http";
import { PromptLayer } from "promptlayer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module of the repo's scripts
import { startLocalApi } from "../../scripts/lib/local-api.mjs";
// @ts-expect-error: a plain ES module of the repo's scripts
import { SCOPES as CLI_SCOPES } from "../../scripts/lib/keys.mjs";
import { SCOPES } from "../../src/lib/scopes";

let api: { url: string; key: string; persistTo: string; stop: () => Promise<void>; logs: () => string };

beforeAll(async () => {
  // A verified key is trusted for 0.2 s instead of 5 s (as in the workers tests), so the revoked key
  // below is refused however quickly the CLI revokes it.
  api = await startLocalApi({ workspace: "sdk-test", vars: { AUTH_KEY_CACHE_MS: "200" } });
});
afterAll(async () => {
  if (process.env.SHOW_API_LOGS) console.log(api?.logs());
  await api?.stop();
});

const request = {
  provider: "openai",
  model: "gpt-4o",
  input: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "Hello!" }] }] },
  output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: "Hi there!" }] }] },
  request_start_time: Date.now() / 1000 - 2,
  request_end_time: Date.now() / 1000,
  tags: ["sdk"],
  metadata: { from: "promptlayer-js" },
  score: 90,
  score_name: "quality",
};

describe("the official promptlayer SDK", () => {
  it("logs a request with logRequest and reads the 201 answer", async () => {
    const pl = new PromptLayer({ apiKey: api.key, baseURL: api.url });
    const res = (await pl.logRequest(request as never)) as { id: number; prompt_version: unknown; status: string };
    expect(res).toMatchObject({ id: expect.any(Number), prompt_version: null, status: "SUCCESS" });
    const stored = await fetch(`${api.url}/api/public/v2/requests/${res.id}`, { headers: { "X-API-KEY": api.key } });
    expect(stored.status).toBe(200);
    expect(await stored.json()).toMatchObject({ request_id: res.id, tags: ["sdk"], score: 90, score_name: "quality", metadata: { from: "promptlayer-js" } });
  });

  it("surfaces our validation message as the SDK's error", async () => {
    const pl = new PromptLayer({ apiKey: api.key, baseURL: api.url });
    await expect(pl.logRequest({ ...request, score: 101 } as never)).rejects.toThrow(/score: must be from 0 to 100/);
    const quiet = new PromptLayer({ apiKey: api.key, baseURL: api.url, throwOnError: false });
    expect(await quiet.logRequest({ ...request, input: { type: "chat", messages: [{ role: "user", content: "plain" }] } } as never)).toBeNull();
  });

  it("gets 401 with a wrong key", async () => {
    const pl = new PromptLayer({ apiKey: "pe_wrong", baseURL: api.url });
    await expect(pl.logRequest(request as never)).rejects.toThrow(/X-API-KEY/);
  });
});

/**
 * One request on a fresh connection. A CLI run can take long enough for the server to close an idle
 * keep-alive socket that fetch would otherwise try to reuse.
 */
function post(path: string, key: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${api.url}${path}`, { method: "POST", agent: false, headers: { "X-API-KEY": key, "Content-Type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** A GET on a fresh connection (as post()), its body parsed as JSON. */
function getJson(path: string, key: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${api.url}${path}`, { agent: false, headers: { "X-API-KEY": key } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve(JSON.parse(text)));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the keys CLI", () => {
  const keys = (...args: string[]) =>
    execFileSync(process.execPath, ["scripts/keys.mjs", ...args, "--persist-to", api.persistTo], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

  it("creates a key (alone on the last line) that works at once, lists it, and revokes it", async () => {
    const out = keys("create", "--workspace", "cli-ws", "--email", "ops@example.com");
    const key = out.trim().split("\n").pop()!;
    expect(key).toMatch(/^pe_[0-9a-f]{48}$/);
    expect(await post("/log-request", key, request)).toBe(201);

    const listed = keys("list", "--workspace", "cli-ws");
    expect(listed).toContain(`${key.slice(0, 11)}…  cli-ws  ops@example.com`);
    // An admin key (the CLI's default), whose making is in the audit log, by the CLI (no key acted).
    const audit = await getJson("/api/public/v2/audit-log?action=api_key.created", key);
    const items = (audit as { items: { details: Record<string, unknown>; api_key_id: number | null }[] }).items;
    expect(items.find((i) => i.details.prefix === key.slice(0, 11))).toMatchObject({ details: { scopes: ["admin"], by: "keys CLI" }, api_key_id: null });
    expect(listed).not.toContain(key);

    keys("revoke", key.slice(0, 11));
    expect(keys("list", "--workspace", "cli-ws")).toMatch(/revoked/);
    expect(await post("/log-request", key, request)).toBe(401);
  });

  it("makes a key with scopes and a name: within them it works, beyond them it gets 403", async () => {
    const out = keys("create", "--workspace", "cli-ws", "--email", "ops@example.com", "--scopes", "read,logs:write", "--name", "ingest app");
    const key = out.trim().split("\n").pop()!;
    expect(await post("/log-request", key, request)).toBe(201);
    expect(await post("/rest/prompt-templates", key, {})).toBe(403);
    expect(keys("list", "--workspace", "cli-ws")).toContain(`${key.slice(0, 11)}…  cli-ws  ops@example.com  "ingest app"  read,logs:write`);
  });

  it("knows the scopes the Worker knows", () => {
    expect(CLI_SCOPES).toEqual([...SCOPES]);
  });

  it("refuses bad arguments with a message and a non-zero exit", () => {
    expect(() => keys("create", "--workspace", "x", "--scopes", "root")).toThrow(/unknown scope root/);
    expect(() => keys("create")).toThrow(/create needs --workspace/);
    expect(() => keys("create", "--workspace", "x", "--email", "not-an-email")).toThrow(/--email must be an e-mail address/);
    expect(() => keys("revoke", "pe_00000000")).toThrow(/no active key matches/);
  });
});
