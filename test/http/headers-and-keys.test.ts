// Small hardening of every answer: API answers carry nosniff and no-store (the /docs and /console
// files keep their assets' caching), and an unknown key is refused from a short negative cache.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "../helpers/api";
import { sha256Hex, toHex } from "../../src/lib/crypto";
import { UnknownKeyCache } from "../../src/services/workspace/auth";

describe("headers of API answers", () => {
  it("success, client errors and not-found answers say nosniff and no-store", async () => {
    const ws = await createWorkspace();
    const answers = [
      await call("/health"),
      await call("/api/public/v2/env-vars", { key: ws.key }),
      await call("/api/public/v2/env-vars"),
      await call("/api/public/v2/env-vars", { method: "POST", key: ws.key, json: { key: "1bad" } }),
      await call("/no-such-route", { key: ws.key }),
      await call("/openapi.json"),
    ];
    for (const res of answers) {
      expect(res.headers.get("x-content-type-options"), res.url).toBe("nosniff");
      expect(res.headers.get("cache-control"), res.url).toBe("no-store");
      await res.body?.cancel();
    }
  });

  it("the pages and files of /docs and /console keep their own caching", async () => {
    for (const path of ["/docs", "/docs/init.js", "/console"]) {
      const res = await call(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(res.headers.get("cache-control"), path).not.toBe("no-store");
      await res.body?.cancel();
    }
  });
});

describe("unknown keys", () => {
  it("are refused from a negative cache for AUTH_KEY_CACHE_MS, then looked up again", async () => {
    const ws = await createWorkspace();
    const key = `pe_${toHex(crypto.getRandomValues(new Uint8Array(24)))}`;
    expect((await call("/api/public/v2/env-vars", { key })).status).toBe(401);
    // The key becomes valid in D1: within the bound the isolate still refuses it without asking D1…
    await env.DB.prepare("INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix) VALUES (?, ?, ?, ?)").bind(ws.workspaceId, ws.userId, await sha256Hex(key), key.slice(0, 11)).run();
    const cached = await call("/api/public/v2/env-vars", { key });
    expect(cached.status).toBe(401);
    expect((await json(cached)).error).toBe("unauthorized");
    // …and once it has passed (the pool's AUTH_KEY_CACHE_MS is 200 ms), looks it up and takes it.
    await new Promise((r) => setTimeout(r, 300));
    expect((await call("/api/public/v2/env-vars", { key })).status).toBe(200);
  });

  it("the cache holds an entry for its time and no more than its bound of entries", () => {
    let now = 0;
    const cache = new UnknownKeyCache(3, () => now);
    cache.add("a", 100);
    expect(cache.has("a")).toBe(true);
    now = 99;
    expect(cache.has("a")).toBe(true);
    now = 100;
    expect(cache.has("a")).toBe(false);
    for (const k of ["b", "c", "d", "e"]) cache.add(k, 1000);
    expect(cache.size).toBe(3);
    expect(cache.has("b")).toBe(false);
    expect(cache.has("e")).toBe(true);
    cache.add("z", 0);
    expect(cache.has("z")).toBe(false);
  });
});
