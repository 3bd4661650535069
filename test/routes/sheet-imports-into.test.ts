// Imports into an existing sheet: POST …/sheets/{sheet_id}/imports/file and …/imports/request-logs.
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { getDb } from "../../src/db/client";
import { buildDeps } from "../../src/deps";
import type { Deps, Env } from "../../src/env";
import type { JobMessage } from "../../src/lib/jobs";
import { sweepJobs } from "../../src/queue/sweeper";
import { createFileImportIntoSheet, createRequestLogImportIntoSheet, runImport } from "../../src/services/tables";
import { findOperation, requireSheet } from "../../src/services/tables/sheets";
import { MAX_ROW_INDEX } from "../../src/sheets/cell-id";
import type { CellView, RowView } from "../../src/sheets/types";
import { call, createWorkspace, json, shareLogsDb, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { indexNow } from "../helpers/logs";
import { addColumn, newSheet, type SheetRef } from "../helpers/sheet-data";
import { b64, importAndWait, newTable, pollOperation } from "../helpers/tables";

let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
});

const db = getDb(env.DB);
const stub = (sheetId: string) => env.SHEETS.get(env.SHEETS.idFromName(sheetId));
const authOf = (w: TestKey) => ({ workspaceId: w.workspaceId, userId: w.userId, userEmail: w.email, apiKeyId: 0 });

function importFileInto(s: SheetRef, fileName: string, content: string, extra: Record<string, unknown> = {}) {
  return call(`${s.base}/imports/file`, { method: "POST", key: s.ws.key, json: { file_name: fileName, file_content_base64: b64(content), ...extra } });
}

function importLogsInto(s: SheetRef, body: Record<string, unknown>) {
  return call(`${s.base}/imports/request-logs`, { method: "POST", key: s.ws.key, json: body });
}

/** Starts an import (202 expected) and polls it to its end. */
async function finished(s: SheetRef, res: Response) {
  const b = await json(res);
  if (res.status !== 202) throw new Error(`import: ${res.status} ${JSON.stringify(b)}`);
  return { started: b, op: await pollOperation(s.ws, s.tableId, b.operation_id) };
}

/** The sheet as a grid: column titles, each row's display values and cells, in column order. */
async function grid(sheetId: string) {
  const s = stub(sheetId);
  const cols = await s.listColumns();
  const rows: RowView[] = [];
  let after: number | null = null;
  for (;;) {
    const page = await s.readRows({ after, limit: 500 });
    rows.push(...(page.rows as RowView[]));
    if (!page.hasMore) break;
    after = page.rows[page.rows.length - 1].row_index;
  }
  return {
    titles: cols.map((c) => c.title),
    types: cols.map((c) => c.type),
    rows: rows.map((r) => cols.map((c) => (r.cells[c.id] as CellView).display_value)),
    cells: rows.map((r) => cols.map((c) => r.cells[c.id] as CellView)),
  };
}

/** A blank sheet ("Column A", one empty row) with a TEXT column "name" and a computed "both" reading both. */
async function sheetWithComputed(w: TestKey) {
  const s = await newSheet(w);
  await addColumn(s, { title: "name", type: "TEXT" });
  await addColumn(s, { title: "both", type: "COMBINE_COLUMNS", config: { sources: ["Column A", "name"] } });
  return s;
}

async function sheetVersion(s: SheetRef): Promise<{ row_count: number; version_count: number }> {
  return (await json(await call(s.base, { key: s.ws.key }))).sheet;
}

