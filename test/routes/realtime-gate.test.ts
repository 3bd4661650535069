// The realtime door: the token is checked by the Worker before a socket reaches any object, sockets
// are placed on their channel's object, a socket without a valid connect is closed within seconds,
// frames are bounded, and a revoked key's tokens stop at once (at connect and at delivery).
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { hubName, MAX_COMMANDS_PER_FRAME } from "../../src/realtime/protocol";
import { liveKeyIds } from "../../src/realtime/gate";
import { sha256Hex, toHex } from "../../src/lib/crypto";
import { addKey, call, createWorkspace, json, type TestKey } from "../helpers/api";

/** A client socket through the Worker's own fetch handler (env overridable), recording messages and its close. */
async function socket(envOverride: Record<string, string> = {}) {
  const res = await worker.fetch(new Request("http://api.test/connection/websocket", { headers: { Upgrade: "websocket" } }), { ...env, ...envOverride }, createExecutionContext());
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  const inbox: any[] = [];
  let closed: { code: number; reason: string } | null = null;
  ws.addEventListener("message", (e) => inbox.push(JSON.parse(String(e.data))));
  ws.addEventListener("close", (e) => (closed = { code: e.code, reason: e.reason }));
  ws.accept();
  const until = async <T>(what: () => T | null | undefined, timeoutMs = 15_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = what();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out; inbox ${JSON.stringify(inbox)}, closed ${JSON.stringify(closed)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    ws,
    inbox,
    send: (...cmds: Record<string, unknown>[]) => ws.send(cmds.map((c) => JSON.stringify(c)).join("\n")),
    next: (n = 1) => until(() => (inbox.length >= n ? inbox[n - 1] : null)),
    closed: () => until(() => closed),
  };
}

const token = async (key: string, capability: string) =>
  (await json(await call(`/ws-token-request-library?capability=${encodeURIComponent(capability)}`, { method: "POST", key }))).token_details.token as string;
const suffix = () => crypto.randomUUID().replace(/-/g, "");

/** A second key of the same workspace (so one can be revoked while the other starts runs). */
async function secondKey(ws: TestKey): Promise<{ key: string; id: number }> {
  const key = `pe_${toHex(crypto.getRandomValues(new Uint8Array(24)))}`;
  const row = await env.DB.prepare("INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix) VALUES (?, ?, ?, ?) RETURNING id")
    .bind(ws.workspaceId, ws.userId, await sha256Hex(key), key.slice(0, 11))
    .first<{ id: number }>();
  return { key, id: row!.id };
}
const revoke = (id: number) => env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").bind(Date.now(), id).run();

let ws: TestKey;
let workflowId: number;
beforeAll(async () => {
  ws = await createWorkspace();
  const created = await json(
    await call("/rest/workflows", { method: "POST", key: ws.key, json: { name: `rt-${suffix().slice(0, 8)}`, nodes: [{ name: "o", node_type: "VARIABLE", is_output_node: true, configuration: { value: { type: "string", value: "done" } }, dependencies: [] }] } }),
  );
  workflowId = created.workflow_id;
});

describe("the realtime gate", () => {
  it("closes a socket that sends no connect within REALTIME_CONNECT_TIMEOUT_MS", async () => {
    const client = await socket({ REALTIME_CONNECT_TIMEOUT_MS: "300" });
    expect(await client.closed()).toEqual({ code: 3502, reason: "no valid connect in time" });
  });

  it("a first frame that is not a valid connect closes the socket: a forged token, another command first, too many commands", async () => {
    const forged = await socket();
    forged.send({ id: 1, connect: { token: "e30.AAAA" } });
    expect(await forged.next()).toEqual({ id: 1, error: { code: 101, message: "unauthorized" } });
    expect((await forged.closed()).code).toBe(3500);

    const early = await socket();
    early.send({ id: 1, subscribe: { channel: "workflow_updates:1" } });
    expect(await early.next()).toMatchObject({ id: 1, error: { code: 101 } });
    expect((await early.closed()).code).toBe(3500);

    const flood = await socket();
    const channel = `workflows:${workflowId}:run:${suffix()}`;
    flood.send({ id: 1, connect: { token: await token(ws.key, channel) } }, ...Array.from({ length: 3000 }, (_, i) => ({ id: i + 2, subscribe: { channel } })));
    expect(await flood.closed()).toEqual({ code: 3501, reason: "frame too large" });
    const many = await socket();
    many.send({ id: 1, connect: { token: await token(ws.key, channel) } }, ...Array.from({ length: MAX_COMMANDS_PER_FRAME }, (_, i) => ({ id: i + 2, subscribe: { channel } })));
    expect(await many.closed()).toEqual({ code: 3501, reason: "too many commands in one frame" });
  });

  it("a connected socket is placed on its channel's object, and frames past the command cap close it", async () => {
    const channel = `workflows:${workflowId}:run:${suffix()}`;
    const client = await socket();
    client.send({ id: 1, connect: { token: await token(ws.key, channel) } }, { id: 2, subscribe: { channel } });
    expect(await client.next(1)).toMatchObject({ id: 1, connect: { client: expect.any(String) } });
    expect(await client.next(2)).toEqual({ id: 2, subscribe: {} });
    const onChannel = await runInDurableObject(env.REALTIME.get(env.REALTIME.idFromName(hubName(ws.workspaceId, channel))), (_o, state) => state.getWebSockets().length);
    expect(onChannel).toBe(1);
    const elsewhere = await runInDurableObject(env.REALTIME.get(env.REALTIME.idFromName(hubName(ws.workspaceId, `workflows:${workflowId}:run:${suffix()}`))), (_o, state) => state.getWebSockets().length);
    expect(elsewhere).toBe(0);
    client.send(...Array.from({ length: MAX_COMMANDS_PER_FRAME }, () => ({})));
    client.send(...Array.from({ length: MAX_COMMANDS_PER_FRAME + 1 }, () => ({})));
    expect(await client.closed()).toEqual({ code: 3501, reason: "too many commands in one frame" });
  });

  it("a revoked key's token admits no connection, at once", async () => {
    const second = await secondKey(ws);
    const channel = `workflows:${workflowId}:run:${suffix()}`;
    const t = await token(second.key, channel);
    await revoke(second.id);
    const client = await socket();
    client.send({ id: 1, connect: { token: t } });
    expect(await client.next()).toEqual({ id: 1, error: { code: 101, message: "unauthorized" } });
    expect((await client.closed()).code).toBe(3500);
  });

  it("a socket whose key is revoked after it subscribed is told nothing when the run ends: it is closed", async () => {
    const second = await secondKey(ws);
    const s = suffix();
    const channel = `workflows:${workflowId}:run:${s}`;
    const client = await socket();
    client.send({ id: 1, connect: { token: await token(second.key, channel) } }, { id: 2, subscribe: { channel } });
    expect(await client.next(2)).toEqual({ id: 2, subscribe: {} });
    await revoke(second.id);
    // The run is started by the workspace's other key; its end is published to the channel.
    expect((await call(`/workflows/${workflowId}/run`, { method: "POST", key: ws.key, json: { input_variables: {}, channel_name_suffix: s } })).status).toBe(201);
    expect(await client.closed()).toEqual({ code: 3500, reason: "the token's key was revoked" });
    expect(client.inbox.some((m) => m.push)).toBe(false);
  });
});

describe("the keys a channel's sockets hold", () => {
  it("are looked up however many: past the 90th as well as the first, a revoked one left out, another workspace's never live", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    for (let i = 0; i < 95; i++) await addKey(ws);
    const ids = (await env.DB.prepare("SELECT id FROM api_keys WHERE workspace_id = ? ORDER BY id").bind(ws.workspaceId).all<{ id: number }>()).results.map((r) => r.id);
    expect(ids.length).toBe(96);
    expect((await liveKeyIds(env.DB, ws.workspaceId, ids)).size).toBe(96);
    const revoked = ids[93];
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").bind(Date.now(), revoked).run();
    const live = await liveKeyIds(env.DB, ws.workspaceId, ids);
    expect(live.size).toBe(95);
    expect(live.has(revoked)).toBe(false);
    expect(live.has(ids[95])).toBe(true);
    expect((await liveKeyIds(env.DB, other.workspaceId, ids)).size).toBe(0);
  });
});
