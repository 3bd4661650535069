// The query-string parsers every list and read endpoint shares.
import { describe, expect, it } from "vitest";
import { QueryBool, readQueryBool } from "../../src/lib/query";

describe("boolean query parameters", () => {
  it("take true/false in any case (Python's requests sends True and False) and 1/0", () => {
    for (const t of ["true", "True", "TRUE", "tRuE", "1", " true "]) expect(readQueryBool(t), t).toBe(true);
    for (const f of ["false", "False", "FALSE", "0"]) expect(readQueryBool(f), f).toBe(false);
    expect(QueryBool.parse("True")).toBe(true);
    expect(QueryBool.parse("False")).toBe(false);
  });

  it("refuse anything else with one message", () => {
    for (const bad of ["", "yes", "no", "2", "t", "truee", "None", "null"]) {
      expect(readQueryBool(bad), bad).toBeNull();
      const r = QueryBool.safeParse(bad);
      expect(r.success, bad).toBe(false);
      expect(r.error?.issues[0].message).toBe("must be true or false");
    }
  });
});
