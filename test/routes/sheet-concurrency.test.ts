// One writer per sheet: 200 concurrent edits of one sheet get 200 distinct, strictly sequential
// versions, and every cell ends with the value of its last write (the one with the highest version).
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "../helpers/api";
import { addColumn, addRows, listedVersion, newSheet, patchCell, rows, waitOperation } from "../helpers/sheet-data";

describe("concurrent edits", () => {
  it("200 concurrent PATCHes: 200 distinct increasing versions, no lost update, final values from the last writes", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 19 });
    await addColumn(s, { title: "B", type: "COMBINE_COLUMNS", config: { sources: ["Column A"] } });
    const op = await json(await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: {} }));
    await waitOperation(s, op.operation_id);
    const page = await rows(s);
    const cellIds: string[] = page.data.map((r: any) => r.cells[s.columnA].id);
    const v0 = (await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }))).sheet.version_count;

    // 20 cells, 10 writes each, all in flight at once.
    const writes = Array.from({ length: 200 }, (_, i) => ({ id: cellIds[i % 20], value: `w${i}` }));
    const answers = await Promise.all(
      writes.map(async (w) => {
        const res = await patchCell(s, w.id, { display_value: w.value });
        expect(res.status).toBe(200);
        const b = await json(res);
        return { ...w, version: b.version as number, stale: b.stale_count as number };
      }),
    );
    const versions = answers.map((a) => a.version).sort((a, b) => a - b);
    expect(new Set(versions).size).toBe(200);
    expect(versions).toEqual(Array.from({ length: 200 }, (_, i) => v0 + 1 + i));
    // Each row's computed cell was newly marked stale exactly once, by whichever write came first.
    expect(answers.reduce((n, a) => n + a.stale, 0)).toBe(20);

    const last = new Map<string, { value: string; version: number }>();
    for (const a of answers) if ((last.get(a.id)?.version ?? -1) < a.version) last.set(a.id, a);
    const after = await rows(s);
    for (const r of after.data) {
      const c = r.cells[s.columnA];
      expect(c.display_value).toBe(last.get(c.id)!.value);
    }
    const sheet = await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }));
    expect(sheet.sheet.version_count).toBe(v0 + 200);
    // The D1 listing caught up with the last version (a late copy never overwrites a newer one).
    expect(await listedVersion(s.sheetId, v0 + 200)).toBe(v0 + 200);
  });
});