describe("imports/file into an existing sheet", () => {
  it("appends rows: titles map onto existing columns (any case, spaces ignored), new titles become TEXT columns, a computed column is skipped and STALE", async () => {
    const s = await sheetWithComputed(ws);
    const before = await sheetVersion(s);
    const res = await importFileInto(s, "more.csv", "NAME, column a ,both,extra\nn1,a1,ignored,e1\nn2,a2,,\n");
    expect(res.status).toBe(202);
    const b = await json(res);
    expect(b).toEqual({
      success: true,
      message: "Import started",
      operation_id: expect.any(String),
      operation: expect.objectContaining({ source: "file", status: "pending", progress: 0, file_name: "more.csv", table_id: s.tableId, sheet_id: s.sheetId }),
      status_url: `/api/public/v2/tables/${s.tableId}/sheets/operations/${b.operation_id}`,
    });
    expect((await call(b.status_url, { key: ws.key })).status).toBe(200);
    const op = await pollOperation(ws, s.tableId, b.operation_id);
    expect(op).toMatchObject({ status: "completed", progress: 100, rows_added: 2, row_count: 3, sheet_id: s.sheetId, error_message: null });
    expect(op.message).toBe('Imported 2 rows; "both" is a computed column: not imported, its new cells are STALE');

    const g = await grid(s.sheetId);
    expect(g.titles).toEqual(["Column A", "name", "both", "extra"]);
    expect(g.types).toEqual(["TEXT", "TEXT", "COMBINE_COLUMNS", "TEXT"]);
    expect(g.rows).toEqual([
      [null, null, null, null],
      ["a1", "n1", null, "e1"],
      ["a2", "n2", null, null],
    ]);
    expect(g.cells.slice(1).map((r) => r[2].status)).toEqual(["STALE", "STALE"]);
    // One batch is one sheet version; the sheet's listing follows.
    expect(await sheetVersion(s)).toMatchObject({ row_count: 3, version_count: before.version_count + 1 });

    // The imported values feed the computed column once it is recalculated.
    const recalc = await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: { operation: "recalculate", row_ids: [1, 2] } });
    expect(recalc.status).toBe(202);
    const deadline = Date.now() + 20_000;
    let both: CellView[] = [];
    while (Date.now() < deadline) {
      both = (await grid(s.sheetId)).cells.slice(1).map((r) => r[2]);
      if (both.every((c) => c.status === "COMPLETED" || c.status === "FAILED")) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(both.map((c) => c.status)).toEqual(["COMPLETED", "COMPLETED"]);
    expect(both[0].display_value).toContain("a1");
    expect(both[0].display_value).toContain("n1");
  }, 60_000);

  it("JSON files map keys by title too; a repeated CSV title maps once and then gets a column of its own", async () => {
    const s = await newSheet(ws);
    await addColumn(s, { title: "q", type: "TEXT" });
    const { op } = await finished(s, await importFileInto(s, "rows.JSON", JSON.stringify([{ Q: "2+2", a: 4 }, { Q: "x", meta: { k: 1 } }])));
    expect(op).toMatchObject({ status: "completed", rows_added: 2, row_count: 3, message: "Imported 2 rows" });
    let g = await grid(s.sheetId);
    expect(g.titles).toEqual(["Column A", "q", "a", "meta"]);
    expect(g.rows.slice(1)).toEqual([
      [null, "2+2", "4", null],
      [null, "x", null, '{"k":1}'],
    ]);
    expect(g.cells[2][3].value).toEqual({ k: 1 });

    const again = await finished(s, await importFileInto(s, "dup.csv", "q,q,,a\n1,2,3,4\n"));
    expect(again.op).toMatchObject({ status: "completed", rows_added: 1, row_count: 4 });
    g = await grid(s.sheetId);
    // An empty header is named by its place ("Column C"), like a new sheet's, and matched the same way.
    expect(g.titles).toEqual(["Column A", "q", "a", "meta", "q (2)", "Column C"]);
    expect(g.rows[3]).toEqual([null, "1", "4", null, "2", "3"]);
  }, 30_000);

  it("content that cannot be imported fails the operation; the sheet keeps what it had", async () => {
    const s = await newSheet(ws);
    const { op } = await finished(s, await importFileInto(s, "bad.csv", 'a,b\n"never closed,1\n'));
    expect(op).toMatchObject({ status: "failed", message: "Import failed", rows_added: 0 });
    expect(op.error_message).toMatch(/unclosed quoted field/);
    expect((await grid(s.sheetId)).titles).toEqual(["Column A"]);
    expect((await sheetVersion(s)).row_count).toBe(1);
  });

  it("refuses a bad body with a 400 and stores nothing: file name, missing fields, empty file, bad base64, operation_id", async () => {
    const w = await createWorkspace();
    const s = await newSheet(w);
    const bodies: [Record<string, unknown>, RegExp][] = [
      [{ file_name: "a.txt", file_content_base64: b64("a\n1\n") }, /^file_name: must end in \.csv or \.json/],
      [{ file_content_base64: b64("a\n1\n") }, /^file_name: is required/],
      [{ file_name: "a.csv" }, /^file_content_base64: is required/],
      [{ file_name: "a.csv", file_content_base64: 12 }, /^file_content_base64: must be string/],
      [{ file_name: "a.csv", file_content_base64: "" }, /^file_content_base64: the file is empty/],
      [{ file_name: "a.csv", file_content_base64: "not base64!!" }, /^file_content_base64 is not valid base64/],
      [{ file_name: "a.csv", file_content_base64: b64("a\n1\n"), operation_id: "has space" }, /^operation_id: /],
    ];
    for (const [body, message] of bodies) {
      const res = await call(`${s.base}/imports/file`, { method: "POST", key: w.key, json: body });
      const b = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(b.error).toBe("validation_error");
      expect(b.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await call(`${s.base}/imports/file`, { method: "POST", key: w.key, body: "a,b", headers: { "Content-Type": "text/csv" } })).status).toBe(415);
    const wrongMethod = await call(`${s.base}/imports/request-logs`, { key: w.key });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("Allow")).toBe("POST");
    expect((await env.BLOBS.list({ prefix: `imports/${w.workspaceId}/` })).objects).toEqual([]);
    const ops = await env.DB.prepare("SELECT count(*) AS n FROM sheet_operations WHERE workspace_id = ?").bind(w.workspaceId).first<{ n: number }>();
    expect(ops!.n).toBe(0);
  });

  it("a file over IMPORT_MAX_FILE_BYTES is a 413 before anything is stored; one at the limit is imported", async () => {
    const w = await createWorkspace();
    const s = await newSheet(w);
    const limited = { ...env, IMPORT_MAX_FILE_BYTES: "1000" };
    const post = (content: string) =>
      createApp().fetch(
        new Request(`http://api.test${s.base}/imports/file`, {
          method: "POST",
          headers: { "X-API-KEY": w.key, "Content-Type": "application/json" },
          body: JSON.stringify({ file_name: "big.csv", file_content_base64: b64(content) }),
        }),
        limited,
        createExecutionContext(),
      );
    const over = await post(`Column A\n${"x".repeat(992)}`);
    expect(over.status).toBe(413);
    expect((await json(over)).error).toBe("payload_too_large");
    expect((await env.BLOBS.list({ prefix: `imports/${w.workspaceId}/` })).objects).toEqual([]);
    const at = await post(`Column A\n${"x".repeat(991)}`);
    expect(at.status).toBe(202);
    expect(await pollOperation(w, s.tableId, (await json(at)).operation_id)).toMatchObject({ status: "completed", rows_added: 1, row_count: 2 });
    expect((await grid(s.sheetId)).rows[1]).toEqual(["x".repeat(991)]);
  });

  it("the sheet holds 500 columns: new titles up to that are created, one more fails the import before its first row", async () => {
    const header = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `c${from + i}`);
    // A blank sheet has "Column A": 499 new titles fill it to 500.
    const fits = await newSheet(ws);
    const ok = await finished(fits, await importFileInto(fits, "w.csv", `${["Column A", ...header(499)].join(",")}\n${["a", ...header(499)].join(",")}\n`));
    expect(ok.op).toMatchObject({ status: "completed", rows_added: 1 });
    expect((await grid(fits.sheetId)).titles).toHaveLength(500);
    // A title already there takes no new column, even on a full sheet.
    const full = await finished(fits, await importFileInto(fits, "again.csv", "c3,Column A\nx,y\n"));
    expect(full.op).toMatchObject({ status: "completed", rows_added: 1, row_count: 3 });

    const over = await newSheet(ws);
    const bad = await finished(over, await importFileInto(over, "w.csv", `${header(500).join(",")}\n${header(500).join(",")}\n`));
    expect(bad.op).toMatchObject({ status: "failed", rows_added: 0 });
    expect(bad.op.error_message).toMatch(/at most 500 columns/);
    expect((await grid(over.sheetId)).titles).toEqual(["Column A"]);
    // So does a JSON key that would be the sheet's 501st column, though the others map.
    const late = await finished(fits, await importFileInto(fits, "late.json", JSON.stringify([{ c1: "kept" }, { c2: "kept too", brand_new: 1 }])));
    expect(late.op).toMatchObject({ status: "failed" });
    expect(late.op.error_message).toMatch(/at most 500 columns/);
    expect((await grid(fits.sheetId)).titles).toHaveLength(500);
  }, 60_000);

  it("the sheet's row bound: an import that fills it to the last row index completes, one more row fails", async () => {
    const s = await newSheet(ws);
    await runInDurableObject(stub(s.sheetId), (_obj, state) => {
      state.storage.sql.exec(`UPDATE sheet_meta SET value = ? WHERE key = 'next_row_index'`, MAX_ROW_INDEX - 2);
    });
    const fits = await finished(s, await importFileInto(s, "a.csv", "Column A\n1\n2\n"));
    expect(fits.op).toMatchObject({ status: "completed", rows_added: 2, row_count: 3 });
    const over = await finished(s, await importFileInto(s, "b.csv", "Column A\n3\n"));
    expect(over.op).toMatchObject({ status: "failed", rows_added: 0 });
    expect(over.op.error_message).toBe("the sheet cannot hold more rows");
    expect((await sheetVersion(s)).row_count).toBe(3);
  });
});

