// Columns of a sheet: TEXT and computed columns checked against the blocks' schemas, dependencies by id
// or title, an acyclic graph, STALE cells on create / reconfigure / delete, versions, isolation.
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "../helpers/api";
import { addColumn, addRows, newSheet, rows } from "../helpers/sheet-data";

const combine = (...sources: string[]) => ({ type: "COMBINE_COLUMNS", config: { sources } });

describe("columns", () => {
  it("lists the blank sheet's Column A, and adds a TEXT column at the end (201, one new version)", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const before = await json(await call(`${s.base}/columns`, { key: ws.key }));
    expect(before).toMatchObject({ has_more: false, next_cursor: null });
    expect(before.data).toEqual([
      expect.objectContaining({ id: s.columnA, sheet_id: s.sheetId, workspace_id: ws.workspaceId, title: "Column A", type: "TEXT", config: {}, dependencies: [], is_output_column: false }),
    ]);
    const res = await call(`${s.base}/columns`, { method: "POST", key: ws.key, json: { title: "notes", type: "TEXT" } });
    expect(res.status).toBe(201);
    const b = await json(res);
    expect(b).toMatchObject({ success: true, version: 2, stale_count: 0, column: { title: "notes", type: "TEXT" } });
    expect(b.cells).toEqual([expect.objectContaining({ column_id: b.column.id, row_index: 0, status: "COMPLETED", display_value: null })]);
    const after = await json(await call(`${s.base}/columns`, { key: ws.key }));
    expect(after.data.map((c: any) => c.title)).toEqual(["Column A", "notes"]);
    expect(after.data[1].position_rank).toBeGreaterThan(after.data[0].position_rank);
    const sheet = await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }));
    expect(sheet.sheet.version_count).toBe(2);
  });

  it("pages the column list with limit and cursor", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    for (const t of ["b", "c"]) await addColumn(s, { title: t, type: "TEXT" });
    const p1 = await json(await call(`${s.base}/columns?limit=2`, { key: ws.key }));
    expect(p1.data.map((c: any) => c.title)).toEqual(["Column A", "b"]);
    expect(p1.has_more).toBe(true);
    const p2 = await json(await call(`${s.base}/columns?limit=2&cursor=${p1.next_cursor}`, { key: ws.key }));
    expect(p2).toMatchObject({ has_more: false, next_cursor: null });
    expect(p2.data.map((c: any) => c.title)).toEqual(["c"]);
    expect((await call(`${s.base}/columns?limit=101`, { key: ws.key })).status).toBe(400);
    expect((await call(`${s.base}/columns?cursor=nope!`, { key: ws.key })).status).toBe(400);
  });

  it("creates a computed column's cells STALE for every existing row", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 3 });
    const b = await addColumn(s, { title: "both", ...combine("Column A") });
    expect(b.stale_count).toBe(4);
    expect(b.cells.map((c: any) => c.status)).toEqual(["STALE", "STALE", "STALE", "STALE"]);
    const page = await rows(s);
    expect(page.data.map((r: any) => r.cells[b.column.id].status)).toEqual(["STALE", "STALE", "STALE", "STALE"]);
  });

  it("checks config against the block's schema and the type against the blocks that compute", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const post = (body: unknown) => call(`${s.base}/columns`, { method: "POST", key: ws.key, json: body });
    const cases: [unknown, RegExp][] = [
      [{ title: "x", type: "COMBINE_COLUMNS", config: {} }, /^config\.sources: /],
      [{ title: "x", type: "MATH_OPERATOR", config: { sources: ["Column A"], operator: "nope", value: 1 } }, /^config\.operator: /],
      [{ title: "x", type: "NOT_A_BLOCK", config: {} }, /^type: "NOT_A_BLOCK" is not a column type/],
      [{ title: "x", type: "HUMAN", config: {} }, /^type: HUMAN blocks cannot run here/],
      [{ title: "x", type: "COMBINE_COLUMNS", config: { sources: ["nope"] } }, /^config: reads "nope", which is not the title of a column/],
      [{ title: "x", type: "COMBINE_COLUMNS", config: "a string" }, /^config: /],
      [{ type: "TEXT" }, /^title: /],
      [{ title: "", type: "TEXT" }, /^title: /],
      [{ title: "x", type: "TEXT", dependencies: [s.columnA] }, /^dependencies: a TEXT column reads no other column/],
      [{ title: "x", ...combine("Column A"), dependencies: [{ column_id: "missing" }] }, /^dependencies\[0\]: no column with id or title "missing"/],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      const b = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(b).toMatchObject({ success: false, error: "validation_error" });
      expect(b.message).toMatch(message);
    }
    // Nothing was created and no version spent.
    expect((await json(await call(`${s.base}/columns`, { key: ws.key }))).data).toHaveLength(1);
    expect((await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }))).sheet.version_count).toBe(1);
  });

  it("takes dependencies by column id or by title (as the SDK sends them), and applies the block's defaults", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const q = await addColumn(s, { title: "question", type: "TEXT" });
    const byTitle = await addColumn(s, { title: "ep", type: "ENDPOINT", config: { url: "http://fake-endpoint.test/x" }, dependencies: [{ column_id: "question" }, "column a"] });
    expect(byTitle.column).toMatchObject({
      config: { url: "http://fake-endpoint.test/x", method: "POST" },
      dependencies: [
        { column_id: s.columnA, reference_type: "value", config_key: null },
        { column_id: q.column.id, reference_type: "value", config_key: null },
      ],
    });
    const byId = await addColumn(s, { title: "cmp", type: "COMPARE", config: { sources: ["question", "ep"] }, dependencies: [{ column_id: q.column.id.toUpperCase(), reference_type: "value" }] });
    expect((byId.column as any).dependencies).toEqual([{ column_id: q.column.id, reference_type: "value", config_key: null }]);
  });

  it("refuses a change that would make the column graph cyclic (400, nothing changed)", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const b = await addColumn(s, { title: "B", ...combine("Column A") });
    const c = await addColumn(s, { title: "C", ...combine("B") });
    const d = await addColumn(s, { title: "D", ...combine("C") });
    const patch = (id: string, body: unknown) => call(`${s.base}/columns/${id}`, { method: "PATCH", key: ws.key, json: body });
    let res = await patch(b.column.id, { config: { sources: ["D"] } });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toBe('dependencies: would create a cycle: "B" reads "D" reads "C" reads "B"');
    res = await patch(c.column.id, { dependencies: [{ column_id: d.column.id }] });
    expect(res.status).toBe(400);
    res = await patch(b.column.id, { dependencies: ["B"] });
    expect((await json(res)).message).toBe('dependencies: would create a cycle: "B" reads "B"');
    const cols = await json(await call(`${s.base}/columns`, { key: ws.key }));
    expect(cols.data.find((x: any) => x.id === b.column.id).config).toEqual({ sources: ["Column A"] });
    expect((await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }))).sheet.version_count).toBe(4);
    // An edge that keeps the graph acyclic is accepted.
    res = await patch(d.column.id, { config: { sources: ["C", "B"] } });
    expect(res.status).toBe(200);
  });

  it("reconfiguring marks the column's cells and everything downstream STALE and says how many", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 1, values: [{ [s.columnA]: "x" }] });
    const b = await addColumn(s, { title: "B", ...combine("Column A") });
    const c = await addColumn(s, { title: "C", ...combine("B") });
    const other = await addColumn(s, { title: "other", type: "TEXT" });
    const op = await json(await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: {} }));
    expect(op.cell_count).toBe(4);
    await waitFor(s, op.operation_id);
    const res = await call(`${s.base}/columns/${b.column.id}`, { method: "PATCH", key: ws.key, json: { config: { sources: ["Column A", "other"] } } });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, requires_recalculation: true, stale_count: 4, affected_column_ids: [b.column.id, c.column.id] });
    expect(body.column.config).toEqual({ sources: ["Column A", "other"] });
    const page = await rows(s);
    expect(page.data.map((r: any) => [r.cells[b.column.id].status, r.cells[c.column.id].status])).toEqual([["STALE", "STALE"], ["STALE", "STALE"]]);
    // A title, output flag or position change is not a reconfiguration.
    const again = await json(await call(`${s.base}/columns/${c.column.id}`, { method: "PATCH", key: ws.key, json: { title: "C2", is_output_column: true, position_rank: 0.5 } }));
    expect(again).toMatchObject({ requires_recalculation: false, stale_count: 0, affected_column_ids: [], column: { title: "C2", is_output_column: true, position_rank: 0.5 } });
    expect((await json(await call(`${s.base}/columns`, { key: ws.key }))).data[0].title).toBe("C2");
    void other;
  });

  it("renames only when no config reads the column by title, and keeps titles unique", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addColumn(s, { title: "B", ...combine("Column A") });
    const t = await addColumn(s, { title: "free", type: "TEXT" });
    let res = await call(`${s.base}/columns/${s.columnA}`, { method: "PATCH", key: ws.key, json: { title: "renamed" } });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^title: "B" read this column by its title/);
    res = await call(`${s.base}/columns/${t.column.id}`, { method: "PATCH", key: ws.key, json: { title: "b" } });
    expect(res.status).toBe(409);
    res = await call(`${s.base}/columns/${t.column.id}`, { method: "PATCH", key: ws.key, json: { type: "COMPARE" } });
    expect(res.status).toBe(400);
    res = await call(`${s.base}/columns/${t.column.id}`, { method: "PATCH", key: ws.key, json: { title: "free text" } });
    expect(res.status).toBe(200);
    // POST with a taken title gets a suffix.
    expect((await addColumn(s, { title: "free text", type: "TEXT" })).column.title).toBe("free text (2)");
  });

  it("a PATCH that names nothing is a 400, one that changes nothing a 200; neither spends a version; one change is enough", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const sheetVersion = async () => (await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }))).sheet.version_count;
    const before = await sheetVersion();
    for (const body of [{}, { title: null, config: null }]) {
      const res = await call(`${s.base}/columns/${s.columnA}`, { method: "PATCH", key: ws.key, json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await json(res)).message).toMatch(/give at least one of title/);
    }
    expect(await sheetVersion()).toBe(before);
    // Values the column already has change nothing either: 200 with the current version, none spent.
    const columnA = (await json(await call(`${s.base}/columns`, { key: ws.key }))).data.find((c: any) => c.id === s.columnA);
    for (const body of [{ type: "TEXT" }, { title: columnA.title }, { is_output_column: false, position_rank: columnA.position_rank }]) {
      const same = await call(`${s.base}/columns/${s.columnA}`, { method: "PATCH", key: ws.key, json: body });
      expect(same.status, JSON.stringify(body)).toBe(200);
      expect(await json(same), JSON.stringify(body)).toMatchObject({ version: before, stale_count: 0 });
    }
    expect(await sheetVersion()).toBe(before);
    const ok = await call(`${s.base}/columns/${s.columnA}`, { method: "PATCH", key: ws.key, json: { is_output_column: true } });
    expect(ok.status).toBe(200);
    expect((await json(ok)).version).toBe(before + 1);
  });

  it("deleting a column deletes its cells and marks everything downstream STALE", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 2, values: [{ [s.columnA]: "1" }, { [s.columnA]: "2" }] });
    const b = await addColumn(s, { title: "B", ...combine("Column A") });
    const c = await addColumn(s, { title: "C", ...combine("B") });
    const op = await json(await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: {} }));
    await waitFor(s, op.operation_id);
    const cellOfB = (await rows(s)).data[1].cells[b.column.id].id;
    const res = await call(`${s.base}/columns/${b.column.id}`, { method: "DELETE", key: ws.key });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, stale_count: 3 });
    expect((await call(`${s.base}/cells/${cellOfB}`, { key: ws.key })).status).toBe(404);
    const page = await rows(s);
    expect(Object.keys(page.data[0].cells).sort()).toEqual([s.columnA, c.column.id].sort());
    expect(page.data.map((r: any) => r.cells[c.column.id].status)).toEqual(["STALE", "STALE", "STALE"]);
    expect((await call(`${s.base}/columns/${b.column.id}`, { method: "DELETE", key: ws.key })).status).toBe(404);
    expect((await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }))).sheet.version_count).toBe(body.version);
  });

  it("answers 404 for another workspace's table, sheet or column, and changes nothing", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const s = await newSheet(ws);
    const mine = await newSheet(other);
    const k = other.key;
    expect((await call(`${s.base}/columns`, { key: k })).status).toBe(404);
    expect((await call(`${s.base}/columns`, { method: "POST", key: k, json: { title: "x", type: "TEXT" } })).status).toBe(404);
    expect((await call(`${s.base}/columns/${s.columnA}`, { method: "PATCH", key: k, json: { title: "x" } })).status).toBe(404);
    expect((await call(`${s.base}/columns/${s.columnA}`, { method: "DELETE", key: k })).status).toBe(404);
    // Own table and sheet, another workspace's column id.
    expect((await call(`${mine.base}/columns/${s.columnA}`, { method: "PATCH", key: k, json: { title: "x" } })).status).toBe(404);
    expect((await call(`${mine.base}/columns/${s.columnA}`, { method: "DELETE", key: k })).status).toBe(404);
    // Own table with another workspace's sheet id.
    expect((await call(`/api/public/v2/tables/${mine.tableId}/sheets/${s.sheetId}/columns`, { key: k })).status).toBe(404);
    const cols = await json(await call(`${s.base}/columns`, { key: ws.key }));
    expect(cols.data.map((c: any) => c.title)).toEqual(["Column A"]);
  });
});

async function waitFor(s: Parameters<typeof rows>[0], opId: string) {
  const { waitOperation } = await import("../helpers/sheet-data");
  return waitOperation(s, opId);
}
