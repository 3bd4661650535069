import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

/** bumpVersion is protected (only the object's own mutations call it); tests reach it from inside. */
type Bumpable = { bumpVersion(): number };
const bump = (stub: DurableObjectStub) => runInDurableObject(stub, (obj) => (obj as unknown as Bumpable).bumpVersion());
const sheet = (name: string) => env.SHEETS.get(env.SHEETS.idFromName(`${name}-${crypto.randomUUID()}`));

describe("SheetObject", () => {
  it("is a SQLite-backed object per sheet whose version starts at 0 and only grows", async () => {
    const stub = sheet("sheet");
    expect(await stub.version()).toBe(0);
    expect(await bump(stub)).toBe(1);
    expect(await bump(stub)).toBe(2);
    expect(await stub.version()).toBe(2);
  });

  it("keeps each sheet's state apart", async () => {
    const a = sheet("a");
    const b = sheet("b");
    await bump(a);
    expect(await a.version()).toBe(1);
    expect(await b.version()).toBe(0);
  });
});

describe("SheetObject storage (the foundation the column engine builds on)", () => {
  const ident = (sheetId: string) => ({ sheetId, tableId: crypto.randomUUID(), workspaceId: 1 });

  it("init is idempotent; a scaffolded sheet has Column A and one empty row at version 1", async () => {
    const id = crypto.randomUUID();
    const s = env.SHEETS.get(env.SHEETS.idFromName(id));
    expect(await s.init(ident(id), { scaffold: true })).toEqual({ rowCount: 1, versionCount: 1, columnCount: 1, deleted: false });
    expect(await s.init(ident(id), { scaffold: true })).toEqual({ rowCount: 1, versionCount: 1, columnCount: 1, deleted: false });
  });

  it("non-text cells are created STALE for existing and appended rows; cells are found by their derived id", async () => {
    const id = crypto.randomUUID();
    const s = env.SHEETS.get(env.SHEETS.idFromName(id));
    await s.init(ident(id));
    const r1 = await s.appendImportBatch({ operationId: "op", batch: 0, firstRow: 0, columns: ["q"], rowsJson: JSON.stringify([["a"], [null]]) });
    expect(r1).toMatchObject({ ok: true, rowCount: 2, version: 1 });
    const [q] = await s.listColumns();
    const { column, version } = await s.addColumn({ title: "score", type: "LLM_ASSERTION", config: { prompt: "is it?" }, dependencies: [{ column_id: q.id }] });
    expect(version).toBe(2);
    expect(column).toMatchObject({ title: "score", type: "LLM_ASSERTION", config: { prompt: "is it?" }, dependencies: [{ column_id: q.id, reference_type: "value", config_key: null }] });
    await s.appendImportBatch({ operationId: "op", batch: 1, firstRow: 2, columns: ["q"], rowsJson: JSON.stringify([["c"]]) });
    const page = await s.readRows({ limit: 10 });
    expect(page).toMatchObject({ rowCount: 3, version: 3, hasMore: false });
    expect(page.rows.map((r) => [r.cells[q.id].display_value, r.cells[column.id].status])).toEqual([
      ["a", "STALE"],
      [null, "STALE"],
      ["c", "STALE"],
    ]);
    const cell = page.rows[2].cells[q.id];
    expect(await s.getCell(cell.id)).toEqual(cell);
    expect(await s.getCell(crypto.randomUUID())).toBeNull();
    // A title taken by another column gets a suffix.
    expect((await s.addColumn({ title: "SCORE", type: "TEXT" })).column.title).toBe("SCORE (2)");
  });
});
