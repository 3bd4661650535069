// Saved versions of a sheet: named snapshots (list, get with snapshot pages, deltas), restoring one
// as a new version (content, row indexes, recalculations, sheet version), compact storage, the size
// limit on both sides, every bad input a 4xx, and workspace isolation for every id.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_VERSION_CELLS } from "../../src/sheets/versions";
import { call, createWorkspace, json } from "../helpers/api";
import { addColumn, addRows, newSheet, patchCell, rows, type SheetRef } from "../helpers/sheet-data";

const stubOf = (s: SheetRef) => env.SHEETS.get(env.SHEETS.idFromName(s.sheetId));

function save(s: SheetRef, body: unknown, key = s.ws.key) {
  return call(`${s.base}/versions`, { method: "POST", key, json: body });
}

async function saved(s: SheetRef, body: unknown) {
  const res = await save(s, body);
  const b = await json(res);
  if (res.status !== 201) throw new Error(`save: ${res.status} ${JSON.stringify(b)}`);
  return b.version;
}

async function sheetVersion(s: SheetRef) {
  return (await json(await call(s.base, { key: s.ws.key }))).sheet.version_count as number;
}

/** A sheet with rows "a0", "a1" in Column A and a computed column B reading it. */
async function sheetWithData() {
  const ws = await createWorkspace();
  const s = await newSheet(ws);
  await addRows(s, { count: 2, values: [{ [s.columnA]: "a1" }, { [s.columnA]: "a2" }] });
  const B = (await addColumn(s, { title: "B", type: "COMBINE_COLUMNS", config: { sources: ["Column A"] } })).column.id;
  return { ws, s, B };
}

