// External IDs: one mechanism for every entity type (attach, list, detach, lookup, on create).
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

let ws: TestKey;
let other: TestKey;
const chat = { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "Hi {name}" }] }] };
let n = 0;
const uniq = (p: string) => `${p}-${Date.now()}-${++n}`;

async function newTemplate(key: string, extra: Record<string, unknown> = {}) {
  const res = await call("/rest/prompt-templates", { method: "POST", key, json: { prompt_template: { prompt_name: uniq("tpl") }, prompt_version: { prompt_template: chat }, ...extra } });
  expect(res.status).toBe(200);
  return (await json(res)).id as number;
}
async function newFolder(key: string, extra: Record<string, unknown> = {}) {
  const res = await call("/api/public/v2/folders", { method: "POST", key, json: { name: uniq("f"), ...extra } });
  expect(res.status).toBe(201);
  return (await json(res)).folder.id as number;
}
async function newTool(key: string, extra: Record<string, unknown> = {}) {
  const name = uniq("tool");
  const res = await call("/api/public/v2/tool-registry", { method: "POST", key, json: { name, tool_definition: { type: "function", function: { name: "f" } }, ...extra } });
  expect(res.status).toBe(201);
  return (await json(res)).tool_registry.id as number;
}

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

const kinds = [
  { kind: "prompt template", base: "/prompt-templates", make: newTemplate, list: (q: string) => `/prompt-templates?${q}`, ids: (b: any) => b.items.map((i: any) => i.id) },
  { kind: "folder", base: "/api/public/v2/folders", make: newFolder, list: (q: string) => `/api/public/v2/folders/entities?filter_type=FOLDER&${q}`, ids: (b: any) => b.entities.map((i: any) => i.id) },
  { kind: "tool", base: "/api/public/v2/tool-registry", make: newTool, list: (q: string) => `/api/public/v2/tool-registry?${q}`, ids: (b: any) => b.tool_registries.map((i: any) => i.id) },
];

