// Column-wide work on a large sheet (deleting a column, staling whole columns, a new computed column's
// cells) is done COLUMN_WORK_ROWS rows at a time by the alarm, and what the API shows meanwhile is
// already right: deleted cells invisible, cells yet to be marked shown STALE, counts exact.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { COLUMN_WORK_ROWS, hasColumnWork, scheduleColumnWork, stepColumnWork } from "../../src/sheets/column-work";
import { readRows } from "../../src/sheets/cells";
import { SheetStore } from "../../src/sheets/storage";
import { createWorkspace, call, json } from "../helpers/api";
import { addColumn, newSheet, rows, type SheetRef } from "../helpers/sheet-data";

const combine = (...sources: string[]) => ({ type: "COMBINE_COLUMNS", config: { sources } });
const stubOf = (s: SheetRef) => env.SHEETS.get(env.SHEETS.idFromName(s.sheetId));

/** Grows the sheet to `total` rows by hand, every computed cell COMPLETED (the API adds 100 rows a call). */
async function growTo(s: SheetRef, total: number) {
  await runInDurableObject(stubOf(s), async (_obj, state) => {
    const sql = state.storage.sql;
    const from = sql.exec<{ value: number }>(`SELECT value FROM sheet_meta WHERE key = 'next_row_index'`).one().value;
    sql.exec(
      `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) INSERT INTO rows (row_index, created_at) SELECT i, 1 FROM n`,
      from,
      total,
    );
    sql.exec(`INSERT OR IGNORE INTO cells (row_index, column_seq, status, updated_at) SELECT r.row_index, c.seq, 'STALE', 1 FROM rows r JOIN columns c ON c.type <> 'TEXT'`);
    sql.exec(`UPDATE cells SET status = 'COMPLETED', display_value = 'done', value = NULL`);
    sql.exec(`UPDATE sheet_meta SET value = ? WHERE key IN ('next_row_index', 'row_count')`, total);
  });
}

/** Runs the object's alarm until it has nothing left to do (what the runtime does by itself). */
async function drainAlarms(s: SheetRef) {
  for (let i = 0; i < 100 && (await runDurableObjectAlarm(stubOf(s))); i++);
}

async function workLeft(s: SheetRef) {
  return runInDurableObject(stubOf(s), (_obj, state) => state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM column_work`).one().n);
}

async function cellsOfSeqs(s: SheetRef, where: string) {
  return runInDurableObject(stubOf(s), (_obj, state) => state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE ${where}`).one().n);
}

async function summary(s: SheetRef) {
  const res = await call(`${s.base}/operations`, { key: s.ws.key });
  expect(res.status).toBe(200);
  return json(res);
}

/** A sheet of `total` rows: TEXT "Column A", B reads A, C reads B, every computed cell COMPLETED. */
async function bigSheet(total: number) {
  const ws = await createWorkspace();
  const s = await newSheet(ws);
  const B = (await addColumn(s, { title: "B", ...combine("Column A") })).column.id;
  const C = (await addColumn(s, { title: "C", ...combine("B") })).column.id;
  await growTo(s, total);
  return { s, B, C };
}

