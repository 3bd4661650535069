// pythonJsonDumps against what CPython's json.dumps(value, sort_keys=True) printed for the same value.
import { describe, expect, it } from "vitest";
import { pythonJsonDumps } from "../../src/lib/py-json";

describe("pythonJsonDumps", () => {
  it("matches json.dumps(sort_keys=True) byte for byte: escapes, key order by code point, float repr, empty containers", () => {
    const value = {
      b: [1, 2.5, 1e-7, 0.00001, 1e22, -0.0001, 123.456, 3e-5],
      a: "é ü 😀 \u007f \u0001 \n\t\"\\ /",
      z: {},
      y: [],
      "\u00e9": 1,
      "\u{1F600}": 2,
      "\uFFFD": 3,
      n: null,
      t: true,
    };
    // python3 -c 'import json; print(json.dumps(v, sort_keys=True))' with v the same dict
    const python =
      '{"a": "\\u00e9 \\u00fc \\ud83d\\ude00 \\u007f \\u0001 \\n\\t\\"\\\\ /", "b": [1, 2.5, 1e-07, 1e-05, 1e+22, -0.0001, 123.456, 3e-05], ' +
      '"n": null, "t": true, "y": [], "z": {}, "\\u00e9": 1, "\\ufffd": 3, "\\ud83d\\ude00": 2}';
    expect(pythonJsonDumps(value)).toBe(python);
  });

  it("reads back as the same value, and refuses what JSON cannot hold", () => {
    const v = { k: [{ x: "ß", y: -3, z: false }], big: 10_000_000_000_000_000 };
    expect(JSON.parse(pythonJsonDumps(v))).toEqual(v);
    expect(pythonJsonDumps(v)).toBe('{"big": 10000000000000000, "k": [{"x": "\\u00df", "y": -3, "z": false}]}');
    expect(() => pythonJsonDumps({ x: NaN })).toThrow();
  });
});
