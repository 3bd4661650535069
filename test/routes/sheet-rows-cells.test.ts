// Rows and cells of a sheet: Add Rows exactly as the interface states, paging rows, reading cells,
// editing text cells with transitive same-row stale propagation, versions, isolation.
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "../helpers/api";
import { addColumn, addRows, cell, listedVersion, newSheet, patchCell, rows, waitOperation } from "../helpers/sheet-data";

const combine = (...sources: string[]) => ({ type: "COMBINE_COLUMNS", config: { sources } });

describe("POST rows", () => {
  it("appends count rows (default 1) and answers every field; text values set, computed cells STALE", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const b = await addColumn(s, { title: "B", ...combine("Column A") });
    const res = await call(`${s.base}/rows`, { method: "POST", key: ws.key, json: { count: 3, values: [{ [s.columnA]: "one" }, { [s.columnA]: { n: 2 } }] } });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, rows_created: 3, start_row_index: 1, row_indices: [1, 2, 3], cell_count: 6, row_count: 4, version: 3 });
    expect(body.rows.map((r: any) => r.row_index)).toEqual([1, 2, 3]);
    expect(body.rows.map((r: any) => [r.cells[s.columnA].display_value, r.cells[s.columnA].value, r.cells[s.columnA].status])).toEqual([
      ["one", "one", "COMPLETED"],
      ['{"n":2}', { n: 2 }, "COMPLETED"],
      [null, null, "COMPLETED"],
    ]);
    expect(body.rows.map((r: any) => r.cells[b.column.id].status)).toEqual(["STALE", "STALE", "STALE"]);
    expect(body.rows[0].cells[s.columnA]).toEqual(await cell(s, body.rows[0].cells[s.columnA].id));

    const one = await json(await call(`${s.base}/rows`, { method: "POST", key: ws.key }));
    expect(one).toMatchObject({ rows_created: 1, start_row_index: 4, row_indices: [4], row_count: 5, version: 4 });
    const byValues = await addRows(s, { values: [{}, {}] });
    expect(byValues).toMatchObject({ rows_created: 2, row_indices: [5, 6], row_count: 7 });
    const hundred = await addRows(s, { count: 100 });
    expect(hundred).toMatchObject({ rows_created: 100, row_count: 107, cell_count: 200 });
    // The sheet and its D1 listing agree with the answers.
    const sheet = await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }));
    expect(sheet.sheet).toMatchObject({ row_count: 107, version_count: hundred.version });
    const listed = await json(await call(`/api/public/v2/tables/${s.tableId}/sheets`, { key: ws.key }));
    expect(listed.data[0]).toMatchObject({ row_count: 107, version_count: hundred.version });
  });

  it("refuses count 0 and 101, computed or unknown column ids, more values than count, and a sheet without columns", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const b = await addColumn(s, { title: "B", ...combine("Column A") });
    const post = (body: unknown) => call(`${s.base}/rows`, { method: "POST", key: ws.key, json: body });
    const cases: [unknown, RegExp][] = [
      [{ count: 0 }, /^count: must be at least 1/],
      [{ count: 101 }, /^count: must be at most 100/],
      [{ count: 1.5 }, /^count: /],
      [{ count: "2" }, /^count: /],
      [{ values: [{ [b.column.id]: "x" }] }, /^values\[0\]\..*: column "B" is COMBINE_COLUMNS, not TEXT/],
      [{ values: [{ [crypto.randomUUID()]: "x" }] }, /^values\[0\]\..*: no column with this id/],
      [{ count: 1, values: [{}, {}] }, /^values: has 2 elements, more than count \(1\)/],
      [{ values: "x" }, /^values: /],
      [{ values: ["x"] }, /^values\[0\]: /],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    const sheet = await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }));
    expect(sheet.sheet).toMatchObject({ row_count: 1, version_count: 2 });
    await call(`${s.base}/columns/${b.column.id}`, { method: "DELETE", key: ws.key });
    await call(`${s.base}/columns/${s.columnA}`, { method: "DELETE", key: ws.key });
    const res = await post({ count: 1 });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^sheet: has no columns/);
  });

  it("pages rows with limit (1..100) and cursor, in either order, with every column's cell", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 4, values: [0, 1, 2, 3].map((i) => ({ [s.columnA]: `r${i + 1}` })) });
    const p1 = await rows(s, "?limit=2");
    expect(p1).toMatchObject({ has_more: true, row_count: 5 });
    expect(p1.data.map((r: any) => r.row_index)).toEqual([0, 1]);
    const p2 = await rows(s, `?limit=2&cursor=${p1.next_cursor}`);
    expect(p2.data.map((r: any) => r.row_index)).toEqual([2, 3]);
    const p3 = await rows(s, `?limit=2&cursor=${p2.next_cursor}`);
    expect(p3).toMatchObject({ has_more: false, next_cursor: null });
    expect(p3.data.map((r: any) => r.cells[s.columnA].display_value)).toEqual(["r4"]);
    const desc = await rows(s, "?order=desc&limit=3&include_columns=true");
    expect(desc.data.map((r: any) => r.row_index)).toEqual([4, 3, 2]);
    expect(desc.columns.map((c: any) => c.id)).toEqual([s.columnA]);
    // Python's requests spells booleans True / False: any case is read, anything else is a 400.
    expect((await rows(s, "?limit=1&include_columns=True")).columns.map((c: any) => c.id)).toEqual([s.columnA]);
    expect(await rows(s, "?limit=1&include_columns=False")).not.toHaveProperty("columns");
    const bad = await call(`${s.base}/rows?include_columns=yes`, { key: ws.key });
    expect(bad.status).toBe(400);
    expect((await json(bad)).message).toMatch(/include_columns: must be true or false/);
    expect((await call(`${s.base}/rows?limit=101`, { key: ws.key })).status).toBe(400);
    expect((await call(`${s.base}/rows?limit=0`, { key: ws.key })).status).toBe(400);
    expect((await call(`${s.base}/rows?cursor=${p1.next_cursor}&order=desc`, { key: ws.key })).status).toBe(400);
    expect((await call(`${s.base}/rows?cursor=%%%`, { key: ws.key })).status).toBe(400);
  });

  it("answers 404 for another workspace's table or sheet", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const s = await newSheet(ws);
    expect((await call(`${s.base}/rows`, { key: other.key })).status).toBe(404);
    expect((await call(`${s.base}/rows`, { method: "POST", key: other.key, json: {} })).status).toBe(404);
    expect((await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }))).sheet.row_count).toBe(1);
  });
});