describe("imports into an existing sheet: operation_id, isolation", () => {
  it("the same operation_id answers the first import (no rows twice); on another sheet or table it is a 409; another workspace may reuse it", async () => {
    const s = await newSheet(ws);
    const opId = `into-${crypto.randomUUID()}`;
    const first = await finished(s, await importFileInto(s, "a.csv", "Column A\n1\n2\n", { operation_id: opId }));
    expect(first.started.operation_id).toBe(opId);
    const again = await importFileInto(s, "other.csv", "Column A\n3\n", { operation_id: opId });
    expect(again.status).toBe(202);
    const b = await json(again);
    expect(b).toMatchObject({ message: "Import already created with this operation_id", operation_id: opId, operation: { status: "completed", rows_added: 2, file_name: "a.csv" } });
    const logs = await importLogsInto(s, { request_log_ids: [1], operation_id: opId });
    expect(logs.status).toBe(202);
    expect((await json(logs)).operation.file_name).toBe("a.csv");
    expect((await sheetVersion(s)).row_count).toBe(3);

    // Another sheet of the same table, or a new sheet made with that id: 409.
    const sibling = await json(await call(`/api/public/v2/tables/${s.tableId}/sheets`, { method: "POST", key: ws.key, json: { title: "sibling" } }));
    const siblingBase = `/api/public/v2/tables/${s.tableId}/sheets/${sibling.sheet.id}`;
    const conflict = await call(`${siblingBase}/imports/file`, { method: "POST", key: ws.key, json: { file_name: "a.csv", file_content_base64: b64("a\n1\n"), operation_id: opId } });
    expect(conflict.status).toBe(409);
    expect((await json(conflict)).message).toBe("operation_id: is already the id of an import into another sheet");
    expect((await call(`${siblingBase}/imports/request-logs`, { method: "POST", key: ws.key, json: { request_log_ids: [1], operation_id: opId } })).status).toBe(409);
    const created = await importAndWait(ws, s.tableId, "n.csv", "a\n1\n", { operation_id: `new-${opId}` });
    expect((await importFileInto(s, "a.csv", "a\n1\n", { operation_id: `new-${opId}` })).status).toBe(409);
    expect(created.op.status).toBe("completed");

    const w = await createWorkspace();
    const theirs = await newSheet(w);
    expect((await importFileInto(theirs, "a.csv", "a\n1\n", { operation_id: opId })).status).toBe(202);
  }, 60_000);

  it("concurrent requests with one operation_id make one import", async () => {
    const s = await newSheet(ws);
    const opId = crypto.randomUUID();
    const answers = await Promise.all([1, 2, 3].map(() => importFileInto(s, "a.csv", "Column A\n1\n", { operation_id: opId }).then(json)));
    expect(answers.map((a) => a.operation_id)).toEqual([opId, opId, opId]);
    expect(answers.filter((a) => a.message === "Import started")).toHaveLength(1);
    await pollOperation(ws, s.tableId, opId);
    expect((await sheetVersion(s)).row_count).toBe(2);
  });

  it("another workspace's table or sheet, a sheet of another table, a deleted or unknown sheet: 404 on both, nothing stored", async () => {
    const me = await createWorkspace();
    const mine = await newSheet(me);
    const other = await createWorkspace();
    const theirs = await newSheet(other);
    const otherTable = await newTable(me);
    const gone = await newSheet(me);
    expect((await call(gone.base, { method: "DELETE", key: me.key })).status).toBe(200);
    const paths = [
      theirs.base,
      `/api/public/v2/tables/${mine.tableId}/sheets/${theirs.sheetId}`,
      `/api/public/v2/tables/${theirs.tableId}/sheets/${mine.sheetId}`,
      `/api/public/v2/tables/${otherTable.id}/sheets/${mine.sheetId}`,
      gone.base,
      `/api/public/v2/tables/${mine.tableId}/sheets/${crypto.randomUUID()}`,
    ];
    for (const base of paths) {
      const file = await call(`${base}/imports/file`, { method: "POST", key: me.key, json: { file_name: "a.csv", file_content_base64: b64("a\n1\n") } });
      expect(file.status, base).toBe(404);
      expect((await json(file)).error).toBe("not_found");
      const logs = await call(`${base}/imports/request-logs`, { method: "POST", key: me.key, json: { filter_group: { filters: [] } } });
      expect(logs.status, base).toBe(404);
    }
    expect((await call(`${mine.base}/imports/file`, { method: "POST", json: {} })).status).toBe(401);
    expect((await call(`/api/public/v2/tables/${mine.tableId}/sheets/not-a-uuid/imports/file`, { method: "POST", key: me.key, json: {} })).status).toBe(400);
    const ops = await env.DB.prepare("SELECT count(*) AS n FROM sheet_operations WHERE workspace_id IN (?, ?)").bind(me.workspaceId, other.workspaceId).first<{ n: number }>();
    expect(ops!.n).toBe(0);
    expect((await env.BLOBS.list({ prefix: `imports/${me.workspaceId}/` })).objects).toEqual([]);
    expect((await grid(theirs.sheetId)).rows).toHaveLength(1);
  });
});

