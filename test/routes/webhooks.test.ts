// Webhooks: registration (secret once, limits, private URLs, isolation), delivery (signatures, the
// Python-style body, retries with every attempt logged, timeouts, refused connections) and the events
// each change emits, written in the change's own batch.
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { getDb } from "../../src/db/client";
import { runBatch } from "../../src/db/batch";
import { EVENT_TYPES, eventStatement } from "../../src/services/webhooks/events";
import { closedDeliveriesBefore, deliverWebhook, dispatchEvents, retryDelay, sweepWebhooks } from "../../src/services/webhooks/delivery";
import { MAX_WEBHOOKS_PER_WORKSPACE } from "../../src/services/webhooks/webhooks";
import { call, createWorkspace, json, logsOf, type TestKey } from "../helpers/api";
import { seedLogs } from "../helpers/logs";
import { b64, newTable, pollOperation } from "../helpers/tables";
import { eventsAt, hookKey, hookUrl, inbox, register, verify, waitForInbox } from "../helpers/webhooks";
import { buildDeps } from "../../src/deps";

const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;
const HOOKS = "/api/public/v2/webhooks";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function outbox(ws: TestKey) {
  const { results } = await env.DB.prepare(`SELECT event_type, details FROM webhook_events WHERE workspace_id = ? ORDER BY created_at, id`)
    .bind(ws.workspaceId)
    .all<{ event_type: string; details: string }>();
  return results.map((r) => ({ type: r.event_type, details: JSON.parse(r.details) }));
}

const chat = (text: string) => ({ type: "chat", messages: [{ role: "user", content: [{ type: "text", text }] }] });
async function publish(ws: TestKey, name: string, extra: Record<string, unknown> = {}) {
  const res = await call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat("hi") }, ...extra } });
  expect(res.status, await res.clone().text()).toBe(200);
  return json(res);
}

