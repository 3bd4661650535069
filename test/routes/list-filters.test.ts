// The filters every resource list shares: creator e-mail (without regard to case), created and updated
// bounds (inclusive, on both sides of each), the external-ID lookup where the resources carry external IDs,
// 400 for a bad value, and another workspace's users and mappings never matching.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { sha256Hex, toHex } from "../../src/lib/crypto";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;
const T = {
  created1: Date.UTC(2026, 0, 1),
  created2: Date.UTC(2026, 1, 1),
  updated1: Date.UTC(2026, 2, 1),
  updated2: Date.UTC(2026, 1, 15),
};
const iso = (ms: number) => new Date(ms).toISOString();

/** A second user of the workspace, with a key of its own. */
async function addUser(ws: TestKey, email: string): Promise<string> {
  const key = `pe_${toHex(crypto.getRandomValues(new Uint8Array(24)))}`;
  const user = await env.DB.prepare("INSERT INTO users (workspace_id, email) VALUES (?, ?) RETURNING id").bind(ws.workspaceId, email).first<{ id: number }>();
  await env.DB.prepare("INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix) VALUES (?, ?, ?, ?)")
    .bind(ws.workspaceId, user!.id, await sha256Hex(key), key.slice(0, 11))
    .run();
  return key;
}

async function made(res: Response): Promise<any> {
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBeLessThan(300);
  return b;
}

type Ext = { source: string; external_id: string }[];

interface ListCase {
  /** The list's path, with any query it always needs. */
  list: string;
  names: (body: any) => string[];
  /** Makes one resource named `name` with the key, answering its id. */
  create: (key: string, name: string, ext: Ext) => Promise<string | number>;
  /** The statement that sets its times. */
  touch: (id: string | number, created: number, updated: number) => D1PreparedStatement;
  externalIds: boolean;
}

const times = (table: string, where = "id = ?") => (id: string | number, created: number, updated: number) =>
  env.DB.prepare(`UPDATE ${table} SET created_at = ?, updated_at = ? WHERE ${where}`).bind(created, updated, id);

