import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";
import { importFile, newTable } from "../helpers/tables";

let ws: TestKey;
let other: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
});

const sheetsOf = (tableId: string) => `/api/public/v2/tables/${tableId}/sheets`;

async function blank(tableId: string, body: Record<string, unknown> = {}, key = ws.key) {
  const res = await call(sheetsOf(tableId), { method: "POST", key, json: body });
  return { status: res.status, body: await json(res) };
}

async function order(tableId: string, key = ws.key): Promise<string[]> {
  const b = await json(await call(`${sheetsOf(tableId)}?limit=100`, { key }));
  b.data.forEach((s: { index: number }, i: number) => expect(s.index).toBe(i));
  return b.data.map((s: { title: string }) => s.title);
}

describe("POST /tables/{id}/sheets without a source: a blank sheet", () => {
  it("201 with the sheet: Column A and one empty row, titled Sheet N, appended", async () => {
    const t = await newTable(ws);
    const a = await blank(t.id);
    expect(a.status).toBe(201);
    expect(a.body).toEqual({ success: true, sheet: expect.objectContaining({ title: "Sheet 1", index: 0, row_count: 1, version_count: 1, table_id: t.id, workspace_id: ws.workspaceId }) });
    expect(Object.keys(a.body.sheet).sort()).toEqual(["created_at", "id", "index", "row_count", "table_id", "title", "updated_at", "version_count", "workspace_id"]);
    const b = await blank(t.id, { title: "Mine" });
    expect(b.body.sheet).toMatchObject({ title: "Mine", index: 1 });
    expect((await blank(t.id)).body.sheet).toMatchObject({ title: "Sheet 3", index: 2 });
    const rows = await env.SHEETS.get(env.SHEETS.idFromName(a.body.sheet.id)).readRows({ limit: 10 });
    expect(rows.rowCount).toBe(1);
    expect(Object.values(rows.rows[0].cells)).toEqual([expect.objectContaining({ row_index: 0, display_value: null, value: null, status: "COMPLETED" })]);
  });

  it("index places the sheet and shifts the others; past the end appends; a negative index is a 400", async () => {
    const t = await newTable(ws);
    for (const title of ["A", "B", "C"]) await blank(t.id, { title });
    expect((await blank(t.id, { title: "first", index: 0 })).body.sheet.index).toBe(0);
    expect((await blank(t.id, { title: "mid", index: 2 })).body.sheet.index).toBe(2);
    expect((await blank(t.id, { title: "last", index: 99 })).body.sheet.index).toBe(5);
    expect(await order(t.id)).toEqual(["first", "A", "mid", "B", "C", "last"]);
    for (const index of [-1, 1.5, "2"]) expect((await blank(t.id, { index })).status, String(index)).toBe(400);
  });

  it("operation_id without a source is a 400; so are bad titles, a non-object body and malformed JSON", async () => {
    const t = await newTable(ws);
    expect((await blank(t.id, { operation_id: "op-1" })).body.message).toMatch(/^operation_id/);
    expect((await blank(t.id, { title: "" })).status).toBe(400);
    expect((await blank(t.id, { source: { type: "ftp" } })).body.message).toMatch(/^source/);
    const arr = await call(sheetsOf(t.id), { method: "POST", key: ws.key, body: "[1]", headers: { "content-type": "application/json" } });
    expect(arr.status).toBe(400);
    const broken = await call(sheetsOf(t.id), { method: "POST", key: ws.key, body: '{"title": "x",', headers: { "content-type": "application/json" } });
    expect(broken.status).toBe(400);
    expect((await json(broken)).message).toMatch(/malformed JSON/);
    const text = await call(sheetsOf(t.id), { method: "POST", key: ws.key, body: "title=x", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect(await order(t.id)).toEqual([]);
  });

  it("a table_id that is not a UUID is a 400 naming it, checked after the key (401 without one)", async () => {
    const bad = await call(sheetsOf("not-a-uuid"), { method: "POST", key: ws.key, json: {} });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ error: "validation_error", message: expect.stringMatching(/^table_id: /) });
    expect((await call(sheetsOf("not-a-uuid"), { method: "POST", json: {} })).status).toBe(401);
  });
});