describe("imports/request-logs into an existing sheet", () => {
  async function logs(w: TestKey, n: number, vars: (i: number) => Record<string, unknown>) {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await call("/log-request", {
        method: "POST",
        key: w.key,
        json: logBody({ prompt_input_variables: vars(i), request_start_time: `2024-02-0${i + 1}T10:00:00Z`, request_end_time: `2024-02-0${i + 1}T10:00:0${i}Z`, tags: [`t${i % 2}`] }),
      });
      expect(res.status).toBe(201);
      ids.push((await json(res)).id);
    }
    await indexNow();
    return ids;
  }

  it("a filter's logs, oldest first, into the columns of the same titles; a computed column skipped and STALE; no webhook event", async () => {
    const w = await createWorkspace();
    const ids = await logs(w, 4, (i) => ({ name: `n${i}`, other: { deep: i } }));
    const s = await sheetWithComputed(w);
    await addColumn(s, { title: "Status", type: "TEXT" });
    const { started, op } = await finished(s, await importLogsInto(s, { filter_group: { filters: [{ field: "tags", operator: "in", value: ["t1"] }] } }));
    expect(started.operation).toMatchObject({ source: "request_logs", file_name: null, sheet_id: s.sheetId });
    expect(op).toMatchObject({ status: "completed", rows_added: 2, row_count: 3, message: "Imported 2 rows" });
    const g = await grid(s.sheetId);
    expect(g.titles.slice(0, 6)).toEqual(["Column A", "name", "both", "Status", "other", "request_id"]);
    expect(g.titles).toContain("request_start_time");
    expect(g.titles).not.toContain("status");
    const col = (t: string) => g.titles.indexOf(t);
    expect(g.rows.slice(1).map((r) => [r[col("name")], r[col("request_id")], r[col("Status")]])).toEqual([
      ["n1", String(ids[1]), "SUCCESS"],
      ["n3", String(ids[3]), "SUCCESS"],
    ]);
    expect(g.cells[1][col("other")].value).toEqual({ deep: 1 });
    expect(g.cells.slice(1).map((r) => r[col("both")].status)).toEqual(["STALE", "STALE"]);
    const events = await env.DB.prepare("SELECT count(*) AS n FROM webhook_events WHERE workspace_id = ?").bind(w.workspaceId).first<{ n: number }>();
    expect(events!.n).toBe(0);
  }, 30_000);

  it("request_log_ids in their order (others' ids skipped), variables_to_parse and include_fields choose the columns; sort_by and limit", async () => {
    const w = await createWorkspace();
    const ids = await logs(w, 4, (i) => ({ name: `n${i}`, city: `c${i}`, skip: "x" }));
    const o = await createWorkspace();
    // One log database: the other workspace's log ids are then not this one's, and only the workspace condition keeps them out.
    await shareLogsDb(o, w);
    const [foreign] = await logs(o, 1, () => ({ name: "theirs" }));
    const s = await newSheet(w);
    const byIds = await finished(s, await importLogsInto(s, { request_log_ids: [ids[2], foreign, ids[0], ids[2], 999_999_999], variables_to_parse: ["city", "missing"], include_fields: ["output", "latency_ms"] }));
    expect(byIds.op).toMatchObject({ status: "completed", rows_added: 2 });
    let g = await grid(s.sheetId);
    expect(g.titles).toEqual(["Column A", "city", "missing", "output", "latency_ms"]);
    expect(g.rows.slice(1).map((r) => [r[1], r[2], r[4]])).toEqual([
      ["c2", null, "2000"],
      ["c0", null, "0"],
    ]);

    // Slowest first, two of them; include_fields [] makes no field columns.
    const sorted = await finished(s, await importLogsInto(s, { filter_group: { filters: [] }, sort_by: "latency_ms", sort_order: "desc", limit: 2, variables_to_parse: ["name"], include_fields: [] }));
    expect(sorted.op).toMatchObject({ status: "completed", rows_added: 2, row_count: 5 });
    g = await grid(s.sheetId);
    expect(g.titles).toEqual(["Column A", "city", "missing", "output", "latency_ms", "name"]);
    expect(g.rows.slice(3).map((r) => r[5])).toEqual(["n3", "n2"]);

    // limit also cuts an id list.
    const cut = await finished(s, await importLogsInto(s, { request_log_ids: [ids[3], ids[1]], limit: 1, include_fields: ["request_id"], variables_to_parse: ["name"] }));
    expect(cut.op).toMatchObject({ rows_added: 1 });
    expect((await grid(s.sheetId)).rows[5][5]).toBe("n3");
  }, 60_000);

  it("the logs are fixed when the import is created: one written before its job runs is not imported", async () => {
    const w = await createWorkspace();
    await logs(w, 2, (i) => ({ name: `n${i}` }));
    const s = await newSheet(w);
    const quiet = buildDeps({ ...env, JOBS: { send: async () => undefined } as unknown as Queue } as Env);
    const sheet = await requireSheet(db, w.workspaceId, s.tableId, s.sheetId);
    const created = await createRequestLogImportIntoSheet(quiet, authOf(w), sheet, { operationId: null, query: { filter_group: { logic: "AND", filters: [] } } });
    await logs(w, 1, () => ({ name: "late" }));
    await runImport(quiet, w.workspaceId, created.operation.id);
    expect(await findOperation(db, w.workspaceId, created.operation.id)).toMatchObject({ status: "completed", rowsAdded: 2 });
    const g = await grid(s.sheetId);
    expect(g.rows.slice(1).map((r) => r[g.titles.indexOf("name")])).toEqual(["n0", "n1"]);
  });

  it("refuses a bad body with a 400 and creates nothing; 50,000 ids and limit 50,000 are taken", async () => {
    const w = await createWorkspace();
    const s = await newSheet(w);
    const bad: [Record<string, unknown>, RegExp][] = [
      [{}, /^filter_group: give request_log_ids or filter_group/],
      [{ q: "hello" }, /^filter_group: give request_log_ids or filter_group/],
      [{ request_log_ids: [] }, /^request_log_ids: must have at least 1 item/],
      [{ request_log_ids: ["x"] }, /^request_log_ids\[0\]: /],
      [{ request_log_ids: Array.from({ length: 50_001 }, (_, i) => i + 1) }, /^request_log_ids: must have at most 50000 items/],
      [{ filter_group: { filters: [] }, limit: 0 }, /^limit: must be 1 to 50000/],
      [{ filter_group: { filters: [] }, limit: 50_001 }, /^limit: must be 1 to 50000/],
      [{ filter_group: { filters: [] }, sort_order: "asc" }, /^sort_order: requires sort_by/],
      [{ filter_group: { filters: [] }, sort_by: "nope" }, /^sort_by: /],
      [{ filter_group: { filters: [] }, include_fields: ["nope"] }, /^include_fields\[0\]: must be one of request_id, /],
      [{ filter_group: { filters: [{ field: "nope", operator: "is", value: 1 }] } }, /^filter_group\.filters\[0\]/],
      [{ filter_group: { filters: [] }, variables_to_parse: Array.from({ length: 490 }, (_, i) => `v${i}`), include_fields: ["request_id", "input", "output", "model", "provider", "status", "price", "tags", "metadata", "prompt_id", "prompt_name"] }, /^variables_to_parse: with include_fields names 501 columns/],
      [{ filter_group: { filters: [] }, operation_id: "" }, /^operation_id: /],
    ];
    for (const [body, message] of bad) {
      const res = await importLogsInto(s, body);
      const b = await json(res);
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(b.message, JSON.stringify(body).slice(0, 200)).toMatch(message);
    }
    const ops = await env.DB.prepare("SELECT count(*) AS n FROM sheet_operations WHERE workspace_id = ?").bind(w.workspaceId).first<{ n: number }>();
    expect(ops!.n).toBe(0);

    // At the bounds: 500 columns named, 50,000 ids (none of this workspace: nothing to import), limit 50,000.
    const atColumns = await importLogsInto(s, { filter_group: { filters: [] }, variables_to_parse: Array.from({ length: 489 }, (_, i) => `v${i}`), include_fields: ["request_id", "input", "output", "model", "provider", "status", "price", "tags", "metadata", "prompt_id", "prompt_name"] });
    expect(atColumns.status).toBe(202);
    expect(await pollOperation(w, s.tableId, (await json(atColumns)).operation_id)).toMatchObject({ status: "completed", rows_added: 0 });
    const manyIds = await importLogsInto(s, { request_log_ids: Array.from({ length: 50_000 }, (_, i) => 2_000_000_000 + i) });
    expect(manyIds.status).toBe(202);
    expect(await pollOperation(w, s.tableId, (await json(manyIds)).operation_id, 60_000)).toMatchObject({ status: "completed", rows_added: 0 });
    const atLimit = await importLogsInto(s, { filter_group: { filters: [] }, limit: 50_000, metadata_cost_breakdown_key: "ignored" });
    expect(atLimit.status).toBe(202);
    expect(await pollOperation(w, s.tableId, (await json(atLimit)).operation_id)).toMatchObject({ status: "completed", rows_added: 0 });
  }, 90_000);
});