describe("saving a version", () => {
  it("answers 201 with the version, its metadata, deltas and snapshot; the sheet's own version does not move", async () => {
    const { ws, s, B } = await sheetWithData();
    const before = await sheetVersion(s);
    const res = await save(s, { name: "baseline" });
    expect(res.status).toBe(201);
    const { success, version } = await json(res);
    expect(success).toBe(true);
    expect(version).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sheet_id: s.sheetId,
      version_number: 1,
      name: "baseline",
      created_by: String(ws.userId),
      metadata: { sheet_version: before, row_count: 3, column_count: 2, next_row_index: 3, restored_from: null },
      deltas: [
        { type: "columns", added: [s.columnA, B], removed: [], changed: [] },
        { type: "rows", added: 3, removed: 0 },
        { type: "cells", changed: expect.any(Number) },
      ],
      score: {},
      score_configuration: null,
    });
    expect(new Date(version.created_at).toISOString()).toBe(version.created_at);
    expect(version.snapshot).toMatchObject({ sheet_version: before, row_count: 3, column_count: 2, has_more_rows: false, next_cursor: null });
    expect(version.snapshot.columns.map((c: any) => c.title)).toEqual(["Column A", "B"]);
    expect(version.snapshot.rows.map((r: any) => r.cells[s.columnA].display_value)).toEqual([null, "a1", "a2"]);
    expect(version.snapshot.rows[1].cells[B]).toMatchObject({ status: "STALE", column_id: B, row_index: 1 });
    expect(await sheetVersion(s)).toBe(before);
  });

  it("numbers versions 1, 2, 3…; a later version's deltas say what changed; an older one still shows its content", async () => {
    const { s, B } = await sheetWithData();
    const v1 = await saved(s, { name: "one" });
    const page = await rows(s);
    expect((await patchCell(s, page.data[1].cells[s.columnA].id, { display_value: "changed" })).status).toBe(200);
    await addRows(s, { count: 1, values: [{ [s.columnA]: "a3" }] });
    const C = (await addColumn(s, { title: "C", type: "TEXT" })).column.id;
    const v2 = await saved(s, { name: "two" });
    expect(v2.version_number).toBe(2);
    // Changed: the edited cell and the new row's text cell and its computed cell (STALE); added: column C.
    expect(v2.deltas).toEqual([
      { type: "columns", added: [C], removed: [], changed: [] },
      { type: "rows", added: 1, removed: 0 },
      { type: "cells", changed: 3 },
    ]);
    const got = await json(await call(`${s.base}/versions/${v1.id}`, { key: s.ws.key }));
    expect(got.version).toMatchObject({ id: v1.id, version_number: 1, name: "one" });
    expect(got.version.snapshot.rows.map((r: any) => r.cells[s.columnA].display_value)).toEqual([null, "a1", "a2"]);
    expect(got.version.snapshot.columns.map((c: any) => c.id)).toEqual([s.columnA, B]);
    const got2 = await json(await call(`${s.base}/versions/${v2.id}`, { key: s.ws.key }));
    expect(got2.version.snapshot.rows.map((r: any) => r.cells[s.columnA].display_value)).toEqual([null, "changed", "a2", "a3"]);
    // The computed column keeps what it reads, as dependencies and config.
    expect(got2.version.snapshot.columns[1]).toMatchObject({ title: "B", type: "COMBINE_COLUMNS", config: { sources: ["Column A"] } });
  });

  it("keeps unchanged cells once, shared by every version they lived through", async () => {
    const { s } = await sheetWithData();
    await saved(s, { name: "one" });
    await saved(s, { name: "two" });
    await saved(s, { name: "three" });
    const counts = await runInDurableObject(stubOf(s), (_o, state) => {
      const q = (t: string) => state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${t}`).one().n;
      return { cells: q("cells"), snap: q("snap_cells"), rows: q("snap_rows") };
    });
    expect(counts.snap).toBe(counts.cells);
    expect(counts.rows).toBe(3);
  });

  it("keeps a cell that was QUEUED or RUNNING as STALE, with its last value", async () => {
    const { s, B } = await sheetWithData();
    await runInDurableObject(stubOf(s), (_o, state) => {
      state.storage.sql.exec(`UPDATE cells SET status = 'QUEUED', display_value = 'old' WHERE row_index = 1 AND column_seq = (SELECT seq FROM columns WHERE id = ?)`, B);
    });
    const v = await saved(s, { name: "mid-run" });
    expect(v.snapshot.rows[1].cells[B]).toMatchObject({ status: "STALE", display_value: "old", execution_id: null });
  });

  it("pages a snapshot's rows with limit and cursor", async () => {
    const { s } = await sheetWithData();
    const v = await saved(s, { name: "paged" });
    let res = await call(`${s.base}/versions/${v.id}?limit=2`, { key: s.ws.key });
    let snap = (await json(res)).version.snapshot;
    expect(snap.rows.map((r: any) => r.row_index)).toEqual([0, 1]);
    expect(snap.has_more_rows).toBe(true);
    res = await call(`${s.base}/versions/${v.id}?limit=2&cursor=${snap.next_cursor}`, { key: s.ws.key });
    snap = (await json(res)).version.snapshot;
    expect(snap.rows.map((r: any) => r.row_index)).toEqual([2]);
    expect(snap).toMatchObject({ has_more_rows: false, next_cursor: null });
    for (const q of ["limit=0", "limit=101", "limit=x", "cursor=nope"]) {
      res = await call(`${s.base}/versions/${v.id}?${q}`, { key: s.ws.key });
      expect(res.status, q).toBe(400);
      expect((await json(res)).error).toBe("validation_error");
    }
    expect((await call(`${s.base}/versions/${v.id}?limit=100`, { key: s.ws.key })).status).toBe(200);
  });
});

describe("listing versions", () => {
  it("newest first by default, cursor-paged, with pagination, filters and count as PromptLayer's list has them; no snapshots", async () => {
    const { s } = await sheetWithData();
    for (const name of ["one", "two", "three"]) await saved(s, { name });
    let res = await call(`${s.base}/versions?limit=2`, { key: s.ws.key });
    expect(res.status).toBe(200);
    let b = await json(res);
    expect(b).toMatchObject({ success: true, count: 2, filters: {}, pagination: { has_more: true, limit: 2, prev_cursor: null } });
    expect(b.data.map((v: any) => v.name)).toEqual(["three", "two"]);
    expect(b.data[0].snapshot).toBeUndefined();
    res = await call(`${s.base}/versions?limit=2&cursor=${b.pagination.next_cursor}`, { key: s.ws.key });
    b = await json(res);
    expect(b.data.map((v: any) => v.name)).toEqual(["one"]);
    expect(b.pagination).toEqual({ next_cursor: null, prev_cursor: null, has_more: false, limit: 2 });
    b = await json(await call(`${s.base}/versions?order=asc&sort=version_number`, { key: s.ws.key }));
    expect(b.data.map((v: any) => v.version_number)).toEqual([1, 2, 3]);
    expect(b.pagination.limit).toBe(20);
  });

  it("is empty for a sheet without versions", async () => {
    const { s } = await sheetWithData();
    const b = await json(await call(`${s.base}/versions`, { key: s.ws.key }));
    expect(b).toEqual({ success: true, data: [], pagination: { next_cursor: null, prev_cursor: null, has_more: false, limit: 20 }, filters: {}, count: 0 });
  });

  it("refuses bad query parameters with a 400 naming them; limit 1 and 100 are fine", async () => {
    const { s } = await sheetWithData();
    await saved(s, { name: "one" });
    const desc = (await json(await call(`${s.base}/versions?limit=1`, { key: s.ws.key }))).pagination;
    for (const [q, field] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=-1", "limit"],
      ["sort=created_at", "sort"],
      ["order=up", "order"],
      ["cursor=%%%", "cursor"],
      ["cursor=eyJvIjoiZGVzYyJ9", "cursor"],
    ]) {
      const res = await call(`${s.base}/versions?${q}`, { key: s.ws.key });
      expect(res.status, q).toBe(400);
      const b = await json(res);
      expect(b.error).toBe("validation_error");
      expect(b.message, q).toContain(field);
    }
    expect(desc.has_more).toBe(false);
    for (const q of ["limit=1", "limit=100"]) expect((await call(`${s.base}/versions?${q}`, { key: s.ws.key })).status).toBe(200);
  });
});

describe("restoring a version", () => {
  it("replaces the sheet's columns, rows and cells by the version's, as one new sheet version, and saves the result as the next version", async () => {
    const { ws, s, B } = await sheetWithData();
    const v1 = await saved(s, { name: "one" });
    const page = await rows(s);
    await patchCell(s, page.data[1].cells[s.columnA].id, { display_value: "edited" });
    await addRows(s, { count: 2 });
    await addColumn(s, { title: "C", type: "TEXT" });
    const del = await call(`${s.base}/columns/${B}`, { method: "DELETE", key: ws.key });
    expect(del.status).toBe(200);
    await saved(s, { name: "two" });
    const before = await sheetVersion(s);

    const res = await save(s, { source_version_id: v1.id });
    expect(res.status).toBe(201);
    const v3 = (await json(res)).version;
    expect(v3).toMatchObject({
      version_number: 3,
      name: "Restored from version 1",
      metadata: { sheet_version: before + 1, row_count: 3, column_count: 2, restored_from: { version_id: v1.id, version_number: 1 } },
    });
    expect(v3.deltas[0]).toMatchObject({ added: [B], removed: [expect.any(String)] });
    expect(await sheetVersion(s)).toBe(before + 1);

    const cols = await json(await call(`${s.base}/columns`, { key: ws.key }));
    expect(cols.data.map((c: any) => [c.id, c.title])).toEqual([
      [s.columnA, "Column A"],
      [B, "B"],
    ]);
    const now = await rows(s);
    expect(now.row_count).toBe(3);
    expect(now.data.map((r: any) => r.cells[s.columnA].display_value)).toEqual([null, "a1", "a2"]);
    // Cell ids are the same as before (a column keeps its id); the restored computed column can be recalculated.
    expect(now.data[1].cells[B].id).toBe(page.data[1].cells[B].id);
    const op = await call(`${s.base}/operations`, { method: "POST", key: ws.key, json: { column_ids: [B] } });
    expect(op.status).toBe(202);
    // Rows added after the restore continue from the version's row indexes.
    const added = await addRows(s, { count: 1 });
    expect(added.start_row_index).toBe(3);

    // Named restores keep their name; a restore of the restore is as good.
    const v4 = await saved(s, { source_version_id: v3.id, name: "again" });
    expect(v4).toMatchObject({ version_number: 4, name: "again", metadata: { restored_from: { version_number: 3 } } });
    expect((await rows(s)).row_count).toBe(3);
  });

  it("cancels recalculations under way: their operations end cancelled and nothing is left queued", async () => {
    const { ws, s, B } = await sheetWithData();
    const v1 = await saved(s, { name: "one" });
    // Cells queued under an operation the alarm has not reached yet.
    const opId = crypto.randomUUID();
    await runInDurableObject(stubOf(s), (_o, state) => {
      const sql = state.storage.sql;
      sql.exec(`INSERT INTO executions (id, operation, cell_count, version, created_at, updated_at) VALUES (?, 'recalculate', 2, 1, 1, 1)`, opId);
      sql.exec(`UPDATE cells SET status = 'QUEUED', execution_id = ? WHERE column_seq = (SELECT seq FROM columns WHERE id = ?) AND row_index > 0`, opId, B);
    });
    expect((await save(s, { source_version_id: v1.id })).status).toBe(201);
    const op = await json(await call(`${s.base}/operations/${opId}`, { key: ws.key }));
    expect(op.operation).toMatchObject({ status: "cancelled", pending_count: 0 });
    const summary = await json(await call(`${s.base}/operations`, { key: ws.key }));
    expect(summary).toMatchObject({ pending_count: 0, active_operations: [] });
  });

  it("brings back a computed column's prompt references in D1 and drops those of columns it removes", async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    const v1 = await saved(s, { name: "before the prompt column" });
    await stubOf(s).addColumn({ title: "answer", type: "PROMPT_TEMPLATE", config: { template: { prompt_id: 41, prompt_version_id: 42 } } });
    const refs = async () => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM sheet_prompt_refs WHERE sheet_id = ?`).bind(s.sheetId).first<{ n: number }>())!.n;
    expect(await refs()).toBe(1);
    const v2 = await saved(s, { name: "with it" });
    await saved(s, { source_version_id: v1.id });
    expect(await refs()).toBe(0);
    await saved(s, { source_version_id: v2.id });
    expect(await refs()).toBe(1);
  });
});