describe("cells", () => {
  /** A → B → C (chain), A → D, and an independent TEXT column E with F reading it. */
  async function graphSheet() {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 2, values: [{ [s.columnA]: "a1" }, { [s.columnA]: "a2" }] });
    const B = (await addColumn(s, { title: "B", ...combine("Column A") })).column.id;
    const C = (await addColumn(s, { title: "C", ...combine("B") })).column.id;
    const D = (await addColumn(s, { title: "D", ...combine("Column A") })).column.id;
    const E = (await addColumn(s, { title: "E", type: "TEXT" })).column.id;
    const F = (await addColumn(s, { title: "F", ...combine("E") })).column.id;
    const op = await json(await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: {} }));
    await waitOperation(s, op.operation_id);
    const page = await rows(s);
    return { ws, s, B, C, D, E, F, page };
  }

  it("edits a text cell and marks every cell downstream in that row STALE, transitively, and nothing else", async () => {
    const { ws, s, B, C, D, E, F, page } = await graphSheet();
    const before = await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }));
    const target = page.data[1].cells[s.columnA];
    const res = await patchCell(s, target.id, { display_value: "changed" });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, stale_count: 3, version: before.sheet.version_count + 1 });
    expect(body.cell).toMatchObject({ id: target.id, sheet_id: s.sheetId, column_id: s.columnA, row_index: 1, status: "COMPLETED", display_value: "changed", value: "changed", error: null });
    const after = await rows(s);
    const status = (r: number, col: string) => after.data[r].cells[col].status;
    expect([B, C, D].map((c) => status(1, c))).toEqual(["STALE", "STALE", "STALE"]);
    expect(status(1, F)).toBe("COMPLETED");
    expect([B, C, D, F].map((c) => status(0, c))).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED"]);
    // Stale values are kept until recalculated.
    expect(after.data[1].cells[B].value).toEqual({ "Column A": "a1" });
    // Editing again: those cells are already stale, none newly marked.
    expect((await json(await patchCell(s, target.id, { display_value: "again" }))).stale_count).toBe(0);
    // A column with one reader.
    expect((await json(await patchCell(s, after.data[2].cells[E].id, { display_value: "e" }))).stale_count).toBe(1);
  });

  it("stores display_value and value as given: structured values, both, and null to empty the cell", async () => {
    const { s, page } = await graphSheet();
    const id = page.data[0].cells[s.columnA].id;
    const edit = async (b: unknown) => (await json(await patchCell(s, id, b))).cell;
    expect(await edit({ value: { k: [1, 2] } })).toMatchObject({ display_value: '{"k":[1,2]}', value: { k: [1, 2] } });
    expect(await edit({ value: 42 })).toMatchObject({ display_value: "42", value: 42 });
    expect(await edit({ display_value: "forty-two", value: 42 })).toMatchObject({ display_value: "forty-two", value: 42 });
    expect(await edit({ value: "text" })).toMatchObject({ display_value: "text", value: "text" });
    expect(await edit({ display_value: null })).toMatchObject({ display_value: null, value: null, status: "COMPLETED" });
    expect(await cell(s, id)).toMatchObject({ display_value: null, value: null });
  });

  it("refuses edits of computed cells and empty bodies (400), unknown cells (404); each edit is one version", async () => {
    const { ws, s, B, page } = await graphSheet();
    const v0 = (await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }))).sheet.version_count;
    let res = await patchCell(s, page.data[0].cells[B].id, { display_value: "x" });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/^cell_id: the cell is in column "B" of type COMBINE_COLUMNS; only cells of TEXT columns can be edited/);
    res = await patchCell(s, page.data[0].cells[s.columnA].id, {});
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/display_value: give display_value or value/);
    res = await patchCell(s, page.data[0].cells[s.columnA].id, { display_value: 5 });
    expect(res.status).toBe(400);
    res = await patchCell(s, crypto.randomUUID(), { display_value: "x" });
    expect(res.status).toBe(404);
    expect((await call(`${s.base}/cells/${crypto.randomUUID()}`, { key: ws.key })).status).toBe(404);
    expect((await call(`${s.base}/cells/not-a-uuid`, { key: ws.key })).status).toBe(400);
    // A row index past the end of the sheet.
    const { cellId } = await import("../../src/sheets/cell-id");
    expect((await call(`${s.base}/cells/${cellId(s.columnA, 99)}`, { key: ws.key })).status).toBe(404);
    const v1 = (await json(await patchCell(s, page.data[0].cells[s.columnA].id, { display_value: "y" }))).version;
    expect(v1).toBe(v0 + 1);
    const sheet = await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }));
    expect(sheet.sheet.version_count).toBe(v1);
    expect(await listedVersion(s.sheetId, v1)).toBe(v1);
  });

  it("answers 404 for another workspace's table, sheet or cell", async () => {
    const { s, page } = await graphSheet();
    const other = await createWorkspace();
    const mine = await newSheet(other);
    const id = page.data[0].cells[s.columnA].id;
    expect((await call(`${s.base}/cells/${id}`, { key: other.key })).status).toBe(404);
    expect((await call(`${s.base}/cells/${id}`, { method: "PATCH", key: other.key, json: { display_value: "x" } })).status).toBe(404);
    expect((await call(`${mine.base}/cells/${id}`, { key: other.key })).status).toBe(404);
    expect((await call(`${mine.base}/cells/${id}`, { method: "PATCH", key: other.key, json: { display_value: "x" } })).status).toBe(404);
    expect((await cell(s, id)).display_value).toBe(page.data[0].cells[s.columnA].display_value);
  });

  it("answers 404 at once after the sheet or its table is deleted", async () => {
    const { ws, s, page } = await graphSheet();
    const id = page.data[0].cells[s.columnA].id;
    expect((await patchCell(s, id, { display_value: "warm" })).status).toBe(200);
    expect((await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { method: "DELETE", key: ws.key })).status).toBe(200);
    expect((await patchCell(s, id, { display_value: "x" })).status).toBe(404);
    expect((await call(`${s.base}/cells/${id}`, { key: ws.key })).status).toBe(404);
    expect((await call(`${s.base}/rows`, { key: ws.key })).status).toBe(404);
    const t = await newSheet(ws);
    const tid = (await rows(t)).data[0].cells[t.columnA].id;
    expect((await patchCell(t, tid, { display_value: "warm" })).status).toBe(200);
    expect((await call(`/api/public/v2/tables/${t.tableId}`, { method: "DELETE", key: ws.key })).status).toBe(200);
    expect((await patchCell(t, tid, { display_value: "x" })).status).toBe(404);
    expect((await call(`${t.base}/operations`, { method: "POST", key: ws.key, json: {} })).status).toBe(404);
  });
});