/** Waits until the receiver holds n events under key; returns their envelopes sorted by type. */
async function waitForEvents(key: string, n: number) {
  await waitForInbox(key, n);
  await sleep(300); // anything extra would arrive now
  return (await eventsAt(key)).sort((a, b) => (a.event_type < b.event_type ? -1 : a.event_type > b.event_type ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------

describe("POST /webhooks", () => {
  it("answers 201 with the webhook and its secret, which no other answer shows", async () => {
    const ws = await createWorkspace();
    const res = await call(HOOKS, { method: "POST", key: ws.key, json: { url: hookUrl("x"), description: "CI", events: ["prompt_template_version_created"] } });
    expect(res.status).toBe(201);
    const b = await json(res);
    expect(b).toEqual({
      success: true,
      message: expect.any(String),
      webhook: { id: expect.any(Number), url: hookUrl("x"), description: "CI", events: ["prompt_template_version_created"], created_at: expect.stringMatching(/Z$/) },
      secret: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const list = await json(await call(HOOKS, { key: ws.key }));
    expect(list).toEqual({ success: true, webhooks: [b.webhook] });
    expect(JSON.stringify(list)).not.toContain(b.secret);
    const all = await register(ws, { url: hookUrl("y") });
    expect(all.webhook.events).toBeNull();
    expect(all.secret).not.toBe(b.secret);
  });

  it("refuses a URL that is not http(s), or points at a loopback, private or link-local host (nothing is stored)", async () => {
    const ws = await createWorkspace();
    for (const url of [
      "ftp://example.com/hook",
      "not a url",
      "http://127.0.0.1:8787/hook",
      "http://localhost/hook",
      "http://10.1.2.3/hook",
      "http://192.168.0.10/hook",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]/hook",
      "http://printer.local/hook",
      "https://user:pw@example.com/hook",
    ]) {
      const res = await call(HOOKS, { method: "POST", key: ws.key, json: { url } });
      expect(res.status, url).toBe(400);
      expect((await json(res)).message, url).toMatch(/^url: /);
    }
    expect((await json(await call(HOOKS, { key: ws.key }))).webhooks).toEqual([]);
  });

  it("limits: url 1..2048 characters, description ≤ 500, events known names (at least one), both sides", async () => {
    const ws = await createWorkspace();
    const long = (n: number) => hookUrl(`${"a".repeat(n - hookUrl("").length)}`);
    expect(long(2048)).toHaveLength(2048);
    expect((await call(HOOKS, { method: "POST", key: ws.key, json: { url: long(2048) } })).status).toBe(201);
    const tooLong = await call(HOOKS, { method: "POST", key: ws.key, json: { url: long(2049) } });
    expect(tooLong.status).toBe(400);
    expect((await json(tooLong)).message).toMatch(/^url: must be 1 to 2048 characters/);
    expect((await call(HOOKS, { method: "POST", key: ws.key, json: { url: "" } })).status).toBe(400);
    expect((await call(HOOKS, { method: "POST", key: ws.key, json: {} })).status).toBe(400);

    expect((await call(HOOKS, { method: "POST", key: ws.key, json: { url: hookUrl("d"), description: "d".repeat(500) } })).status).toBe(201);
    const desc = await call(HOOKS, { method: "POST", key: ws.key, json: { url: hookUrl("d"), description: "d".repeat(501) } });
    expect(desc.status).toBe(400);
    expect((await json(desc)).message).toMatch(/^description: must be at most 500 characters/);

    const every = await register(ws, { url: hookUrl("e"), events: [...EVENT_TYPES, EVENT_TYPES[0]] });
    expect(every.webhook.events).toEqual([...EVENT_TYPES]); // a repeat counts once
    const unknown = await call(HOOKS, { method: "POST", key: ws.key, json: { url: hookUrl("e"), events: ["prompt_template_version_created", "no_such_event"] } });
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).message).toMatch(/^events\[1\]: must be one of dataset_version_created_from_filter_params/);
    expect((await call(HOOKS, { method: "POST", key: ws.key, json: { url: hookUrl("e"), events: [] } })).status).toBe(400);
    expect((await call(HOOKS, { method: "POST", key: ws.key, json: { url: hookUrl("e"), events: "prompt_template_version_created" } })).status).toBe(400);
  });

  it(`a workspace has at most ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks: the next is 409 until one is deleted`, async () => {
    const ws = await createWorkspace();
    const ids: number[] = [];
    for (let i = 0; i < MAX_WEBHOOKS_PER_WORKSPACE; i++) ids.push((await register(ws, { url: hookUrl(`cap${i}`) })).webhook.id);
    const over = await call(HOOKS, { method: "POST", key: ws.key, json: { url: hookUrl("over") } });
    expect(over.status).toBe(409);
    expect((await json(over)).error).toBe("conflict");
    // Another workspace has its own allowance.
    await register(await createWorkspace(), { url: hookUrl("other") });
    expect((await call(`${HOOKS}/${ids[0]}`, { method: "DELETE", key: ws.key })).status).toBe(200);
    await register(ws, { url: hookUrl("again") });
  });

  it("takes loopback URLs when ENDPOINT_ALLOW_PRIVATE_ADDRESSES is on (local development)", async () => {
    const { createApp } = await import("../../src/app");
    const ws = await createWorkspace();
    const req = (allow: string) =>
      createApp().fetch(
        new Request("http://api.test/api/public/v2/webhooks", { method: "POST", headers: { "X-API-KEY": ws.key, "content-type": "application/json" }, body: JSON.stringify({ url: "http://127.0.0.1:9999/hook" }) }),
        { ...env, ENDPOINT_ALLOW_PRIVATE_ADDRESSES: allow },
      );
    expect((await req("false")).status).toBe(400);
    expect((await req("true")).status).toBe(201);
  });
});

describe("GET, DELETE /webhooks/{id}, GET /webhooks/{id}/deliveries: workspace isolation", () => {
  it("another workspace's webhook is 404 everywhere and never listed", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { webhook } = await register(a, { url: hookUrl("iso") });
    expect((await json(await call(HOOKS, { key: b.key }))).webhooks).toEqual([]);
    expect((await call(`${HOOKS}/${webhook.id}`, { method: "DELETE", key: b.key })).status).toBe(404);
    expect((await call(`${HOOKS}/${webhook.id}/deliveries`, { key: b.key })).status).toBe(404);
    // Still there for its owner.
    expect((await call(`${HOOKS}/${webhook.id}/deliveries`, { key: a.key })).status).toBe(200);
    expect((await json(await call(HOOKS, { key: a.key }))).webhooks).toHaveLength(1);
  });

  it("DELETE → 200, then the webhook is gone (404 on delete and deliveries) and gets nothing more", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const { webhook } = await register(ws, { url: hookUrl(key) });
    const del = await call(`${HOOKS}/${webhook.id}`, { method: "DELETE", key: ws.key });
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ success: true, message: expect.any(String) });
    expect((await call(`${HOOKS}/${webhook.id}`, { method: "DELETE", key: ws.key })).status).toBe(404);
    expect((await call(`${HOOKS}/${webhook.id}/deliveries`, { key: ws.key })).status).toBe(404);
    expect((await json(await call(HOOKS, { key: ws.key }))).webhooks).toEqual([]);
    await publish(ws, uniq("after-delete"));
    await sleep(1500);
    expect(await inbox(key)).toEqual([]);
  });

  it("ids: bad path ids are 400, unknown 404; paging bounds of the delivery log", async () => {
    const ws = await createWorkspace();
    const { webhook } = await register(ws, { url: hookUrl("ids") });
    expect((await call(`${HOOKS}/abc`, { method: "DELETE", key: ws.key })).status).toBe(400);
    expect((await call(`${HOOKS}/0/deliveries`, { key: ws.key })).status).toBe(400);
    expect((await call(`${HOOKS}/99999999/deliveries`, { key: ws.key })).status).toBe(404);
    expect((await call(`${HOOKS}/${webhook.id}/deliveries?per_page=100`, { key: ws.key })).status).toBe(200);
    expect((await call(`${HOOKS}/${webhook.id}/deliveries?per_page=101`, { key: ws.key })).status).toBe(400);
    expect((await call(`${HOOKS}/${webhook.id}/deliveries?page=0`, { key: ws.key })).status).toBe(400);
    expect((await call(HOOKS, {})).status).toBe(401);
  });
});

// ---------------------------------------------------------------------------------------------