describe("refusals", () => {
  it("a 400 for a missing, empty or too long name, a source_version_id that is not a UUID; 255 characters are fine; nothing saved", async () => {
    const { s } = await sheetWithData();
    for (const [body, field] of [
      [{}, "name"],
      [{ name: null }, "name"],
      [{ name: "" }, "name"],
      [{ name: "   " }, "name"],
      [{ name: "x".repeat(256) }, "name"],
      [{ name: 5 }, "name"],
      [{ source_version_id: "v1" }, "source_version_id"],
      [{ source_version_id: 12 }, "source_version_id"],
    ] as const) {
      const res = await save(s, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const b = await json(res);
      expect(b.error).toBe("validation_error");
      expect(b.message).toContain(field);
    }
    const bad = await call(`${s.base}/versions`, { method: "POST", key: s.ws.key, body: "{", headers: { "Content-Type": "application/json" } });
    expect(bad.status).toBe(400);
    expect((await json(await call(`${s.base}/versions`, { key: s.ws.key }))).count).toBe(0);
    expect((await save(s, { name: "x".repeat(255) })).status).toBe(201);
  });

  it("a 404 for an unknown version, as source or in the path; a 400 for a version id that is not a UUID", async () => {
    const { s } = await sheetWithData();
    const unknown = crypto.randomUUID();
    let res = await save(s, { source_version_id: unknown });
    expect(res.status).toBe(404);
    expect((await json(res)).message).toMatch(/source_version_id/);
    res = await call(`${s.base}/versions/${unknown}`, { key: s.ws.key });
    expect(res.status).toBe(404);
    res = await call(`${s.base}/versions/not-a-uuid`, { key: s.ws.key });
    expect(res.status).toBe(400);
  });

  it("another workspace's table, sheet or version is a 404; so is another sheet's version", async () => {
    const { s } = await sheetWithData();
    const v = await saved(s, { name: "mine" });
    const other = await createWorkspace();
    expect((await call(`${s.base}/versions`, { key: other.key })).status).toBe(404);
    expect((await call(`${s.base}/versions/${v.id}`, { key: other.key })).status).toBe(404);
    expect((await save(s, { name: "theirs" }, other.key)).status).toBe(404);
    expect((await save(s, { source_version_id: v.id }, other.key)).status).toBe(404);
    // Their own sheet cannot read or restore my version.
    const theirs = await newSheet(other);
    expect((await call(`${theirs.base}/versions/${v.id}`, { key: other.key })).status).toBe(404);
    expect((await save(theirs, { source_version_id: v.id })).status).toBe(404);
    // Another sheet of my own workspace neither.
    const mine2 = await newSheet(s.ws);
    expect((await call(`${mine2.base}/versions/${v.id}`, { key: s.ws.key })).status).toBe(404);
    expect((await save(mine2, { source_version_id: v.id })).status).toBe(404);
    // A sheet under the wrong table id.
    expect((await call(`/api/public/v2/tables/${mine2.tableId}/sheets/${s.sheetId}/versions`, { key: s.ws.key })).status).toBe(404);
    expect((await json(await call(`${s.base}/versions`, { key: s.ws.key }))).count).toBe(1);
  });

  it("a deleted sheet's versions are a 404", async () => {
    const { s } = await sheetWithData();
    const v = await saved(s, { name: "one" });
    expect((await call(s.base, { method: "DELETE", key: s.ws.key })).status).toBe(200);
    expect((await call(`${s.base}/versions`, { key: s.ws.key })).status).toBe(404);
    expect((await call(`${s.base}/versions/${v.id}`, { key: s.ws.key })).status).toBe(404);
    expect((await save(s, { source_version_id: v.id })).status).toBe(404);
  });
});

describe("the size limit", () => {
  /** Fills the sheet to exactly `cells` stored cells (Column A, one cell per row). */
  async function fillTo(s: SheetRef, cells: number) {
    await runInDurableObject(stubOf(s), (_o, state) => {
      const sql = state.storage.sql;
      sql.exec(`DELETE FROM cells`);
      sql.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) INSERT OR IGNORE INTO rows (row_index, created_at) SELECT i, 1 FROM n`, cells);
      sql.exec(
        `INSERT INTO cells (row_index, column_seq, status, display_value, updated_at) SELECT r.row_index, c.seq, 'COMPLETED', 'v', 1 FROM rows r JOIN columns c WHERE r.row_index < ?`,
        cells,
      );
      sql.exec(`UPDATE sheet_meta SET value = ? WHERE key IN ('next_row_index', 'row_count')`, cells);
    });
  }

  it(`saves and restores a sheet of ${MAX_VERSION_CELLS} stored cells; one more is a 413 that saves nothing`, async () => {
    const ws = await createWorkspace();
    const s = await newSheet(ws);
    await fillTo(s, MAX_VERSION_CELLS);
    const v1 = await saved(s, { name: "at the limit" });
    expect(v1.metadata.cell_count).toBe(MAX_VERSION_CELLS);
    expect((await save(s, { source_version_id: v1.id })).status).toBe(201);
    await addRows(s, { count: 1, values: [{ [s.columnA]: "one more" }] });
    const before = await sheetVersion(s);
    const res = await save(s, { name: "over" });
    expect(res.status).toBe(413);
    const b = await json(res);
    expect(b).toMatchObject({ success: false, error: "payload_too_large" });
    expect(b.message).toContain(String(MAX_VERSION_CELLS));
    expect((await json(await call(`${s.base}/versions`, { key: ws.key }))).count).toBe(2);
    expect(await sheetVersion(s)).toBe(before);
  }, 120_000);

  it("refuses to restore a version holding more than the limit (413), changing nothing", async () => {
    const { s } = await sheetWithData();
    const v = await saved(s, { name: "small" });
    await runInDurableObject(stubOf(s), (_o, state) => {
      state.storage.sql.exec(`UPDATE saved_versions SET metadata = json_set(metadata, '$.cell_count', ?) WHERE id = ?`, MAX_VERSION_CELLS + 1, v.id);
    });
    const before = await sheetVersion(s);
    const res = await save(s, { source_version_id: v.id });
    expect(res.status).toBe(413);
    expect(await sheetVersion(s)).toBe(before);
  });
});