describe("DELETE rows and GET status-counts", () => {
  it("deletes the named rows with all their cells in one version; the others keep their indexes and cell ids; new rows are not given a deleted index", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const b = await addColumn(s, { title: "B", ...combine("Column A") });
    await addRows(s, { count: 3, values: [{ [s.columnA]: "one" }, { [s.columnA]: "two" }, { [s.columnA]: "three" }] });
    const before = await rows(s);
    const kept = before.data[3].cells[s.columnA].id;
    const gone = before.data[1].cells[s.columnA].id;
    const res = await call(`${s.base}/rows`, { method: "DELETE", key: ws.key, json: { row_indices: [1, 0, 1] } });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toEqual({ success: true, deleted_count: 2, row_indices: [0, 1], row_count: 2, version: before.version + 1 });
    const after = await rows(s);
    expect(after.data.map((r: any) => [r.row_index, r.cells[s.columnA].display_value])).toEqual([[2, "two"], [3, "three"]]);
    expect(after.row_count).toBe(2);
    expect((await cell(s, kept)).display_value).toBe("three");
    expect((await call(`${s.base}/cells/${gone}`, { key: ws.key })).status).toBe(404);
    expect((await addRows(s, { count: 1 })).row_indices).toEqual([4]);
    // Status counts follow: 3 rows × 2 columns, the computed ones STALE.
    const counts = await json(await call(`${s.base}/status-counts`, { key: ws.key }));
    expect(counts).toMatchObject({ success: true, sheet_id: s.sheetId, total_cells: 6, status_counts: { STALE: 3, COMPLETED: 3, QUEUED: 0, RUNNING: 0, FAILED: 0 } });
    expect((await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }))).sheet.row_count).toBe(3);
    expect(b.column.id).toEqual(expect.any(String));
  });

  it("refuses bad row_indices with a 400 and an index the sheet lacks with a 404 naming it; nothing is deleted", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 2 });
    const version = (await rows(s)).version;
    const del = (body: unknown) => call(`${s.base}/rows`, { method: "DELETE", key: ws.key, json: body });
    const cases: [unknown, number, RegExp][] = [
      [{}, 400, /^row_indices: /],
      [{ row_indices: [] }, 400, /^row_indices: must name at least one row/],
      [{ row_indices: [-1] }, 400, /^row_indices\[0\]: must be 0 or more/],
      [{ row_indices: [1.5] }, 400, /^row_indices\[0\]: /],
      [{ row_indices: "1" }, 400, /^row_indices: /],
      [{ row_indices: Array.from({ length: 1001 }, (_, i) => i) }, 400, /^row_indices: must name at most 1000 rows/],
      [{ row_indices: [0, 7] }, 404, /^row_indices\[1\]: the sheet has no row 7/],
    ];
    for (const [body, status, message] of cases) {
      const res = await del(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect((await json(res)).message).toMatch(message);
    }
    // Exactly the limit is taken (and the rows that exist must all be named: 404 here, after validation).
    expect((await del({ row_indices: Array.from({ length: 1000 }, (_, i) => i) })).status).toBe(404);
    const now = await rows(s);
    expect(now).toMatchObject({ row_count: 3, version });
    expect(now.data.map((r: any) => r.row_index)).toEqual([0, 1, 2]);
  });

  it("answers 404 for another workspace's sheet and deletes nothing", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const s = await newSheet(ws);
    expect((await call(`${s.base}/rows`, { method: "DELETE", key: other.key, json: { row_indices: [0] } })).status).toBe(404);
    expect((await call(`${s.base}/status-counts`, { key: other.key })).status).toBe(404);
    expect((await rows(s)).row_count).toBe(1);
  });
});
