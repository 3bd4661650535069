// The pure column graph: order, levels, transitive downstream/upstream, cycles, input hashes.
import { describe, expect, it } from "vitest";
import { ColumnGraph, inputHash, stableJson } from "../../src/sheets/stale-graph";

// 1 (text) → 2 → 3 → 5; 1 → 4 → 5; 6 (text) alone; 7 reads 6.
const graph = () =>
  new ColumnGraph([
    { seq: 5, computed: true, upstream: [3, 4] },
    { seq: 1, computed: false, upstream: [] },
    { seq: 2, computed: true, upstream: [1] },
    { seq: 3, computed: true, upstream: [2] },
    { seq: 4, computed: true, upstream: [1] },
    { seq: 6, computed: false, upstream: [] },
    { seq: 7, computed: true, upstream: [6] },
  ]);

describe("ColumnGraph", () => {
  it("orders columns after everything they read, deterministically", () => {
    const order = graph().order();
    expect(order).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const [a, b] of [[1, 2], [2, 3], [3, 5], [4, 5], [6, 7]]) expect(order.indexOf(a)).toBeLessThan(order.indexOf(b));
  });

  it("groups columns into levels that only read earlier levels", () => {
    expect(graph().levels()).toEqual([[1, 6], [2, 4, 7], [3], [5]]);
  });

  it("finds everything downstream, transitively, in dependency order, and nothing else", () => {
    const g = graph();
    expect(g.downstream([1])).toEqual([2, 3, 4, 5]);
    expect(g.downstream([2])).toEqual([3, 5]);
    expect(g.downstream([5])).toEqual([]);
    expect(g.downstream([6])).toEqual([7]);
    expect(g.downstream([2, 4])).toEqual([3, 5]);
    expect(g.downstream([99])).toEqual([]);
  });

  it("finds everything upstream, transitively", () => {
    const g = graph();
    expect(g.upstream(5)).toEqual([1, 2, 3, 4]);
    expect(g.upstream(3)).toEqual([1, 2]);
    expect(g.upstream(1)).toEqual([]);
  });

  it("detects the cycle a new edge would close, and accepts edges that keep the graph acyclic", () => {
    const g = graph();
    expect(g.cycleIf(2, [5])).toEqual([2, 5, 3]);
    expect(g.cycleIf(1, [4])).toEqual([1, 4]);
    expect(g.cycleIf(3, [3])).toEqual([3]);
    expect(g.cycleIf(4, [2])).toBeNull();
    expect(g.cycleIf(7, [5, 1])).toBeNull();
    // A column not yet in the graph has no readers: it can read anything.
    expect(g.cycleIf(100, [5, 7])).toBeNull();
  });

  it("ignores edges to columns it does not know (a deleted column)", () => {
    const g = new ColumnGraph([{ seq: 2, computed: true, upstream: [1] }]);
    expect(g.order()).toEqual([2]);
    expect(g.upstream(2)).toEqual([]);
    expect(g.levels()).toEqual([[2]]);
  });

  it("scales linearly: a 10-column chain over 2000 columns answers at once", () => {
    const cols = Array.from({ length: 2000 }, (_, i) => ({ seq: i + 1, computed: i > 0, upstream: i > 0 ? [i] : [] }));
    const g = new ColumnGraph(cols);
    expect(g.downstream([1]).length).toBe(1999);
    expect(g.cycleIf(1, [2000])?.length).toBe(2000);
  });
});

describe("inputHash", () => {
  it("is stable under key order and changes with the type, config or any input", () => {
    const h = inputHash("COALESCE", { sources: ["a", "b"] }, { a: 1, b: { x: 1, y: 2 } });
    expect(h).toMatch(/^[0-9a-f]{32}$/);
    expect(inputHash("COALESCE", { sources: ["a", "b"] }, { b: { y: 2, x: 1 }, a: 1 })).toBe(h);
    expect(inputHash("COMPARE", { sources: ["a", "b"] }, { a: 1, b: { x: 1, y: 2 } })).not.toBe(h);
    expect(inputHash("COALESCE", { sources: ["b", "a"] }, { a: 1, b: { x: 1, y: 2 } })).not.toBe(h);
    expect(inputHash("COALESCE", { sources: ["a", "b"] }, { a: "1", b: { x: 1, y: 2 } })).not.toBe(h);
    expect(inputHash("COALESCE", { sources: ["a", "b"] }, { a: 1, b: null })).not.toBe(inputHash("COALESCE", { sources: ["a", "b"] }, { a: 1, b: "" }));
  });

  it("serializes values canonically", () => {
    expect(stableJson({ b: [1, { d: 1, c: 2 }], a: null, u: undefined })).toBe('{"a":null,"b":[1,{"c":2,"d":1}]}');
  });
});
