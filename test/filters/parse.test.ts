import { describe, expect, it } from "vitest";
import { FILTER_FIELDS, FILTER_LIMITS, OPERATORS_BY_TYPE, FILTER_OPERATORS, operatorsFor, parseFilterGroup, type FilterField } from "../../src/filters";

const one = (filter: Record<string, unknown>) => parseFilterGroup({ logic: "AND", filters: [filter] });
const rules = (r: ReturnType<typeof parseFilterGroup>) => (r.ok ? [] : r.issues.map((i) => `${i.path.join(".")}: ${i.rule}`));

/** A valid value for a field type and operator. */
function sample(field: FilterField, op: string): Record<string, unknown> {
  const spec = FILTER_FIELDS[field];
  const scalar =
    spec.type === "numeric" || spec.type === "score" ? 5 : spec.type === "datetime" ? "2024-01-01T00:00:00Z" : spec.type === "enum" ? spec.values[0] : "x";
  const f: Record<string, unknown> = { field, operator: op };
  if (spec.type === "nested" || spec.type === "score" || spec.type === "signal") f.nested_key = "k";
  if (op === "in" || op === "not_in") f.value = [scalar];
  else if (op === "between") f.value = spec.type === "datetime" ? ["2024-01-01", "2024-02-01"] : [1, 2];
  else if (spec.type === "boolean") f.value = true;
  else f.value = scalar;
  return f;
}

describe("parseFilterGroup: operators × field types", () => {
  for (const field of Object.keys(FILTER_FIELDS) as FilterField[]) {
    const allowed = operatorsFor(FILTER_FIELDS[field]);
    it(`${field}: accepts ${allowed.join(", ")} and refuses every other operator`, () => {
      for (const op of FILTER_OPERATORS) {
        const r = one(sample(field, op));
        if (allowed.includes(op)) expect(rules(r), `${field} ${op}`).toEqual([]);
        else expect(rules(r), `${field} ${op}`).toEqual([expect.stringMatching(new RegExp(`^filters\\.0\\.operator: ${op} does not apply to ${field}`))]);
      }
    });
  }

  it("covers every operator of the document somewhere", () => {
    const used = new Set(Object.values(OPERATORS_BY_TYPE).flat().concat(["is_null", "is_not_null"]));
    expect(FILTER_OPERATORS.filter((op) => !used.has(op))).toEqual([]);
  });
});

describe("parseFilterGroup: values", () => {
  it.each([
    [{ field: "cost", operator: "gt", value: "1" }, "filters.0.value: must be a number for cost, got a string"],
    [{ field: "input_tokens", operator: "gt", value: 1.5 }, "filters.0.value: must be an integer for input_tokens"],
    [{ field: "engine", operator: "is", value: 4 }, "filters.0.value: must be a string for engine, got a number"],
    [{ field: "engine", operator: "is", value: ["a"] }, "filters.0.value: must be a single value for is; use in / not_in for a list"],
    [{ field: "engine", operator: "is" }, "filters.0.value: is required for is"],
    [{ field: "engine", operator: "in", value: [] }, "filters.0.value: must hold at least one value for in"],
    [{ field: "engine", operator: "in", value: "a" }, "filters.0.value: must be an array for in, got a string"],
    [{ field: "engine", operator: "in", value: ["a", 1] }, "filters.0.value: must be a string for engine (item 1), got a number"],
    [{ field: "status", operator: "is", value: "DONE" }, "filters.0.value: must be one of SUCCESS, WARNING, ERROR for status"],
    [{ field: "user_intent", operator: "is", value: "angry" }, "filters.0.value: must be one of frustrated, satisfied, curious for user_intent"],
    [{ field: "request_start_time", operator: "after", value: "yesterday" }, "filters.0.value: must be an ISO 8601 date-time string or an epoch number for request_start_time"],
    [{ field: "cost", operator: "between", value: [1] }, "filters.0.value: must be [low, high] for between"],
    [{ field: "cost", operator: "between", value: [2, 1] }, "filters.0.value: low must not be above high"],
    [{ field: "is_json", operator: "is", value: "yes" }, "filters.0.value: must be true or false for is_json, got a string"],
    [{ field: "metadata", operator: "key_equals", value: "x" }, "filters.0.nested_key: is required for metadata (the key within it to filter on)"],
    [{ field: "metadata", operator: "key_equals", value: "x", nested_key: "" }, "filters.0.nested_key: is required for metadata (the key within it to filter on)"],
    [{ field: "metadata", operator: "key_equals", value: { a: 1 }, nested_key: "k" }, "filters.0.value: must be a string, number or boolean for metadata, got a object"],
    [{ field: "engine", operator: "is", value: "x", nested_key: "k" }, "filters.0.nested_key: only applies to metadata, output, input_variables, scores, redactions and signals, not engine"],
    [{ field: "scores", operator: "gt", value: 5 }, "filters.0.nested_key: is required for scores (the key within it to filter on)"],
    [{ field: "scores", operator: "gt", value: "5", nested_key: "k" }, "filters.0.value: must be a number for scores, got a string"],
    [{ field: "nope", operator: "is", value: "x" }, expect.stringMatching(/^filters\.0\.field: must be one of pl_id, /)],
    [{ field: "engine", operator: "like", value: "x" }, expect.stringMatching(/^filters\.0\.operator: must be one of is, /)],
    [{ operator: "is", value: "x" }, "filters.0.field: is required"],
    [{ field: "engine", operator: "is", value: "x", extra: 1 }, "filters.0: has unknown keys: extra"],
  ])("%j → %s", (filter, message) => {
    expect(rules(one(filter))).toContainEqual(message);
  });

  it("normalizes timestamps to epoch ms and nested numbers/booleans to their JSON text", () => {
    const r = parseFilterGroup({
      filters: [
        { field: "request_start_time", operator: "between", value: ["2024-01-01T00:00:00Z", 1704153600] },
        { field: "input_variables", operator: "in", value: [3, true, "x"], nested_key: "n" },
      ],
    });
    expect(r).toEqual({
      ok: true,
      group: {
        logic: "AND",
        filters: [
          { field: "request_start_time", operator: "between", value: [1704067200000, 1704153600000] },
          { field: "input_variables", operator: "in", value: ["3", "true", "x"], nested_key: "n" },
        ],
      },
    });
  });

  it("ignores a value sent with a unary operator and accepts a null nested_key elsewhere", () => {
    expect(one({ field: "is_json", operator: "is_true", value: true, nested_key: null })).toEqual({
      ok: true,
      group: { logic: "AND", filters: [{ field: "is_json", operator: "is_true" }] },
    });
  });
});

