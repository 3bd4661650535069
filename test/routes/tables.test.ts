import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";
import { newFolder, newTable } from "../helpers/tables";

const TABLES = "/api/public/v2/tables";
let ws: TestKey;
let other: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

async function list(key: string, query = "") {
  const res = await call(`${TABLES}${query ? `?${query}` : ""}`, { key });
  return { status: res.status, body: await json(res) };
}

/** Pages through the whole list and returns the ids in the order seen. */
async function allIds(key: string, query: string, between?: (page: number) => Promise<void>) {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const q: string = [query, cursor ? `cursor=${encodeURIComponent(cursor)}` : ""].filter(Boolean).join("&");
    const { status, body } = await list(key, q);
    expect(status, JSON.stringify(body)).toBe(200);
    ids.push(...body.data.map((t: { id: string }) => t.id));
    if (!body.has_more) {
      expect(body.next_cursor).toBeNull();
      return ids;
    }
    cursor = body.next_cursor;
    await between?.(page);
  }
  throw new Error("too many pages");
}

describe("POST /api/public/v2/tables", () => {
  it("creates a table with a default Sheet 1 (Column A, one empty row): 201", async () => {
    const res = await call(TABLES, { method: "POST", key: ws.key, json: { title: "Regression suite" } });
    expect(res.status).toBe(201);
    const b = await json(res);
    expect(b.success).toBe(true);
    expect(b.table).toMatchObject({ title: "Regression suite", workspace_id: ws.workspaceId, folder_id: null, sheet_count: 1 });
    expect(b.table.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.default_sheet).toMatchObject({ title: "Sheet 1", index: 0, row_count: 1, version_count: 1, table_id: b.table.id });
    expect(b.table.sheet_row_counts).toEqual({ [b.default_sheet.id]: 1 });
    const cols = await env.SHEETS.get(env.SHEETS.idFromName(b.default_sheet.id)).listColumns();
    expect(cols.map((c) => [c.title, c.type])).toEqual([["Column A", "TEXT"]]);
  });

  it("without a default sheet when create_default_sheet is false; unique Untitled Table titles", async () => {
    const w = await createWorkspace();
    const a = await call(TABLES, { method: "POST", key: w.key, json: { create_default_sheet: false } });
    const b = await call(TABLES, { method: "POST", key: w.key });
    const ba = await json(a);
    expect(ba.table).toMatchObject({ title: "Untitled Table", sheet_count: 0 });
    expect(ba.default_sheet).toBeUndefined();
    expect((await json(b)).table.title).toBe("Untitled Table 2");
  });

  it("validates title and folder_id", async () => {
    for (const body of [{ title: "" }, { title: "x".repeat(256) }, { folder_id: 0 }, { folder_id: -2 }, { folder_id: 1.5 }, { folder_id: "3" }, { create_default_sheet: "no" }]) {
      const res = await call(TABLES, { method: "POST", key: ws.key, json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await json(res)).error).toBe("validation_error");
    }
    const folder = await newFolder(ws);
    const ok = await call(TABLES, { method: "POST", key: ws.key, json: { title: "x".repeat(255), folder_id: folder } });
    expect(ok.status).toBe(201);
    expect((await json(ok)).table.folder_id).toBe(folder);
    // A folder that does not exist, or is another workspace's, is a 404.
    const theirs = await newFolder(other);
    for (const folder_id of [theirs, 987654]) {
      const res = await call(TABLES, { method: "POST", key: ws.key, json: { folder_id } });
      expect(res.status).toBe(404);
      expect((await json(res)).message).toMatch(/^folder_id/);
    }
  });
});

