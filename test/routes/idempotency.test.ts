// Idempotency-Key on POST /log-request and POST /track-request: a retry gets the first answer and makes
// no second log (racing retries included); another body under the key is a 409; keys live 24 hours,
// are the workspace's own, and a bad key or a bad body records nothing.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { buildDeps } from "../../src/deps";
import type { Env } from "../../src/env";
import { BODY_RETRY_WINDOW_MS, IDEMPOTENCY_WINDOW_MS } from "../../src/logs";
import { runScheduled } from "../../src/queue/scheduled";
import { call, createWorkspace, json, logsDb, shareLogsDb, type TestKey } from "../helpers/api";
import { logBody as callBody } from "../helpers/fixtures";

/** One fixed body (the fixture tells calls apart; this file sends the same call again on purpose). */
const logBody = (overrides: Record<string, unknown> = {}) => callBody({ test_call: 0, ...overrides });

const logRequest = (ws: TestKey, body: unknown, key?: string) =>
  call("/log-request", { method: "POST", key: ws.key, json: body, headers: key === undefined ? {} : { "Idempotency-Key": key } });

const trackBody = (content = "Hello there") => ({
  function_name: "openai.chat.completions.create",
  provider_type: "openai",
  args: [],
  kwargs: { model: "gpt-4o", messages: [{ role: "user", content }] },
  request_response: {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-4o",
    choices: [{ index: 0, message: { role: "assistant", content: "Hi." }, finish_reason: "stop" }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  },
  request_start_time: "2024-05-01T10:00:00.000Z",
  request_end_time: "2024-05-01T10:00:01.000Z",
});

const trackRequest = (ws: TestKey, body: Record<string, unknown>, key?: string) =>
  call("/track-request", { method: "POST", json: { ...body, api_key: ws.key }, headers: key === undefined ? {} : { "Idempotency-Key": key } });

async function count(ws: TestKey, table: "request_logs" | "idempotency_keys"): Promise<number> {
  const d1 = await logsDb(ws);
  return (await d1.prepare(`SELECT count(*) AS n FROM ${table} WHERE workspace_id = ?`).bind(ws.workspaceId).first<{ n: number }>())!.n;
}

/** SQL: a row's recorded time moved back by ?1 ms, and its period with it (the table is keyed by period). */
const AGED = "created_at = created_at - ?1, bucket = CAST(created_at - ?1 AS INTEGER) / window_ms";

/** Moves the key's recorded time back by `ms`, as if it had been used that long ago. */
async function age(ws: TestKey, key: string, ms: number) {
  const d1 = await logsDb(ws);
  await d1.prepare(`UPDATE idempotency_keys SET ${AGED} WHERE workspace_id = ?2 AND key = ?3`).bind(ms, ws.workspaceId, key).run();
}

const newKey = () => crypto.randomUUID();

describe("Idempotency-Key on POST /log-request", () => {
  it("answers a retry with the first answer (same status and body, Idempotent-Replayed) and stores one log", async () => {
    const ws = await createWorkspace();
    const key = newKey();
    const first = await logRequest(ws, logBody({ tags: ["a"] }), key);
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const firstBody = await json(first);
    const again = await logRequest(ws, logBody({ tags: ["a"] }), key);
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.headers.get("Content-Type")).toMatch(/application\/json/);
    expect(await json(again)).toEqual(firstBody);
    expect(await count(ws, "request_logs")).toBe(1);
    expect(await count(ws, "idempotency_keys")).toBe(1);
  });

  it("takes the same body with its keys in another order and other spacing as the same request", async () => {
    const ws = await createWorkspace();
    const key = newKey();
    const body = logBody({ metadata: { a: "1", b: "2" } });
    const first = await json(await logRequest(ws, body, key));
    const reordered = Object.fromEntries(Object.entries({ ...body, metadata: { b: "2", a: "1" } }).reverse());
    const res = await call("/log-request", { method: "POST", key: ws.key, body: JSON.stringify(reordered, null, 2), headers: { "Content-Type": "application/json", "Idempotency-Key": key } });
    expect(res.status).toBe(201);
    expect((await json(res)).id).toBe(first.id);
    expect(await count(ws, "request_logs")).toBe(1);
  });

  it("answers the same key with another body 409 in the error shape, storing nothing", async () => {
    const ws = await createWorkspace();
    const key = newKey();
    expect((await logRequest(ws, logBody({ tags: ["first"] }), key)).status).toBe(201);
    const res = await logRequest(ws, logBody({ tags: ["second"] }), key);
    const b = await json(res);
    expect(res.status).toBe(409);
    expect(b).toMatchObject({ success: false, error: "conflict" });
    expect(b.message).toMatch(/Idempotency-Key/);
    expect(await count(ws, "request_logs")).toBe(1);
  });

  it("records only its key's row when a key is sent (no body row): the key's rule decides", async () => {
    const ws = await createWorkspace();
    await logRequest(ws, logBody(), newKey());
    await logRequest(ws, logBody(), newKey());
    expect(await count(ws, "request_logs")).toBe(2);
    expect(await count(ws, "idempotency_keys")).toBe(2);
  });

  it("makes exactly one log when retries with one key race, and answers each with that log", { timeout: 60_000 }, async () => {
    const ws = await createWorkspace();
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 6 }, () => logRequest(ws, logBody({ tags: ["race"] }), key)));
    expect(answers.map((r) => r.status)).toEqual(Array(6).fill(201));
    const ids = new Set((await Promise.all(answers.map((r) => json(r)))).map((b) => b.id));
    expect(ids.size).toBe(1);
    expect(await count(ws, "request_logs")).toBe(1);
    expect(await count(ws, "idempotency_keys")).toBe(1);
  });

  it("makes one log when requests with one key and two bodies race: the other body gets 409", { timeout: 60_000 }, async () => {
    const ws = await createWorkspace();
    const key = newKey();
    const answers = await Promise.all([1, 2, 1, 2].map((n) => logRequest(ws, logBody({ tags: [`body-${n}`] }), key)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 409, 409]);
    expect(await count(ws, "request_logs")).toBe(1);
  });

  it("replays a key used just under 24 hours ago, and logs anew with one used 24 hours ago or more", async () => {
    const ws = await createWorkspace();
    const key = newKey();
    const first = await json(await logRequest(ws, logBody(), key));
    await age(ws, key, IDEMPOTENCY_WINDOW_MS - 60_000);
    const inside = await logRequest(ws, logBody(), key);
    expect(inside.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await json(inside)).id).toBe(first.id);
    await age(ws, key, 60_000);
    const outside = await logRequest(ws, logBody(), key);
    expect(outside.status).toBe(201);
    expect(outside.headers.get("Idempotent-Replayed")).toBeNull();
    const second = await json(outside);
    expect(second.id).not.toBe(first.id);
    expect(await count(ws, "request_logs")).toBe(2);
    // The key now stands for the new log; a different body is again a conflict.
    expect((await json(await logRequest(ws, logBody(), key))).id).toBe(second.id);
    expect((await logRequest(ws, logBody({ tags: ["x"] }), key)).status).toBe(409);
    expect(await count(ws, "idempotency_keys")).toBe(1);
  });

  it.each([
    ["empty", ""],
    ["with a space", "a b"],
    ["256 characters", "k".repeat(256)],
    ["with a tab", "a\tb"],
  ])("refuses a key %s with 400, storing nothing", async (_, key) => {
    const ws = await createWorkspace();
    const res = await logRequest(ws, logBody(), key);
    const b = await json(res);
    expect(res.status, JSON.stringify(b)).toBe(400);
    expect(b).toMatchObject({ success: false, error: "validation_error" });
    expect(b.message).toMatch(/idempotency-key/i);
    expect(await count(ws, "request_logs")).toBe(0);
    expect(await count(ws, "idempotency_keys")).toBe(0);
  });

  it("takes a key of 255 printable characters", async () => {
    const ws = await createWorkspace();
    const key = "~".repeat(255);
    expect((await logRequest(ws, logBody(), key)).status).toBe(201);
    expect((await logRequest(ws, logBody(), key)).headers.get("Idempotent-Replayed")).toBe("true");
    expect(await count(ws, "request_logs")).toBe(1);
  });

  it("records nothing for a bad body: the key stays free for the corrected request", async () => {
    const ws = await createWorkspace();
    const key = newKey();
    const bad = await logRequest(ws, logBody({ provider: "" }), key);
    expect(bad.status).toBe(400);
    expect(await count(ws, "idempotency_keys")).toBe(0);
    expect(await count(ws, "request_logs")).toBe(0);
    const good = await logRequest(ws, logBody(), key);
    expect(good.status).toBe(201);
    expect(good.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("never replays another workspace's key, even on the same log database", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    await shareLogsDb(other, ws);
    const key = newKey();
    const mine = await json(await logRequest(ws, logBody(), key));
    const theirs = await logRequest(other, logBody(), key);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await json(theirs)).id).not.toBe(mine.id);
    // Nor does another workspace's different body conflict with it.
    expect((await logRequest(other, logBody({ tags: ["other"] }), newKey())).status).toBe(201);
    expect(await count(ws, "request_logs")).toBe(1);
    expect(await count(other, "request_logs")).toBe(2);
  });
});

