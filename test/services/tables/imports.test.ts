import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../../src/db/client";
import type { Deps, Env } from "../../../src/env";
import { buildDeps } from "../../../src/deps";
import type { CellView } from "../../../src/sheets/types";
import { createFileImport, runImport } from "../../../src/services/tables";
import { findOperation } from "../../../src/services/tables/sheets";
import { createWorkspace } from "../../helpers/api";
import { newTable } from "../../helpers/tables";

/** An env whose queue swallows messages, so the test runs the import itself. */
const quiet = buildDeps({ ...env, JOBS: { send: async () => undefined } as unknown as Queue } as Env);

async function pendingImport(rows: number) {
  const ws = await createWorkspace();
  const t = await newTable(ws);
  const csv = `n,label\n${Array.from({ length: rows }, (_, i) => `${i},"row ${i}"`).join("\n")}\n`;
  const blobKey = `imports/${ws.workspaceId}/${crypto.randomUUID()}`;
  await env.BLOBS.put(blobKey, csv);
  const auth = { workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 };
  const created = await createFileImport(quiet, auth, t.id, {
    title: null,
    index: null,
    operationId: null,
    fileName: "n.csv",
    file: { blobKey, bytes: csv.length, error: null },
  });
  return { ws, op: created.operation, sheet: env.SHEETS.get(env.SHEETS.idFromName(created.sheet.id)), blobKey };
}

async function labels(sheet: DurableObjectStub<import("../../../src/sheets/sheet-object").SheetObject>) {
  const cols = await sheet.listColumns();
  const page = await sheet.readRows({ limit: 100 });
  return page.rows.map((r) => (r.cells[cols[1].id] as CellView).display_value);
}

describe("runImport: redelivery", () => {
  it("a consumer that dies part-way resumes after the last committed batch: exact rows, no duplicates", async () => {
    const { ws, op, sheet, blobKey } = await pendingImport(95);
    const crash = new Error("consumer killed");
    await expect(
      runImport(quiet, ws.workspaceId, op.id, {
        batchRows: 10,
        afterBatch: (b) => {
          if (b === 3) throw crash;
        },
      }),
    ).rejects.toBe(crash);
    const midway = (await findOperation(getDb(env.DB), ws.workspaceId, op.id))!;
    expect(midway).toMatchObject({ status: "running", rowsAdded: 40, rowCount: 40 });
    expect((await sheet.stats()).rowCount).toBe(40);
    expect(await env.BLOBS.head(blobKey)).not.toBeNull();

    // Redelivered twice more (one of them dies again), then runs to the end.
    await expect(runImport(quiet, ws.workspaceId, op.id, { batchRows: 7, afterBatch: (b) => { if (b === 6) throw crash; } })).rejects.toBe(crash);
    await runImport(quiet, ws.workspaceId, op.id, { batchRows: 10 });
    const done = (await findOperation(getDb(env.DB), ws.workspaceId, op.id))!;
    expect(done).toMatchObject({ status: "completed", progress: 100, rowsAdded: 95, rowCount: 95, attempts: 3 });
    expect((await sheet.stats()).rowCount).toBe(95);
    expect(await labels(sheet)).toEqual(Array.from({ length: 95 }, (_, i) => `row ${i}`));
    expect(await env.BLOBS.head(blobKey)).toBeNull();
    // A delivery after completion changes nothing.
    await runImport(quiet, ws.workspaceId, op.id);
    expect((await sheet.stats()).rowCount).toBe(95);
  });

  it("a batch the object already committed (its answer lost) is not appended twice", async () => {
    const { sheet } = await pendingImport(1);
    const batch = { operationId: "op-x", batch: 0, firstRow: 0, columns: ["a"], rowsJson: JSON.stringify([["1"], ["2"]]) };
    const first = await sheet.appendImportBatch(batch);
    const again = await sheet.appendImportBatch(batch);
    expect(first).toMatchObject({ ok: true, duplicate: false, rowsAdded: 2 });
    expect(again).toMatchObject({ ok: true, duplicate: true, rowsAdded: 2, version: first.ok ? first.version : -1 });
    expect((await sheet.stats()).rowCount).toBe(2);
    // A batch that skips ahead, or repeats a number with other rows, is refused.
    expect(await sheet.appendImportBatch({ ...batch, batch: 2, firstRow: 2 })).toMatchObject({ ok: false, reason: "out_of_order" });
    expect(await sheet.appendImportBatch({ ...batch, rowsJson: JSON.stringify([["1"]]) })).toMatchObject({ ok: false, reason: "out_of_order" });
    expect(await sheet.appendImportBatch({ ...batch, batch: 1, firstRow: 0 })).toMatchObject({ ok: false, reason: "out_of_order" });
  });

  it("a sheet deleted during the import ends it failed, keeping the rows already imported", async () => {
    const { ws, op, sheet } = await pendingImport(30);
    await runImport(quiet, ws.workspaceId, op.id, { batchRows: 10, afterBatch: (b) => (b === 0 ? sheet.markDeleted() : undefined) });
    const done = (await findOperation(getDb(env.DB), ws.workspaceId, op.id))!;
    expect(done.status).toBe("failed");
    expect(done.errorMessage).toBe("the sheet was deleted during the import (the first 10 rows were imported)");
  });

  it("an import that keeps failing for internal reasons is given up after a few deliveries", async () => {
    const { ws, op } = await pendingImport(5);
    const broken = { ...quiet, db: quiet.db, sheet: () => ({ importProgress: () => Promise.reject(new Error("object down")) }) } as unknown as Deps;
    for (let i = 0; i < 5; i++) await expect(runImport(broken, ws.workspaceId, op.id)).rejects.toThrow("object down");
    await runImport(broken, ws.workspaceId, op.id);
    const done = (await findOperation(getDb(env.DB), ws.workspaceId, op.id))!;
    expect(done.status).toBe("failed");
    expect(done.errorMessage).toMatch(/failed 5 times/);
  });
});