describe("parseFilterGroup: groups", () => {
  it("defaults logic to AND and takes nested groups", () => {
    const r = parseFilterGroup({ filters: [{ logic: "OR", filters: [{ field: "engine", operator: "is", value: "a" }] }] });
    expect(r).toEqual({ ok: true, group: { logic: "AND", filters: [{ logic: "OR", filters: [{ field: "engine", operator: "is", value: "a" }] }] } });
  });

  it("refuses a bad logic, a missing filters list and non-objects", () => {
    expect(rules(parseFilterGroup({ logic: "XOR", filters: [] }))).toEqual(["logic: must be AND or OR"]);
    expect(rules(parseFilterGroup({ logic: "AND" }))).toEqual(["filters: is required"]);
    expect(rules(parseFilterGroup([1]))).toEqual([": must be a filter group object, got an array"]);
    expect(rules(parseFilterGroup({ filters: [42] }))).toEqual(["filters.0: must be a filter object or a filter group, got a number"]);
  });

  const nest = (depth: number): unknown =>
    depth === 1 ? { filters: [{ field: "engine", operator: "is", value: "a" }] } : { filters: [nest(depth - 1)] };

  it(`takes ${FILTER_LIMITS.maxDepth} levels of groups and refuses ${FILTER_LIMITS.maxDepth + 1}`, () => {
    expect(parseFilterGroup(nest(FILTER_LIMITS.maxDepth)).ok).toBe(true);
    const deep = rules(parseFilterGroup(nest(FILTER_LIMITS.maxDepth + 1)));
    expect(deep).toHaveLength(1);
    expect(deep[0]).toMatch(/groups nest at most 5 levels deep$/);
  });

  it(`takes ${FILTER_LIMITS.maxFilters} filters and refuses ${FILTER_LIMITS.maxFilters + 1}`, () => {
    const filters = (n: number) => Array.from({ length: n }, (_, i) => ({ field: "input_tokens", operator: "gt", value: i }));
    expect(parseFilterGroup({ filters: filters(FILTER_LIMITS.maxFilters) }).ok).toBe(true);
    expect(rules(parseFilterGroup({ filters: filters(FILTER_LIMITS.maxFilters + 1) }))).toEqual([
      `filters.${FILTER_LIMITS.maxFilters}: a filter group holds at most ${FILTER_LIMITS.maxFilters} filters`,
    ]);
  });

  it(`takes ${FILTER_LIMITS.maxListItems} list items and refuses one more`, () => {
    const list = (n: number) => ({ filters: [{ field: "pl_id", operator: "in", value: Array.from({ length: n }, (_, i) => i + 1) }] });
    expect(parseFilterGroup(list(FILTER_LIMITS.maxListItems)).ok).toBe(true);
    expect(rules(parseFilterGroup(list(FILTER_LIMITS.maxListItems + 1)))).toEqual([`filters.0.value: must hold at most ${FILTER_LIMITS.maxListItems} values`]);
  });
});