describe("retries without a key: the same bytes within 10 minutes", () => {
  it("log once and answer the first answer again; other calls log as always", async () => {
    const ws = await createWorkspace();
    const text = JSON.stringify(logBody({ tags: ["retry"] }));
    const send = () => call("/log-request", { method: "POST", key: ws.key, body: text, headers: { "Content-Type": "application/json" } });
    const first = await send();
    const firstBody = await first.text();
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await again.text()).toBe(firstBody);
    expect(await count(ws, "request_logs")).toBe(1);
    // Another call (another body) logs, as always.
    expect((await logRequest(ws, logBody({ tags: ["another"] }))).headers.get("Idempotent-Replayed")).toBeNull();
    expect(await count(ws, "request_logs")).toBe(2);
  });

  it("byte-identical only: the same JSON with other spacing or key order is another call", async () => {
    const ws = await createWorkspace();
    const body = logBody({ tags: ["spacing"] });
    const post = (text: string) => call("/log-request", { method: "POST", key: ws.key, body: text, headers: { "Content-Type": "application/json" } });
    await post(JSON.stringify(body));
    await post(JSON.stringify(body, null, 2));
    await post(JSON.stringify(Object.fromEntries(Object.entries(body).reverse())));
    expect(await count(ws, "request_logs")).toBe(3);
  });

  it("are the workspace's own, bound to the route, and count for 10 minutes", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    await shareLogsDb(other, ws);
    const body = logBody({ tags: ["window"] });
    const a = await json(await logRequest(ws, body));
    const theirs = await logRequest(other, body);
    expect(theirs.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await json(theirs)).id).not.toBe(a.id);
    // Just under 10 minutes old: still a retry.
    const d1 = await logsDb(ws);
    const shift = (ms: number) => d1.prepare(`UPDATE idempotency_keys SET ${AGED} WHERE workspace_id = ?2`).bind(ms, ws.workspaceId).run();
    await shift(BODY_RETRY_WINDOW_MS - 60_000);
    expect((await logRequest(ws, body)).headers.get("Idempotent-Replayed")).toBe("true");
    // 10 minutes or more: a new log.
    await shift(60_000);
    const later = await logRequest(ws, body);
    expect(later.status).toBe(201);
    expect(later.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await json(later)).id).not.toBe(a.id);
    expect(await count(ws, "request_logs")).toBe(2);
  });

  it("a retry whose first call's row is in the previous period (the table's key) is still one log", async () => {
    const ws = await createWorkspace();
    const body = logBody({ tags: ["period edge"] });
    const first = await json(await logRequest(ws, body));
    // Back into the previous ten-minute period, yet within ten minutes: the retry's write goes into
    // that period too, where the first row makes it fail, and it answers the first answer.
    const d1 = await logsDb(ws);
    const into = Date.now() % BODY_RETRY_WINDOW_MS;
    await d1.prepare(`UPDATE idempotency_keys SET ${AGED} WHERE workspace_id = ?2`).bind(Math.round(into + (BODY_RETRY_WINDOW_MS - into) / 2), ws.workspaceId).run();
    expect(await d1.prepare("SELECT count(*) AS n FROM idempotency_keys WHERE workspace_id = ? AND bucket < ?").bind(ws.workspaceId, Math.floor(Date.now() / BODY_RETRY_WINDOW_MS)).first("n")).toBe(1);
    const again = await logRequest(ws, body);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await json(again)).toEqual(first);
    expect(await count(ws, "request_logs")).toBe(1);
  });

  it("on /track-request too (the key in the body included), apart from /log-request", async () => {
    const ws = await createWorkspace();
    const first = await json(await trackRequest(ws, trackBody("retried track")));
    const again = await trackRequest(ws, trackBody("retried track"));
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await json(again)).toEqual(first);
    expect(await count(ws, "request_logs")).toBe(1);
  });

  it("racing retries make one log", { timeout: 60_000 }, async () => {
    const ws = await createWorkspace();
    const body = logBody({ tags: ["race-no-key"] });
    const answers = await Promise.all(Array.from({ length: 5 }, () => logRequest(ws, body)));
    expect(answers.map((r) => r.status)).toEqual(Array(5).fill(201));
    expect(new Set((await Promise.all(answers.map((r) => json(r)))).map((b) => b.id)).size).toBe(1);
    expect(await count(ws, "request_logs")).toBe(1);
  });

  it("a refused call records nothing: its retry is answered anew", async () => {
    const ws = await createWorkspace();
    const bad = logBody({ provider: "" });
    expect((await logRequest(ws, bad)).status).toBe(400);
    expect((await logRequest(ws, bad)).status).toBe(400);
    expect(await count(ws, "idempotency_keys")).toBe(0);
  });
});

