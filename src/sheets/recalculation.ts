// What one queued cell computes to, given the sheet's column model and the cells it reads, and what a
// chunk of them computes to (computeAll, a bounded pool). Pure but for the blocks' context (LLM calls,
// endpoints, stored prompts), so the sheet object's alarm and the unit tests call the same functions.
import { blockExternalState, evaluateBlock, type BlockContext } from "../blocks";
import { MAX_CELL_BYTES, readValue, storedBytes, storeValue } from "./cell-values";
import { inputHash } from "./stale-graph";
import { EVAL_CONCURRENCY, type Outcome, type SheetModel, type StoredCell } from "./types";

/**
 * The outcome of computing `cell`: "wait" while an input is still queued or running (or the column
 * is gone), "failed" when an input failed or is stale or the block fails, "reused" when the inputs
 * and config hash to what the cell was last computed from, else "completed" with the stored value.
 * `inputCells` holds the row's cells of the columns it reads, keyed "row_index:column_seq".
 */
export async function computeCell(m: SheetModel, cell: StoredCell, inputCells: Map<string, StoredCell>, ctx: BlockContext): Promise<Outcome> {
  const col = m.bySeq.get(cell.column_seq);
  if (!col) return { kind: "wait" };
  const inputs: Record<string, unknown> = {};
  for (const u of col.upstream) {
    const up = m.bySeq.get(u);
    if (!up) continue;
    const c = inputCells.get(`${cell.row_index}:${u}`);
    if (up.computed) {
      const status = c?.status ?? "STALE";
      if (status === "QUEUED" || status === "RUNNING") return { kind: "wait" };
      if (status === "FAILED") return { kind: "failed", error: `input ${JSON.stringify(up.title)} failed: ${c?.error ?? "unknown error"}`, hash: null };
      if (status === "STALE") return { kind: "failed", error: `input ${JSON.stringify(up.title)} is stale; recalculate it too`, hash: null };
    }
    inputs[up.title] = c ? readValue(c.display_value, c.value) : null;
  }
  // A stored prompt behind a label or "latest" is part of what the result was computed from.
  const external = await blockExternalState(col.type, col.config, ctx);
  const hash = inputHash(col.type, external === undefined ? col.config : [col.config, external], inputs);
  if (hash === cell.input_hash && cell.error === null && cell.last_computed_version !== null) return { kind: "reused" };
  const r = await evaluateBlock(col.type, col.config, inputs, ctx);
  if (!r.ok) return { kind: "failed", error: r.error, hash };
  const stored = storeValue(r.value);
  const bytes = storedBytes(stored);
  // Storing it would exceed SQLite's row limit and abort the whole chunk's transaction.
  if (bytes > MAX_CELL_BYTES) return { kind: "failed", error: `the result takes ${bytes} bytes stored; a cell holds at most ${MAX_CELL_BYTES}`, hash };
  return { kind: "completed", stored, hash };
}

/**
 * The outcomes of a chunk of cells, computed EVAL_CONCURRENCY at a time, in the chunk's order. A throw
 * fails its cell, not the alarm: a failed alarm would leave the chunk RUNNING and each retry recompute it.
 */
export async function computeAll(m: SheetModel, chunk: StoredCell[], inputCells: Map<string, StoredCell>, ctx: BlockContext): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array(chunk.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < chunk.length; i = next++) {
      try {
        outcomes[i] = await computeCell(m, chunk[i], inputCells, ctx);
      } catch (err) {
        console.error(JSON.stringify({ level: "error", msg: "cell computation failed unexpectedly", error: String(err) }));
        outcomes[i] = { kind: "failed", error: "the computation failed unexpectedly", hash: null };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(EVAL_CONCURRENCY, chunk.length) }, worker));
  return outcomes;
}
