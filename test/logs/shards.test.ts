import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { idRangeOf } from "../../src/logs/id-ranges";
import { CONTROL_SHARD, configuredShards, measureLogDatabases, openPeriod, placeWorkspace } from "../../src/logs/shards";
import { buildDeps } from "../../src/deps";
import type { Env } from "../../src/env";
import { runScheduled } from "../../src/queue/scheduled";
import { BOOKMARK_HEADER } from "../../src/db/sessions";
import { call, createWorkspace, json, logsDb, placeOn, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { fuller, shardOf, sizeOf } from "../helpers/log-databases";

const control = () => getDb(env.DB);

describe("the shard map", () => {
  it("places a new workspace on the least-full open log database, once", async () => {
    await fuller(env.LOGS_0, env.LOGS_1);
    const ws = await createWorkspace();
    expect(await shardOf(ws)).toBeNull();
    expect(await placeWorkspace(control(), env, ws.workspaceId)).toBe("LOGS_1");
    // Placed for good: a fuller LOGS_1 does not move it.
    await fuller(env.LOGS_1, env.LOGS_0);
    expect(await placeWorkspace(control(), env, ws.workspaceId)).toBe("LOGS_1");
    expect(await shardOf(ws)).toBe("LOGS_1");
    const next = await createWorkspace();
    expect(await placeWorkspace(control(), env, next.workspaceId)).toBe("LOGS_0");
  });

  it("places a workspace on its first log on the API, and the log goes there", async () => {
    const ws = await createWorkspace();
    const res = await call("/log-request", { method: "POST", key: ws.key, json: logBody() });
    expect(res.status).toBe(201);
    const { id } = await json(res);
    const shard = await shardOf(ws);
    expect(["LOGS_0", "LOGS_1"]).toContain(shard);
    const other = shard === "LOGS_0" ? env.LOGS_1 : env.LOGS_0;
    const here = await (await logsDb(ws)).prepare("SELECT count(*) AS n FROM request_logs WHERE id = ? AND workspace_id = ?").bind(id, ws.workspaceId).first<{ n: number }>();
    const there = await other.prepare("SELECT count(*) AS n FROM request_logs WHERE workspace_id = ?").bind(ws.workspaceId).first<{ n: number }>();
    const inControl = await env.DB.prepare("SELECT count(*) AS n FROM request_logs WHERE workspace_id = ?").bind(ws.workspaceId).first<{ n: number }>();
    expect([here!.n, there!.n, inControl!.n]).toEqual([1, 0, 0]);
  });

  it("skips a closed shard, and one past LOG_SHARD_MAX_BYTES (closing it)", async () => {
    await env.DB.prepare("INSERT INTO log_shards (binding, open) VALUES ('LOGS_0', 0) ON CONFLICT (binding) DO UPDATE SET open = 0").run();
    await fuller(env.LOGS_1, env.LOGS_0);
    const a = await createWorkspace();
    expect(await placeWorkspace(control(), env, a.workspaceId)).toBe("LOGS_1");

    await env.DB.prepare("UPDATE log_shards SET open = 1").run();
    // LOGS_1 is full at its current size: it is closed, and stays closed once LOGS_0 is the fuller.
    const size1 = await sizeOf(env.LOGS_1);
    expect(size1).toBeGreaterThan(await sizeOf(env.LOGS_0));
    const b = await createWorkspace();
    expect(await placeWorkspace(control(), { ...env, LOG_SHARD_MAX_BYTES: String(size1) }, b.workspaceId)).toBe("LOGS_0");
    const states = () => env.DB.prepare("SELECT binding, open FROM log_shards WHERE binding != 'DB' ORDER BY binding").all<{ binding: string; open: number }>().then((r) => r.results);
    expect(await states()).toEqual([
      { binding: "LOGS_0", open: 1 },
      { binding: "LOGS_1", open: 0 },
    ]);
    await fuller(env.LOGS_0, env.LOGS_1);
    const c = await createWorkspace();
    expect(await placeWorkspace(control(), env, c.workspaceId)).toBe("LOGS_0");
    // One byte short of the limit is not full.
    await env.DB.prepare("UPDATE log_shards SET open = 1").run();
    const d = await createWorkspace();
    expect(await placeWorkspace(control(), { ...env, LOG_SHARD_MAX_BYTES: String((await sizeOf(env.LOGS_1)) + 1) }, d.workspaceId)).toBe("LOGS_1");
    expect(await states()).toEqual([
      { binding: "LOGS_0", open: 0 },
      { binding: "LOGS_1", open: 1 },
    ]);
  });

  it("with every shard full, still places (on the least full): logs are never refused for room", async () => {
    await fuller(env.LOGS_0, env.LOGS_1);
    const ws = await createWorkspace();
    expect(await placeWorkspace(control(), { ...env, LOG_SHARD_MAX_BYTES: "1" }, ws.workspaceId)).toBe("LOGS_1");
    const open = await env.DB.prepare("SELECT count(*) AS n FROM log_shards WHERE open = 1 AND binding != 'DB'").first<{ n: number }>();
    expect(open!.n).toBe(0);
  });

  it("agrees with itself when two first requests of a workspace race", async () => {
    const ws = await createWorkspace();
    const placed = await Promise.all([1, 2, 3, 4].map(() => placeWorkspace(control(), env, ws.workspaceId)));
    expect(new Set(placed).size).toBe(1);
    expect(await shardOf(ws)).toBe(placed[0]);
  });

  it("keeps logs in the control database without LOG_SHARDS, and for workspaces that logged there before", async () => {
    const ws = await createWorkspace();
    expect(await placeWorkspace(control(), { ...env, LOG_SHARDS: "" }, ws.workspaceId)).toBe(CONTROL_SHARD);

    const legacy = await createWorkspace();
    await env.DB.prepare("UPDATE workspaces SET log_shard = 'DB' WHERE id = ?").bind(legacy.workspaceId).run();
    const res = await call("/log-request", { method: "POST", key: legacy.key, json: logBody({ tags: ["legacy"] }) });
    expect(res.status).toBe(201);
    const { id } = await json(res);
    const row = await env.DB.prepare("SELECT tags FROM request_logs WHERE id = ? AND workspace_id = ?").bind(id, legacy.workspaceId).first<{ tags: string }>();
    expect(JSON.parse(row!.tags)).toEqual(["legacy"]);
    const got = await call(`/api/public/v2/requests/${id}`, { key: legacy.key });
    expect(got.status).toBe(200);
    expect((await json(got)).tags).toEqual(["legacy"]);
  });

  it("reads LOG_SHARDS strictly: binding names only, never the control database", () => {
    expect(configuredShards({ DB: env.DB, LOG_SHARDS: " LOGS_0 , LOGS_1,LOGS_0 " })).toEqual(["LOGS_0", "LOGS_1"]);
    expect(configuredShards({ DB: env.DB })).toEqual([]);
    expect(() => configuredShards({ DB: env.DB, LOG_SHARDS: "DB" })).toThrow(/not a log database/);
    expect(() => configuredShards({ DB: env.DB, LOG_SHARDS: "LOGS-0" })).toThrow(/not a log database/);
  });
});

describe("full databases", () => {
  it("the cron measures every database holding logs and marks the full ones; the next measurement clears a flag that no longer holds", async () => {
    await runScheduled(buildDeps({ ...env, LOG_SHARD_MAX_BYTES: "1" } as Env));
    const flags = () => env.DB.prepare("SELECT binding, full FROM log_shards ORDER BY binding").all<{ binding: string; full: number }>().then((r) => r.results);
    expect(await flags()).toEqual([
      { binding: "DB", full: 1 },
      { binding: "LOGS_0", full: 1 },
      { binding: "LOGS_1", full: 1 },
    ]);
    await measureLogDatabases(control(), env);
    expect((await flags()).map((f) => f.full)).toEqual([0, 0, 0]);
  });

  it("a workspace whose database is full and which has nowhere else to go stays, and keeps logging", async () => {
    const ws = await createWorkspace();
    await placeOn(ws, "LOGS_0");
    const tiny = { ...env, LOG_SHARD_MAX_BYTES: "1" };
    await measureLogDatabases(control(), tiny);
    const stay = await openPeriod(control(), tiny, ws.workspaceId, { shard: "LOGS_0", periods: ["LOGS_0"], full: true });
    expect(stay).toEqual({ shard: "LOGS_0", periods: ["LOGS_0"], full: true });
    // Its logs still go there (this isolate looks for room again after a minute; LOGS_1, full, was closed).
    const res = await call("/log-request", { method: "POST", key: ws.key, json: logBody() });
    expect(res.status).toBe(201);
    const { id } = await json(res);
    expect(await shardOf(ws)).toBe("LOGS_0");
    expect(await env.LOGS_0.prepare("SELECT count(*) AS n FROM request_logs WHERE id = ? AND workspace_id = ?").bind(id, ws.workspaceId).first("n")).toBe(1);
    await env.DB.prepare("UPDATE log_shards SET open = 1").run();
    await measureLogDatabases(control(), env);
  });
});

describe("workspaces on different shards", () => {
  it("each sees only its own logs, and no log id repeats across shards", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    await env.DB.prepare("UPDATE workspaces SET log_shard = CASE id WHEN ? THEN 'LOGS_0' ELSE 'LOGS_1' END WHERE id IN (?, ?)")
      .bind(a.workspaceId, a.workspaceId, b.workspaceId)
      .run();
    const logA = (await json(await call("/log-request", { method: "POST", key: a.key, json: logBody({ tags: ["a"] }) }))).id;
    const logB = (await json(await call("/log-request", { method: "POST", key: b.key, json: logBody({ tags: ["b"] }) }))).id;
    // Each shard numbers in its own id range (src/logs/id-ranges.ts; test/logs/ids.test.ts has the rest).
    expect(idRangeOf(logA)).not.toBe(idRangeOf(logB));
    expect((await json(await call(`/api/public/v2/requests/${logA}`, { key: a.key }))).tags).toEqual(["a"]);
    expect((await json(await call(`/api/public/v2/requests/${logB}`, { key: b.key }))).tags).toEqual(["b"]);
    expect((await call(`/api/public/v2/requests/${logB}`, { key: a.key })).status).toBe(404);
    const search = async (k: TestKey) => (await json(await call("/api/public/v2/requests/search", { method: "POST", key: k.key, json: {} }))).items.map((i: { tags_array: string[] }) => i.tags_array);
    expect(await search(a)).toEqual([["a"]]);
    expect(await search(b)).toEqual([["b"]]);
  });
});

describe("D1 sessions on the request path", () => {
  it("hands out a bookmark per database used, and takes it back", async () => {
    const ws = await createWorkspace();
    const logged = await call("/log-request", { method: "POST", key: ws.key, json: logBody() });
    const bookmark = logged.headers.get(BOOKMARK_HEADER);
    expect(bookmark).toMatch(new RegExp(`(^|,)DB=[0-9a-f-]+`));
    expect(bookmark).toMatch(new RegExp(`(^|,)${await shardOf(ws)}=[0-9a-f-]+`));
    const { id } = await json(logged);
    const read = await call(`/api/public/v2/requests/${id}`, { key: ws.key, headers: { [BOOKMARK_HEADER]: bookmark! } });
    expect(read.status).toBe(200);
    expect(read.headers.get(BOOKMARK_HEADER)).toBeTruthy();
  });

  it("refuses a malformed bookmark header with a 400 and does nothing", async () => {
    const ws = await createWorkspace();
    const res = await call("/log-request", { method: "POST", key: ws.key, json: logBody(), headers: { [BOOKMARK_HEADER]: "DB=not a bookmark" } });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^X-PromptEdge-Bookmark: .*database=bookmark/);
    expect(await shardOf(ws)).toBeNull();
  });
});