describe.each(kinds)("external IDs of a $kind", ({ base, make, list, ids }) => {
  it("attach (201) is idempotent on the same entity, 409 on another, and lists oldest first", async () => {
    const a = await make(ws.key);
    const b = await make(ws.key);
    const pair = { source: "crm", external_id: uniq("x") };
    const first = await call(`${base}/${a}/external-ids`, { method: "POST", key: ws.key, json: pair });
    expect(first.status).toBe(201);
    expect(await json(first)).toEqual({ success: true, external_id: pair });
    const again = await call(`${base}/${a}/external-ids`, { method: "POST", key: ws.key, json: pair });
    expect(again.status).toBe(201);
    const clash = await call(`${base}/${b}/external-ids`, { method: "POST", key: ws.key, json: pair });
    expect(clash.status).toBe(409);
    expect(await json(clash)).toMatchObject({ success: false, error: "conflict" });
    const second = { source: "erp", external_id: "e/1 ü" };
    expect((await call(`${base}/${a}/external-ids`, { method: "POST", key: ws.key, json: second })).status).toBe(201);
    const listed = await json(await call(`${base}/${a}/external-ids`, { key: ws.key }));
    expect(listed).toEqual({ success: true, external_ids: [pair, second] });
    expect(await json(await call(`${base}/${b}/external-ids`, { key: ws.key }))).toEqual({ success: true, external_ids: [] });
  });

  it("looks the entity up on its list endpoint, and finds nothing for an unknown mapping", async () => {
    const a = await make(ws.key);
    await make(ws.key);
    const pair = { source: "gh", external_id: uniq("lookup") };
    await call(`${base}/${a}/external-ids`, { method: "POST", key: ws.key, json: pair });
    const q = `external_source=${pair.source}&external_id=${encodeURIComponent(pair.external_id)}`;
    const found = await call(list(q), { key: ws.key });
    expect(found.status).toBe(200);
    expect(ids(await json(found))).toEqual([a]);
    expect(ids(await json(await call(list(`external_source=gh&external_id=nope`), { key: ws.key })))).toEqual([]);
    // Another workspace neither sees the mapping nor conflicts with it.
    expect(ids(await json(await call(list(q), { key: other.key })))).toEqual([]);
    const mine = await make(other.key);
    expect((await call(`${base}/${mine}/external-ids`, { method: "POST", key: other.key, json: pair })).status).toBe(201);
  });

  it("needs both lookup parameters", async () => {
    const r = await call(list("external_source=gh"), { key: ws.key });
    expect(r.status).toBe(400);
    expect((await json(r)).message).toMatch(/external_id: is required with external_source/);
    const r2 = await call(list("external_id=x"), { key: ws.key });
    expect(r2.status).toBe(400);
  });

  it("detaches (200), then 404 for a mapping the entity does not carry; encoded slashes work", async () => {
    const a = await make(ws.key);
    const pair = { source: "s/rc", external_id: "a/b%c" };
    await call(`${base}/${a}/external-ids`, { method: "POST", key: ws.key, json: pair });
    const path = `${base}/${a}/external-ids/${encodeURIComponent(pair.source)}/${encodeURIComponent(pair.external_id)}`;
    const del = await call(path, { method: "DELETE", key: ws.key });
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ success: true });
    expect((await call(path, { method: "DELETE", key: ws.key })).status).toBe(404);
    expect((await json(await call(`${base}/${a}/external-ids`, { key: ws.key }))).external_ids).toEqual([]);
    // Freed: another entity may take it now.
    const b = await make(ws.key);
    expect((await call(`${base}/${b}/external-ids`, { method: "POST", key: ws.key, json: pair })).status).toBe(201);
  });

  it("limits source to 1..128 and external_id to 1..512 characters", async () => {
    const a = await make(ws.key);
    const post = (p: unknown) => call(`${base}/${a}/external-ids`, { method: "POST", key: ws.key, json: p });
    expect((await post({ source: "s".repeat(128), external_id: "i".repeat(512) })).status).toBe(201);
    const long = await post({ source: "s".repeat(129), external_id: "x" });
    expect(long.status).toBe(400);
    expect((await json(long)).message).toMatch(/source: must be 1 to 128 characters/);
    expect((await post({ source: "", external_id: "x" })).status).toBe(400);
    const longId = await post({ source: "s", external_id: "i".repeat(513) });
    expect((await json(longId)).message).toMatch(/external_id: must be 1 to 512 characters/);
    expect((await post({ source: "s", external_id: "" })).status).toBe(400);
    expect((await post({ source: "s" })).status).toBe(400);
    expect((await call(`${base}/${a}/external-ids/${"s".repeat(129)}/x`, { method: "DELETE", key: ws.key })).status).toBe(400);
    expect((await call(list(`external_source=${"s".repeat(129)}&external_id=x`), { key: ws.key })).status).toBe(400);
  });

  it("is 404 for another workspace's entity and for unknown ids, 400 for malformed ids", async () => {
    const theirs = await make(other.key);
    await call(`${base}/${theirs}/external-ids`, { method: "POST", key: other.key, json: { source: "a", external_id: "b" } });
    for (const init of [{ method: "POST", json: { source: "a", external_id: "c" } }, { method: "GET" }]) {
      expect((await call(`${base}/${theirs}/external-ids`, { ...init, key: ws.key })).status).toBe(404);
    }
    expect((await call(`${base}/${theirs}/external-ids/a/b`, { method: "DELETE", key: ws.key })).status).toBe(404);
    expect((await json(await call(`${base}/${theirs}/external-ids`, { key: other.key }))).external_ids).toHaveLength(1);
    expect((await call(`${base}/99999999/external-ids`, { key: ws.key })).status).toBe(404);
    expect((await call(`${base}/0x10/external-ids`, { key: ws.key })).status).toBe(400);
    expect((await call(`${base}/1/external-ids`)).status).toBe(401);
  });

  it("accepts external_ids on create; a mapping taken by another entity makes the create a 409 that creates nothing", async () => {
    const pair = { source: "create", external_id: uniq("c") };
    const a = await make(ws.key, { external_ids: [pair, pair] });
    expect((await json(await call(`${base}/${a}/external-ids`, { key: ws.key }))).external_ids).toEqual([pair]);
    const before = ids(await json(await call(list(""), { key: ws.key }))).length;
    const body = base.includes("folders")
      ? { name: uniq("f"), external_ids: [pair] }
      : base.includes("tool")
        ? { name: uniq("t"), tool_definition: { type: "function", function: { name: "f" } }, external_ids: [pair] }
        : { prompt_template: { prompt_name: uniq("tpl") }, prompt_version: { prompt_template: chat }, external_ids: [pair] };
    const path = base.includes("folders") ? base : base.includes("tool") ? base : "/rest/prompt-templates";
    const r = await call(path, { method: "POST", key: ws.key, json: body });
    expect(r.status).toBe(409);
    expect(ids(await json(await call(list(""), { key: ws.key }))).length).toBe(before);
  });
});

describe("concurrent attaches", () => {
  it("20 attaches of one mapping to 20 different entities: exactly one success, 19 conflicts", async () => {
    const tools = await Promise.all(Array.from({ length: 20 }, () => newTool(ws.key)));
    const pair = { source: "race", external_id: uniq("r") };
    const results = await Promise.all(tools.map((id) => call(`/api/public/v2/tool-registry/${id}/external-ids`, { method: "POST", key: ws.key, json: pair })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const found = await json(await call(`/api/public/v2/tool-registry?external_source=race&external_id=${pair.external_id}`, { key: ws.key }));
    expect(found.tool_registries).toHaveLength(1);
    const winner = tools[results.findIndex((r) => r.status === 201)];
    expect(found.tool_registries[0].id).toBe(winner);
  });

  it("the same mapping of different entity types does not conflict", async () => {
    const pair = { source: "shared", external_id: uniq("s") };
    const t = await newTemplate(ws.key);
    const f = await newFolder(ws.key);
    expect((await call(`/prompt-templates/${t}/external-ids`, { method: "POST", key: ws.key, json: pair })).status).toBe(201);
    expect((await call(`/api/public/v2/folders/${f}/external-ids`, { method: "POST", key: ws.key, json: pair })).status).toBe(201);
  });
});