describe("GET|PATCH|DELETE /api/public/v2/tables/{table_id}", () => {
  it("gets, renames, moves between folders, deletes (then 404 everywhere)", async () => {
    const f3 = await newFolder(ws);
    const t = await newTable(ws, { title: "Before", folder_id: f3 });
    const got = await call(`${TABLES}/${t.id.toUpperCase()}`, { key: ws.key });
    expect(got.status).toBe(200);
    expect((await json(got)).table).toMatchObject({ id: t.id, title: "Before", folder_id: f3, sheet_count: 0 });

    const p1 = await call(`${TABLES}/${t.id}`, { method: "PATCH", key: ws.key, json: { title: "After" } });
    expect(p1.status).toBe(200);
    expect((await json(p1)).table).toMatchObject({ title: "After", folder_id: f3 });
    expect((await call(`${TABLES}/${t.id}`, { method: "PATCH", key: ws.key, json: { folder_id: 987654 } })).status).toBe(404);
    const p2 = await call(`${TABLES}/${t.id}`, { method: "PATCH", key: ws.key, json: { folder_id: null } });
    expect((await json(p2)).table).toMatchObject({ title: "After", folder_id: null });
    expect((await call(`${TABLES}/${t.id}`, { method: "PATCH", key: ws.key, json: { title: "" } })).status).toBe(400);

    const del = await call(`${TABLES}/${t.id}`, { method: "DELETE", key: ws.key });
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ success: true, message: "Table deleted" });
    expect((await call(`${TABLES}/${t.id}`, { key: ws.key })).status).toBe(404);
    expect((await call(`${TABLES}/${t.id}`, { method: "DELETE", key: ws.key })).status).toBe(404);
    expect(await allIds(ws.key, "limit=100")).not.toContain(t.id);
  });

  it("another workspace's table is 404 for every method, and never listed", async () => {
    const t = await newTable(ws, { title: "Private" });
    for (const [method, body] of [["GET"], ["PATCH", { title: "x" }], ["DELETE"]] as const) {
      const res = await call(`${TABLES}/${t.id}`, { method, key: other.key, json: body });
      expect(res.status, method).toBe(404);
      expect((await json(res)).error).toBe("not_found");
    }
    expect(await allIds(other.key, "limit=100")).not.toContain(t.id);
    expect((await call(`${TABLES}/${t.id}`, { key: ws.key })).status).toBe(200);
  });

  it("a malformed table id is a 400; an unknown one 404; no key 401", async () => {
    expect((await call(`${TABLES}/not-a-uuid`, { key: ws.key })).status).toBe(400);
    expect((await call(`${TABLES}/${crypto.randomUUID()}`, { key: ws.key })).status).toBe(404);
    expect((await call(`${TABLES}/${crypto.randomUUID()}`)).status).toBe(401);
  });
});

