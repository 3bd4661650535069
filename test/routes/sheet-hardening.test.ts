// Hostile and oversized input to a sheet's columns, rows and cells: every refusal is a clear 4xx that
// changes nothing (not even the version), and sizes stay within what the sheet object can hold.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "../helpers/api";
import { addColumn, addRows, newSheet, patchCell, waitOperation } from "../helpers/sheet-data";

const nested = (depth: number) => {
  let v: unknown = "x";
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

async function sheetVersion(s: { base: string; ws: { key: string } }) {
  return (await json(await call(s.base, { key: s.ws.key }))).sheet.version_count as number;
}

describe("deeply nested JSON", () => {
  it("is a 400 naming the field in a cell edit, added rows and a column config; 64 levels are fine", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const cellA = (await addRows(s, { count: 1 })).rows[0].cells[s.columnA].id;
    const before = await sheetVersion(s);
    // A value past the body-wide rule (100 levels, src/lib/json-depth.ts) is refused by it, naming the
    // field's path; one within it but past the field's own 64 levels by the field's rule.
    const bodyRule = /\[0\](\[0\])*\.…: nests deeper than 100 levels/.source;
    const cases: [string, string, unknown, RegExp][] = [
      ["PATCH", `/cells/${cellA}`, { value: nested(5000) }, new RegExp(`^value${bodyRule}`)],
      ["PATCH", `/cells/${cellA}`, { value: nested(65) }, /^value: must nest at most 64 levels/],
      ["POST", `/rows`, { values: [{ [s.columnA]: nested(5000) }] }, new RegExp(`^values\\[0\\]\\.[^\\[]+${bodyRule}`)],
      ["POST", `/rows`, { values: [{ [s.columnA]: nested(70) }] }, /^values\[0\]\..*: must nest at most 64 levels/],
      ["POST", `/columns`, { title: "C", type: "TEXT", config: { x: nested(5000) } }, new RegExp(`^config\\.x${bodyRule}`)],
      ["POST", `/columns`, { title: "C", type: "TEXT", config: { x: nested(70) } }, /^config\.x: must nest at most 64 levels/],
      ["POST", `/columns`, { title: "C", type: "COMBINE_COLUMNS", config: { sources: ["Column A"], x: nested(70) } }, /^config\.x: must nest/],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await call(`${s.base}${path}`, { method, key: ws.key, json: body });
      expect(res.status, `${method} ${path}`).toBe(400);
      const b = await json(res);
      expect(b).toMatchObject({ success: false, error: "validation_error" });
      expect(b.message).toMatch(message);
    }
    expect(await sheetVersion(s)).toBe(before);
    const ok = await patchCell(s, cellA, { value: nested(63) });
    expect(ok.status).toBe(200);
    expect(await sheetVersion(s)).toBe(before + 1);
  });
});

describe("cell size", () => {
  it("a computed result too large for a cell fails that cell (the run goes on) instead of stalling it RUNNING", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const b = await addColumn(s, { title: "B", type: "TEXT" });
    const small = await addColumn(s, { title: "Small", type: "COMBINE_COLUMNS", config: { sources: ["B"] } });
    const big = await addColumn(s, { title: "Big", type: "COMBINE_COLUMNS", config: { sources: ["Column A", "B"] } });
    const row = (await json(await call(`${s.base}/rows`, { key: ws.key }))).data[0];
    expect((await patchCell(s, row.cells[s.columnA].id, { display_value: "a".repeat(1_000_000) })).status).toBe(200);
    expect((await patchCell(s, row.cells[b.column.id].id, { display_value: "b".repeat(600_000) })).status).toBe(200);
    const res = await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: {} });
    expect(res.status).toBe(202);
    const op = await waitOperation(s, (await json(res)).operation_id);
    expect(op).toMatchObject({ status: "completed", completed_count: 1, failed_count: 1 });
    const got = async (id: string) => (await json(await call(`${s.base}/cells/${id}`, { key: ws.key }))).cell;
    const failed = await got(row.cells[big.column.id].id);
    expect(failed.status).toBe("FAILED");
    expect(failed.error).toMatch(/^the result takes \d+ bytes stored; a cell holds at most 2000000$/);
    expect((await got(row.cells[small.column.id].id)).status).toBe("COMPLETED");
  });

  it("an edit or added row whose value takes more than a cell holds is a 413 that changes nothing", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const cellA = (await json(await call(`${s.base}/rows`, { key: ws.key }))).data[0].cells[s.columnA].id;
    const before = await sheetVersion(s);
    // A structured value is stored with its JSON text as the display: twice its size.
    const value = { s: "x".repeat(1_040_000) };
    const edit = await patchCell(s, cellA, { value });
    expect(edit.status).toBe(413);
    const refused = await json(edit);
    expect(refused).toMatchObject({ success: false, error: "payload_too_large" });
    expect(refused.message).toMatch(/^value: display_value and value take \d+ bytes stored; a cell holds at most 2000000$/);
    const add = await call(`${s.base}/rows`, { method: "POST", key: ws.key, json: { values: [{ [s.columnA]: value }] } });
    expect(add.status).toBe(413);
    expect((await json(add)).message).toMatch(/^values\[0\]\..*: takes \d+ bytes stored; a cell holds at most 2000000$/);
    expect(await sheetVersion(s)).toBe(before);
    expect((await json(await call(`${s.base}/cells/${cellA}`, { key: ws.key }))).cell.display_value).toBeNull();
    // The same text as a plain string is stored once, and fits.
    expect((await patchCell(s, cellA, { value: value.s })).status).toBe(200);
    expect(await sheetVersion(s)).toBe(before + 1);
  });
});

