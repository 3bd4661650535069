// The redaction policy's routes: off by default (logs stored exactly as sent), saved (checked: a
// pattern that cannot run in linear time is refused), tried without storing anything, removed; each
// workspace's own.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, logsDb, scopedKey, type TestKey } from "../helpers/api";
import { logBody, text } from "../helpers/fixtures";
import { PLANTED, PLANTED_TEXT } from "../redaction/samples";

const POLICY = "/api/public/v2/redaction-policy";
let ws: TestKey;
let other: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

const put = (w: TestKey, body: unknown) => call(POLICY, { method: "PUT", key: w.key, json: body });
const logText = async (w: TestKey, t: string, extra: Record<string, unknown> = {}) => {
  const res = await call("/log-request", { method: "POST", key: w.key, json: logBody({ input: { type: "chat", messages: [{ role: "user", content: text(t) }] }, ...extra }) });
  expect(res.status).toBe(201);
  return json(await call(`/api/public/v2/requests/${(await json(res)).id}`, { key: w.key }));
};
const tryOut = (w: TestKey, body: unknown) => call(`${POLICY}/test`, { method: "POST", key: w.key, json: body });

describe("off by default", () => {
  it("no policy: GET says so, and a log keeps every value as sent, with no counts", async () => {
    const fresh = await createWorkspace();
    expect(await json(await call(POLICY, { key: fresh.key }))).toEqual({ success: true, enabled: false, detectors: [], custom: [], fields: [], updated_at: null });
    const log = await logText(fresh, PLANTED_TEXT, { metadata: { who: PLANTED.email }, tags: [PLANTED.email] });
    expect(log.input.messages[0].content[0].text).toBe(PLANTED_TEXT);
    expect(log.metadata).toEqual({ who: PLANTED.email });
    expect(log.tags).toEqual([PLANTED.email]);
    expect(log.redactions).toEqual({});
    const row = await (await logsDb(fresh)).prepare("SELECT redactions FROM request_logs WHERE id = ?").bind(log.request_id).first<{ redactions: string | null }>();
    expect(row!.redactions).toBeNull();
  });
});

