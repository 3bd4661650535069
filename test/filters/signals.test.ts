// The `signals` field of the filter group: parsed (nested_key names the signal; the four verdict
// operators, no value) and compiled to a lookup of the verdicts beside the log by the signal's id (the
// name resolved by the caller); a name of no signal has no verdicts.
import { describe, expect, it } from "vitest";
import { compileFilterGroup, parseFilterGroup, SqlParams } from "../../src/filters";

/** The workspace's signals, by name, as the control database would answer. */
const SIGNALS = new Map([
  ["Refund promised", 41],
  ["a", 1],
  ["b", 2],
  ["x", 3],
]);

/** `signals` null: none given (the caller did not resolve the names). */
function compile(raw: unknown, signals: ReadonlyMap<string, number> | null = SIGNALS) {
  const parsed = parseFilterGroup(raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const params = new SqlParams();
  const workspace = params.add(7);
  return { sql: compileFilterGroup(parsed.group, { params, workspace, signals: signals ?? undefined }), params: params.values };
}

const issues = (raw: unknown) => {
  const parsed = parseFilterGroup(raw);
  return parsed.ok ? [] : parsed.issues;
};

describe("the signals field", () => {
  it("takes is_true, is_false, is_null and is_not_null with the signal's name as nested_key, and nothing else", () => {
    for (const operator of ["is_true", "is_false", "is_null", "is_not_null"]) {
      expect(issues({ filters: [{ field: "signals", nested_key: "Refund promised", operator }] })).toEqual([]);
    }
    expect(issues({ filters: [{ field: "signals", operator: "is_true" }] })).toEqual([{ path: ["filters", 0, "nested_key"], rule: "is required for signals (the key within it to filter on)" }]);
    expect(issues({ filters: [{ field: "signals", nested_key: "x", operator: "is", value: true }] })[0].rule).toMatch(/is does not apply to signals \(signal\); use one of is_true, is_false, is_null, is_not_null/);
    expect(issues({ filters: [{ field: "signals", nested_key: "x".repeat(1025), operator: "is_true" }] })[0].rule).toMatch(/at most 1024/);
  });

  it("compiles a verdict to the signal's results by workspace and signal id, the id bound", () => {
    const t = compile({ filters: [{ field: "signals", nested_key: "Refund promised", operator: "is_true" }] });
    expect(t.sql).toBe("r.id IN (SELECT s.request_id FROM signal_results AS s WHERE s.workspace_id = ?1 AND s.signal_id = ?2 AND s.result = 1)");
    expect(t.params).toEqual([7, 41]);
    expect(compile({ filters: [{ field: "signals", nested_key: "x", operator: "is_false" }] }).sql).toContain("s.result = 0");
    expect(compile({ filters: [{ field: "signals", nested_key: "x", operator: "is_not_null" }] }).sql).toContain("s.result IN (0, 1)");
    expect(compile({ filters: [{ field: "signals", nested_key: "x", operator: "is_null" }] }).sql).toBe(
      "NOT EXISTS (SELECT 1 FROM signal_results AS s WHERE s.workspace_id = ?1 AND s.signal_id = ?2 AND s.result IN (0, 1) AND s.request_id = r.id)",
    );
  });

  it("matches no log for a verdict of a name that is no signal of the workspace, and every log for is_null", () => {
    for (const operator of ["is_true", "is_false", "is_not_null"]) {
      const t = compile({ filters: [{ field: "signals", nested_key: "Deleted meanwhile", operator }] });
      expect(t).toEqual({ sql: "0", params: [7] });
    }
    expect(compile({ filters: [{ field: "signals", nested_key: "Deleted meanwhile", operator: "is_null" }] })).toEqual({ sql: "1", params: [7] });
  });

  it("refuses to compile a signals filter whose names were not resolved (a caller that forgot cannot match by name)", () => {
    expect(() => compile({ filters: [{ field: "signals", nested_key: "a", operator: "is_true" }] }, null)).toThrow(/CompileContext.signals/);
    // A group without a signals filter needs no ids.
    expect(compile({ filters: [{ field: "status", operator: "is", value: "SUCCESS" }] }, null).sql).toBeTruthy();
  });

  it("meets two verdicts in an AND as two lookups of the verdicts' index", () => {
    const t = compile({
      logic: "AND",
      filters: [
        { field: "signals", nested_key: "a", operator: "is_true" },
        { field: "signals", nested_key: "b", operator: "is_false" },
      ],
    });
    expect(t.sql).toBe(
      "(r.id IN (SELECT s.request_id FROM signal_results AS s WHERE s.workspace_id = ?1 AND s.signal_id = ?2 AND s.result = 1) AND r.id IN (SELECT s.request_id FROM signal_results AS s WHERE s.workspace_id = ?1 AND s.signal_id = ?3 AND s.result = 0))",
    );
  });
});