describe("GET rows of large cells", () => {
  it("stops a page early once its cells hold 4 MiB (has_more, a cursor), and paging still visits every row once", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const big = "v".repeat(100_000);
    for (let i = 0; i < 10; i++) await addRows(s, { values: Array.from({ length: 10 }, () => ({ [s.columnA]: big })) });
    const first = await json(await call(`${s.base}/rows?limit=100`, { key: ws.key }));
    expect(first.row_count).toBe(101);
    expect(first.has_more).toBe(true);
    expect(first.data.length).toBeGreaterThan(1);
    expect(first.data.length).toBeLessThanOrEqual(43);
    const seen: number[] = first.data.map((r: any) => r.row_index);
    for (let cursor = first.next_cursor; cursor; ) {
      const page = await json(await call(`${s.base}/rows?limit=100&cursor=${cursor}`, { key: ws.key }));
      seen.push(...page.data.map((r: any) => r.row_index));
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(Array.from({ length: 101 }, (_, i) => i));
    // A computed column's create answer still carries its cells of the first 100 rows.
    const col = await addColumn(s, { title: "B", type: "COMBINE_COLUMNS", config: { sources: ["Column A"] } });
    expect(col.cells.map((c: any) => c.row_index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(col.cells.every((c: any) => c.status === "STALE" && c.column_id === col.column.id)).toBe(true);
  });
});

describe("recalculation races", () => {
  it("a column reconfigured while an alarm run is under way is computed with its new config, not the one the run started with", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const c = await addColumn(s, { title: "C", type: "TEXT" });
    // Same level of the column graph: the slow column's chunk runs first and holds the run for 600 ms.
    const slow = await addColumn(s, { title: "slow", type: "ENDPOINT", config: { url: "http://fake-endpoint.test/slow?ms=600" } });
    const b = await addColumn(s, { title: "B", type: "COMBINE_COLUMNS", config: { sources: ["Column A"] } });
    const row = (await rows0(s)).cells;
    await patchCell(s, row[s.columnA].id, { display_value: "a" });
    await patchCell(s, row[c.column.id].id, { display_value: "c" });
    const started = await json(await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: { column_ids: [slow.column.id] } }));
    expect(started.cell_count).toBe(1);
    await new Promise((r) => setTimeout(r, 150));
    const patched = await call(`${s.base}/columns/${b.column.id}`, { method: "PATCH", key: ws.key, json: { config: { sources: ["Column A", "C"] } } });
    expect(patched.status).toBe(200);
    const again = await call(`${s.base}/cells/${row[b.column.id].id}/recalculations`, { method: "POST", key: ws.key });
    expect(again.status).toBe(202);
    await waitOperation(s, started.operation_id);
    await waitOperation(s, (await json(again)).execution_id);
    const got = (await json(await call(`${s.base}/cells/${row[b.column.id].id}`, { key: ws.key }))).cell;
    expect(got).toMatchObject({ status: "COMPLETED", value: { "Column A": "a", C: "c" } });
  });
});

async function rows0(s: { base: string; ws: { key: string } }) {
  return (await json(await call(`${s.base}/rows`, { key: s.ws.key }))).data[0];
}

describe("column limits", () => {
  it("a config over 64 KiB is a 413 on create and on update; a sheet holds at most 500 columns (400); nothing changes", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const b = await addColumn(s, { title: "B", type: "COMBINE_COLUMNS", config: { sources: ["Column A"] } });
    const before = await sheetVersion(s);
    const fat = "x".repeat(66_000);
    const create = await call(`${s.base}/columns`, { method: "POST", key: ws.key, json: { title: "C", type: "COMBINE_COLUMNS", config: { sources: ["Column A"], note: fat } } });
    expect(create.status).toBe(413);
    expect(await json(create)).toMatchObject({ error: "payload_too_large", message: expect.stringMatching(/^config: takes \d+ bytes; a column's config holds at most 65536$/) });
    const update = await call(`${s.base}/columns/${b.column.id}`, { method: "PATCH", key: ws.key, json: { config: { sources: ["Column A"], note: fat } } });
    expect(update.status).toBe(413);
    expect(await sheetVersion(s)).toBe(before);
    expect((await json(await call(`${s.base}/columns`, { key: ws.key }))).data.map((c: any) => c.title)).toEqual(["Column A", "B"]);
    const fits = await call(`${s.base}/columns`, { method: "POST", key: ws.key, json: { title: "C", type: "TEXT", config: { note: "x".repeat(60_000) } } });
    expect(fits.status).toBe(201);

    // Fill the sheet up to 500 columns directly in its storage (500 requests would only be slower).
    const stub: DurableObjectStub = env.SHEETS.get(env.SHEETS.idFromName(s.sheetId));
    await runInDurableObject(stub, async (obj, state) => {
      for (let i = 0; i < 496; i++) {
        state.storage.sql.exec(
          `INSERT INTO columns (id, title, type, config, position_rank, created_at, updated_at) VALUES (?, ?, 'TEXT', '{}', ?, 0, 0)`,
          crypto.randomUUID(),
          `fill ${i}`,
          10 + i,
        );
      }
      (obj as unknown as { modelCache: unknown }).modelCache = null;
    });
    const last = await call(`${s.base}/columns`, { method: "POST", key: ws.key, json: { title: "last", type: "TEXT" } });
    expect(last.status).toBe(201);
    const atMost = await sheetVersion(s);
    const over = await call(`${s.base}/columns`, { method: "POST", key: ws.key, json: { title: "one too many", type: "TEXT" } });
    expect(over.status).toBe(400);
    expect((await json(over)).message).toBe("sheet: has 500 columns, the most a sheet holds; delete one first");
    expect(await sheetVersion(s)).toBe(atMost);
  });
});
