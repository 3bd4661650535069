// The bounds of one block evaluation: REGEX / REGEX_EXTRACTION run on a linear-time engine with the
// input and the matches capped, JSON_PATH caps its matches and its work. Each case that ran away
// before (a backtracking pattern, repeated `..*`) now ends, with a value or a clear error.
import { describe, expect, it } from "vitest";
import { evaluateBlock, validateBlockConfig } from "../../src/blocks";
import { MAX_REGEX_INPUT, MAX_REGEX_MATCHES } from "../../src/blocks/regex";
import { MAX_JSON_PATH_MATCHES, MAX_JSON_PATH_WORK } from "../../src/blocks/jsonpath";

const run = (type: string, config: unknown, inputs: Record<string, unknown>) => evaluateBlock(type, config, inputs);

describe("REGEX and REGEX_EXTRACTION", () => {
  it("a backtracking pattern on a long input answers at once instead of stalling the isolate", async () => {
    // (a+)+$ took 11 s on 30 characters with JavaScript's RegExp, doubling with each one more.
    for (const n of [30, 100_000]) {
      expect(await run("REGEX", { source: "t", regex_pattern: "(a+)+$" }, { t: `${"a".repeat(n)}!` })).toEqual({ ok: true, value: false });
      expect(await run("REGEX_EXTRACTION", { source: "t", regex_pattern: "(x+x+)+y" }, { t: "x".repeat(n) })).toEqual({ ok: true, value: [] });
    }
  });

  it("refuses what a linear-time engine cannot run, saying why", () => {
    for (const [pattern, why] of [
      ["(?P<w>a)(?P=w)", /back-references/],
      ["(a)\\1", /invalid escape sequence/],
      ["a(?=b)", /lookahead and lookbehind/],
      ["(?<!a)b", /lookahead and lookbehind/],
      ["(?x)a b", /verbose mode/],
    ] as const) {
      const r = validateBlockConfig("REGEX", { source: "t", regex_pattern: pattern });
      expect(r.ok, pattern).toBe(false);
      if (!r.ok) expect(r.message, pattern).toMatch(why);
    }
  });

  it("runs on at most MAX_REGEX_INPUT characters, a clear error past it", async () => {
    expect(await run("REGEX", { source: "t", regex_pattern: "b$" }, { t: `${"a".repeat(MAX_REGEX_INPUT - 1)}b` })).toEqual({ ok: true, value: true });
    const over = await run("REGEX", { source: "t", regex_pattern: "b$" }, { t: `${"a".repeat(MAX_REGEX_INPUT)}b` });
    expect(over).toEqual({ ok: false, error: `the text is ${MAX_REGEX_INPUT + 1} characters long; a pattern is run on at most ${MAX_REGEX_INPUT}` });
  });

  it("lists at most MAX_REGEX_MATCHES matches, a clear error past it; empty matches advance like Python's findall", async () => {
    const at = await run("REGEX_EXTRACTION", { source: "t", regex_pattern: "a" }, { t: "a".repeat(MAX_REGEX_MATCHES) });
    expect(at.ok && (at.value as unknown[]).length).toBe(MAX_REGEX_MATCHES);
    expect(await run("REGEX_EXTRACTION", { source: "t", regex_pattern: "a" }, { t: "a".repeat(MAX_REGEX_MATCHES + 1) })).toEqual({
      ok: false,
      error: `the pattern matches more than ${MAX_REGEX_MATCHES} times; narrow it`,
    });
    expect(await run("REGEX_EXTRACTION", { source: "t", regex_pattern: "x*" }, { t: "abc" })).toEqual({ ok: true, value: ["", "", "", ""] });
    expect(await run("REGEX_EXTRACTION", { source: "t", regex_pattern: "(a)(b)?" }, { t: "ab a" })).toEqual({ ok: true, value: [["a", "b"], ["a", ""]] });
  });
});

describe("JSON_PATH", () => {
  // A 2 KB object: repeated `..*` over it made tens of millions of matches (5 s, +480 MB; one more step ran out of memory).
  let doc: unknown = 1;
  for (let i = 0; i < 340; i++) doc = { a: doc };
  it("repeated ..* ends with a clear error instead of exhausting the isolate", async () => {
    expect(JSON.stringify(doc).length).toBeGreaterThan(2000);
    for (const path of ["$..*..*", "$..*..*..*..*..*..*..*..*..*..*"]) {
      const r = await run("JSON_PATH", { source: "o", json_path: path, return_first_match: false }, { o: doc });
      expect(r.ok, path).toBe(false);
      if (!r.ok) expect(r.error).toMatch(new RegExp(`^the path (matches more than ${MAX_JSON_PATH_MATCHES} values|visits more than ${MAX_JSON_PATH_WORK} values)`));
    }
    // The same caps hold where JSON_PATH is read by other blocks.
    expect(await run("MIN_MAX", { source: "o", type: "max", json_path: "$..*..*..*" }, { o: doc })).toMatchObject({ ok: false, error: expect.stringMatching(/^the path /) });
  });

  it("takes MAX_JSON_PATH_MATCHES matches and refuses one more", async () => {
    const at = await run("JSON_PATH", { source: "o", json_path: "$[*]", return_first_match: false }, { o: Array.from({ length: MAX_JSON_PATH_MATCHES }, (_, i) => i) });
    expect(at.ok && (at.value as unknown[]).length).toBe(MAX_JSON_PATH_MATCHES);
    expect(await run("JSON_PATH", { source: "o", json_path: "$[*]", return_first_match: false }, { o: Array.from({ length: MAX_JSON_PATH_MATCHES + 1 }, (_, i) => i) })).toEqual({
      ok: false,
      error: `the path matches more than ${MAX_JSON_PATH_MATCHES} values; make it more specific`,
    });
  });

  it("visits at most MAX_JSON_PATH_WORK values", async () => {
    // Few matches, much work: ..name walks the whole document on each step.
    const wide = { a: Array.from({ length: 300_000 }, () => 0), b: 1 };
    expect(await run("JSON_PATH", { source: "o", json_path: "$..b" }, { o: wide })).toEqual({ ok: true, value: 1 });
    expect(await run("JSON_PATH", { source: "o", json_path: "$..b..b..b..b" }, { o: { ...wide, a: Array.from({ length: MAX_JSON_PATH_WORK }, () => 0) } })).toEqual({
      ok: false,
      error: `the path visits more than ${MAX_JSON_PATH_WORK} values of the document; make it more specific`,
    });
  });

  it("walks a deep document without recursion", async () => {
    let deep: unknown = { b: 1 };
    for (let i = 0; i < 20_000; i++) deep = { a: deep };
    expect(await run("JSON_PATH", { source: "o", json_path: "$..b" }, { o: deep })).toEqual({ ok: true, value: 1 });
  });
});
