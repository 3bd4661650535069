// A refusal answered before the client has sent its whole body (a 413 on a chunked upload, a
// refused ZIP bomb) leaves the server ready for the next request from any client.
import { Agent, request as httpRequest } from "node:http";
import { strToU8, zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module of the repo's scripts
import { startLocalApi } from "../../scripts/lib/local-api.mjs";

// A server of its own: a refused ZIP bomb and a flood of early answers are hard on it, and the other
// files on the shared server (test/node/global-setup.ts) must not feel them.
let api: { url: string; key: string; stop: () => Promise<void> };
beforeAll(async () => {
  api = await startLocalApi({ workspace: "early-refusal" });
});
afterAll(async () => {
  await api?.stop();
});

/** POSTs `total` bytes in 64 KiB chunks with no Content-Length (chunked), on a fresh connection. */
function chunkedPost(path: string, total: number, contentType = "application/json"): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${api.url}${path}`, { method: "POST", agent: false, headers: { "X-API-KEY": api.key, "Content-Type": contentType, "Transfer-Encoding": "chunked" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    const chunk = Buffer.alloc(65536, 0x20);
    let sent = 0;
    const write = () => {
      while (sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return req.once("drain", write);
      }
      req.end();
    };
    req.write('{"provider":"openai","model":"m","padding":"');
    write();
  });
}

const log = { provider: "openai", model: "gpt-4o", input: { type: "chat", messages: [] }, output: { type: "chat", messages: [] }, request_start_time: Date.now() / 1000 - 1, request_end_time: Date.now() / 1000 };

describe("early refusals", () => {
  it("after a 413 on a chunked body, the next requests from another client succeed", async () => {
    expect(await chunkedPost("/log-request", 3 * 1048576)).toBe(413);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${api.url}/log-request`, { method: "POST", headers: { "X-API-KEY": api.key, "Content-Type": "application/json" }, body: JSON.stringify(log), signal: AbortSignal.timeout(20_000) });
      expect(res.status).toBe(201);
    }
  });

  it("after a refused ZIP bomb, /health answers at once", async () => {
    const bomb = zipSync({ "SKILL.md": new Uint8Array(60 * 1048576) }, { level: 9 });
    const form = new FormData();
    form.set("metadata", JSON.stringify({ name: `bomb-${Date.now()}` }));
    form.set("archive", new Blob([bomb]), "bomb.zip");
    const res = await fetch(`${api.url}/api/public/v2/skill-collections`, { method: "POST", headers: { "X-API-KEY": api.key }, body: form, signal: AbortSignal.timeout(30_000) });
    expect([400, 413]).toContain(res.status);
    const health = await fetch(`${api.url}/health`, { signal: AbortSignal.timeout(10_000) });
    expect(health.status).toBe(200);
    const small = zipSync({ "SKILL.md": strToU8("# ok") });
    const ok = new FormData();
    ok.set("metadata", JSON.stringify({ name: `fine-${Date.now()}` }));
    ok.set("archive", new Blob([small]), "ok.zip");
    expect((await fetch(`${api.url}/api/public/v2/skill-collections`, { method: "POST", headers: { "X-API-KEY": api.key }, body: ok, signal: AbortSignal.timeout(20_000) })).status).toBe(201);
  });
  it("answers given before the body is read (a bad path parameter, no key) do not drop other requests in flight", async () => {
    const body = JSON.stringify({ pad: "x".repeat(100_000) });
    const codes: Record<number, number> = {};
    for (let round = 0; round < 30; round++) {
      await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const early = i % 2 === 0;
          const res = await fetch(`${api.url}${early ? "/api/public/v2/tables/not-a-uuid/sheets/nor-this" : "/api/public/v2/tool-registry"}`, {
            method: early ? "PATCH" : "POST",
            headers: { "Content-Type": "application/json", ...(i === 4 ? {} : { "X-API-KEY": api.key }) },
            body,
            signal: AbortSignal.timeout(30_000),
          });
          await res.text();
          codes[res.status] = (codes[res.status] ?? 0) + 1;
        }),
      );
    }
    // Every request answered by the Worker itself: 400s for the bad bodies and paths, 401 without a key.
    expect(codes).toEqual({ 400: 210, 401: 30 });
  }, 120_000);

  it("after POST /mcp refuses a body that is not JSON (415), the next request on the same connection is answered", async () => {
    // Before the MCP endpoint drained what its transport left unread, the next request on that
    // connection got wrangler dev's 503 ("Your worker restarted mid-request") nearly every time at this
    // size, and a connection straight to the runtime was reset.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (contentType: string, body: string) =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = httpRequest(`${api.url}/mcp`, { method: "POST", agent, headers: { "Content-Type": contentType, "Content-Length": Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on("error", reject);
        req.end(body);
      });
    try {
      for (let i = 0; i < 5; i++) {
        expect((await post("text/plain", "p".repeat(100_000))).status).toBe(415);
        expect(await post("application/json", "[]")).toEqual({ status: 202, reused: true });
      }
    } finally {
      agent.destroy();
    }
  }, 60_000);
});