describe("delivery", () => {
  it("a receiver that fails twice and then answers 2xx gets the event, with three attempts logged and backoff between them", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const { webhook, secret } = await register(ws, { url: hookUrl(key, "?fail=2") });
    const name = uniq("retry");
    await publish(ws, name);
    const got = await waitForInbox(key, 3, 30_000);
    await sleep(1500);
    expect(await inbox(key)).toHaveLength(3); // nothing after the success

    // The same event, the same webhook-id, every attempt signed afresh.
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    for (const r of got) expect(await verify(r, secret)).toBe(true);
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(900); // 1 s, then 2 s (WEBHOOK_RETRY_BASE_SECONDS=1 in tests)
    expect(got[2].at - got[1].at).toBeGreaterThanOrEqual(1900);

    const log = await json(await call(`${HOOKS}/${webhook.id}/deliveries`, { key: ws.key }));
    expect(log.total).toBe(1);
    const [d] = log.deliveries;
    expect(d).toMatchObject({ id: got[0].headers["webhook-id"], event_type: "prompt_template_version_created", status: "delivered", attempt_count: 3, next_attempt_at: null });
    expect(d.attempts.map((a: any) => [a.attempt, a.status_code])).toEqual([[1, 500], [2, 500], [3, 204]]);
    expect(d.attempts[0].error).toMatch(/answered 500: receiver is down/);
    expect(d.attempts[2].error).toBeNull();
    for (const a of d.attempts) expect(a.attempted_at).toMatch(/Z$/);
    expect(Date.parse(d.attempts[2].attempted_at)).toBeGreaterThan(Date.parse(d.attempts[0].attempted_at));
  }, 40_000);

  it("signs the way receivers check: X-PromptLayer-Signature = hex HMAC(body), webhook-signature = v1,base64 HMAC(id.timestamp.body)", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const { secret } = await register(ws, { url: hookUrl(key) });
    await publish(ws, uniq("sig"));
    const [r] = await waitForInbox(key, 1);
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.headers["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Math.abs(Number(r.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30);
    expect(r.headers["x-promptlayer-signature"]).toMatch(/^[0-9a-f]{64}$/);
    expect(await verify(r, secret)).toBe(true);
    // A wrong secret, or a body changed by one byte, fails verification.
    expect(await verify(r, secret.replace(/^./, (c) => (c === "a" ? "b" : "a")))).toBe(false);
    expect(await verify({ ...r, body: r.body.replace("}", " }") }, secret)).toBe(false);
  });

  it("the body is the envelope as Python's json.dumps(sort_keys=True) writes it, non-ASCII escaped", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    await register(ws, { url: hookUrl(key), events: ["prompt_template_version_created"] });
    const name = `Café ☕ 😀 "q" ${uniq("n")}`;
    const created = await publish(ws, name);
    const [r] = await waitForInbox(key, 1);
    const env_ = JSON.parse(r.body);
    // Written by hand in Python's layout (sorted keys, ", " and ": ", \uXXXX escapes): what
    // json.dumps(json.loads(body), sort_keys=True) gives back.
    const escapedName = name.replace("é", "\\u00e9").replace("☕", "\\u2615").replace("😀", "\\ud83d\\ude00").replace(/"/g, '\\"');
    const expected =
      `{"details": {"prompt_template_id": ${created.id}, "prompt_template_name": "${escapedName}", "prompt_template_version_number": 1}, ` +
      `"event_type": "prompt_template_version_created", "timestamp": "${env_.timestamp}", "user_id": ${ws.userId}, "workspace_id": ${ws.workspaceId}}`;
    expect(r.body).toBe(expected);
    expect(/[^\x20-\x7e]/.test(r.body)).toBe(false);
    expect(env_.details.prompt_template_name).toBe(name);
    expect(env_.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("a timeout, a refused connection and a non-2xx are retried (each attempt logged); the last allowed attempt marks the delivery failed", async () => {
    const ws = await createWorkspace();
    const sent: unknown[] = [];
    // The delivery queue of this test is a recorder: the test makes each attempt itself.
    const testEnv = { db: getDb(env.DB), jobs: { send: async (m: unknown, o: unknown) => void sent.push([m, o]), sendBatch: async (ms: unknown[]) => void sent.push(...ms) } as unknown as Queue, env: { ENV_VARS_KEY: env.ENV_VARS_KEY } };
    const keys = { hang: hookKey(), refuse: hookKey(), down: hookKey() };
    const hooks = {
      hang: (await register(ws, { url: hookUrl(keys.hang, "?hang=1") })).webhook.id,
      refuse: (await register(ws, { url: hookUrl(keys.refuse) })).webhook.id,
      down: (await register(ws, { url: hookUrl(keys.down, "?fail=99") })).webhook.id,
    };
    await runBatch(getDb(env.DB), [eventStatement({ workspaceId: ws.workspaceId, type: "skill_collection_files_changed", userId: ws.userId, details: { n: 1 } })]);
    expect(await dispatchEvents(testEnv, ws.workspaceId)).toBe(3);
    const { results } = await env.DB.prepare(`SELECT id, webhook_id FROM webhook_deliveries WHERE workspace_id = ?`).bind(ws.workspaceId).all<{ id: string; webhook_id: number }>();
    const deliveryOf = (hook: number) => results.find((r) => r.webhook_id === hook)!.id;
    const settings = { timeoutMs: 300, maxAttempts: 2, retryBaseSeconds: 0 };

    const hang = await deliverWebhook(testEnv, ws.workspaceId, deliveryOf(hooks.hang), { settings });
    expect(hang).toEqual({ state: "retrying", attempt: 1, statusCode: null, error: "no answer within 300 ms" });
    // fetch() rejects when the connection is refused (miniflare's outbound service cannot refuse one).
    const refused = (() => Promise.reject(new TypeError("connect ECONNREFUSED 203.0.113.9:443"))) as unknown as typeof fetch;
    const refuse = await deliverWebhook(testEnv, ws.workspaceId, deliveryOf(hooks.refuse), { settings, fetch: refused });
    expect(refuse).toEqual({ state: "retrying", attempt: 1, statusCode: null, error: "could not connect: connect ECONNREFUSED 203.0.113.9:443" });
    const down1 = await deliverWebhook(testEnv, ws.workspaceId, deliveryOf(hooks.down), { settings });
    expect(down1).toMatchObject({ state: "retrying", attempt: 1, statusCode: 500 });
    expect(sent.filter((s) => Array.isArray(s))).toHaveLength(3); // one queued retry each
    const three = { ...settings, maxAttempts: 3, retryBaseSeconds: 60 };
    expect(await deliverWebhook(testEnv, ws.workspaceId, deliveryOf(hooks.down), { settings: three })).toMatchObject({ state: "retrying", attempt: 2 });
    // A copy of the message arriving before the attempt is due does nothing.
    expect(await deliverWebhook(testEnv, ws.workspaceId, deliveryOf(hooks.down), { settings: three })).toEqual({ state: "skipped" });
    await env.DB.prepare(`UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?`).bind(Date.now(), deliveryOf(hooks.down)).run();
    expect(await deliverWebhook(testEnv, ws.workspaceId, deliveryOf(hooks.down), { settings: three })).toMatchObject({ state: "failed", attempt: 3, statusCode: 500 });
    expect(sent.filter((s) => Array.isArray(s))).toHaveLength(4); // no retry is queued after the last attempt
    expect(await deliverWebhook(testEnv, ws.workspaceId, deliveryOf(hooks.down), { settings: three })).toEqual({ state: "skipped" });
    const log = await json(await call(`${HOOKS}/${hooks.down}/deliveries`, { key: ws.key }));
    expect(log.deliveries[0]).toMatchObject({ status: "failed", attempt_count: 3, next_attempt_at: null });
    expect(log.deliveries[0].attempts.map((a: any) => a.status_code)).toEqual([500, 500, 500]);
    const hangLog = await json(await call(`${HOOKS}/${hooks.hang}/deliveries`, { key: ws.key }));
    expect(hangLog.deliveries[0]).toMatchObject({ status: "retrying", attempt_count: 1, next_attempt_at: expect.any(String) });
    expect(hangLog.deliveries[0].attempts).toEqual([{ attempt: 1, attempted_at: expect.any(String), status_code: null, error: "no answer within 300 ms", duration_ms: expect.any(Number) }]);
    expect(hangLog.deliveries[0].attempts[0].duration_ms).toBeGreaterThanOrEqual(250);
  });

  it("an attempt that never finished (the Worker died mid-send) counts: with none left, the delivery fails instead of sending again", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    await register(ws, { url: hookUrl(key) });
    const testEnv = { db: getDb(env.DB), jobs: { send: async () => {}, sendBatch: async () => {} } as unknown as Queue, env: { ENV_VARS_KEY: env.ENV_VARS_KEY } };
    await runBatch(getDb(env.DB), [eventStatement({ workspaceId: ws.workspaceId, type: "prompt_template_version_created", userId: ws.userId, details: { a: 1 } })]);
    expect(await dispatchEvents(testEnv, ws.workspaceId)).toBe(1);
    const { id } = (await env.DB.prepare(`SELECT id FROM webhook_deliveries WHERE workspace_id = ?`).bind(ws.workspaceId).first<{ id: string }>())!;
    // The second and last allowed attempt claimed the delivery, and its lease ran out with no outcome written.
    await env.DB.prepare(`UPDATE webhook_deliveries SET status = 'sending', attempts = 2, lease_until = ? WHERE id = ?`).bind(Date.now() - 1000, id).run();
    const settings = { maxAttempts: 2 };
    expect(await deliverWebhook(testEnv, ws.workspaceId, id, { settings })).toEqual({ state: "skipped" });
    const row = await env.DB.prepare(`SELECT status, attempts, lease_until, last_error FROM webhook_deliveries WHERE id = ?`).bind(id).first();
    expect(row).toMatchObject({ status: "failed", attempts: 2, lease_until: null, last_error: expect.stringMatching(/no outcome/) });
    expect(await inbox(key)).toEqual([]);
    // With attempts left, the same situation is one more attempt.
    await env.DB.prepare(`UPDATE webhook_deliveries SET status = 'sending', attempts = 1, lease_until = ? WHERE id = ?`).bind(Date.now() - 1000, id).run();
    expect(await deliverWebhook(testEnv, ws.workspaceId, id, { settings })).toMatchObject({ state: "delivered", attempt: 2 });
    expect(await inbox(key)).toHaveLength(1);
  });

  it("a backlog of events is dispatched in bounded rounds, oldest first; what one call leaves, the next takes", async () => {
    const ws = await createWorkspace();
    await register(ws, { url: hookUrl(hookKey()) });
    await register(ws, { url: hookUrl(hookKey()) });
    const batches: unknown[][] = [];
    const testEnv = { db: getDb(env.DB), jobs: { send: async () => {}, sendBatch: async (ms: unknown[]) => void batches.push(ms) } as unknown as Queue, env: { ENV_VARS_KEY: env.ENV_VARS_KEY } };
    // 650 events nobody dispatched (as if dispatch had been down), a millisecond apart, the oldest first.
    const start = Date.now() + 1000;
    await env.DB.prepare(
      `WITH RECURSIVE s(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM s WHERE k + 1 < 650)
       INSERT INTO webhook_events (id, workspace_id, user_id, event_type, details, created_at)
       SELECT 'evt_backlog_' || ?1 || '_' || k, ?1, NULL, 'prompt_template_version_created', json_object('k', k), ?2 + k FROM s`,
    )
      .bind(ws.workspaceId, start)
      .run();
    const undispatched = async () =>
      (await env.DB.prepare(`SELECT count(*) AS n, min(created_at) AS oldest FROM webhook_events WHERE workspace_id = ? AND dispatched_at IS NULL`).bind(ws.workspaceId).first<{ n: number; oldest: number }>())!;
    expect(await dispatchEvents(testEnv, ws.workspaceId)).toBe(1000); // 500 events × 2 webhooks
    expect(await undispatched()).toEqual({ n: 150, oldest: start + 500 });
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(100);
    expect(await dispatchEvents(testEnv, ws.workspaceId)).toBe(300);
    expect((await undispatched()).n).toBe(0);
    expect(await dispatchEvents(testEnv, ws.workspaceId)).toBe(0);
    const { n } = (await env.DB.prepare(`SELECT count(*) AS n FROM webhook_deliveries WHERE workspace_id = ?`).bind(ws.workspaceId).first<{ n: number }>())!;
    expect(n).toBe(1300);
  });

  it("backoff doubles from WEBHOOK_RETRY_BASE_SECONDS and stops at an hour", () => {
    expect([1, 2, 3, 4, 8].map((a) => retryDelay(a, 30))).toEqual([30, 60, 120, 240, 3600]);
    expect([1, 2, 3].map((a) => retryDelay(a, 1))).toEqual([1, 2, 4]);
  });

  it("one delivery per subscribed webhook: the event filter, webhooks of other workspaces, webhooks registered later", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const k = { all: hookKey(), labels: hookKey(), datasets: hookKey(), other: hookKey(), later: hookKey() };
    await register(ws, { url: hookUrl(k.all) });
    await register(ws, { url: hookUrl(k.labels), events: ["prompt_template_label_created"] });
    await register(ws, { url: hookUrl(k.datasets), events: ["dataset_version_created_from_filter_params"] });
    await register(other, { url: hookUrl(k.other) });
    await publish(ws, uniq("fan"), { release_labels: ["prod"] });
    await waitForInbox(k.all, 2);
    await waitForInbox(k.labels, 1);
    await register(ws, { url: hookUrl(k.later) });
    await sleep(1000);
    expect((await eventsAt(k.all)).map((e) => e.event_type).sort()).toEqual(["prompt_template_label_created", "prompt_template_version_created"]);
    expect((await eventsAt(k.labels)).map((e) => e.event_type)).toEqual(["prompt_template_label_created"]);
    expect(await inbox(k.datasets)).toEqual([]);
    expect(await inbox(k.other)).toEqual([]);
    expect(await inbox(k.later)).toEqual([]);
  });

  it("dispatch and delivery are idempotent: a second dispatch adds no delivery, a redelivered message sends nothing twice", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    await register(ws, { url: hookUrl(key) });
    const testEnv = { db: getDb(env.DB), jobs: { send: async () => {}, sendBatch: async () => {} } as unknown as Queue, env: { ENV_VARS_KEY: env.ENV_VARS_KEY } };
    await runBatch(getDb(env.DB), [eventStatement({ workspaceId: ws.workspaceId, type: "prompt_template_version_created", userId: ws.userId, details: { a: 1 } })]);
    expect(await dispatchEvents(testEnv, ws.workspaceId)).toBe(1);
    expect(await dispatchEvents(testEnv, ws.workspaceId)).toBe(0);
    const { id } = (await env.DB.prepare(`SELECT id FROM webhook_deliveries WHERE workspace_id = ?`).bind(ws.workspaceId).first<{ id: string }>())!;
    const [first, second] = await Promise.all([deliverWebhook(testEnv, ws.workspaceId, id), deliverWebhook(testEnv, ws.workspaceId, id)]);
    expect([first.state, second.state].sort()).toEqual(["delivered", "skipped"]);
    expect(await deliverWebhook(testEnv, ws.workspaceId, id)).toEqual({ state: "skipped" });
    expect(await inbox(key)).toHaveLength(1);
  });

  it("the sweeper sends events whose dispatch was lost and deliveries whose queue message was lost", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const { webhook: first } = await register(ws, { url: hookUrl(key) });
    await env.DB.prepare(`UPDATE webhooks SET created_at = ? WHERE id = ?`).bind(Date.now() - 10 * 60_000, first.id).run();
    // An event committed without any dispatch (as if the Worker died right after the batch).
    await env.DB.prepare(
      `INSERT INTO webhook_events (id, workspace_id, user_id, event_type, details, created_at) VALUES (?, ?, ?, 'prompt_template_version_created', '{"lost": 1}', ?)`,
    )
      .bind(`evt_lost_${key}`, ws.workspaceId, ws.userId, Date.now() - 5 * 60_000)
      .run();
    // A delivery whose message never reached the queue.
    const { webhook: second } = await register(ws, { url: hookUrl(`${key}b`) });
    await env.DB.prepare(`UPDATE webhooks SET created_at = ? WHERE id = ?`).bind(Date.now() - 10 * 60_000, second.id).run();
    await env.DB.prepare(
      `INSERT INTO webhook_deliveries (id, workspace_id, webhook_id, event_id, status, attempts, next_attempt_at) VALUES (?, ?, ?, ?, 'pending', 0, ?)`,
    )
      .bind(`msg_lost_${key}`, ws.workspaceId, second.id, `evt_lost_${key}`, Date.now() - 5 * 60_000)
      .run();
    const swept = await sweepWebhooks(buildDeps(env));
    expect(swept.workspaces).toBeGreaterThanOrEqual(1);
    const [got] = await waitForInbox(key, 1);
    expect(JSON.parse(got.body).details).toEqual({ lost: 1 });
    const [viaSecond] = await waitForInbox(`${key}b`, 1);
    expect(viaSecond.headers["webhook-id"]).toBe(`msg_lost_${key}`);
  }, 30_000);

  it("the retention pass reads closed deliveries through their index, not a scan of every delivery", async () => {
    const q = new SQLiteAsyncDialect().sqlToQuery(closedDeliveriesBefore(Date.now()));
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).bind(...q.params).all<{ detail: string }>();
    const plan = results.map((r) => r.detail).join("\n");
    expect(plan).toMatch(/USING (COVERING )?INDEX webhook_deliveries_closed/);
    expect(plan).not.toMatch(/SCAN webhook_deliveries(?! USING)/);
  });

  it("the cron trigger runs the sweeper", async () => {
    const { createScheduledController, createExecutionContext, waitOnExecutionContext } = await import("cloudflare:test");
    const worker = (await import("../../src/index")).default;
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
  });

  it("a URL the guard refuses at delivery time (ENDPOINT_ALLOW_PRIVATE_ADDRESSES turned off since) is not called: failed at once", async () => {
    const ws = await createWorkspace();
    await env.DB.prepare(`INSERT INTO webhooks (workspace_id, url, secret, created_at) VALUES (?, 'http://127.0.0.1:1/x', 's', ?)`).bind(ws.workspaceId, Date.now() - 1000).run();
    const testEnv = { db: getDb(env.DB), jobs: { send: async () => {}, sendBatch: async () => {} } as unknown as Queue, env: { ENV_VARS_KEY: env.ENV_VARS_KEY } };
    await runBatch(getDb(env.DB), [eventStatement({ workspaceId: ws.workspaceId, type: "prompt_template_version_created", userId: null, details: {} })]);
    await dispatchEvents(testEnv, ws.workspaceId);
    const { id } = (await env.DB.prepare(`SELECT id FROM webhook_deliveries WHERE workspace_id = ?`).bind(ws.workspaceId).first<{ id: string }>())!;
    const out = await deliverWebhook(testEnv, ws.workspaceId, id);
    expect(out).toMatchObject({ state: "failed", attempt: 1, statusCode: null, error: "not sent: the url points at a loopback or private address" });
  });
});

