// The sheet object's recalculation engine under failure: a run evicted mid-way (cells left RUNNING, its
// alarm lost) resumes and completes; one alarm run stays within its batch and re-arms for the rest.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SheetObject } from "../../src/sheets/sheet-object";
import { createWorkspace } from "../helpers/api";
import { addColumn, addRows, newSheet, rows, waitOperation } from "../helpers/sheet-data";

const combine = (...sources: string[]) => ({ type: "COMBINE_COLUMNS", config: { sources } });
const FAR = Date.now() + 3_600_000;

/** Queues every STALE cell under one execution, by hand, with the alarm pushed far away (no run starts by itself). */
async function queueByHand(stub: DurableObjectStub, runningWhere: string | null) {
  const execId = crypto.randomUUID();
  await runInDurableObject(stub, async (_obj, state) => {
    const sql = state.storage.sql;
    await state.storage.setAlarm(FAR);
    sql.exec(`UPDATE cells SET status = 'QUEUED', execution_id = ? WHERE status = 'STALE'`, execId);
    const n = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE execution_id = ?`, execId).one().n;
    if (runningWhere) sql.exec(`UPDATE cells SET status = 'RUNNING' WHERE execution_id = ? AND ${runningWhere}`, execId);
    sql.exec(`INSERT INTO executions (id, operation, cell_count, version, started_at, created_at, updated_at) VALUES (?, 'recalculate', ?, 1, 1, 1, 1)`, execId, n);
  });
  return execId;
}

describe("recalculation survives eviction", () => {
  it("a re-created object finds queued work without an alarm, re-arms, and the run completes", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 5, values: [1, 2, 3, 4, 5].map((i) => ({ [s.columnA]: `v${i}` })) });
    const B = (await addColumn(s, { title: "B", ...combine("Column A") })).column.id;
    const C = (await addColumn(s, { title: "C", ...combine("B") })).column.id;
    const stub = env.SHEETS.get(env.SHEETS.idFromName(s.sheetId));
    // The crash: B's first rows were taken (RUNNING), nothing written back, and the alarm is gone.
    const execId = await queueByHand(stub, "row_index < 3 AND column_seq = (SELECT seq FROM columns WHERE title = 'B')");
    await runInDurableObject(stub, async (_obj, state) => {
      await state.storage.deleteAlarm();
      expect(await state.storage.getAlarm()).toBeNull();
      // What the runtime does after an eviction: a new instance over the same storage.
      new SheetObject(state, env);
      await state.blockConcurrencyWhile(async () => {});
      expect(await state.storage.getAlarm()).not.toBeNull();
    });
    const op = await waitOperation(s, execId);
    expect(op).toMatchObject({ status: "completed", cell_count: 12, completed_count: 12, failed_count: 0 });
    const page = await rows(s);
    expect(page.data.map((r: any) => r.cells[C].value)).toEqual([null, 1, 2, 3, 4, 5].map((i) => ({ B: { "Column A": i === null ? null : `v${i}` } })));
    expect(page.data.every((r: any) => r.cells[B].status === "COMPLETED")).toBe(true);
  });

  it("the alarm handler, run after a crash, puts RUNNING cells back and computes them in dependency order", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 2, values: [{ [s.columnA]: "x" }, { [s.columnA]: "y" }] });
    const B = (await addColumn(s, { title: "B", ...combine("Column A") })).column.id;
    const C = (await addColumn(s, { title: "C", ...combine("B") })).column.id;
    const stub = env.SHEETS.get(env.SHEETS.idFromName(s.sheetId));
    const execId = await queueByHand(stub, "1 = 1");
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const page = await rows(s);
    expect(page.data.map((r: any) => [r.cells[B].status, r.cells[C].status])).toEqual(Array(3).fill(["COMPLETED", "COMPLETED"]));
    expect(page.data[2].cells[C].value).toEqual({ B: { "Column A": "y" } });
    expect((await waitOperation(s, execId)).completed_count).toBe(6);
  });

  it("one alarm run computes a bounded batch and re-arms itself for the rest", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    for (let i = 0; i < 11; i++) await addRows(s, { count: 100 });
    await addColumn(s, { title: "B", ...combine("Column A") });
    await addColumn(s, { title: "C", ...combine("B") });
    const stub = env.SHEETS.get(env.SHEETS.idFromName(s.sheetId));
    const execId = await queueByHand(stub, null);
    // One alarm run, counted before the alarm it re-arms can fire: on a busy machine the re-armed
    // alarm would otherwise run between the two calls and finish the rest.
    await runInDurableObject(stub, async (instance, state) => {
      const obj = instance as unknown as SheetObject;
      await state.storage.deleteAlarm();
      await obj.alarm();
      const done = state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM cells WHERE status = 'COMPLETED' AND execution_id = ?`, execId).one().n;
      expect(done).toBe(2000);
      expect(await state.storage.getAlarm()).not.toBeNull();
    });
    // The rest completes without anyone asking: the run re-armed the alarm (the far-away one is gone).
    expect(await waitOperation(s, execId)).toMatchObject({ status: "completed", completed_count: 2202 });
  });
});
