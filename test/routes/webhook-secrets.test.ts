// Webhook secrets: sealed at rest (and rows from before sealing sealed by the cron without losing
// one), rotation with an overlap in which both secrets sign, and https for receivers outside local runs.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { sweepWebhooks } from "../../src/services/webhooks/delivery";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";
import { hookKey, hookUrl, register, waitForInbox, type Received } from "../helpers/webhooks";

const HOOKS = "/api/public/v2/webhooks";
const enc = new TextEncoder();
async function hmacHex(secret: string, data: string) {
  const k = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return [...new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(data)))].map((x) => x.toString(16).padStart(2, "0")).join("");
}
async function hmacB64(secret: string, data: string) {
  const k = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(data)))));
}
/** Which secrets sign a received delivery: the PromptLayer-style headers and the Standard Webhooks list. */
async function signers(r: Received, secrets: Record<string, string>) {
  const list = (r.headers["webhook-signature"] ?? "").split(" ");
  const out: { plain: string[]; plainNew: string[]; standard: string[] } = { plain: [], plainNew: [], standard: [] };
  for (const [name, s] of Object.entries(secrets)) {
    if ((await hmacHex(s, r.body)) === r.headers["x-promptlayer-signature"]) out.plain.push(name);
    if ((await hmacHex(s, r.body)) === r.headers["x-promptlayer-signature-new"]) out.plainNew.push(name);
    if (list.includes(`v1,${await hmacB64(s, `${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`)}`)) out.standard.push(name);
  }
  return out;
}
async function publish(ws: TestKey) {
  const name = `p-${crypto.randomUUID().slice(0, 8)}`;
  const res = await call("/rest/prompt-templates", {
    method: "POST",
    key: ws.key,
    json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] } } },
  });
  expect(res.status).toBe(200);
}
const stored = (id: number) => env.DB.prepare("SELECT secret, previous_secret, previous_secret_until FROM webhooks WHERE id = ?").bind(id).first<{ secret: string; previous_secret: string | null; previous_secret_until: number | null }>();
const rotate = (ws: TestKey, id: number, body: unknown) => call(`${HOOKS}/${id}/rotate-secret`, { method: "POST", key: ws.key, json: body });

describe("webhook secrets at rest", () => {
  it("are stored sealed, never as shown, and deliveries are signed with the secret shown", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const { webhook, secret } = await register(ws, { url: hookUrl(key) });
    const row = await stored(webhook.id);
    expect(row!.secret).toMatch(/^v1:/);
    expect(row!.secret).not.toContain(secret);
    await publish(ws);
    const [r] = await waitForInbox(key, 1);
    expect(await signers(r, { secret })).toEqual({ plain: ["secret"], plainNew: [], standard: ["secret"] });
  });

  it("a secret stored in plain text before the upgrade keeps signing, and the cron seals it without changing it", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const plain = "ab".repeat(32);
    const { id } = (await env.DB.prepare("INSERT INTO webhooks (workspace_id, url, secret, created_at) VALUES (?, ?, ?, ?) RETURNING id")
      .bind(ws.workspaceId, hookUrl(key), plain, Date.now() - 1000)
      .first<{ id: number }>())!;
    await publish(ws);
    expect(await signers((await waitForInbox(key, 1))[0], { plain })).toMatchObject({ plain: ["plain"], standard: ["plain"] });
    const deps = { db: getDb(env.DB), jobs: env.JOBS, env: { ENV_VARS_KEY: env.ENV_VARS_KEY } };
    // The sweeper seals a batch a run; other tests' rows may be in the same batch.
    for (let i = 0; i < 20 && !(await stored(id))!.secret.startsWith("v1:"); i++) await sweepWebhooks(deps);
    expect((await stored(id))!.secret).toMatch(/^v1:/);
    await publish(ws);
    const got = await waitForInbox(key, 2);
    expect(await signers(got[1], { plain })).toMatchObject({ plain: ["plain"], standard: ["plain"] });
  });
});

