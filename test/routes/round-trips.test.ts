// D1 round trips per authenticated read: with the key verified once (and cached in the isolate),
// reading a log, asking for suggestions and editing a cell cost at most their own work's round trip,
// and a template read the edge cache answers costs none (one when pinned to a version).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { cellId } from "../../src/sheets/cell-id";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { newSheet } from "../helpers/sheet-data";

/**
 * The real D1 bindings (the control database and the log databases), counting the calls that reach
 * any of them (each is one round trip): logs are read from the workspace's log database.
 */
function countingD1s(bindings: Record<string, D1Database>) {
  let calls = 0;
  const real = new WeakMap<object, D1PreparedStatement>();
  const wrap = (stmt: D1PreparedStatement): D1PreparedStatement => {
    const w = {
      bind: (...values: unknown[]) => wrap(stmt.bind(...values)),
      first: (col?: string) => (calls++, col === undefined ? stmt.first() : stmt.first(col)),
      all: () => (calls++, stmt.all()),
      run: () => (calls++, stmt.run()),
      raw: (opts?: { columnNames?: boolean }) => (calls++, stmt.raw(opts as { columnNames: true })),
    } as unknown as D1PreparedStatement;
    real.set(w, stmt);
    return w;
  };
  const counting = (db: D1Database): D1Database => {
    const counted = {
      prepare: (q: string) => wrap(db.prepare(q)),
      batch: (stmts: D1PreparedStatement[]) => (calls++, db.batch(stmts.map((s) => real.get(s) ?? s))),
      exec: (q: string) => (calls++, db.exec(q)),
      // The request path opens each database as a session: the same counted calls, and no bookmark.
      withSession: () => counted,
      getBookmark: () => null,
      dump: () => db.dump(),
    } as unknown as D1Database;
    return counted;
  };
  const dbs = Object.fromEntries(Object.entries(bindings).map(([name, db]) => [name, counting(db)]));
  return { dbs, calls: () => calls, reset: () => (calls = 0) };
}

let ws: TestKey;
let logId: number;
beforeAll(async () => {
  ws = await createWorkspace();
  logId = (await json(await call("/log-request", { method: "POST", key: ws.key, json: logBody() }))).id;
});

describe("one D1 round trip per authenticated read", () => {
  const app = createApp();
  const d1 = countingD1s({ DB: env.DB, LOGS_0: env.LOGS_0, LOGS_1: env.LOGS_1 });
  // The documented 5 s rather than the pool's 0.2 s, so a busy machine cannot expire the key mid-test.
  const testEnv = { ...env, ...d1.dbs, AUTH_KEY_CACHE_MS: "5000" };
  const send = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set("X-API-KEY", ws.key);
    if (init.body) headers.set("Content-Type", "application/json");
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request(`http://api.test${path}`, { ...init, headers }), testEnv, ctx);
    const body = await res.text();
    const calls = d1.calls();
    await waitOnExecutionContext(ctx);
    return { status: res.status, body, calls };
  };

  it("GET /requests/{id}: the key lookup the first time, then only the read", async () => {
    d1.reset();
    const first = await send(`/api/public/v2/requests/${logId}`);
    expect(first.status).toBe(200);
    d1.reset();
    const again = await send(`/api/public/v2/requests/${logId}`);
    expect(again.status).toBe(200);
    expect(again.calls).toBe(1);
  });

  it("suggestions: one round trip", async () => {
    await send("/api/public/v2/requests/suggestions?field=engine");
    d1.reset();
    const res = await send("/api/public/v2/requests/suggestions?field=tags");
    expect(res.status).toBe(200);
    expect(res.calls).toBe(1);
  });

  it("a template read answered by the edge cache: none by label or latest, one (its proof) pinned to a version", async () => {
    const name = `round-trips-${crypto.randomUUID().slice(0, 8)}`;
    const template = { type: "completion", content: [{ type: "text", text: "hi" }] };
    const published = await send("/rest/prompt-templates", { method: "POST", body: JSON.stringify({ prompt_template: { prompt_name: name }, prompt_version: { prompt_template: template }, release_labels: ["prod"] }) });
    expect(published.status).toBe(200);
    for (const [query, calls] of [["", 0], ["?label=prod", 0], ["?version=1", 1]] as const) {
      expect((await send(`/prompt-templates/${name}${query}`)).status).toBe(200);
      d1.reset();
      const res = await send(`/prompt-templates/${name}${query}`);
      expect(res.status).toBe(200);
      expect(res.calls, query).toBe(calls);
    }
  });

  it("a cell edit: no D1 round trip on the request path (the work is the sheet object's)", async () => {
    const s = await newSheet(ws);
    const id = cellId(s.columnA, 0);
    const path = `${s.base}/cells/${id}`;
    expect((await send(path, { method: "PATCH", body: JSON.stringify({ display_value: "a" }) })).status).toBe(200);
    d1.reset();
    const res = await send(path, { method: "PATCH", body: JSON.stringify({ display_value: "b" }) });
    expect(res.status, res.body).toBe(200);
    expect(res.calls).toBe(0);
  });
});
