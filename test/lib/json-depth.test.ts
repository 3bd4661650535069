// The depth measure (src/lib/json-depth.ts): the path of the first value past the rule, in document
// order, whatever the width of the value around it.
import { describe, expect, it } from "vitest";
import { tooDeepAt } from "../../src/lib/json-depth";

describe("tooDeepAt", () => {
  it("names the first container past the rule, in document order; scalars are no level", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < 5; i++) deep = { a: [deep] };
    expect(tooDeepAt(deep, 10)).toBeNull();
    expect(tooDeepAt(deep, 3)).toEqual(["a", 0, "a"]);
    expect(tooDeepAt({ x: [1, { y: 2 }, [[[]]]], z: [[[[]]]] }, 3)).toEqual(["x", 2, 0]);
    expect(tooDeepAt({ x: [[1]] }, 3)).toBeNull();
    expect(tooDeepAt("text", 0)).toBeNull();
    expect(tooDeepAt([], 0)).toEqual([]);
  });

  it("walks a value of two million items (a body at the traces cap) and finds the one deep item at its end", () => {
    const wide: unknown[] = Array.from({ length: 2_000_000 }, (_, i) => (i % 2 ? i : {}));
    expect(tooDeepAt(wide, 2)).toBeNull();
    wide.push({ k: [[]] });
    expect(tooDeepAt(wide, 3)).toEqual([2_000_000, "k", 0]);
  }, 30_000);
});