describe("rotation", () => {
  it("during the overlap both secrets sign; after it only the new one", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const { webhook, secret: old } = await register(ws, { url: hookUrl(key) });
    const res = await rotate(ws, webhook.id, { overlap_seconds: 3600 });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, webhook: { id: webhook.id }, secret: expect.stringMatching(/^[0-9a-f]{64}$/), previous_secret_expires_at: expect.any(String) });
    const fresh = body.secret as string;
    expect(fresh).not.toBe(old);
    expect(Date.parse(body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(3500_000);
    const row = await stored(webhook.id);
    expect(row!.previous_secret).toMatch(/^v1:/);
    expect(JSON.stringify(await json(await call(HOOKS, { key: ws.key })))).not.toContain(fresh);

    await publish(ws);
    const [during] = await waitForInbox(key, 1);
    // X-PromptLayer-Signature stays the old secret's (receivers not yet moved keep verifying); -New is the new one's; the Standard list holds both.
    expect(await signers(during, { old, fresh })).toEqual({ plain: ["old"], plainNew: ["fresh"], standard: ["old", "fresh"] });

    await env.DB.prepare("UPDATE webhooks SET previous_secret_until = ? WHERE id = ?").bind(Date.now() - 1, webhook.id).run();
    await publish(ws);
    const after = (await waitForInbox(key, 2))[1];
    expect(after.headers["x-promptlayer-signature-new"]).toBeUndefined();
    expect(await signers(after, { old, fresh })).toEqual({ plain: ["fresh"], plainNew: [], standard: ["fresh"] });
  });

  it("overlap 0 stops the old secret at once; the overlap's bounds; another workspace's webhook is 404", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const { webhook } = await register(ws, { url: hookUrl(key) });
    const body = await json(await rotate(ws, webhook.id, { overlap_seconds: 0 }));
    expect(body.previous_secret_expires_at).toBeNull();
    expect((await stored(webhook.id))!.previous_secret).toBeNull();
    await publish(ws);
    expect(await signers((await waitForInbox(key, 1))[0], { fresh: body.secret })).toEqual({ plain: ["fresh"], plainNew: [], standard: ["fresh"] });
    // Default: a day.
    const dflt = await json(await rotate(ws, webhook.id, {}));
    expect(Date.parse(dflt.previous_secret_expires_at) - Date.now()).toBeGreaterThan(86_000_000);
    expect((await rotate(ws, webhook.id, { overlap_seconds: 604_800 })).status).toBe(200);
    for (const bad of [-1, 604_801, 1.5, "60"]) expect((await rotate(ws, webhook.id, { overlap_seconds: bad })).status, String(bad)).toBe(400);
    const other = await createWorkspace();
    expect((await rotate(other, webhook.id, {})).status).toBe(404);
    expect((await rotate(ws, 999_999_999, {})).status).toBe(404);
  });
});

describe("https receivers", () => {
  it("a plain http URL is refused outside local runs, at registration and at delivery", async () => {
    const ws = await createWorkspace();
    const res = await call(HOOKS, { method: "POST", key: ws.key, json: { url: "http://hooks.example.com/x" } });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^url: must be an https URL/);
    // One registered before the rule is not called.
    await env.DB.prepare("INSERT INTO webhooks (workspace_id, url, secret, created_at) VALUES (?, 'http://fake-webhook.test/hooks/plain', 's', ?)").bind(ws.workspaceId, Date.now() - 1000).run();
    await publish(ws);
    let row: { status: string; last_error: string } | null = null;
    for (let i = 0; i < 100 && row?.status !== "failed"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      row = await env.DB.prepare("SELECT status, last_error FROM webhook_deliveries WHERE workspace_id = ?").bind(ws.workspaceId).first();
    }
    expect(row).toMatchObject({ status: "failed", last_error: expect.stringMatching(/^not sent: the url must be an https URL/) });
  });
});