describe("column work is spread over alarm runs", () => {
  it("on both sides of the limit: at COLUMN_WORK_ROWS rows it is done at once, one more row and it is left to the alarm", async () => {
    for (const [total, pending] of [
      [COLUMN_WORK_ROWS, false],
      [COLUMN_WORK_ROWS + 1, true],
    ] as const) {
      const { s } = await bigSheet(total);
      await runInDurableObject(stubOf(s), (_obj, state) => {
        const store = new SheetStore(state.storage);
        const seq = state.storage.sql.exec<{ seq: number }>(`SELECT seq FROM columns WHERE title = 'C'`).one().seq;
        state.storage.transactionSync(() => {
          const out = scheduleColumnWork(store, "stale", [seq], Date.now());
          // The count is exact either way: every C cell was COMPLETED.
          expect(out).toEqual({ changed: total, pending });
        });
        const marked = state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE status = 'STALE'`).one().n;
        expect(marked).toBe(pending ? 0 : total);
        if (pending) {
          // Before any range is marked, the views already show every C cell STALE.
          const seen = readRows(store, store.identity()!, { limit: 3, order: "desc" }).rows;
          expect(seen.map((r) => Object.values(r.cells).map((c) => c.status))).toEqual(Array(3).fill(["COMPLETED", "COMPLETED", "STALE"]));
          // One step marks one range of rows, the next the rest.
          expect(state.storage.transactionSync(() => stepColumnWork(store, Date.now()))).toBe(true);
          expect(state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE status = 'STALE'`).one().n).toBe(COLUMN_WORK_ROWS);
          expect(state.storage.transactionSync(() => stepColumnWork(store, Date.now()))).toBe(false);
          expect(state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE status = 'STALE'`).one().n).toBe(total);
        }
        expect(hasColumnWork(store)).toBe(false);
      });
    }
  }, 60_000);

  it("deleting a column on a large sheet: its cells are gone from every view at once, the downstream column reads STALE, and the alarm finishes the rest", async () => {
    const total = COLUMN_WORK_ROWS * 2 + 500;
    const { s, B, C } = await bigSheet(total);
    const bSeq = await runInDurableObject(stubOf(s), (_obj, state) => state.storage.sql.exec<{ seq: number }>(`SELECT seq FROM columns WHERE title = 'B'`).one().seq);
    const res = await call(`${s.base}/columns/${B}`, { method: "DELETE", key: s.ws.key });
    expect(res.status).toBe(200);
    expect((await json(res)).stale_count).toBe(total);
    // Whatever the alarm has reached, the views agree: B is gone and C is STALE in the first and last rows.
    const first = await rows(s, "?limit=5");
    expect(first.data.every((r: any) => !(B in r.cells) && r.cells[C].status === "STALE")).toBe(true);
    const last = await rows(s, "?limit=5&order=desc");
    expect(last.data.every((r: any) => !(B in r.cells) && r.cells[C].status === "STALE")).toBe(true);
    // Status counts are exact at once: C's cells are all STALE, Column A's all COMPLETED.
    const sum = await summary(s);
    expect(sum.total_cells).toBe(total * 2);
    expect(sum.status_counts).toMatchObject({ STALE: total, COMPLETED: total, QUEUED: 0, RUNNING: 0 });
    await drainAlarms(s);
    expect(await workLeft(s)).toBe(0);
    expect(await cellsOfSeqs(s, `column_seq = ${bSeq}`)).toBe(0);
  }, 120_000);

  it("reconfiguring a column on a large sheet stales it and what reads it, shown at once and recalculated in full", async () => {
    const total = COLUMN_WORK_ROWS * 2 + 1;
    const { s, B, C } = await bigSheet(total);
    const res = await call(`${s.base}/columns/${B}`, { method: "PATCH", key: s.ws.key, json: { config: { sources: ["Column A"], separator: "," } } });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.stale_count).toBe(total * 2);
    const last = await rows(s, "?limit=3&order=desc");
    expect(last.data.every((r: any) => r.cells[B].status === "STALE" && r.cells[C].status === "STALE")).toBe(true);
    // A recalculation of C finishes the marking first, so it pulls in every STALE B it reads.
    const recalc = await call(`${s.base}/operations`, { method: "POST", key: s.ws.key, json: { column_ids: [C], statuses: ["STALE"] } });
    const started = await json(recalc);
    expect(recalc.status, JSON.stringify(started)).toBe(202);
    expect(started.cell_count).toBe(total * 2);
    expect(await workLeft(s)).toBe(0);
  }, 120_000);

  it("a new computed column on a large sheet starts with every cell STALE, created a range at a time", async () => {
    const total = COLUMN_WORK_ROWS * 3;
    const { s } = await bigSheet(total);
    const D = await addColumn(s, { title: "D", ...combine("Column A") });
    expect(D.stale_count).toBe(total);
    expect(D.cells.every((c: any) => c.status === "STALE")).toBe(true);
    const last = await rows(s, "?limit=3&order=desc");
    expect(last.data.every((r: any) => r.cells[D.column.id].status === "STALE")).toBe(true);
    // Counts wait for nothing: asking for them finishes the cells first.
    expect((await summary(s)).status_counts.STALE).toBe(total);
    expect(await workLeft(s)).toBe(0);
    const dSeq = `(SELECT seq FROM columns WHERE title = 'D')`;
    expect(await cellsOfSeqs(s, `column_seq = ${dSeq} AND status = 'STALE'`)).toBe(total);
  }, 120_000);
});