describe("GET|PATCH|DELETE a sheet, and the sheet list", () => {
  it("moves a sheet with PATCH index, renames it, and closes the gap on DELETE", async () => {
    const t = await newTable(ws);
    const ids: Record<string, string> = {};
    for (const title of ["A", "B", "C", "D"]) ids[title] = (await blank(t.id, { title })).body.sheet.id;
    const patch = (id: string, body: unknown) => call(`${sheetsOf(t.id)}/${id}`, { method: "PATCH", key: ws.key, json: body });
    const moved = await patch(ids.A, { index: 2 });
    expect(moved.status).toBe(200);
    expect(await json(moved)).toMatchObject({ success: true, sheet: { index: 2, title: "A" }, version: 1 });
    expect(await order(t.id)).toEqual(["B", "C", "A", "D"]);
    await patch(ids.D, { index: 0, title: "D2" });
    expect(await order(t.id)).toEqual(["D2", "B", "C", "A"]);
    await patch(ids.B, { index: 50 });
    expect(await order(t.id)).toEqual(["D2", "C", "A", "B"]);
    expect((await patch(ids.B, { index: -1 })).status).toBe(400);
    const del = await call(`${sheetsOf(t.id)}/${ids.C}`, { method: "DELETE", key: ws.key });
    expect(await json(del)).toEqual({ success: true, message: "Sheet deleted" });
    expect(await order(t.id)).toEqual(["D2", "A", "B"]);
    expect((await call(`${sheetsOf(t.id)}/${ids.C}`, { key: ws.key })).status).toBe(404);
  });

  it("lists by index with cursor paging in both orders", async () => {
    const t = await newTable(ws);
    for (let i = 0; i < 5; i++) await blank(t.id, { title: `s${i}` });
    const page = async (q: string) => json(await call(`${sheetsOf(t.id)}?${q}`, { key: ws.key }));
    const p1 = await page("limit=2");
    expect(p1.data.map((s: { title: string }) => s.title)).toEqual(["s0", "s1"]);
    const p2 = await page(`limit=2&cursor=${p1.next_cursor}`);
    const p3 = await page(`limit=2&cursor=${p2.next_cursor}`);
    expect([...p2.data, ...p3.data].map((s: { title: string }) => s.title)).toEqual(["s2", "s3", "s4"]);
    expect(p3.has_more).toBe(false);
    expect((await page("order=desc&limit=100")).data.map((s: { title: string }) => s.title)).toEqual(["s4", "s3", "s2", "s1", "s0"]);
    for (const bad of ["limit=0", "limit=101", "cursor=zzz", "order=sideways"]) expect((await call(`${sheetsOf(t.id)}?${bad}`, { key: ws.key })).status, bad).toBe(400);
  });

  it("another workspace's table or sheet is 404 on every sheet endpoint", async () => {
    const t = await newTable(ws);
    const s = (await blank(t.id)).body.sheet;
    const op = await json(await importFile(ws, t.id, "x.csv", "a\n1\n"));
    const paths: [string, string, unknown?][] = [
      ["GET", sheetsOf(t.id)],
      ["POST", sheetsOf(t.id), {}],
      ["GET", `${sheetsOf(t.id)}/${s.id}`],
      ["PATCH", `${sheetsOf(t.id)}/${s.id}`, { title: "x" }],
      ["DELETE", `${sheetsOf(t.id)}/${s.id}`],
      ["GET", `${sheetsOf(t.id)}/operations/${op.operation_id}`],
    ];
    for (const [method, path, body] of paths) {
      const res = await call(path, { method, key: other.key, json: body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    // The sheet under another table of the same workspace is not found either.
    const t2 = await newTable(ws);
    expect((await call(`${sheetsOf(t2.id)}/${s.id}`, { key: ws.key })).status).toBe(404);
    expect((await call(`${sheetsOf(t2.id)}/operations/${op.operation_id}`, { key: ws.key })).status).toBe(404);
    expect((await call(`${sheetsOf(t.id)}/${s.id}`, { key: ws.key })).status).toBe(200);
  });
});
