// The console's pure parts: the side-by-side line diff of prompt versions and the filter rows turned
// into the search API's filters.
import { describe, expect, it } from "vitest";
import { diffLines, versionLines } from "../../console/src/diff";
import { newRow, NO_TRACE_FILTERS, OPERATORS, operatorsOf, toFilter, toGroup, toTraceGroup } from "../../console/src/filters";

describe("diffLines", () => {
  it("pairs unchanged lines, and shows a replaced line as changed on both sides", () => {
    const rows = diffLines(["a", "b", "c"], ["a", "B", "c"]);
    expect(rows.map((r) => r.kind)).toEqual(["same", "changed", "same"]);
    expect(rows[1]).toEqual({ kind: "changed", left: { n: 2, text: "b" }, right: { n: 2, text: "B" } });
  });

  it("keeps removed lines on the left and added ones on the right, with their own line numbers", () => {
    const rows = diffLines(["a", "x", "b"], ["a", "b", "y", "z"]);
    expect(rows.map((r) => [r.kind, r.left?.n ?? null, r.right?.n ?? null])).toEqual([
      ["same", 1, 1],
      ["removed", 2, null],
      ["same", 3, 2],
      ["added", null, 3],
      ["added", null, 4],
    ]);
  });

  it("handles empty sides", () => {
    expect(diffLines([], [])).toEqual([]);
    expect(diffLines([], ["a"]).map((r) => r.kind)).toEqual(["added"]);
    expect(diffLines(["a"], []).map((r) => r.kind)).toEqual(["removed"]);
  });
});

describe("versionLines", () => {
  it("puts each message under its role, then tools and the model", () => {
    const lines = versionLines({
      prompt_template: {
        type: "chat",
        messages: [
          { role: "system", content: [{ type: "text", text: "Be brief.\nBe kind." }] },
          { role: "user", content: [{ type: "text", text: "{q}" }] },
        ],
        tools: [{ type: "function", function: { name: "f" } }],
      },
      metadata: { model: { provider: "openai", name: "gpt-4o" } },
    });
    expect(lines.slice(0, 6)).toEqual(["[system]", "Be brief.", "Be kind.", "", "[user]", "{q}"]);
    expect(lines).toContain("[tools]");
    expect(lines).toContain("[model]");
  });

  it("reads a completion template's content", () => {
    expect(versionLines({ prompt_template: { type: "completion", content: [{ type: "text", text: "Hi {name}" }] } })).toEqual([
      "[completion]",
      "Hi {name}",
    ]);
  });
});

describe("toFilter", () => {
  it("turns a complete row into the API's filter, typed by the field", () => {
    expect(toFilter({ ...newRow("tags"), value: " prod " })).toEqual({ field: "tags", operator: "contains", value: "prod" });
    expect(toFilter({ field: "latency_ms", operator: "gt", value: "250", nested_key: "" })).toEqual({ field: "latency_ms", operator: "gt", value: 250 });
    expect(toFilter({ field: "cost", operator: "between", value: "0.1, 2", nested_key: "" })).toEqual({ field: "cost", operator: "between", value: [0.1, 2] });
    expect(toFilter({ field: "engine", operator: "in", value: "a, b,", nested_key: "" })).toEqual({ field: "engine", operator: "in", value: ["a", "b"] });
  });

  it("sends a nested key for metadata and scores, and no value for operators that take none", () => {
    expect(toFilter({ field: "metadata", operator: "key_equals", value: "x", nested_key: "user" })).toEqual({
      field: "metadata",
      operator: "key_equals",
      nested_key: "user",
      value: "x",
    });
    expect(toFilter({ field: "metadata", operator: "is_null", value: "ignored", nested_key: "user" })).toEqual({
      field: "metadata",
      operator: "is_null",
      nested_key: "user",
    });
    expect(newRow("scores").nested_key).toBe("default");
  });

  it("filters by trace id and span name, which also take is_null / is_not_null (a log not made from a span has neither)", () => {
    expect(toFilter({ ...newRow("trace_id"), value: " 4bf92f3577b34da6a3ce929d0e0e4736 " })).toEqual({
      field: "trace_id",
      operator: "is",
      value: "4bf92f3577b34da6a3ce929d0e0e4736",
    });
    expect(toFilter({ field: "span_name", operator: "starts_with", value: "chat", nested_key: "" })).toEqual({ field: "span_name", operator: "starts_with", value: "chat" });
    expect(toFilter({ field: "trace_id", operator: "is_not_null", value: "", nested_key: "" })).toEqual({ field: "trace_id", operator: "is_not_null" });
    expect(operatorsOf("trace_id")).toEqual([...OPERATORS.string, "is_null", "is_not_null"]);
    expect(operatorsOf("engine")).toEqual(OPERATORS.string);
    expect(operatorsOf("scores")).toEqual(OPERATORS.score);
    expect(operatorsOf("nope")).toEqual([]);
  });

  it("leaves out a row still being written (no value, no key, unknown field)", () => {
    expect(toFilter(newRow("tags"))).toBeNull();
    expect(toFilter({ field: "metadata", operator: "key_equals", value: "x", nested_key: " " })).toBeNull();
    expect(toFilter({ field: "nope", operator: "is", value: "x", nested_key: "" })).toBeNull();
  });
});

describe("toGroup", () => {
  it("nests groups as the API does, leaving out incomplete rows and groups left empty", () => {
    const group = toGroup({
      logic: "AND",
      items: [
        { ...newRow("tags"), value: "prod" },
        newRow("engine"),
        { logic: "OR", items: [{ field: "status", operator: "is", value: "ERROR", nested_key: "" }, { logic: "AND", items: [newRow("tags")] }] },
      ],
    });
    expect(group).toEqual({
      logic: "AND",
      filters: [
        { field: "tags", operator: "contains", value: "prod" },
        { logic: "OR", filters: [{ field: "status", operator: "is", value: "ERROR" }] },
      ],
    });
  });

  it("is null when nothing is complete", () => {
    expect(toGroup({ logic: "AND", items: [] })).toBeNull();
    expect(toGroup({ logic: "OR", items: [newRow("tags"), { logic: "AND", items: [] }] })).toBeNull();
  });
});

describe("toTraceGroup", () => {
  it("is null without filters, else one AND of the filters set, values as typed", () => {
    expect(toTraceGroup(NO_TRACE_FILTERS)).toBeNull();
    expect(toTraceGroup({ status: "error", name: " checkout ", spanName: "db", model: "gpt-4o", minDurationMs: "250" })).toEqual({
      logic: "AND",
      filters: [
        { field: "trace_status", operator: "is", value: "error" },
        { field: "trace_name", operator: "contains", value: "checkout" },
        { field: "span_name", operator: "contains", value: "db" },
        { field: "trace_models_used", operator: "contains", value: "gpt-4o" },
        { field: "trace_duration_ms", operator: "gte", value: 250 },
      ],
    });
    // Not a number: sent as typed, for the API to refuse.
    expect(toTraceGroup({ ...NO_TRACE_FILTERS, minDurationMs: "slow" })!.filters[0].value).toBe("slow");
  });
});
