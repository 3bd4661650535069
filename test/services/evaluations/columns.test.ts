// A pipeline's columns checked as a whole: unique names, no shadowing of dataset columns, and a
// column reads only dataset columns and columns to its left.
import { describe, expect, it } from "vitest";
import { columnSources, MAX_COLUMNS, orderColumns, validateColumns, type ColumnSpec } from "../../../src/services/evaluations/columns";

const combine = (name: string, ...sources: string[]): ColumnSpec => ({ column_type: "COMBINE_COLUMNS", name, configuration: { sources }, is_part_of_score: false });

describe("orderColumns", () => {
  it("puts a column with a position there and keeps the others in their order", () => {
    const cols: { n: string; position?: number }[] = [{ n: "a" }, { n: "b", position: 1 }, { n: "c" }];
    expect(orderColumns(cols).map((c) => c.n)).toEqual(["b", "a", "c"]);
  });
  it("keeps the given order when no column has a position", () => {
    const cols: { n: string; position?: number }[] = [{ n: "x" }, { n: "y" }];
    expect(orderColumns(cols).map((c) => c.n)).toEqual(["x", "y"]);
  });
});

describe("validateColumns", () => {
  it("accepts columns that read dataset columns and columns to their left", () => {
    expect(validateColumns([combine("one", "question"), combine("two", "one", "question")], ["question"])).toEqual([]);
  });

  it("names a column that reads one to its right, itself, or nothing known", () => {
    const issues = validateColumns([combine("one", "two"), combine("two", "two"), combine("three", "nowhere")], ["question"]);
    expect(issues).toEqual([
      { field: 'columns[0] ("one").configuration', rule: 'reads "two", a column to its right; a column reads dataset columns and columns before it' },
      { field: 'columns[1] ("two").configuration', rule: "a column cannot read its own value" },
      { field: 'columns[2] ("three").configuration', rule: 'reads "nowhere", which is neither a dataset column nor a column of the pipeline' },
    ]);
  });

  it("refuses a repeated name and a name that shadows a dataset column", () => {
    const issues = validateColumns([combine("a", "q"), combine("a", "q"), combine("q", "a")], ["q"]);
    expect(issues.map((i) => i.rule)).toEqual(["is used by another column; names must be unique in the pipeline", "is a column of the dataset; choose another name"]);
  });

  it("reports an unknown block type and a bad configuration on their fields", () => {
    const issues = validateColumns([{ column_type: "NO_SUCH_BLOCK", name: "x", configuration: {}, is_part_of_score: false }, combine("y")], []);
    expect(issues[0].field).toBe('columns[0] ("x").column_type');
    expect(issues[1].field).toMatch(/^columns\[1\] \("y"\)\.configuration/);
  });

  it(`takes ${MAX_COLUMNS} columns and refuses one more`, () => {
    const cols = (n: number) => Array.from({ length: n }, (_, i) => combine(`c${i}`, "q"));
    expect(validateColumns(cols(MAX_COLUMNS), ["q"])).toEqual([]);
    expect(validateColumns(cols(MAX_COLUMNS + 1), ["q"])).toContainEqual({ field: "columns", rule: `at most ${MAX_COLUMNS} columns` });
  });

  it("labels columns as the caller names them", () => {
    const issues = validateColumns([combine("a", "zzz")], [], (i) => `report_columns[${i}]`);
    expect(issues[0].field).toBe("report_columns[0].configuration");
  });
});

describe("columnSources", () => {
  it("lists what a column reads", () => {
    expect(columnSources(combine("x", "a", "b"))).toEqual(["a", "b"]);
  });
});
