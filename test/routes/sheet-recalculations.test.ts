// Recalculation: single cell (202 / no_cells_to_recalculate), batches, operations with filters,
// dependency order, QUEUED → RUNNING → COMPLETED | FAILED, input-hash reuse, cancellation, isolation.
import { describe, expect, it } from "vitest";
import { call, createWorkspace, json } from "../helpers/api";
import { addColumn, addRows, cell, newSheet, patchCell, rows, waitOperation } from "../helpers/sheet-data";

const combine = (...sources: string[]) => ({ type: "COMBINE_COLUMNS", config: { sources } });

async function chainSheet() {
  const ws = await createWorkspace();
  const s = await newSheet(ws);
  await addRows(s, { count: 2, values: [{ [s.columnA]: "a1" }, { [s.columnA]: "a2" }] });
  const B = (await addColumn(s, { title: "B", ...combine("Column A") })).column.id;
  const C = (await addColumn(s, { title: "C", ...combine("B") })).column.id;
  const page = await rows(s);
  return { ws, s, B, C, page };
}

describe("recalculating cells", () => {
  it("computes a cell after the STALE cells it reads, in dependency order (202 with execution_id and cell_count)", async () => {
    const { ws, s, B, C, page } = await chainSheet();
    const target = page.data[1].cells[C];
    const res = await call(`${s.base}/cells/${target.id}/recalculations`, { method: "POST", key: ws.key });
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(body).toEqual({ success: true, execution_id: expect.any(String), cell_count: 2 });
    const op = await waitOperation(s, body.execution_id);
    expect(op).toMatchObject({ status: "completed", cell_count: 2, completed_count: 2, failed_count: 0, pending_count: 0 });
    const c = await cell(s, target.id);
    expect(c).toMatchObject({ status: "COMPLETED", value: { B: { "Column A": "a1" } }, error: null, execution_id: body.execution_id });
    expect(c.input_hash).toMatch(/^[0-9a-f]{32}$/);
    expect(c.display_value).toBe('{"B":{"Column A":"a1"}}');
    expect((await cell(s, page.data[1].cells[B].id)).status).toBe("COMPLETED");
    // Other rows were not touched.
    expect((await cell(s, page.data[2].cells[B].id)).status).toBe("STALE");
  });

  it("answers 200 with the error shape when there is nothing to recalculate", async () => {
    const { ws, s, C, page } = await chainSheet();
    let res = await call(`${s.base}/cells/${page.data[0].cells[s.columnA].id}/recalculations`, { method: "POST", key: ws.key });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ success: false, error: "no_cells_to_recalculate", message: expect.any(String) });
    res = await call(`${s.base}/cells/recalculations`, { method: "POST", key: ws.key, json: { cell_ids: [page.data[0].cells[s.columnA].id] } });
    expect(res.status).toBe(200);
    expect((await json(res)).error).toBe("no_cells_to_recalculate");
    res = await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: { column_ids: [C], statuses: ["FAILED"] } });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ success: true, cell_count: 0, virtual_cell_count: 0, cells: [] });
    // Nothing changed: no version spent.
    expect((await json(await call(`/api/public/v2/tables/${s.tableId}/sheets/${s.sheetId}`, { key: ws.key }))).sheet.version_count).toBe(4);
  });

  it("moves cells QUEUED → RUNNING → COMPLETED | FAILED, with the reason in error; a failed input fails its readers", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 1, values: [{ [s.columnA]: "12" }] });
    const gt = (await addColumn(s, { title: "gt", type: "MATH_OPERATOR", config: { sources: ["Column A"], operator: "gt", value: 10 } })).column.id;
    const reader = (await addColumn(s, { title: "reader", ...combine("gt") })).column.id;
    const page = await rows(s);
    const res = await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: { column_ids: [reader] } });
    expect(res.status).toBe(202);
    const op = await json(res);
    expect(op).toMatchObject({ success: true, operation: "recalculate", operation_id: op.execution_id, execution_ids: [op.execution_id], cell_count: 4, virtual_cell_count: 0 });
    expect(op.status_url).toBe(`${s.base}/operations/${op.operation_id}`);
    expect(op.cells.every((c: any) => c.status === "QUEUED" && c.execution_id === op.execution_id)).toBe(true);
    const done = await waitOperation(s, op.operation_id);
    expect(done).toMatchObject({ status: "completed", completed_count: 2, failed_count: 2, status_counts: { COMPLETED: 2, FAILED: 2, QUEUED: 0, RUNNING: 0 } });
    const after = await rows(s);
    expect(after.data[0].cells[gt]).toMatchObject({ status: "FAILED", value: null, error: expect.stringMatching(/Column A is not a number/) });
    expect(after.data[0].cells[reader]).toMatchObject({ status: "FAILED", error: 'input "gt" failed: ' + after.data[0].cells[gt].error });
    expect(after.data[1].cells[gt]).toMatchObject({ status: "COMPLETED", value: true, display_value: "true" });
    expect(after.data[1].cells[reader]).toMatchObject({ status: "COMPLETED", value: { gt: true } });
    void page;
  });

  it("does not recompute a cell whose inputs have not changed (input hash), and does when they have", async () => {
    const { ws, s, B, page } = await chainSheet();
    const id = page.data[1].cells[B].id;
    const recalc = async () => waitOperation(s, (await json(await call(`${s.base}/cells/${id}/recalculations`, { method: "POST", key: ws.key }))).execution_id);
    const first = await recalc();
    expect(first).toMatchObject({ completed_count: 1, reused_count: 0 });
    const c1 = await cell(s, id);
    // Same inputs again (an explicit recalculation, and an edit back to the same value): kept, not recomputed.
    expect(await recalc()).toMatchObject({ completed_count: 1, reused_count: 1 });
    await patchCell(s, page.data[1].cells[s.columnA].id, { display_value: "a1" });
    expect((await cell(s, id)).status).toBe("STALE");
    expect(await recalc()).toMatchObject({ completed_count: 1, reused_count: 1 });
    const c2 = await cell(s, id);
    expect(c2).toMatchObject({ status: "COMPLETED", value: c1.value, input_hash: c1.input_hash, last_computed_version: c1.last_computed_version });
    // A real change is recomputed.
    await patchCell(s, page.data[1].cells[s.columnA].id, { display_value: "new" });
    expect(await recalc()).toMatchObject({ completed_count: 1, reused_count: 0 });
    const c3 = await cell(s, id);
    expect(c3.value).toEqual({ "Column A": "new" });
    expect(c3.input_hash).not.toBe(c1.input_hash);
    expect(c3.last_computed_version).toBeGreaterThan(c1.last_computed_version);
  });

  it("a PROMPT_TEMPLATE cell is reused while its stored prompt is unchanged, and recomputed when a new version is published", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 1, values: [{ [s.columnA]: "world" }] });
    const name = `greeter-${crypto.randomUUID()}`;
    const publish = async (reply: string) => {
      const chat = { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: `[[reply:${reply}]] {who}` }] }] };
      const res = await call("/rest/prompt-templates", { method: "POST", key: ws.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat } } });
      expect(res.status).toBe(200);
    };
    await publish("first");
    const P = (await addColumn(s, { title: "P", type: "PROMPT_TEMPLATE", config: { template: { name }, prompt_template_variable_mappings: { who: "Column A" }, engine: { provider: "openai", model: "gpt-test" } } })).column.id;
    const id = (await rows(s)).data[0].cells[P].id;
    const recalc = async () => waitOperation(s, (await json(await call(`${s.base}/cells/${id}/recalculations`, { method: "POST", key: ws.key }))).execution_id);
    expect(await recalc()).toMatchObject({ completed_count: 1, reused_count: 0 });
    expect((await cell(s, id)).value).toBe("first");
    expect(await recalc()).toMatchObject({ completed_count: 1, reused_count: 1 });
    // Same config, same inputs, but "latest" now names another version: computed again.
    await publish("second");
    expect(await recalc()).toMatchObject({ completed_count: 1, reused_count: 0 });
    expect((await cell(s, id)).value).toBe("second");
  });

  it("recalculates a batch of cell ids; an unknown id is a 404 and text cells are skipped", async () => {
    const { ws, s, B, C, page } = await chainSheet();
    const ids = [page.data[0].cells[C].id, page.data[2].cells[B].id, page.data[2].cells[s.columnA].id];
    const res = await call(`${s.base}/cells/recalculations`, { method: "POST", key: ws.key, json: { cell_ids: ids } });
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, cell_count: 3, selected_cell_count: 2 });
    await waitOperation(s, body.execution_id);
    const after = await rows(s);
    expect([after.data[0].cells[B].status, after.data[0].cells[C].status, after.data[2].cells[B].status, after.data[2].cells[C].status]).toEqual([
      "COMPLETED",
      "COMPLETED",
      "COMPLETED",
      "STALE",
    ]);
    const bad = await call(`${s.base}/cells/recalculations`, { method: "POST", key: ws.key, json: { cell_ids: [ids[0], crypto.randomUUID()] } });
    expect(bad.status).toBe(404);
    expect((await json(bad)).message).toMatch(/^cell_ids\[1\]: cell not found/);
    for (const b of [{}, { cell_ids: [] }, { cell_ids: ["x"] }, { cell_ids: Array.from({ length: 1001 }, () => crypto.randomUUID()) }]) {
      expect((await call(`${s.base}/cells/recalculations`, { method: "POST", key: ws.key, json: b })).status).toBe(400);
    }
  });

  it("selects cells for an operation by column_ids, row_ids and statuses", async () => {
    const { ws, s, B, C } = await chainSheet();
    const op = async (b: unknown) => {
      const res = await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: b });
      return { status: res.status, body: await json(res) };
    };
    let r = await op({ operation: "recalculate", column_ids: [B], row_ids: [0, 2, 99] });
    expect(r).toMatchObject({ status: 202, body: { cell_count: 2 } });
    await waitOperation(s, r.body.operation_id);
    // Only STALE cells of C: rows 0 and 2 read B, computed; row 1 also pulls in B's stale cell.
    r = await op({ column_ids: [C], statuses: ["STALE"] });
    expect(r).toMatchObject({ status: 202, body: { cell_count: 4 } });
    await waitOperation(s, r.body.operation_id);
    r = await op({ statuses: ["STALE", "FAILED"] });
    expect(r).toMatchObject({ status: 200, body: { cell_count: 0 } });
    r = await op({});
    expect(r).toMatchObject({ status: 202, body: { cell_count: 6 } });
    const done = await waitOperation(s, r.body.operation_id);
    expect(done).toMatchObject({ completed_count: 6, reused_count: 6 });
    for (const b of [{ operation: "delete" }, { statuses: ["DONE"] }, { row_ids: [-1] }, { column_ids: ["x"] }]) {
      expect((await op(b)).status, JSON.stringify(b)).toBe(400);
    }
    expect((await op({ column_ids: [crypto.randomUUID()] })).status).toBe(404);
  });

  it("lists cell status counts and running operations; gets and cancels one (queued and running cells back to STALE)", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await addRows(s, { count: 9 });
    const slow = (await addColumn(s, { title: "slow", type: "ENDPOINT", config: { url: "http://fake-endpoint.test/slow?ms=400" } })).column.id;
    const summary0 = await json(await call(`${s.base}/operations`, { key: ws.key }));
    expect(summary0).toMatchObject({ success: true, sheet_id: s.sheetId, total_cells: 20, status_counts: { STALE: 10, COMPLETED: 10 }, pending_count: 0, active_operations: [] });
    const started = await json(await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: { column_ids: [slow] } }));
    expect(started.cell_count).toBe(10);
    const summary = await json(await call(`${s.base}/operations`, { key: ws.key }));
    expect(summary.pending_count).toBe(10);
    expect(summary.active_operations).toEqual([expect.objectContaining({ operation_id: started.operation_id, operation: "recalculate", cell_count: 10, pending_count: 10 })]);
    const got = await json(await call(`${s.base}/operations/${started.operation_id}`, { key: ws.key }));
    expect(got.operation).toMatchObject({ operation_id: started.operation_id, status: expect.stringMatching(/^(queued|running)$/) });
    const res = await call(`${s.base}/operations/${started.operation_id}`, { method: "DELETE", key: ws.key });
    expect(res.status).toBe(200);
    const cancelled = await json(res);
    expect(cancelled).toMatchObject({ success: true, operation_id: started.operation_id, execution_ids: [started.operation_id], cancelled_cell_count: 10 });
    expect(cancelled.not_started_reset_count + cancelled.running_invalidated_count).toBe(10);
    // Running calls finish, but their results are dropped.
    await new Promise((r) => setTimeout(r, 700));
    const after = await rows(s);
    expect(after.data.map((r: any) => r.cells[slow].status)).toEqual(Array(10).fill("STALE"));
    const op = (await json(await call(`${s.base}/operations/${started.operation_id}`, { key: ws.key }))).operation;
    expect(op).toMatchObject({ status: "cancelled", pending_count: 0, completed_count: 0 });
    const again = await json(await call(`${s.base}/operations/${started.operation_id}`, { method: "DELETE", key: ws.key }));
    expect(again).toMatchObject({ success: true, cancelled_cell_count: 0 });
    expect((await call(`${s.base}/operations/nope`, { key: ws.key })).status).toBe(404);
    expect((await call(`${s.base}/operations/nope`, { method: "DELETE", key: ws.key })).status).toBe(404);
  });

  it("answers 404 for another workspace's table, sheet, cell or operation", async () => {
    const { ws, s, C, page } = await chainSheet();
    const other = await createWorkspace();
    const mine = await newSheet(other);
    const started = await json(await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: { column_ids: [C] } }));
    const id = page.data[0].cells[C].id;
    const k = other.key;
    for (const base of [s.base, mine.base]) {
      expect((await call(`${base}/cells/${id}/recalculations`, { method: "POST", key: k })).status).toBe(404);
      expect((await call(`${base}/cells/recalculations`, { method: "POST", key: k, json: { cell_ids: [id] } })).status).toBe(404);
      expect((await call(`${base}/operations/${started.operation_id}`, { key: k })).status).toBe(404);
      expect((await call(`${base}/operations/${started.operation_id}`, { method: "DELETE", key: k })).status).toBe(404);
    }
    expect((await call(`${s.base}/operations`, { key: k })).status).toBe(404);
    expect((await call(`${s.base}/operations`, { method: "POST", key: k, json: {} })).status).toBe(404);
    expect((await call(`${mine.base}/operations`, { method: "POST", key: k, json: { column_ids: [C] } })).status).toBe(404);
    const op = await waitOperation(s, started.operation_id);
    expect(op.status).toBe("completed");
  });
});
