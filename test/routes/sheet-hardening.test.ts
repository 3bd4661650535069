// Hostile and oversized input to a sheet's columns, rows and cells: every refusal is a clear 4xx that
// changes nothing (not even the version), and sizes stay within what the sheet object can hold.
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "../helpers/api";
import { addColumn, addRows, newSheet, patchCell } from "../helpers/sheet-data";

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
    const cases: [string, string, unknown, RegExp][] = [
      ["PATCH", `/cells/${cellA}`, { value: nested(5000) }, /^value: must nest at most 64 levels/],
      ["PATCH", `/cells/${cellA}`, { value: nested(65) }, /^value: must nest at most 64 levels/],
      ["POST", `/rows`, { values: [{ [s.columnA]: nested(5000) }] }, /^values\[0\]\..*: must nest at most 64 levels/],
      ["POST", `/columns`, { title: "C", type: "TEXT", config: { x: nested(5000) } }, /^config\.x: must nest at most 64 levels/],
      ["POST", `/columns`, { title: "C", type: "COMBINE_COLUMNS", config: { sources: ["Column A"], x: nested(5000) } }, /^config\.x: must nest/],
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