describe("Idempotency-Key on POST /track-request", () => {
  it("replays the first 200 {success, request_id, prompt_blueprint} and stores one log; another body is a 409", async () => {
    const ws = await createWorkspace();
    const key = newKey();
    const first = await trackRequest(ws, trackBody(), key);
    const firstBody = await json(first);
    expect(first.status, JSON.stringify(firstBody)).toBe(200);
    expect(firstBody).toMatchObject({ success: true, request_id: expect.any(Number), prompt_blueprint: { prompt_template: expect.any(Object) } });
    const again = await trackRequest(ws, trackBody(), key);
    expect(again.status).toBe(200);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await json(again)).toEqual(firstBody);
    expect((await trackRequest(ws, trackBody("Something else"), key)).status).toBe(409);
    expect(await count(ws, "request_logs")).toBe(1);
  });

  it("binds the key to the route: a log-request key sent to track-request is a 409", async () => {
    const ws = await createWorkspace();
    const key = newKey();
    expect((await logRequest(ws, logBody(), key)).status).toBe(201);
    expect((await trackRequest(ws, trackBody(), key)).status).toBe(409);
    expect(await count(ws, "request_logs")).toBe(1);
  });

  it("makes one log when retries race", { timeout: 60_000 }, async () => {
    const ws = await createWorkspace();
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 4 }, () => trackRequest(ws, trackBody(), key)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(new Set((await Promise.all(answers.map((r) => json(r)))).map((b) => b.request_id)).size).toBe(1);
    expect(await count(ws, "request_logs")).toBe(1);
  });

  it("records nothing when the call is refused (another workspace's group: 404), so the key stays free", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    await shareLogsDb(other, ws);
    const group = (await json(await call("/create-group", { method: "POST", key: other.key }))).id;
    const key = newKey();
    expect((await trackRequest(ws, { ...trackBody(), group_id: group }, key)).status).toBe(404);
    expect(await count(ws, "idempotency_keys")).toBe(0);
    expect((await trackRequest(ws, trackBody(), key)).status).toBe(200);
    expect(await count(ws, "request_logs")).toBe(1);
  });
});

