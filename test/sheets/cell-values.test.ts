// How a cell's value is stored and read back, and the limits that keep a cell inside the object's row limit.
import { describe, expect, it } from "vitest";
import { displayOf, jsonDepth, MAX_JSON_DEPTH, readValue, storedBytes, storeEdit, storeValue, utf8Bytes } from "../../src/sheets/cell-values";

describe("utf8Bytes", () => {
  it("counts UTF-8 bytes without encoding: 1, 2, 3 and 4-byte characters", () => {
    for (const s of ["a", "é", "€", "😀", "aé€😀", ""]) expect(utf8Bytes(s), s).toBe(new TextEncoder().encode(s).length);
    expect(utf8Bytes(null)).toBe(0);
  });
  it("counts a lone surrogate as the 3 bytes of its replacement character", () => {
    expect(utf8Bytes("\ud800")).toBe(3);
    expect(utf8Bytes("\udc00x")).toBe(4);
  });
});

describe("storeValue, storeEdit, readValue", () => {
  it("keeps plain text once and structured values as display text plus JSON", () => {
    expect(storeValue("hi")).toEqual({ display: "hi", json: null });
    expect(storeValue(null)).toEqual({ display: null, json: null });
    expect(storeValue({ a: 1 })).toEqual({ display: '{"a":1}', json: '{"a":1}' });
    expect(storeValue(3)).toEqual({ display: "3", json: "3" });
  });

  it("reads back what was stored", () => {
    for (const v of ["hi", null, { a: [1, 2] }, 3, true]) {
      const s = storeValue(v);
      expect(readValue(s.display, s.json)).toEqual(v);
    }
  });

  it("an edit with display_value only is text; with value only, the value; with both, both as given", () => {
    expect(storeEdit({ display_value: "x" })).toEqual({ display: "x", json: null });
    expect(storeEdit({ value: { a: 1 } })).toEqual({ display: '{"a":1}', json: '{"a":1}' });
    expect(storeEdit({ display_value: "one", value: 1 })).toEqual({ display: "one", json: "1" });
    expect(storeEdit({ display_value: "same", value: "same" })).toEqual({ display: "same", json: null });
    expect(storeEdit({ display_value: null, value: null })).toEqual({ display: null, json: null });
  });

  it("counts both parts of a stored value", () => {
    expect(storedBytes(storeValue({ é: 1 }))).toBe(2 * new TextEncoder().encode('{"é":1}').length);
  });

  it("shows non-text values as JSON", () => {
    expect(displayOf([1])).toBe("[1]");
    expect(displayOf(undefined)).toBeNull();
  });
});

describe("jsonDepth", () => {
  const nested = (d: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < d; i++) v = [v];
    return v;
  };
  it("counts nesting: a scalar is 0, [1] is 1, objects and arrays alike", () => {
    expect(jsonDepth(1)).toBe(0);
    expect(jsonDepth([1])).toBe(1);
    expect(jsonDepth({ a: { b: [] } })).toBe(3);
  });
  it(`reaches ${MAX_JSON_DEPTH} exactly and stops counting just past the cap`, () => {
    expect(jsonDepth(nested(MAX_JSON_DEPTH))).toBe(MAX_JSON_DEPTH);
    expect(jsonDepth(nested(MAX_JSON_DEPTH + 1))).toBe(MAX_JSON_DEPTH + 1);
    // Deeper than the cap: the count stops at cap + 1, however deep the value goes.
    expect(jsonDepth(nested(10_000))).toBe(MAX_JSON_DEPTH + 2);
  });
});