describe("imports into an existing sheet: redelivery and the job sweeper", () => {
  it("a worker killed mid-import is re-queued after its lease and resumes after the last committed batch, no row twice", async () => {
    const sent: JobMessage[] = [];
    const deps = buildDeps({ ...env, JOBS: { send: async (m: JobMessage) => void sent.push(m) } as unknown as Queue } as Env);
    const w = await createWorkspace();
    const s = await newSheet(w);
    const csv = `Column A,n\n${Array.from({ length: 45 }, (_, i) => `a${i},${i}`).join("\n")}\n`;
    const blobKey = `imports/${w.workspaceId}/${crypto.randomUUID()}`;
    await env.BLOBS.put(blobKey, csv);
    const sheet = await requireSheet(db, w.workspaceId, s.tableId, s.sheetId);
    const created = await createFileImportIntoSheet(deps, authOf(w), sheet, { operationId: null, fileName: "n.csv", file: { blobKey, bytes: csv.length } });
    expect(sent).toHaveLength(1);
    const killed = new Error("worker killed");
    const run = (d: Deps, opts: Parameters<typeof runImport>[3]) => runImport(d, w.workspaceId, created.operation.id, opts);
    await expect(run(deps, { batchRows: 10, afterBatch: (b) => { if (b === 1) throw killed; } })).rejects.toBe(killed);
    const stalled = (await findOperation(db, w.workspaceId, created.operation.id))!;
    expect(stalled).toMatchObject({ status: "running", rowsAdded: 20 });
    sent.length = 0;
    const settings = { leaseMs: 60_000, maxRedrives: 2 };
    expect((await sweepJobs(deps, stalled.updatedAt + settings.leaseMs, settings)).requeued).toEqual({});
    expect((await sweepJobs(deps, stalled.updatedAt + settings.leaseMs + 1, settings)).requeued).toEqual({ sheet_import: 1 });
    expect(sent).toEqual([{ v: 1, kind: "sheet_import", workspace_id: w.workspaceId, operation_id: created.operation.id }]);
    await run(deps, { batchRows: 7 });
    expect(await findOperation(db, w.workspaceId, created.operation.id)).toMatchObject({ status: "completed", rowsAdded: 45, rowCount: 46 });
    const g = await grid(s.sheetId);
    expect(g.titles).toEqual(["Column A", "n"]);
    expect(g.rows.slice(1).map((r) => r[1])).toEqual(Array.from({ length: 45 }, (_, i) => String(i)));
    expect(await env.BLOBS.head(blobKey)).toBeNull();
  });

  it("given up after its last re-queue: failed with the reason, no event", async () => {
    const deps = buildDeps({ ...env, JOBS: { send: async () => undefined } as unknown as Queue } as Env);
    const w = await createWorkspace();
    const s = await newSheet(w);
    const sheet = await requireSheet(db, w.workspaceId, s.tableId, s.sheetId);
    const created = await createRequestLogImportIntoSheet(deps, authOf(w), sheet, { operationId: null, query: { request_log_ids: [1] } });
    await env.DB.prepare("UPDATE sheet_operations SET redrives = 2 WHERE seq = ?").bind(created.operation.seq).run();
    const settings = { leaseMs: 60_000, maxRedrives: 2 };
    expect((await sweepJobs(deps, created.operation.updatedAt + settings.leaseMs + 1, settings)).failed).toEqual({ sheet_import: 1 });
    const failed = (await findOperation(db, w.workspaceId, created.operation.id))!;
    expect(failed.status).toBe("failed");
    expect(failed.errorMessage).toMatch(/given up; create the import again$/);
    const events = await env.DB.prepare("SELECT count(*) AS n FROM webhook_events WHERE workspace_id = ?").bind(w.workspaceId).first<{ n: number }>();
    expect(events!.n).toBe(0);
  });
});