const chat = { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
const tool = { type: "function", function: { name: "f", description: "d", parameters: { type: "object", properties: {} } } };
const group = async (key: string, name: string, ext: Ext = []) =>
  (await made(await call("/api/public/v2/dataset-groups", { method: "POST", key, json: { name, external_ids: ext } }))).dataset_group.id as number;

/** A group whose draft is made a saved version of one row in D1 (what an evaluation needs), as the evaluation tests do. */
async function savedGroup(key: string, name: string): Promise<number> {
  const g = await made(await call("/api/public/v2/dataset-groups", { method: "POST", key, json: { name } }));
  await env.DB.prepare(`INSERT INTO dataset_rows (workspace_id, dataset_id, job_id, position, "values") SELECT workspace_id, id, 0, 0, json_object('a', 'x') FROM datasets WHERE id = ?`)
    .bind(g.dataset.id)
    .run();
  await env.DB.prepare(`UPDATE datasets SET version_number = 1, column_names = '["a"]' WHERE id = ?`).bind(g.dataset.id).run();
  return g.dataset_group.id;
}

const CASES: Record<string, ListCase> = {
  "GET /prompt-templates": {
    list: "/prompt-templates?per_page=100",
    names: (b) => b.items.map((i: any) => i.prompt_name),
    create: async (key, name, ext) =>
      (await made(await call("/rest/prompt-templates", { method: "POST", key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat }, external_ids: ext } }))).id,
    touch: times("prompt_templates"),
    externalIds: true,
  },
  "GET /workflows": {
    list: "/workflows?per_page=100",
    names: (b) => b.items.map((i: any) => i.name),
    create: async (key, name, ext) =>
      (
        await made(
          await call("/rest/workflows", {
            method: "POST",
            key,
            json: { name, external_ids: ext, nodes: [{ name: "out", node_type: "VARIABLE", is_output_node: true, configuration: { value: { type: "string", value: "x" } }, dependencies: [] }] },
          }),
        )
      ).workflow_id,
    touch: times("workflows"),
    externalIds: true,
  },
  "GET /api/public/v2/datasets": {
    list: "/api/public/v2/datasets?name=lf-ds&per_page=100",
    names: (b) => b.datasets.map((d: any) => d.dataset_group.name),
    create: (key, name, ext) => group(key, `lf-ds-${name}`, ext),
    // A dataset is listed by its own times (the group's version row).
    touch: times("datasets", "dataset_group_id = ?"),
    externalIds: true,
  },
  "GET /api/public/v2/evaluations": {
    list: "/api/public/v2/evaluations?per_page=100",
    names: (b) => b.evaluations.map((e: any) => e.name),
    create: async (key, name, ext) =>
      (
        await made(
          await call("/reports", {
            method: "POST",
            key,
            json: { dataset_group_id: await savedGroup(key, uniq("lf-eval-data")), name, external_ids: ext, columns: [{ column_type: "CONTAINS", name: "c", configuration: { source: "a", value: "x" } }] },
          }),
        )
      ).report_id,
    touch: times("reports"),
    externalIds: true,
  },
  "GET /api/public/v2/skill-collections": {
    list: "/api/public/v2/skill-collections",
    names: (b) => b.skill_collections.map((s: any) => s.name),
    create: async (key, name, ext) =>
      (await made(await call("/api/public/v2/skill-collections", { method: "POST", key, json: { name, provider: "claude_code", external_ids: ext, files: [{ path: "SKILL.md", content: "x" }] } })))
        .skill_collection.id,
    touch: times("skill_collections"),
    externalIds: true,
  },
  "GET /api/public/v2/tool-registry": {
    list: "/api/public/v2/tool-registry",
    names: (b) => b.tool_registries.map((t: any) => t.name),
    create: async (key, name, ext) => (await made(await call("/api/public/v2/tool-registry", { method: "POST", key, json: { name, tool_definition: tool, external_ids: ext } }))).tool_registry.id,
    touch: times("tool_registry"),
    externalIds: true,
  },
  "GET /api/public/v2/folders/entities": {
    list: "/api/public/v2/folders/entities?filter_type=FOLDER",
    names: (b) => b.entities.map((e: any) => e.name),
    create: async (key, name, ext) => (await made(await call("/api/public/v2/folders", { method: "POST", key, json: { name, external_ids: ext } }))).folder.id,
    touch: times("folders"),
    externalIds: true,
  },
  "GET /api/public/v2/tables": {
    list: "/api/public/v2/tables?limit=100",
    names: (b) => b.data.map((t: any) => t.title),
    create: async (key, name) => (await made(await call("/api/public/v2/tables", { method: "POST", key, json: { title: name } }))).table.id,
    touch: times("smart_tables"),
    externalIds: false,
  },
};