describe("GET /api/public/v2/tables: the list contract", () => {
  let w: TestKey;
  const made: { id: string; title: string }[] = [];
  let folder: number;
  beforeAll(async () => {
    w = await createWorkspace();
    folder = await newFolder(w);
    for (let i = 0; i < 25; i++) made.push(await newTable(w, { title: i % 5 === 0 ? `Évaluation ÜBER ${i}` : `plain ${i}`, folder_id: i % 2 ? folder : null }));
  });

  it("answers {data, next_cursor, has_more}, newest first, 20 by default", async () => {
    const { status, body } = await list(w.key);
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(["data", "has_more", "next_cursor"]);
    expect(body.data).toHaveLength(20);
    expect(body.has_more).toBe(true);
    expect(typeof body.next_cursor).toBe("string");
    expect(body.data.map((t: { id: string }) => t.id)).toEqual(made.slice(5).reverse().map((t) => t.id));
    expect(Object.keys(body.data[0]).sort()).toEqual(["created_at", "folder_id", "id", "sheet_count", "title", "updated_at", "workspace_id"]);
  });

  it("limit takes 1..100 (both sides checked) and order asc|desc", async () => {
    expect((await list(w.key, "limit=1")).body.data).toHaveLength(1);
    const all = await list(w.key, "limit=100");
    expect(all.body.data).toHaveLength(25);
    expect(all.body.has_more).toBe(false);
    expect(all.body.next_cursor).toBeNull();
    for (const bad of ["limit=0", "limit=101", "limit=-1", "limit=abc", "limit=1.5", "limit=", "order=up", "order=ASC"]) {
      const r = await list(w.key, bad);
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toBe("validation_error");
      expect(r.body.message).toMatch(/^(limit|order)/);
    }
    const asc = await list(w.key, "order=asc&limit=3");
    expect(asc.body.data.map((t: { id: string }) => t.id)).toEqual(made.slice(0, 3).map((t) => t.id));
  });

  it("pages with the cursor through every table exactly once, in both orders", async () => {
    for (const order of ["asc", "desc"]) {
      const ids = await allIds(w.key, `order=${order}&limit=7`);
      expect(ids).toHaveLength(25);
      expect(new Set(ids).size).toBe(25);
      expect(ids).toEqual(order === "asc" ? made.map((t) => t.id) : made.map((t) => t.id).reverse());
    }
  });

  it("visits every table exactly once while tables are being added between pages", async () => {
    const v = await createWorkspace();
    const before: string[] = [];
    for (let i = 0; i < 12; i++) before.push((await newTable(v, { title: `t${i}` })).id);
    for (const order of ["desc", "asc"]) {
      const added: string[] = [];
      const ids = await allIds(v.key, `order=${order}&limit=5`, async () => {
        const made = await Promise.all([newTable(v, { title: "late" }), newTable(v, { title: "late" })]);
        added.push(...made.map((t) => t.id));
      });
      expect(new Set(ids).size, "no duplicates").toBe(ids.length);
      for (const id of before) expect(ids.filter((x) => x === id)).toHaveLength(1);
      // Newest-first paging cannot show what was added above its position; oldest-first shows it all.
      if (order === "asc") for (const id of added) expect(ids).toContain(id);
      before.push(...added);
    }
  });

  it("an invalid cursor is a 400 naming the cursor; a cursor of the other order too", async () => {
    for (const bad of ["nope", "!!!", btoa("{}"), encodeURIComponent(btoa('{"o":"desc","k":"x"}'))]) {
      const r = await list(w.key, `cursor=${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.message).toMatch(/^cursor/);
    }
    const { body } = await list(w.key, "limit=2");
    const r = await list(w.key, `order=asc&cursor=${body.next_cursor}`);
    expect(r.status).toBe(400);
  });

  it("filters by name (case-insensitive contains, Unicode) and by folder_id", async () => {
    const byName = await list(w.key, `name=${encodeURIComponent("évaluation über")}&limit=100`);
    expect(byName.body.data.map((t: { title: string }) => t.title).sort()).toEqual(made.filter((t) => t.title.startsWith("É")).map((t) => t.title).sort());
    expect((await list(w.key, "name=PLAIN%201&limit=100")).body.data).toHaveLength(made.filter((t) => t.title.startsWith("plain 1")).length);
    expect((await list(w.key, "name=%25&limit=100")).body.data).toHaveLength(0);
    const inFolder = await list(w.key, `folder_id=${folder}&limit=100`);
    expect(inFolder.body.data).toHaveLength(12);
    expect(inFolder.body.data.every((t: { folder_id: number }) => t.folder_id === folder)).toBe(true);
    for (const bad of ["folder_id=0", "folder_id=x", "prompt_id=0", "prompt_version_id=-3", "prompt_label_id=a"]) {
      expect((await list(w.key, bad)).status, bad).toBe(400);
    }
  });

  it("sheet_count counts live sheets", async () => {
    const t = await newTable(w, { title: "counted" });
    const sheetOf = async () => json(await call(`${TABLES}/${t.id}/sheets`, { method: "POST", key: w.key, json: {} }));
    const s1 = await sheetOf();
    await sheetOf();
    await call(`${TABLES}/${t.id}/sheets/${s1.sheet.id}`, { method: "DELETE", key: w.key });
    const { body } = await list(w.key, "limit=1");
    expect(body.data[0]).toMatchObject({ id: t.id, sheet_count: 1 });
  });

  it("filters by prompt_id, prompt_version_id and prompt_label_id through the columns that reference them", async () => {
    const p = await createWorkspace();
    const withPrompt = await newTable(p, { title: "uses prompt" });
    const without = await newTable(p, { title: "no prompt" });
    const sheetIn = async (tableId: string) => (await json(await call(`${TABLES}/${tableId}/sheets`, { method: "POST", key: p.key, json: {} }))).sheet.id;
    const s1 = await sheetIn(withPrompt.id);
    await sheetIn(without.id);
    const stub = env.SHEETS.get(env.SHEETS.idFromName(s1));
    await stub.addColumn({ title: "answer", type: "PROMPT_TEMPLATE", config: { template: { prompt_id: 41, prompt_version_id: 42, prompt_label_id: 43 } } });
    const ids = async (q: string) => (await list(p.key, q)).body.data.map((t: { id: string }) => t.id);
    expect(await ids("prompt_id=41")).toEqual([withPrompt.id]);
    expect(await ids("prompt_version_id=42")).toEqual([withPrompt.id]);
    expect(await ids("prompt_label_id=43")).toEqual([withPrompt.id]);
    expect(await ids("prompt_id=41&prompt_version_id=99")).toEqual([]);
    expect(await ids("prompt_id=99")).toEqual([]);
    // Another workspace's references never match.
    expect((await list(ws.key, "prompt_id=41")).body.data).toEqual([]);
    // The sheet filter of the same references.
    const sheets = await json(await call(`${TABLES}/${withPrompt.id}/sheets?prompt_id=41`, { key: p.key }));
    expect(sheets.data.map((s: { id: string }) => s.id)).toEqual([s1]);
  });
});
