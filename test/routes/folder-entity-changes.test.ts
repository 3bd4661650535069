// POST and DELETE /api/public/v2/folders/entities (move, delete) and GET /api/public/v2/folders/resolve-id.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

const chat = { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "x" }] }] };
const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;

async function folder(key: string, name: string, parent_id?: number): Promise<number> {
  const res = await call("/api/public/v2/folders", { method: "POST", key, json: { name, parent_id } });
  expect(res.status).toBe(201);
  return (await json(res)).folder.id;
}
async function prompt(key: string, folder_id?: number): Promise<{ id: number; name: string }> {
  const name = uniq("p");
  const res = await call("/rest/prompt-templates", { method: "POST", key, json: { prompt_template: { prompt_name: name, folder_id }, prompt_version: { prompt_template: chat } } });
  expect(res.status).toBe(200);
  return { id: (await json(res)).id, name };
}
async function tool(key: string, folder_id?: number): Promise<number> {
  const res = await call("/api/public/v2/tool-registry", {
    method: "POST",
    key,
    json: { name: uniq("t"), folder_id, tool_definition: { type: "function", function: { name: "t" } }, external_ids: [{ source: "s", external_id: uniq("x") }] },
  });
  expect(res.status).toBe(201);
  return (await json(res)).tool_registry.id;
}
async function datasetGroup(key: string, folder_id?: number): Promise<number> {
  const res = await call("/api/public/v2/dataset-groups", { method: "POST", key, json: { name: uniq("set"), folder_id } });
  expect(res.status).toBe(201);
  return (await json(res)).dataset_group.id;
}
async function workflow(key: string, folder_id?: number): Promise<number> {
  const res = await call("/rest/workflows", {
    method: "POST",
    key,
    json: { name: uniq("wf"), folder_id, nodes: [{ name: "out", node_type: "VARIABLE", is_output_node: true, configuration: { value: { type: "string", value: "x" } }, dependencies: [] }] },
  });
  expect(res.status).toBe(201);
  return (await json(res)).workflow_id;
}
const entities = async (key: string, q: string) => {
  const res = await call(`/api/public/v2/folders/entities?${q}`, { key });
  expect(res.status).toBe(200);
  return (await json(res)).entities.map((e: any) => `${e.type}:${e.id}`);
};
const move = (key: string, body: unknown) => call("/api/public/v2/folders/entities", { method: "POST", key, json: body });
const del = (key: string, body: unknown) => call("/api/public/v2/folders/entities", { method: "DELETE", key, json: body });

let ws: TestKey;
let other: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

describe("POST /api/public/v2/folders/entities (move)", () => {
  it("moves entities of several types into a folder and back to the root", async () => {
    const dest = await folder(ws.key, uniq("dest"));
    const p = await prompt(ws.key);
    const t = await tool(ws.key);
    const g = await datasetGroup(ws.key);
    const w = await workflow(ws.key);
    const f = await folder(ws.key, uniq("child"));
    const res = await move(ws.key, {
      folder_id: dest,
      entities: [
        { id: p.id, type: "PROMPT" },
        { id: t, type: "TOOL_REGISTRY" },
        { id: g, type: "DATASET" },
        { id: w, type: "WORKFLOW" },
        { id: f, type: "FOLDER" },
      ],
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ success: true, moved_count: 5 });
    expect((await entities(ws.key, `folder_id=${dest}`)).sort()).toEqual(
      [`FOLDER:${f}`, `PROMPT:${p.id}`, `TOOL_REGISTRY:${t}`, `DATASET:${g}`, `WORKFLOW:${w}`].sort(),
    );
    const back = await move(ws.key, { folder_id: null, entities: [{ id: p.id, type: "SNIPPET" }] });
    expect(await json(back)).toEqual({ success: true, moved_count: 1 });
    expect(await entities(ws.key, `folder_id=${dest}&filter_type=PROMPT`)).toEqual([]);
    expect(await entities(ws.key, "filter_type=PROMPT")).toContain(`PROMPT:${p.id}`);
  });

  it("moves all or nothing: an unknown, foreign or nonexistent-type entity is a 404 and nothing moves", async () => {
    const dest = await folder(ws.key, uniq("dest"));
    const p = await prompt(ws.key);
    const theirs = await prompt(other.key);
    for (const bad of [{ id: theirs.id, type: "PROMPT" }, { id: 99_999_999, type: "PROMPT" }, { id: 1, type: "AB_TEST" }]) {
      const res = await move(ws.key, { folder_id: dest, entities: [{ id: p.id, type: "PROMPT" }, bad] });
      expect(res.status).toBe(404);
      expect(await json(res)).toMatchObject({ success: false, error: "not_found", message: expect.stringMatching(/^entities:/) });
    }
    expect(await entities(ws.key, `folder_id=${dest}`)).toEqual([]);
    const foreignDest = await folder(other.key, uniq("theirs"));
    expect((await move(ws.key, { folder_id: foreignDest, entities: [{ id: p.id, type: "PROMPT" }] })).status).toBe(404);
    expect((await move(ws.key, { workspace_id: other.workspaceId, entities: [{ id: p.id, type: "PROMPT" }] })).status).toBe(404);
    expect((await move(other.key, { folder_id: null, entities: [{ id: p.id, type: "PROMPT" }] })).status).toBe(404);
  });

  it("refuses a folder moved into itself or below itself (400), and a sibling name clash (409)", async () => {
    const a = await folder(ws.key, uniq("a"));
    const b = await folder(ws.key, "same", a);
    expect((await move(ws.key, { folder_id: a, entities: [{ id: a, type: "FOLDER" }] })).status).toBe(400);
    const below = await move(ws.key, { folder_id: b, entities: [{ id: a, type: "FOLDER" }] });
    expect(below.status).toBe(400);
    expect((await json(below)).message).toMatch(/itself or one of its subfolders/);
    const c = await folder(ws.key, uniq("c"));
    const clash = await folder(ws.key, "same", c);
    const res = await move(ws.key, { folder_id: a, entities: [{ id: clash, type: "FOLDER" }] });
    expect(res.status).toBe(409);
    expect(await entities(ws.key, `folder_id=${c}`)).toEqual([`FOLDER:${clash}`]);
  });

  it("validates the body: 1 to 500 entities, known types, positive ids", async () => {
    const p = await prompt(ws.key);
    expect((await move(ws.key, { entities: [] })).status).toBe(400);
    expect((await move(ws.key, {})).status).toBe(400);
    expect((await move(ws.key, { entities: [{ id: p.id, type: "BOGUS" }] })).status).toBe(400);
    expect((await move(ws.key, { entities: [{ id: 0, type: "PROMPT" }] })).status).toBe(400);
    expect((await move(ws.key, { entities: [{ id: "x", type: "PROMPT" }] })).status).toBe(400);
    const many = Array.from({ length: 500 }, () => ({ id: p.id, type: "PROMPT" }));
    expect(await json(await move(ws.key, { entities: many }))).toEqual({ success: true, moved_count: 1 });
    const tooMany = await move(ws.key, { entities: [...many, { id: p.id, type: "PROMPT" }] });
    expect(tooMany.status).toBe(400);
    expect((await json(tooMany)).message).toMatch(/entities: must list 1 to 500 entities/);
  });
});

