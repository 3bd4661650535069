// computeCell on its own: what one queued cell becomes, from the column model and the cells it reads;
// and computeAll, a chunk of them through the bounded pool.
import { describe, expect, it } from "vitest";
import type { BlockContext } from "../../src/blocks";
import { MAX_CELL_BYTES } from "../../src/sheets/cell-values";
import { computeAll, computeCell } from "../../src/sheets/recalculation";
import { inputHash } from "../../src/sheets/stale-graph";
import type { ModelColumn, StoredCell } from "../../src/sheets/types";
import { combine, model, text } from "./model";

const ctx: BlockContext = {};

function cell(row: number, seq: number, over: Partial<StoredCell> = {}): StoredCell {
  return {
    row_index: row,
    column_seq: seq,
    status: "QUEUED",
    display_value: null,
    value: null,
    error: null,
    input_hash: null,
    execution_id: "e1",
    last_computed_version: null,
    updated_at: 0,
    ...over,
  };
}

const inputs = (...cells: StoredCell[]) => new Map(cells.map((c) => [`${c.row_index}:${c.column_seq}`, c]));

describe("computeCell", () => {
  const a = text(1, "A");
  const b = combine(2, "B", [a]);
  const c = combine(3, "C", [b]);
  const m = model([a, b, c]);

  it("computes a block from the row's inputs, read as stored (text or JSON)", async () => {
    const out = await computeCell(m, cell(0, 2), inputs(cell(0, 1, { status: "COMPLETED", display_value: "x" })), ctx);
    expect(out).toMatchObject({ kind: "completed", stored: { display: JSON.stringify({ A: "x" }) } });
    const none = await computeCell(m, cell(1, 2), inputs(), ctx);
    expect(none).toMatchObject({ kind: "completed", stored: { display: JSON.stringify({ A: null }) } });
  });

  it("waits while a computed input is queued or running, and for a column that is gone", async () => {
    for (const status of ["QUEUED", "RUNNING"]) {
      expect(await computeCell(m, cell(0, 3), inputs(cell(0, 2, { status })), ctx)).toEqual({ kind: "wait" });
    }
    expect(await computeCell(m, cell(0, 99), inputs(), ctx)).toEqual({ kind: "wait" });
  });

  it("fails, naming the input, when a computed input failed or is stale (an absent one is stale)", async () => {
    expect(await computeCell(m, cell(0, 3), inputs(cell(0, 2, { status: "FAILED", error: "boom" })), ctx)).toEqual({
      kind: "failed",
      error: 'input "B" failed: boom',
      hash: null,
    });
    expect(await computeCell(m, cell(0, 3), inputs(cell(0, 2, { status: "STALE" })), ctx)).toMatchObject({ kind: "failed", error: 'input "B" is stale; recalculate it too' });
    expect(await computeCell(m, cell(0, 3), inputs(), ctx)).toMatchObject({ kind: "failed", error: 'input "B" is stale; recalculate it too' });
  });

  it("reuses a result computed from the same inputs and config, and only a successful one", async () => {
    const hash = inputHash(b.type, b.config, { A: "x" });
    const upstream = inputs(cell(0, 1, { status: "COMPLETED", display_value: "x" }));
    expect(await computeCell(m, cell(0, 2, { input_hash: hash, last_computed_version: 3 }), upstream, ctx)).toEqual({ kind: "reused" });
    // Another input, an earlier error, or a cell never computed: computed again.
    expect((await computeCell(m, cell(0, 2, { input_hash: hash, last_computed_version: 3 }), inputs(cell(0, 1, { status: "COMPLETED", display_value: "y" })), ctx)).kind).toBe("completed");
    expect((await computeCell(m, cell(0, 2, { input_hash: hash, last_computed_version: 3, error: "old" }), upstream, ctx)).kind).toBe("completed");
    expect((await computeCell(m, cell(0, 2, { input_hash: hash }), upstream, ctx)).kind).toBe("completed");
  });

  it("fails a result larger than a cell holds, and keeps one just under it", async () => {
    const big = (n: number) => inputs(cell(0, 1, { status: "COMPLETED", display_value: "x".repeat(n) }));
    // COMBINE_COLUMNS makes {"A":"…"} (8 bytes around the text), stored twice: as display and as JSON.
    const fits = await computeCell(m, cell(0, 2), big(MAX_CELL_BYTES / 2 - 8), ctx);
    expect(fits.kind).toBe("completed");
    const over = await computeCell(m, cell(0, 2), big(MAX_CELL_BYTES / 2 - 7), ctx);
    expect(over).toMatchObject({ kind: "failed", error: `the result takes ${MAX_CELL_BYTES + 2} bytes stored; a cell holds at most ${MAX_CELL_BYTES}` });
  });
});

describe("computeAll", () => {
  const a = text(1, "A");
  const b = combine(2, "B", [a]);
  const m = model([a, b]);

  it("answers each cell's outcome in the chunk's order, whatever the pool's order of completion", async () => {
    const chunk = Array.from({ length: 20 }, (_, i) => cell(i, 2));
    const given = inputs(...chunk.map((c) => cell(c.row_index, 1, { status: "COMPLETED", display_value: `v${c.row_index}` })));
    const out = await computeAll(m, chunk, given, ctx);
    expect(out.map((o) => o.kind === "completed" && o.stored.display)).toEqual(chunk.map((c) => JSON.stringify({ A: `v${c.row_index}` })));
  });

  it("fails a cell whose computation throws, and computes the others", async () => {
    const bad: ModelColumn = {
      ...combine(3, "Bad", [a]),
      config: new Proxy({}, { get: () => { throw new Error("boom"); }, ownKeys: () => { throw new Error("boom"); } }) as Record<string, unknown>,
    };
    const mm = model([a, b, bad]);
    const quiet = console.error;
    console.error = () => {};
    try {
      const out = await computeAll(mm, [cell(0, 3), cell(0, 2)], inputs(cell(0, 1, { status: "COMPLETED", display_value: "x" })), ctx);
      expect(out[0]).toEqual({ kind: "failed", error: "the computation failed unexpectedly", hash: null });
      expect(out[1]).toMatchObject({ kind: "completed" });
    } finally {
      console.error = quiet;
    }
  });

  it("answers nothing for an empty chunk", async () => {
    expect(await computeAll(m, [], inputs(), ctx)).toEqual([]);
  });
});