describe("the cron's sweep of idempotency keys", () => {
  it("deletes keys 24 hours old or more and bodies' rows 10 minutes old or more, keeps younger ones and every log", async () => {
    const ws = await createWorkspace();
    const [old, young] = [newKey(), newKey()];
    await logRequest(ws, logBody(), old);
    await logRequest(ws, logBody(), young);
    await age(ws, old, IDEMPOTENCY_WINDOW_MS);
    await age(ws, young, IDEMPOTENCY_WINDOW_MS - 60_000);
    await logRequest(ws, logBody({ tags: ["old body"] }));
    await logRequest(ws, logBody({ tags: ["young body"] }));
    const d1 = await logsDb(ws);
    const bodyKeys = (await d1.prepare("SELECT key FROM idempotency_keys WHERE workspace_id = ? AND key LIKE 'body %' ORDER BY created_at, key").bind(ws.workspaceId).all<{ key: string }>()).results.map((r) => r.key);
    expect(bodyKeys).toHaveLength(2);
    const oldBody = bodyKeys;
    await d1.prepare(`UPDATE idempotency_keys SET ${AGED} WHERE key = ?2`).bind(BODY_RETRY_WINDOW_MS, oldBody[0]).run();
    await d1.prepare(`UPDATE idempotency_keys SET ${AGED} WHERE key = ?2`).bind(BODY_RETRY_WINDOW_MS - 60_000, oldBody[1]).run();
    await runScheduled(buildDeps(env as unknown as Env), Date.now());
    const left = await d1.prepare("SELECT key FROM idempotency_keys WHERE workspace_id = ? ORDER BY key").bind(ws.workspaceId).all<{ key: string }>();
    expect(left.results.map((r) => r.key).sort(), JSON.stringify({ young, oldBody })).toEqual([young, oldBody[1]].sort());
    expect(await count(ws, "request_logs")).toBe(4);
  });
});

describe("the API document", () => {
  it("lists the Idempotency-Key header and the 409 on both log routes", async () => {
    const doc = await json(await call("/openapi.json"));
    for (const path of ["/log-request", "/track-request"]) {
      const op = doc.paths[path].post;
      expect(op.parameters, path).toContainEqual(expect.objectContaining({ name: "idempotency-key", in: "header", required: false }));
      expect(Object.keys(op.responses), path).toContain("409");
      expect(op.description, path).toMatch(/Idempotency-Key/);
    }
  });
});