describe("PUT /api/public/v2/redaction-policy", () => {
  it("saves a policy that takes effect on the next log, answered without its hash key; DELETE turns it off", async () => {
    const saved = await put(ws, { detectors: [{ type: "email", action: "hash" }, { type: "phone", action: "mask", region: "GB" }], custom: [{ name: "ticket", pattern: "TCK-[0-9]{4}", action: "mask" }] });
    expect(saved.status).toBe(200);
    const body = await json(saved);
    expect(body).toMatchObject({ enabled: true, detectors: [{ type: "email", action: "hash" }, { type: "phone", action: "mask", region: "GB" }], custom: [{ name: "ticket", pattern: "TCK-[0-9]{4}", action: "mask" }] });
    expect(body.fields).toHaveLength(10);
    expect(JSON.stringify(body)).not.toContain("hash_key");
    expect(await json(await call(POLICY, { key: ws.key }))).toEqual(body);

    const log = await logText(ws, `mail ${PLANTED.email}, call 020 7946 0958, ticket TCK-1234, card ${PLANTED.payment_card}`);
    expect(log.input.messages[0].content[0].text).toMatch(/^mail \[EMAIL:[0-9a-f]{10}\], call \[PHONE\], ticket \[TICKET\], card 4111 1111 1111 1111$/);
    expect(log.redactions).toEqual({ email: 1, phone: 1, ticket: 1 });

    // A new policy keeps the hash key: the same address hashes the same.
    const hashed = /\[EMAIL:[0-9a-f]{10}\]/.exec(log.input.messages[0].content[0].text)![0];
    await put(ws, { detectors: [{ type: "email", action: "hash" }] });
    expect((await logText(ws, PLANTED.email)).input.messages[0].content[0].text).toBe(hashed);

    // Another workspace's logs are not touched by this policy.
    expect((await logText(other, PLANTED.email)).input.messages[0].content[0].text).toBe(PLANTED.email);

    expect(await json(await call(POLICY, { method: "DELETE", key: ws.key }))).toMatchObject({ enabled: false });
    expect((await logText(ws, PLANTED.email)).input.messages[0].content[0].text).toBe(PLANTED.email);
    await put(ws, { detectors: [{ type: "email", action: "mask" }] });
  });

  it("refuses what it cannot run safely, naming it, and changes nothing", async () => {
    const before = await json(await call(POLICY, { key: ws.key }));
    const refused = async (body: unknown, field: string) => {
      const res = await put(ws, body);
      const b = await json(res);
      expect(res.status, JSON.stringify(b)).toBe(400);
      expect(b.message).toContain(field);
      return b.message as string;
    };
    expect(await refused({ custom: [{ name: "bad", pattern: "(a+)\\1", action: "mask" }] }, "custom[0].pattern")).toMatch(/linear time/);
    expect(await refused({ custom: [{ name: "look", pattern: "(?<=x)y", action: "mask" }] }, "custom[0].pattern")).toMatch(/linear time/);
    expect(await refused({ custom: [{ name: "big", pattern: "[a-z]{300}[0-9]{300}", action: "mask" }] }, "custom[0].pattern")).toMatch(/too large/);
    await refused({ detectors: [{ type: "passport", action: "mask" }] }, "detectors");
    await refused({ detectors: [{ type: "email", action: "encrypt" }] }, "detectors");
    await refused({ detectors: [{ type: "email", action: "mask", region: "US" }] }, "detectors[0].region");
    await refused({ fields: ["everything"] }, "fields");
    await refused({ custom: Array.from({ length: 21 }, (_, i) => ({ name: `p${i}`, pattern: "x", action: "mask" })) }, "custom");
    expect(await json(await call(POLICY, { key: ws.key }))).toEqual(before);
  });

  it("takes the admin scope to change; settings:read to read and try", async () => {
    const reader = await scopedKey(ws, ["settings:read"]);
    expect((await call(POLICY, { key: reader })).status).toBe(200);
    expect((await tryOut({ ...ws, key: reader }, { text: PLANTED.email })).status).toBe(200);
    const res = await put({ ...ws, key: reader }, { detectors: [] });
    expect(res.status).toBe(403);
    expect((await json(res)).message).toContain("admin");
    expect((await call(POLICY, { method: "DELETE", key: reader })).status).toBe(403);
    expect((await call(POLICY, { key: await scopedKey(ws, ["logs:write"]) })).status).toBe(403);
  });
});

describe("POST /api/public/v2/redaction-policy/test", () => {
  it("shows what a text or a log body would become under the saved policy or a given one, and stores nothing", async () => {
    const w = await createWorkspace();
    const none = await json(await tryOut(w, { text: PLANTED_TEXT }));
    expect(none).toEqual({ success: true, source: "none", text: PLANTED_TEXT, redactions: {} });

    const given = await json(
      await tryOut(w, {
        text: PLANTED_TEXT,
        log: { input: { type: "chat", messages: [{ role: "user", content: text(PLANTED.iban) }] }, metadata: { card: PLANTED.payment_card }, error_message: `from ${PLANTED.ip_address}` },
        policy: { detectors: [{ type: "iban", action: "mask" }, { type: "payment_card", action: "drop" }, { type: "ip_address", action: "mask" }] },
      }),
    );
    expect(given.source).toBe("given");
    // The card's action is drop: the whole text goes.
    expect(given.text).toBe("");
    expect(given.log.input.messages[0].content[0].text).toBe("[IBAN]");
    expect(given.log.metadata).toEqual({});
    expect(given.log.error_message).toBe("from [IP_ADDRESS]");
    expect(given.redactions).toEqual({ iban: 2, payment_card: 2, ip_address: 2 });

    await put(w, { detectors: [{ type: "credential", action: "mask" }] });
    const saved = await json(await tryOut(w, { text: `key ${PLANTED.credential}` }));
    expect(saved).toEqual({ success: true, source: "saved", text: "key [CREDENTIAL]", redactions: { credential: 1 } });

    expect((await tryOut(w, {})).status).toBe(400);
    expect((await tryOut(w, { text: "x", policy: { custom: [{ name: "b", pattern: "(x)\\1", action: "mask" }] } })).status).toBe(400);
    const logs = await (await logsDb(w)).prepare("SELECT count(*) AS n FROM request_logs WHERE workspace_id = ?").bind(w.workspaceId).first<{ n: number }>();
    expect(logs!.n).toBe(0);
  });
});
