// Folders: create, rename (unique among siblings), paths, and GET /folders/entities.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

let ws: TestKey;
let other: TestKey;
const chat = { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "x" }] }] };

const mkFolder = async (key: string, name: string, parent_id?: number) => {
  const res = await call("/api/public/v2/folders", { method: "POST", key, json: { name, parent_id } });
  expect(res.status).toBe(201);
  return (await json(res)).folder;
};

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

describe("POST /api/public/v2/folders", () => {
  it("creates at root and nested, with the ancestors as path", async () => {
    const a = await mkFolder(ws.key, "A");
    expect(a).toMatchObject({ name: "A", parent_id: null, path: [], workspace_id: ws.workspaceId, external_ids: [] });
    const b = await mkFolder(ws.key, "B", a.id);
    const c = await mkFolder(ws.key, "C", b.id);
    expect(c.path).toEqual([{ id: a.id, name: "A" }, { id: b.id, name: "B" }]);
    expect(c).toMatchObject({ parent_id: b.id, created_at: expect.stringMatching(/Z$/) });
  });

  it("names are unique among siblings (409), also at root; the same name elsewhere is fine", async () => {
    const p = await mkFolder(ws.key, "uniq-parent");
    await mkFolder(ws.key, "dup", p.id);
    const again = await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: "dup", parent_id: p.id } });
    expect(again.status).toBe(409);
    expect(await json(again)).toMatchObject({ error: "conflict", message: expect.stringMatching(/^name:/) });
    await mkFolder(ws.key, "dup");
    expect((await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: "dup" } })).status).toBe(409);
    await mkFolder(other.key, "dup");
  });

  it("name 1..255; unknown or foreign parent 404; foreign workspace_id 404", async () => {
    expect((await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: "" } })).status).toBe(400);
    const long = await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: "n".repeat(256) } });
    expect((await json(long)).message).toMatch(/name: must be 1 to 255 characters/);
    await mkFolder(ws.key, "n".repeat(255));
    const theirs = await mkFolder(other.key, `t-${Date.now()}`);
    expect((await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: "x", parent_id: theirs.id } })).status).toBe(404);
    expect((await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: "x", parent_id: 99999999 } })).status).toBe(404);
    expect((await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: "x", workspace_id: other.workspaceId } })).status).toBe(404);
    expect((await call("/api/public/v2/folders", { method: "POST", key: ws.key, json: { name: "x", parent_id: "1" } })).status).toBe(400);
  });
});

describe("PATCH /api/public/v2/folders/{folder_id}", () => {
  it("renames; a sibling's name is a 409; another workspace's folder is a 404", async () => {
    const p = await mkFolder(ws.key, `rp-${Date.now()}`);
    const x = await mkFolder(ws.key, "x", p.id);
    await mkFolder(ws.key, "y", p.id);
    const ok = await call(`/api/public/v2/folders/${x.id}`, { method: "PATCH", key: ws.key, json: { name: "z" } });
    expect(ok.status).toBe(200);
    expect((await json(ok)).folder).toMatchObject({ id: x.id, name: "z", path: [{ id: p.id }] });
    expect((await call(`/api/public/v2/folders/${x.id}`, { method: "PATCH", key: ws.key, json: { name: "y" } })).status).toBe(409);
    expect((await call(`/api/public/v2/folders/${x.id}`, { method: "PATCH", key: ws.key, json: { name: "z" } })).status).toBe(200);
    expect((await call(`/api/public/v2/folders/${x.id}`, { method: "PATCH", key: other.key, json: { name: "q" } })).status).toBe(404);
    expect((await call(`/api/public/v2/folders/99999999`, { method: "PATCH", key: ws.key, json: { name: "q" } })).status).toBe(404);
    expect((await call(`/api/public/v2/folders/${x.id}`, { method: "PATCH", key: ws.key, json: { name: "" } })).status).toBe(400);
    expect((await call(`/api/public/v2/folders/${x.id}`, { method: "PATCH", key: ws.key, json: {} })).status).toBe(400);
  });
});