// ---------------------------------------------------------------------------------------------

describe("events: one per change, at its site, in the change's batch", () => {
  let ws: TestKey;
  let key: string;
  beforeAll(async () => {
    ws = await createWorkspace();
    key = hookKey();
    await register(ws, { url: hookUrl(key) });
  });

  it("an event never outlives a batch that fails", async () => {
    const w = await createWorkspace();
    const db = getDb(env.DB);
    await expect(
      runBatch(db, [eventStatement({ workspaceId: w.workspaceId, type: "prompt_template_version_created", userId: null, details: {} }), sql`INSERT INTO no_such_table VALUES (1)`]),
    ).rejects.toThrow();
    expect(await outbox(w)).toEqual([]);
  });

  it("prompt templates: version created (publish and PATCH), labels created / moved / deleted", async () => {
    const w = await createWorkspace();
    const k = hookKey();
    await register(w, { url: hookUrl(k) });
    const name = uniq("tmpl");
    const v1 = await publish(w, name, { release_labels: ["prod"] });
    await publish(w, name, { release_labels: ["prod", "beta"] });
    const patched = await call(`/rest/prompt-templates/${encodeURIComponent(name)}`, { method: "PATCH", key: w.key, json: { commit_message: "p" } });
    expect(patched.status).toBe(201);
    const label = await json(await call(`/prompts/${v1.id}/label`, { method: "POST", key: w.key, json: { prompt_version_number: 1, name: "canary" } }));
    expect((await call(`/prompt-labels/${label.id}`, { method: "PATCH", key: w.key, json: { prompt_version_number: 3 } })).status).toBe(200);
    expect((await call(`/prompt-labels/${label.id}`, { method: "PATCH", key: w.key, json: { prompt_version_number: 3 } })).status).toBe(200); // no move
    expect((await call(`/prompt-labels/${label.id}`, { method: "DELETE", key: w.key })).status).toBe(204);
    const t = { prompt_template_id: v1.id, prompt_template_name: name };
    const events = await waitForEvents(k, 9);
    expect(events.map((e) => [e.event_type, e.details])).toEqual([
      ["prompt_template_label_created", { ...t, prompt_template_version_number: 1, prompt_template_label: "prod" }],
      ["prompt_template_label_created", { ...t, prompt_template_version_number: 2, prompt_template_label: "beta" }],
      ["prompt_template_label_created", { ...t, prompt_template_version_number: 1, prompt_template_label: "canary" }],
      ["prompt_template_label_deleted", { ...t, prompt_template_version_number: 3, prompt_template_label: "canary" }],
      ["prompt_template_label_moved", { ...t, prompt_template_version_number: 2, old_prompt_template_version_number: 1, prompt_template_label: "prod" }],
      ["prompt_template_label_moved", { ...t, prompt_template_version_number: 3, old_prompt_template_version_number: 1, prompt_template_label: "canary" }],
      ["prompt_template_version_created", { ...t, prompt_template_version_number: 1 }],
      ["prompt_template_version_created", { ...t, prompt_template_version_number: 2 }],
      ["prompt_template_version_created", { ...t, prompt_template_version_number: 3 }],
    ].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([type, details]) => [type, expect.objectContaining(details as object)]));
    for (const e of events) expect(e).toMatchObject({ workspace_id: w.workspaceId, user_id: w.userId });
  }, 30_000);

  it("prompt templates: no event when the change fails (duplicate label 409, unknown version 404, another workspace 404)", async () => {
    const w = await createWorkspace();
    const name = uniq("fail");
    const v1 = await publish(w, name);
    const before = (await outbox(w)).length;
    expect((await call(`/prompts/${v1.id}/label`, { method: "POST", key: w.key, json: { prompt_version_number: 1, name: "x" } })).status).toBe(200);
    expect((await call(`/prompts/${v1.id}/label`, { method: "POST", key: w.key, json: { prompt_version_number: 1, name: "x" } })).status).toBe(409);
    expect((await call(`/prompts/${v1.id}/label`, { method: "POST", key: w.key, json: { prompt_version_number: 9, name: "y" } })).status).toBe(404);
    const other = await createWorkspace();
    expect((await call(`/prompts/${v1.id}/label`, { method: "POST", key: other.key, json: { prompt_version_number: 1, name: "z" } })).status).toBe(404);
    expect((await call(`/rest/prompt-templates/${encodeURIComponent(name)}`, { method: "PATCH", key: w.key, json: { version: 7 } })).status).toBe(404);
    expect((await call(`/prompt-labels/99999999`, { method: "DELETE", key: w.key })).status).toBe(404);
    const after = await outbox(w);
    expect(after.slice(before).map((e) => e.type)).toEqual(["prompt_template_label_created"]);
    expect(await outbox(other)).toEqual([]);
  });

  it("dataset_version_created_from_filter_params when the fill job completes: {dataset_id, rows_added, dataset_version_number}", async () => {
    const ids = await seedLogs(ws.key);
    const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("g") } }));
    const res = await call("/api/public/v2/dataset-versions/from-filter-params", { method: "POST", key: ws.key, json: { dataset_group_id: g.dataset_group.id, request_log_ids: ids.slice(0, 2) } });
    const queued = await json(res);
    const events = (await eventsAt(key)).length;
    const got = await waitForInbox(key, events + 1);
    const e = JSON.parse(got[got.length - 1].body);
    expect(e).toEqual({
      event_type: "dataset_version_created_from_filter_params",
      details: { dataset_id: queued.dataset_id, rows_added: 2, dataset_version_number: -1 },
      workspace_id: ws.workspaceId,
      user_id: ws.userId,
      timestamp: expect.any(String),
    });
    // A 404 (unknown group) queues nothing and emits nothing.
    expect((await call("/api/public/v2/dataset-versions/from-filter-params", { method: "POST", key: ws.key, json: { dataset_group_id: 99999999 } })).status).toBe(404);
    await sleep(500);
    expect((await outbox(ws)).filter((x) => x.type === "dataset_version_created_from_filter_params")).toHaveLength(1);
  });

  it("a fill job run again after its completion committed (a redelivery) emits no second event", async () => {
    const { runDatasetFill } = await import("../../src/services/datasets/fill");
    const w = await createWorkspace();
    const ids = await seedLogs(w.key);
    const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: w.key, json: { name: uniq("g") } }));
    const { queueDraftFill } = await import("../../src/services/datasets/datasets");
    const auth = { workspaceId: w.workspaceId, userId: w.userId, userEmail: w.email, apiKeyId: 0 };
    const job = await queueDraftFill(getDb(env.DB), auth, { dataset_group_id: g.dataset_group.id, request_log_ids: ids.slice(0, 3) });
    expect(await runDatasetFill(getDb(env.DB), logsOf, w.workspaceId, job.jobId)).toMatchObject({ state: "completed", rowsAdded: 3 });
    // As if the message came back after the completion batch but the job had to run again.
    await env.DB.prepare(`UPDATE dataset_jobs SET status = 'RUNNING' WHERE id = ?`).bind(job.jobId).run();
    expect(await runDatasetFill(getDb(env.DB), logsOf, w.workspaceId, job.jobId)).toMatchObject({ state: "completed", rowsAdded: 3 });
    expect(await runDatasetFill(getDb(env.DB), logsOf, w.workspaceId, job.jobId)).toEqual({ state: "skipped" });
    expect((await outbox(w)).filter((e) => e.type === "dataset_version_created_from_filter_params")).toEqual([
      { type: "dataset_version_created_from_filter_params", details: { dataset_id: job.datasetId, rows_added: 3, dataset_version_number: -1 } },
    ]);
  });

  it("sheets: created from a file, from request logs, and their failures", async () => {
    const w = await createWorkspace();
    const k = hookKey();
    await register(w, { url: hookUrl(k), events: ["sheet_created_from_file", "sheet_created_from_file_failed", "sheet_created_from_request_logs", "sheet_created_from_request_logs_failed"] });
    const logIds = await seedLogs(w.key);
    const t = await newTable(w);
    const post = async (body: unknown) => {
      const res = await call(`/api/public/v2/tables/${t.id}/sheets`, { method: "POST", key: w.key, json: body });
      const b = await json(res);
      expect(res.status, JSON.stringify(b)).toBe(202);
      return { b, op: await pollOperation(w, t.id, b.operation_id) };
    };
    const ok = await post({ source: { type: "file", file_name: "people.csv", file_content_base64: b64("name,age\nAda,36\nBob,41\n") } });
    const bad = await post({ source: { type: "file", file_name: "bad.json", file_content_base64: b64('{"a": 1}') } });
    const empty = await post({ source: { type: "file", file_name: "empty.csv", file_content_base64: "" } }); // failed before it runs
    const logs = await post({ source: { type: "request_logs", request_log_ids: logIds.slice(0, 3) } });
    expect([ok.op.status, bad.op.status, empty.op.status, logs.op.status]).toEqual(["completed", "failed", "failed", "completed"]);
    // A request-log import that cannot run (its filter is gone) fails through the same path.
    const broken = await call(`/api/public/v2/tables/${t.id}/sheets`, { method: "POST", key: w.key, json: { source: { type: "request_logs", request_log_ids: [logIds[0]] } } });
    const brokenB = await json(broken);
    await env.DB.prepare(`UPDATE sheet_operations SET params = NULL WHERE workspace_id = ? AND id = ? AND status = 'pending'`).bind(w.workspaceId, brokenB.operation_id).run();
    const brokenOp = await pollOperation(w, t.id, brokenB.operation_id);

    const events = await waitForEvents(k, brokenOp.status === "failed" ? 5 : 4);
    const byOp = new Map(events.map((e) => [e.details.operation_id, e]));
    expect(byOp.get(ok.b.operation_id)).toMatchObject({
      event_type: "sheet_created_from_file",
      details: { table_id: t.id, sheet_id: ok.b.sheet.id, operation_id: ok.b.operation_id, source: "file", file_name: "people.csv", rows_added: 2, row_count: 2, error_message: null },
      user_id: w.userId,
    });
    expect(byOp.get(bad.b.operation_id)).toMatchObject({ event_type: "sheet_created_from_file_failed", details: { error_message: expect.stringMatching(/array of objects/) } });
    expect(byOp.get(empty.b.operation_id)).toMatchObject({ event_type: "sheet_created_from_file_failed", details: { error_message: "the file is empty" } });
    expect(byOp.get(logs.b.operation_id)).toMatchObject({ event_type: "sheet_created_from_request_logs", details: { source: "request_logs", file_name: null, rows_added: 3 } });
    if (brokenOp.status === "failed") {
      expect(byOp.get(brokenB.operation_id)).toMatchObject({ event_type: "sheet_created_from_request_logs_failed", details: { error_message: brokenOp.error_message } });
    }
    expect(events.length).toBe(byOp.size); // one event per import
  }, 60_000);

  it("skill collections: files changed on create and on a version that changes files; none for a version that changes none", async () => {
    const w = await createWorkspace();
    const k = hookKey();
    await register(w, { url: hookUrl(k), events: ["skill_collection_files_changed"] });
    const name = uniq("skills");
    const created = await call("/api/public/v2/skill-collections", { method: "POST", key: w.key, json: { name, files: [{ path: "a.md", content: "A" }, { path: "b.md", content: "B" }] } });
    expect(created.status, await created.clone().text()).toBe(201);
    const c = await json(created);
    const id = c.skill_collection?.id ?? c.id;
    const version = (body: unknown) => call(`/api/public/v2/skill-collections/${encodeURIComponent(name)}/versions`, { method: "POST", key: w.key, json: body });
    expect((await version({ file_updates: [{ path: "a.md", content: "A2" }, { path: "c.md", content: "C" }], deletes: ["b.md"] })).status).toBe(201);
    expect((await version({ commit_message: "nothing changes" })).status).toBe(201);
    expect((await version({ file_updates: [{ path: "a.md", content: "A2" }] })).status).toBe(201); // same content
    expect((await version({ deletes: ["no-such-file.md"] })).status).toBeGreaterThanOrEqual(400); // refused: no version, no event
    const events = await waitForEvents(k, 2);
    await sleep(700);
    expect(await eventsAt(k)).toHaveLength(2);
    const byVersion = events.map((e) => e.details).sort((a, b) => a.version_number - b.version_number);
    expect(byVersion).toEqual([
      { skill_collection_id: id, skill_collection_name: name, version_number: 1, previous_version_number: null, files_added: 2, files_modified: 0, files_removed: 0 },
      { skill_collection_id: id, skill_collection_name: name, version_number: 2, previous_version_number: 1, files_added: 1, files_modified: 1, files_removed: 1 },
    ]);
  });
});
