// A trace's spans as one tree (the Trace cell of a sheet row made by add-trace).
import { describe, expect, it } from "vitest";
import { spanTree, treeRequestLogIds, type TreeSpan } from "../../src/traces/span-tree";

const span = (spanId: string, parentSpanId: string | null, startTime: number, extra: Partial<TreeSpan> = {}): TreeSpan => ({
  spanId,
  parentSpanId,
  name: `span ${spanId}`,
  kind: 1,
  startTime,
  endTime: startTime + 10,
  statusCode: 0,
  statusMessage: null,
  attributes: {},
  requestLogId: null,
  ...extra,
});

describe("spanTree", () => {
  it("nests children under their parents, oldest first, with input and output from the SDK's attributes", () => {
    const tree = spanTree("t", [
      span("c2", "r", 30, { requestLogId: 8 }),
      span("r", null, 0),
      span("c1", "r", 20, { attributes: { function_input: "in", function_output: "out" }, requestLogId: 7 }),
      span("g", "c1", 25, { requestLogId: 7 }),
    ]);
    expect(tree).toMatchObject({ span_id: "r", start: "1970-01-01T00:00:00.000Z", duration_ms: 10, input: null });
    expect(tree.children.map((c) => c.span_id)).toEqual(["c1", "c2"]);
    expect(tree.children[0]).toMatchObject({ input: "in", output: "out", children: [{ span_id: "g", children: [] }] });
    expect(treeRequestLogIds(tree)).toEqual([7, 8]);
  });

  it("a span's subtree; several roots (a parent not in the trace) under one node named after the trace", () => {
    const spans = [span("a", "missing", 5), span("b", null, 1), span("a1", "a", 6)];
    expect(spanTree("t", spans, "a")).toMatchObject({ span_id: "a", children: [{ span_id: "a1" }] });
    const all = spanTree("t", spans);
    expect(all).toMatchObject({ span_id: "", name: "trace t", start: "1970-01-01T00:00:00.001Z", duration_ms: 15 });
    expect(all.children.map((c) => c.span_id)).toEqual(["b", "a"]);
    expect(() => spanTree("t", spans, "zz")).toThrow(/not in the trace/);
  });

  it("places every span once, whatever parent cycle the data holds", () => {
    const tree = spanTree("t", [span("x", "y", 1), span("y", "x", 2), span("self", "self", 3)]);
    const ids: string[] = [];
    const walk = (n: ReturnType<typeof spanTree>) => {
      ids.push(n.span_id);
      n.children.forEach(walk);
    };
    walk(tree);
    expect(ids.filter(Boolean).sort()).toEqual(["self", "x", "y"]);
  });
});