describe("GET /api/public/v2/folders/entities", () => {
  let w: TestKey;
  let root: any;
  let sub: any;
  beforeAll(async () => {
    w = await createWorkspace();
    root = await mkFolder(w.key, "Root");
    sub = await mkFolder(w.key, "Sub", root.id);
    await call("/rest/prompt-templates", { method: "POST", key: w.key, json: { prompt_template: { prompt_name: "top-prompt" }, prompt_version: { prompt_template: chat } } });
    await call("/rest/prompt-templates", { method: "POST", key: w.key, json: { prompt_template: { prompt_name: "in-root", folder_id: root.id }, prompt_version: { prompt_template: chat } } });
    await call("/rest/prompt-templates", { method: "POST", key: w.key, json: { prompt_template: { prompt_name: "deep-prompt", folder_id: sub.id }, prompt_version: { prompt_template: chat } } });
    await call("/api/public/v2/tool-registry", { method: "POST", key: w.key, json: { name: "deep-tool", folder_id: sub.id, tool_definition: { type: "function", function: { name: "t" } }, external_ids: [{ source: "s", external_id: "tool-1" }] } });
  });
  const names = (b: any) => b.entities.map((e: any) => `${e.type}:${e.name}`);
  const get = async (q: string, key = w.key) => {
    const res = await call(`/api/public/v2/folders/entities?${q}`, { key });
    expect(res.status, q).toBe(200);
    return json(res);
  };

  it("lists root level by default, a folder's direct children, or everything below with flatten", async () => {
    expect(names(await get(""))).toEqual(["FOLDER:Root", "PROMPT:top-prompt"]);
    expect(names(await get(`folder_id=${root.id}`))).toEqual(["FOLDER:Sub", "PROMPT:in-root"]);
    const flat = await get(`folder_id=${root.id}&flatten=true`);
    expect(names(flat)).toEqual(["FOLDER:Sub", "PROMPT:deep-prompt", "PROMPT:in-root", "TOOL_REGISTRY:deep-tool"]);
    const tool = flat.entities.find((e: any) => e.type === "TOOL_REGISTRY");
    expect(tool).toMatchObject({ folder_id: sub.id, path: ["Root", "Sub"], external_ids: [{ source: "s", external_id: "tool-1" }] });
    expect(names(await get("flatten=true"))).toHaveLength(6);
  });

  it("filters by type (one, repeated or comma-separated) and by name; metadata on request", async () => {
    expect(names(await get("flatten=true&filter_type=PROMPT"))).toEqual(["PROMPT:deep-prompt", "PROMPT:in-root", "PROMPT:top-prompt"]);
    expect(names(await get("flatten=true&filter_type=FOLDER&filter_type=TOOL_REGISTRY"))).toEqual(["FOLDER:Root", "FOLDER:Sub", "TOOL_REGISTRY:deep-tool"]);
    expect(names(await get("flatten=true&filter_type=FOLDER,WORKFLOW"))).toEqual(["FOLDER:Root", "FOLDER:Sub"]);
    expect(names(await get("flatten=true&search_query=DEEP"))).toEqual(["PROMPT:deep-prompt", "TOOL_REGISTRY:deep-tool"]);
    const meta = await get("filter_type=PROMPT&include_metadata=true");
    expect(meta.entities[0].metadata).toEqual({ type: "chat", latest_version_number: 1 });
    expect((await call("/api/public/v2/folders/entities?filter_type=BOGUS", { key: w.key })).status).toBe(400);
    expect((await call("/api/public/v2/folders/entities?flatten=maybe", { key: w.key })).status).toBe(400);
  });

  it("looks entities up by external ID across the workspace", async () => {
    expect(names(await get("external_source=s&external_id=tool-1"))).toEqual(["TOOL_REGISTRY:deep-tool"]);
    expect(names(await get(`folder_id=${root.id}&external_source=s&external_id=tool-1`))).toEqual(["TOOL_REGISTRY:deep-tool"]);
    expect(names(await get("external_source=s&external_id=none"))).toEqual([]);
  });

  it("never shows another workspace's entities; its folder is a 404", async () => {
    expect(names(await get("flatten=true", other.key))).not.toContain("PROMPT:deep-prompt");
    expect(names(await get("external_source=s&external_id=tool-1", other.key))).toEqual([]);
    expect((await call(`/api/public/v2/folders/entities?folder_id=${root.id}`, { key: other.key })).status).toBe(404);
    expect((await call(`/api/public/v2/folders/entities?workspace_id=${w.workspaceId}`, { key: other.key })).status).toBe(404);
    expect((await call(`/api/public/v2/folders/entities?workspace_id=${w.workspaceId}`, { key: w.key })).status).toBe(200);
  });
});