describe("DELETE /api/public/v2/folders/entities", () => {
  it("deletes a prompt with its versions: the name is free again and the template is gone", async () => {
    const p = await prompt(ws.key);
    const res = await del(ws.key, { entities: [{ id: p.id, type: "PROMPT" }] });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ success: true, moved_count: 1 });
    expect((await call(`/prompt-templates/${p.name}`, { key: ws.key })).status).toBe(404);
    const again = await call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: p.name }, prompt_version: { prompt_template: chat } } });
    expect(again.status).toBe(200);
    expect((await del(ws.key, { entities: [{ id: p.id, type: "PROMPT" }] })).status).toBe(404);
  });

  it("refuses a non-empty folder without cascade (400, nothing deleted); cascade deletes everything below", async () => {
    const top = await folder(ws.key, uniq("top"));
    const mid = await folder(ws.key, "mid", top);
    const p = await prompt(ws.key, mid);
    const t = await tool(ws.key, top);
    const w = await workflow(ws.key, mid);
    const g = await datasetGroup(ws.key, mid);
    const refused = await del(ws.key, { entities: [{ id: top, type: "FOLDER" }] });
    expect(refused.status).toBe(400);
    expect((await json(refused)).message).toMatch(/is not empty; send cascade=true/);
    expect((await entities(ws.key, `folder_id=${top}&flatten=true`)).length).toBe(5);

    const res = await del(ws.key, { entities: [{ id: top, type: "FOLDER" }], cascade: true });
    expect(await json(res)).toEqual({ success: true, moved_count: 6 });
    expect((await call(`/api/public/v2/folders/entities?folder_id=${top}`, { key: ws.key })).status).toBe(404);
    expect(await entities(ws.key, "flatten=true")).not.toEqual(expect.arrayContaining([`PROMPT:${p.id}`]));
    expect((await call(`/api/public/v2/tool-registry/${t}`, { key: ws.key })).status).toBe(404);
    expect((await call(`/workflows/${w}`, { key: ws.key })).status).toBe(404);
    expect((await entities(ws.key, "flatten=true&filter_type=DATASET"))).not.toContain(`DATASET:${g}`);
  });

  it("deletes an empty folder without cascade; another workspace's entity is a 404 and nothing is deleted", async () => {
    const empty = await folder(ws.key, uniq("empty"));
    const mine = await prompt(ws.key);
    const theirs = await prompt(other.key);
    const res = await del(ws.key, { entities: [{ id: mine.id, type: "PROMPT" }, { id: theirs.id, type: "PROMPT" }] });
    expect(res.status).toBe(404);
    expect((await call(`/prompt-templates/${mine.name}`, { key: ws.key })).status).toBe(200);
    expect((await call(`/prompt-templates/${theirs.name}`, { key: other.key })).status).toBe(200);
    expect(await json(await del(ws.key, { entities: [{ id: empty, type: "FOLDER" }] }))).toEqual({ success: true, moved_count: 1 });
  });
});

describe("GET /api/public/v2/folders/resolve-id", () => {
  it("resolves a dotted path, including names that hold dots; an unknown path is a 404", async () => {
    const root = uniq("Team");
    const a = await folder(ws.key, root);
    const b = await folder(ws.key, "Evals", a);
    const dotted = await folder(ws.key, "v1.2", b);
    const get = (path: string, key = ws.key) => call(`/api/public/v2/folders/resolve-id?path=${encodeURIComponent(path)}`, { key });
    expect(await json(await get(root))).toEqual({ success: true, id: a });
    expect(await json(await get(`${root}.Evals`))).toEqual({ success: true, id: b });
    expect(await json(await get(`${root}.Evals.v1.2`))).toEqual({ success: true, id: dotted });
    expect((await get(`${root}.Nope`)).status).toBe(404);
    expect((await get(`${root}.Evals.v1`)).status).toBe(404);
    expect((await get(root, other.key)).status).toBe(404);
    expect((await call(`/api/public/v2/folders/resolve-id?path=${root}&workspace_id=${other.workspaceId}`, { key: ws.key })).status).toBe(404);
    expect((await call("/api/public/v2/folders/resolve-id", { key: ws.key })).status).toBe(400);
    expect((await get("x".repeat(4097))).status).toBe(400);
  });
});