describe.each(Object.entries(CASES))("%s", { timeout: 60_000 }, (_, c) => {
  let ws: TestKey;
  let other: TestKey;
  let emailB: string;
  const n = { first: uniq("first"), second: uniq("second"), theirs: uniq("theirs") };
  const ext = (id: string): Ext => (c.externalIds ? [{ source: "crm", external_id: id }] : []);
  const listed = async (query: string, key = ws.key) => {
    const res = await call(`${c.list}${c.list.includes("?") ? "&" : "?"}${query}`, { key });
    const b = await json(res);
    expect(res.status, `${query}: ${JSON.stringify(b)}`).toBe(200);
    return c.names(b).filter((x) => x.includes(n.first) || x.includes(n.second) || x.includes(n.theirs)).sort();
  };
  const mine = (...which: ("first" | "second")[]) => which.map((w) => n[w]).map((x) => expect.stringContaining(x));

  beforeAll(async () => {
    ws = await createWorkspace();
    other = await createWorkspace();
    emailB = `${uniq("second-user")}@example.test`;
    const keyB = await addUser(ws, emailB);
    const first = await c.create(ws.key, n.first, ext("acct-1"));
    const second = await c.create(keyB, n.second, ext("acct-2"));
    // Another workspace: the same external ID, and a user with ws's first e-mail's twin.
    await c.create(other.key, n.theirs, ext("acct-1"));
    await c.touch(first, T.created1, T.updated1).run();
    await c.touch(second, T.created2, T.updated2).run();
  });

  it("lists both without a filter", async () => {
    expect(await listed("")).toEqual(mine("first", "second"));
  });

  it("filters by creator e-mail, without regard to case; an unknown or another workspace's e-mail matches nothing", async () => {
    expect(await listed(`created_by_email=${encodeURIComponent(ws.email.toUpperCase())}`)).toEqual(mine("first"));
    expect(await listed(`created_by_email=${encodeURIComponent(emailB)}`)).toEqual(mine("second"));
    expect(await listed("created_by_email=nobody%40example.test")).toEqual([]);
    expect(await listed(`created_by_email=${encodeURIComponent(other.email)}`)).toEqual([]);
  });

  it("bounds the creation time, inclusive on both sides", async () => {
    expect(await listed(`created_after=${iso(T.created2)}`)).toEqual(mine("second"));
    expect(await listed(`created_after=${iso(T.created2 + 1)}`)).toEqual([]);
    expect(await listed(`created_before=${iso(T.created1)}`)).toEqual(mine("first"));
    expect(await listed(`created_before=${iso(T.created1 - 1)}`)).toEqual([]);
    expect(await listed(`created_after=${T.created1 / 1000}&created_before=${T.created2}`)).toEqual(mine("first", "second"));
  });

  it("bounds the update time, inclusive on both sides", async () => {
    expect(await listed(`updated_after=${iso(T.updated1)}`)).toEqual(mine("first"));
    expect(await listed(`updated_after=${iso(T.updated1 + 1)}`)).toEqual([]);
    expect(await listed(`updated_before=${iso(T.updated2)}`)).toEqual(mine("second"));
    expect(await listed(`updated_before=${iso(T.updated2 - 1)}`)).toEqual([]);
  });

  it("combines the filters (all must hold)", async () => {
    expect(await listed(`created_by_email=${encodeURIComponent(ws.email)}&created_after=${iso(T.created2)}`)).toEqual([]);
    expect(await listed(`created_by_email=${encodeURIComponent(emailB)}&updated_before=${iso(T.updated1)}`)).toEqual(mine("second"));
  });

  if (c.externalIds) {
    it("finds a resource by external ID, never another workspace's", async () => {
      expect(await listed("external_source=crm&external_id=acct-1")).toEqual(mine("first"));
      expect(await listed("external_source=crm&external_id=acct-2")).toEqual(mine("second"));
      expect(await listed("external_source=crm&external_id=acct-9")).toEqual([]);
      expect(await listed("external_source=crm&external_id=acct-1", other.key)).toEqual([expect.stringContaining(n.theirs)]);
      expect(await listed(`external_source=crm&external_id=acct-1&created_by_email=${encodeURIComponent(emailB)}`)).toEqual([]);
    });

    it("refuses external_source without external_id, and the reverse, with 400", async () => {
      for (const q of ["external_source=crm", "external_id=acct-1"]) expect((await call(`${c.list}${c.list.includes("?") ? "&" : "?"}${q}`, { key: ws.key })).status, q).toBe(400);
    });
  }

  it.each(["created_after=yesterday", "created_before=2026-13-45", "updated_after=soon", "updated_before=", "created_by_email="])("refuses %s with 400 naming it", async (q) => {
    const res = await call(`${c.list}${c.list.includes("?") ? "&" : "?"}${q}`, { key: ws.key });
    const b = await json(res);
    expect(res.status, JSON.stringify(b)).toBe(400);
    expect(b.message).toContain(q.split("=")[0]);
  });

  it("documents the filters in /openapi.json", async () => {
    const [path] = c.list.split("?");
    const doc = await json(await call("/openapi.json"));
    const names = doc.paths[path].get.parameters.map((p: any) => p.name);
    expect(names).toEqual(expect.arrayContaining(["created_by_email", "created_after", "created_before", "updated_after", "updated_before", ...(c.externalIds ? ["external_source", "external_id"] : [])]));
  });
});
