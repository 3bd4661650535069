// The tool registry: create (validated OpenAI function format), list, get by id/name/version/label, versions.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

let ws: TestKey;
let other: TestKey;
let n = 0;
const uniq = (p: string) => `${p}-${Date.now()}-${++n}`;
const def = (name = "get_weather", extra: Record<string, unknown> = {}) => ({
  type: "function",
  function: { name, description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, ...extra },
});
const create = (key: string, body: Record<string, unknown>) => call("/api/public/v2/tool-registry", { method: "POST", key, json: body });

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

describe("POST /api/public/v2/tool-registry", () => {
  it("creates the tool and version 1 (201); the name is unique per workspace (409)", async () => {
    const name = uniq("weather");
    const res = await create(ws.key, { name, description: "d", tool_definition: def(), commit_message: "first", release_labels: ["prod"] });
    expect(res.status).toBe(201);
    const b = await json(res);
    expect(b).toMatchObject({
      success: true,
      tool_registry: { name, description: "d", workspace_id: ws.workspaceId, folder_id: null, external_ids: [] },
      version: { version_number: 1, tool_definition: def(), commit_message: "first", labels: ["prod"], execution: null },
      external_ids: [],
    });
    expect((await create(ws.key, { name, tool_definition: def() })).status).toBe(409);
    expect((await create(other.key, { name, tool_definition: def() })).status).toBe(201);
  });

  it("validates tool_definition in OpenAI function format, and the name's length", async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: uniq("t") }, /tool_definition: is required/],
      [{ name: uniq("t"), tool_definition: { name: "f" } }, /tool_definition.type: must be "function"/],
      [{ name: uniq("t"), tool_definition: { type: "function" } }, /tool_definition.function: is required/],
      [{ name: uniq("t"), tool_definition: def("bad name") }, /tool_definition.function.name: must be 1 to 64 letters/],
      [{ name: uniq("t"), tool_definition: def("x".repeat(65)) }, /function.name: must be 1 to 64/],
      [{ name: uniq("t"), tool_definition: def("f", { parameters: { type: "string" } }) }, /function.parameters.type: must be "object"/],
      [{ name: "", tool_definition: def() }, /name: must be 1 to 255 characters/],
      [{ name: "n".repeat(256), tool_definition: def() }, /name: must be 1 to 255 characters/],
    ];
    for (const [body, msg] of cases) {
      const res = await create(ws.key, body as Record<string, unknown>);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect((await json(res)).message).toMatch(msg);
    }
    expect((await create(ws.key, { name: "n".repeat(255), tool_definition: def("x".repeat(64)) })).status).toBe(201);
  });

  it("places tools in a folder of the workspace only", async () => {
    const f = (await json(await call("/api/public/v2/folders", { method: "POST", key: other.key, json: { name: uniq("f") } }))).folder.id;
    expect((await create(ws.key, { name: uniq("t"), tool_definition: def(), folder_id: f })).status).toBe(404);
    expect((await create(other.key, { name: uniq("t"), tool_definition: def(), folder_id: f })).status).toBe(201);
  });
});

describe("versions and reads", () => {
  let id: number;
  let name: string;
  beforeAll(async () => {
    name = uniq("multi");
    id = (await json(await create(ws.key, { name, tool_definition: def("v1"), release_labels: ["prod"] }))).tool_registry.id;
  });

  it("POST /{identifier}/versions adds the next version (201) by id or name, moving labels", async () => {
    const r = await call(`/api/public/v2/tool-registry/${id}/versions`, { method: "POST", key: ws.key, json: { tool_definition: def("v2"), commit_message: "two" } });
    expect(r.status).toBe(201);
    expect((await json(r)).version).toMatchObject({ version_number: 2, tool_registry_id: id, commit_message: "two", labels: [] });
    const r3 = await call(`/api/public/v2/tool-registry/${name}/versions`, {
      method: "POST",
      key: ws.key,
      json: { tool_definition: def("v3"), release_labels: ["prod"], execution: { type: "code", language: "python", code: "return 1" } },
    });
    expect((await json(r3)).version).toMatchObject({ version_number: 3, labels: ["prod"], execution: { language: "python" } });
    expect((await call(`/api/public/v2/tool-registry/${id}/versions`, { method: "POST", key: ws.key, json: { tool_definition: { type: "x" } } })).status).toBe(400);
    expect((await call(`/api/public/v2/tool-registry/${id}/versions`, { method: "POST", key: other.key, json: { tool_definition: def() } })).status).toBe(404);
  });

  it("GET /{identifier}: latest by default, version or label selects", async () => {
    const latest = await json(await call(`/api/public/v2/tool-registry/${name}`, { key: ws.key }));
    expect(latest.tool_registry).toMatchObject({ id, name, version: { version_number: 3 }, tool_definition: def("v3") });
    expect(latest.tool_registry.labels).toEqual([{ id: expect.any(Number), name: "prod", tool_version_id: latest.tool_registry.version.id, version_number: 3 }]);
    expect((await json(await call(`/api/public/v2/tool-registry/${id}?version=2`, { key: ws.key }))).tool_registry.tool_definition).toEqual(def("v2"));
    expect((await json(await call(`/api/public/v2/tool-registry/${id}?label=prod`, { key: ws.key }))).tool_registry.version.version_number).toBe(3);
    expect((await call(`/api/public/v2/tool-registry/${id}?version=9`, { key: ws.key })).status).toBe(404);
    expect((await call(`/api/public/v2/tool-registry/${id}?label=nope`, { key: ws.key })).status).toBe(404);
    expect((await call(`/api/public/v2/tool-registry/${id}?version=x`, { key: ws.key })).status).toBe(400);
    expect((await call(`/api/public/v2/tool-registry/${id}?version=1&label=prod`, { key: ws.key })).status).toBe(400);
    expect((await call(`/api/public/v2/tool-registry/${id}`, { key: other.key })).status).toBe(404);
    expect((await call(`/api/public/v2/tool-registry/${name}`, { key: other.key })).status).toBe(404);
  });

  it("GET list shows the workspace's tools only, sorted as asked", async () => {
    const w = await createWorkspace();
    for (const t of ["b", "a", "c"]) await create(w.key, { name: t, tool_definition: def() });
    const asc = await json(await call("/api/public/v2/tool-registry?sort_by=name&sort_order=asc", { key: w.key }));
    expect(asc.tool_registries.map((t: any) => t.name)).toEqual(["a", "b", "c"]);
    expect(asc.tool_registries[0]).toMatchObject({ latest_version_number: 1, external_ids: [] });
    const byDefault = await json(await call("/api/public/v2/tool-registry", { key: w.key }));
    expect(byDefault.tool_registries.map((t: any) => t.name)).toEqual(["c", "a", "b"]);
    expect((await call("/api/public/v2/tool-registry?sort_by=x", { key: w.key })).status).toBe(400);
  });
});
