import { describe, expect, it } from "vitest";
import { applyNodeChanges, evaluateConditional, mergeConfig, validateGraph, type ConditionalSpec, type NodeSpec } from "../../../src/services/workflows/graph";

const v = (name: string, deps: string[] = [], out = false): NodeSpec => ({ name, node_type: "VARIABLE", is_output_node: out, configuration: { value: { type: "string", value: name } }, dependencies: deps });
const c = (operator: ConditionalSpec["operator"], left: unknown, right?: unknown): ConditionalSpec => ({ position: 0, operator, left_config: { static_value: left }, right_config: right === undefined ? {} : { static_value: right } });

describe("validateGraph", () => {
  it("plans levels from dependencies, configuration sources and edges", () => {
    const nodes: NodeSpec[] = [
      v("a", ["q"]),
      { name: "cmp", node_type: "COMPARE", is_output_node: true, configuration: { sources: ["a", "b"] }, dependencies: [] },
      v("b"),
      v("c"),
    ];
    const r = validateGraph(nodes, [{ source_node_name: "cmp", target_node_name: "c", is_and: true, conditionals: [c("=", 1, 1)] }], { q: "string" });
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    expect(r.plan.levels).toEqual([["a", "b"], ["cmp"], ["c"]]);
    expect(r.plan.inputsOf.cmp).toEqual(["a", "b"]);
    expect(r.plan.inputsOf.a).toEqual(["q"]);
  });

  it("names every problem, and caps the node count", () => {
    const r = validateGraph([v("a", ["a"]), v("a")], [], {});
    expect(r.ok).toBe(false);
    expect(!r.ok && r.issues.map((i) => i.field)).toEqual(["nodes", "nodes[1] (\"a\").name", "nodes[0] (\"a\").dependencies[0]"]);
    const many = Array.from({ length: 501 }, (_, i) => v(`n${i}`, [], true));
    expect(validateGraph(many, [], {})).toMatchObject({ ok: false, issues: [{ field: "nodes", rule: "must have at most 500 nodes" }] });
    expect(validateGraph(many.slice(0, 500), [], {}).ok).toBe(true);
  });
});

describe("conditionals", () => {
  it("compares numbers as numbers and text as text", () => {
    expect(evaluateConditional(c("=", "5", 5), {})).toBe(true);
    expect(evaluateConditional(c("<", "10", 9), {})).toBe(false);
    expect(evaluateConditional(c(">=", "b", "a"), {})).toBe(true);
    expect(evaluateConditional(c("!=", "billing", "tech"), {})).toBe(true);
    expect(evaluateConditional(c("=", { a: 1 }, { a: 1 }), {})).toBe(true);
    expect(evaluateConditional(c("<", { a: 1 }, 3), {})).toBe(false);
  });
  it("in / not_in read lists (or JSON text of one), else substrings", () => {
    expect(evaluateConditional(c("in", "b", ["a", "b"]), {})).toBe(true);
    expect(evaluateConditional(c("in", 2, '["1","2"]'), {})).toBe(true);
    expect(evaluateConditional(c("not_in", "z", ["a"]), {})).toBe(true);
    expect(evaluateConditional(c("in", "ill", "billing"), {})).toBe(true);
  });
  it("is_null / is_not_null, and sources read from the run's values", () => {
    expect(evaluateConditional(c("is_null", null), {})).toBe(true);
    expect(evaluateConditional({ position: 0, operator: "is_not_null", left_config: { source: "x" }, right_config: {} }, { x: "" })).toBe(true);
    expect(evaluateConditional({ position: 0, operator: "=", left_config: { source: "x" }, right_config: { source: "y" } }, { x: 3, y: "3" })).toBe(true);
  });
});

describe("PATCH merge", () => {
  it("mergeConfig deep-merges objects, replaces arrays and scalars, and null removes a key", () => {
    expect(mergeConfig({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3], e: 2 }, d: null })).toEqual({ a: { b: 1, c: [3], e: 2 } });
  });
  it("applyNodeChanges keeps the order, appends new nodes and drops edges of removed ones", () => {
    const edge = { source_node_name: "a", target_node_name: "b", is_and: true, conditionals: [c("=", 1, 1)] };
    const r = applyNodeChanges([v("a"), v("b")], [edge], { a: null, n: { node_type: "VARIABLE", configuration: { value: { type: "string", value: "x" } }, is_output_node: true } });
    expect(r.ok && r.nodes.map((x) => x.name)).toEqual(["b", "n"]);
    expect(r.ok && r.edges).toEqual([]);
  });
});
