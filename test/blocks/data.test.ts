import { describe, expect, it } from "vitest";
import { blockSources, COMPUTING_BLOCK_TYPES, evaluateBlock, validateBlockConfig } from "../../src/blocks";

const ok = async (type: string, config: unknown, inputs: Record<string, unknown> = {}) => {
  const r = await evaluateBlock(type, config, inputs);
  if (!r.ok) throw new Error(`expected a value, got error: ${r.error}`);
  return r.value;
};
const fails = async (type: string, config: unknown, inputs: Record<string, unknown> = {}) => {
  const r = await evaluateBlock(type, config, inputs);
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.value)}`);
  return r.error;
};
const invalid = (type: string, config: unknown) => {
  const r = validateBlockConfig(type, config);
  if (r.ok) throw new Error("expected an invalid config");
  return r;
};

describe("the registry", () => {
  it("lists the computing types the issue names", () => {
    expect(COMPUTING_BLOCK_TYPES).toEqual(
      [
        "ABSOLUTE_NUMERIC_DISTANCE", "AI_DATA_EXTRACTION", "APPLY_DIFF", "ASSERT_VALID", "COALESCE", "COMBINE_COLUMNS", "COMPARE",
        "CONTAINS", "COSINE_SIMILARITY", "COUNT", "ENDPOINT", "JSON_PATH", "LLM_ASSERTION", "MATH_OPERATOR", "MIN_MAX",
        "PARSE_VALUE", "PROMPT_TEMPLATE", "REGEX", "REGEX_EXTRACTION", "VARIABLE", "XML_PATH",
      ].sort(),
    );
  });

  it("refuses unknown types and types that cannot run, saying which", () => {
    expect(invalid("NOPE", {})).toMatchObject({ reason: "unknown_type", message: 'unknown block type "NOPE"' });
    for (const t of ["HUMAN", "CODE_EXECUTION", "MCP", "WORKFLOW", "FOR_LOOP", "WHILE_LOOP", "CONVERSATION_SIMULATOR"]) {
      const r = invalid(t, {});
      expect(r.reason).toBe("unsupported");
      expect(r.message).toMatch(new RegExp(`^${t} blocks cannot run here: `));
    }
  });

  it("evaluateBlock reports an invalid config as an error instead of throwing", async () => {
    expect(await fails("REGEX", { source: "a" })).toMatch(/regex_pattern/);
  });

  it("names the inputs a config reads", () => {
    expect(blockSources("COMPARE", { sources: ["a", "b"] })).toEqual(["a", "b"]);
    expect(blockSources("CONTAINS", { source: "a", value_source: "b" })).toEqual(["a", "b"]);
    expect(blockSources("VARIABLE", { value: { type: "string", value: "x" } })).toEqual([]);
    expect(blockSources("COMPARE", { sources: ["a"] })).toEqual([]);
  });
});

describe("VARIABLE", () => {
  it("returns its string or JSON value", async () => {
    expect(await ok("VARIABLE", { value: { type: "string", value: "Hello" } })).toBe("Hello");
    expect(await ok("VARIABLE", { value: { type: "json", value: { a: [1] } } })).toEqual({ a: [1] });
    expect(await ok("VARIABLE", { value: { type: "json", value: '{"a":1}' } })).toEqual({ a: 1 });
  });
  it("refuses a missing value, a non-string string, bad JSON, an unknown type", () => {
    expect(invalid("VARIABLE", { value: { type: "string" } }).issues).toEqual([{ path: "value.value", message: "is required" }]);
    expect(invalid("VARIABLE", { value: { type: "string", value: 3 } }).message).toMatch(/value\.value: must be a string/);
    expect(invalid("VARIABLE", { value: { type: "json", value: "{nope" } }).message).toMatch(/value\.value: must be JSON/);
    expect(invalid("VARIABLE", { value: { type: "xml", value: "x" } }).message).toMatch(/value\.type/);
    expect(invalid("VARIABLE", {}).message).toMatch(/^value: /);
  });
});

describe("COALESCE and COMBINE_COLUMNS", () => {
  it("COALESCE returns the first value that is not null or empty, else null", async () => {
    const cfg = { sources: ["a", "b", "c"] };
    expect(await ok("COALESCE", cfg, { a: null, b: "", c: 0 })).toBe(0);
    expect(await ok("COALESCE", cfg, { a: "x", b: "y", c: null })).toBe("x");
    expect(await ok("COALESCE", cfg, { a: null, b: null, c: null })).toBeNull();
  });
  it("COALESCE needs at least two sources; a missing input is an error", async () => {
    expect(invalid("COALESCE", { sources: ["a"] }).message).toBe("sources: must name at least 2 inputs");
    expect(await fails("COALESCE", { sources: ["a", "zz"] }, { a: null })).toBe('input "zz" is not available');
  });
  it("COMBINE_COLUMNS builds an object of its sources", async () => {
    expect(await ok("COMBINE_COLUMNS", { sources: ["q", "ctx"] }, { q: "hi", ctx: { x: 1 } })).toEqual({ q: "hi", ctx: { x: 1 } });
    expect(invalid("COMBINE_COLUMNS", { sources: [] }).message).toMatch(/at least 1 input/);
  });
});

describe("COMPARE", () => {
  it("compares as text by default", async () => {
    expect(await ok("COMPARE", { sources: ["a", "b"], comparison_type: { type: "STRING" } }, { a: "yes", b: "yes" })).toBe(true);
    expect(await ok("COMPARE", { sources: ["a", "b"] }, { a: 1, b: "1" })).toBe(true);
    expect(await ok("COMPARE", { sources: ["a", "b"] }, { a: "Yes", b: "yes" })).toBe(false);
  });
  it("compares JSON structurally, optionally at a path", async () => {
    const cfg = { sources: ["a", "b"], comparison_type: { type: "JSON" } };
    expect(await ok("COMPARE", cfg, { a: '{"x":1,"y":[1,2]}', b: { y: [1, 2], x: 1 } })).toBe(true);
    expect(await ok("COMPARE", cfg, { a: '{"x":1}', b: '{"x":2}' })).toBe(false);
    const at = { sources: ["a", "b"], comparison_type: { type: "JSON", json_path: "$.result.status" } };
    expect(await ok("COMPARE", at, { a: '{"result":{"status":"ok","n":1}}', b: { result: { status: "ok", n: 2 } } })).toBe(true);
    expect(await ok("COMPARE", at, { a: "{}", b: "{}" })).toBe(false);
    expect(await fails("COMPARE", cfg, { a: "not json", b: "{}" })).toMatch(/a is not valid JSON/);
  });
  it("needs exactly two sources and a known comparison type", () => {
    expect(invalid("COMPARE", { sources: ["a", "b", "c"] }).message).toBe("sources: must name exactly 2 inputs");
    expect(invalid("COMPARE", { sources: ["a"] }).message).toMatch(/at least 2/);
    expect(invalid("COMPARE", { sources: ["a", "b"], comparison_type: { type: "FUZZY" } }).message).toMatch(/comparison_type\.type/);
    expect(invalid("COMPARE", { sources: ["a", "b"], comparison_type: { type: "STRING", json_path: "$.a" } }).message).toMatch(/applies only/);
    expect(invalid("COMPARE", { sources: ["a", "b"], comparison_type: { type: "JSON", json_path: "$[?(@.a)]" } }).message).toMatch(/filter expressions/);
  });
});

describe("CONTAINS, REGEX, REGEX_EXTRACTION", () => {
  it("CONTAINS is a case-insensitive substring test against a value or another input", async () => {
    expect(await ok("CONTAINS", { source: "r", value: "THANK you" }, { r: "Well, thank you!" })).toBe(true);
    expect(await ok("CONTAINS", { source: "r", value: "sorry" }, { r: "Well, thank you!" })).toBe(false);
    expect(await ok("CONTAINS", { source: "r", value_source: "k" }, { r: "abc", k: "B" })).toBe(true);
  });
  it("CONTAINS needs exactly one of value and value_source", () => {
    expect(invalid("CONTAINS", { source: "r" }).message).toMatch(/exactly one of value or value_source/);
    expect(invalid("CONTAINS", { source: "r", value: "a", value_source: "b" }).message).toMatch(/exactly one/);
  });
  it("REGEX searches (Python syntax accepted)", async () => {
    expect(await ok("REGEX", { source: "e", regex_pattern: "^[\\w.-]+@[\\w.-]+\\.\\w+$" }, { e: "a.b@c.io" })).toBe(true);
    expect(await ok("REGEX", { source: "e", regex_pattern: "\\d{3}" }, { e: "ab12" })).toBe(false);
    expect(await ok("REGEX", { source: "e", regex_pattern: "(?i)hello" }, { e: "HELLO" })).toBe(true);
    expect(await ok("REGEX", { source: "e", regex_pattern: "(?P<w>a)b" }, { e: "xaby" })).toBe(true);
    expect(await ok("REGEX", { source: "e", regex_pattern: "\\Aab\\Z" }, { e: "ab" })).toBe(true);
    expect(await ok("REGEX", { source: "e", regex_pattern: "\\Aab\\Z" }, { e: "ab\n" })).toBe(false);
  });
  it("REGEX refuses a pattern that does not compile or is too long", () => {
    expect(invalid("REGEX", { source: "e", regex_pattern: "(" }).message).toMatch(/regex_pattern: is not a valid regular expression/);
    expect(invalid("REGEX", { source: "e", regex_pattern: "a".repeat(1001) }).message).toMatch(/longer than 1000/);
    expect(validateBlockConfig("REGEX", { source: "e", regex_pattern: "a".repeat(1000) }).ok).toBe(true);
  });
  it("REGEX_EXTRACTION returns every match like Python's findall", async () => {
    expect(await ok("REGEX_EXTRACTION", { source: "t", regex_pattern: "\\d+\\.?\\d*" }, { t: "a 1 b 2.5 c 30" })).toEqual(["1", "2.5", "30"]);
    expect(await ok("REGEX_EXTRACTION", { source: "t", regex_pattern: "id=(\\d+)" }, { t: "id=4 id=7" })).toEqual(["4", "7"]);
    expect(await ok("REGEX_EXTRACTION", { source: "t", regex_pattern: "(\\w)=(\\d)" }, { t: "a=1 b=2" })).toEqual([["a", "1"], ["b", "2"]]);
    expect(await ok("REGEX_EXTRACTION", { source: "t", regex_pattern: "z" }, { t: "abc" })).toEqual([]);
  });
});

describe("JSON_PATH and XML_PATH", () => {
  const doc = { selected_agent: "billing", items: [{ name: "a", v: 1 }, { name: "b", v: 5 }] };
  it("JSON_PATH returns the first match or all of them, from JSON text or a structured value", async () => {
    expect(await ok("JSON_PATH", { source: "o", json_path: "$.selected_agent" }, { o: JSON.stringify(doc) })).toBe("billing");
    expect(await ok("JSON_PATH", { source: "o", json_path: "$.items[*].name", return_first_match: false }, { o: doc })).toEqual(["a", "b"]);
    expect(await ok("JSON_PATH", { source: "o", json_path: "$.missing" }, { o: doc })).toBeNull();
    expect(await fails("JSON_PATH", { source: "o", json_path: "$.a" }, { o: "plain text" })).toMatch(/o is not valid JSON/);
  });
  it("JSON_PATH refuses a path it cannot read", () => {
    expect(invalid("JSON_PATH", { source: "o", json_path: "" }).message).toMatch(/json_path: a JSONPath cannot be empty/);
    expect(invalid("JSON_PATH", { source: "o", json_path: "$.a[" }).message).toMatch(/unclosed/);
  });
  const xml = `<?xml version="1.0"?><rss><channel><item id="1"><title>First</title></item><item id="2"><title>Second &amp; last</title></item></channel></rss>`;
  it("XML_PATH finds the first or all matches, as text or as XML", async () => {
    expect(await ok("XML_PATH", { source: "x", xml_path: ".//item/title" }, { x: xml })).toBe("First");
    expect(await ok("XML_PATH", { source: "x", xml_path: ".//item/title", type: "findall" }, { x: xml })).toEqual(["First", "Second & last"]);
    expect(await ok("XML_PATH", { source: "x", xml_path: ".//item[@id='2']", return_text: false }, { x: xml })).toBe(
      '<item id="2"><title>Second &amp; last</title></item>',
    );
    expect(await ok("XML_PATH", { source: "x", xml_path: "channel/nothing" }, { x: xml })).toBeNull();
    expect(await fails("XML_PATH", { source: "x", xml_path: "a" }, { x: "<a><b></a>" })).toMatch(/x is not valid XML/);
  });
  it("XML_PATH refuses an unsupported path and a bad type", () => {
    expect(invalid("XML_PATH", { source: "x", xml_path: "a[contains(.,'x')]" }).message).toMatch(/xml_path: unsupported predicate/);
    expect(invalid("XML_PATH", { source: "x", xml_path: "a", type: "first" }).message).toMatch(/type/);
  });
});

describe("PARSE_VALUE and ASSERT_VALID", () => {
  it("PARSE_VALUE converts to each type, and says when it cannot", async () => {
    expect(await ok("PARSE_VALUE", { source: "s", type: "number" }, { s: " 42.5 " })).toBe(42.5);
    expect(await ok("PARSE_VALUE", { source: "s", type: "boolean" }, { s: "Yes" })).toBe(true);
    expect(await ok("PARSE_VALUE", { source: "s", type: "object" }, { s: '{"a":1}' })).toEqual({ a: 1 });
    expect(await ok("PARSE_VALUE", { source: "s", type: "string" }, { s: { a: 1 } })).toBe('{"a":1}');
    expect(await fails("PARSE_VALUE", { source: "s", type: "number" }, { s: "12abc" })).toMatch(/s is not a number/);
    expect(await fails("PARSE_VALUE", { source: "s", type: "boolean" }, { s: "maybe" })).toMatch(/not a boolean/);
    expect(await fails("PARSE_VALUE", { source: "s", type: "object" }, { s: "5" })).toMatch(/not a JSON object/);
    expect(invalid("PARSE_VALUE", { source: "s", type: "date" }).message).toMatch(/^type: /);
  });
  it("ASSERT_VALID checks JSON objects, numbers and SQL", async () => {
    expect(await ok("ASSERT_VALID", { source: "v", type: "object" }, { v: '{"a":1}' })).toBe(true);
    expect(await ok("ASSERT_VALID", { source: "v", type: "object" }, { v: '"str"' })).toBe(false);
    expect(await ok("ASSERT_VALID", { source: "v", type: "number" }, { v: "3e2" })).toBe(true);
    expect(await ok("ASSERT_VALID", { source: "v", type: "number" }, { v: "three" })).toBe(false);
    expect(await ok("ASSERT_VALID", { source: "v", type: "sql" }, { v: "SELECT a FROM t WHERE b = 'x'' y' AND (c > 1)" })).toBe(true);
    expect(await ok("ASSERT_VALID", { source: "v", type: "sql" }, { v: "SELECT (a FROM t" })).toBe(false);
    expect(await ok("ASSERT_VALID", { source: "v", type: "sql" }, { v: "hello world" })).toBe(false);
  });
});

describe("COUNT, MATH_OPERATOR, MIN_MAX, ABSOLUTE_NUMERIC_DISTANCE", () => {
  it("COUNT counts characters, words, sentences and paragraphs", async () => {
    const t = "Hello there. How are you?\n\nFine!";
    expect(await ok("COUNT", { source: "t", type: "chars" }, { t: "héllo" })).toBe(5);
    expect(await ok("COUNT", { source: "t", type: "words" }, { t })).toBe(6);
    expect(await ok("COUNT", { source: "t", type: "sentences" }, { t })).toBe(3);
    expect(await ok("COUNT", { source: "t", type: "paragraphs" }, { t })).toBe(2);
    expect(await ok("COUNT", { source: "t", type: "words" }, { t: "" })).toBe(0);
  });
  it("MATH_OPERATOR compares with a value or a second input", async () => {
    expect(await ok("MATH_OPERATOR", { sources: ["s"], operator: "ge", value: 0.8 }, { s: "0.8" })).toBe(true);
    expect(await ok("MATH_OPERATOR", { sources: ["s"], operator: "gt", value: 0.8 }, { s: 0.8 })).toBe(false);
    expect(await ok("MATH_OPERATOR", { sources: ["a", "b"], operator: "lt" }, { a: 1, b: 2 })).toBe(true);
    expect(await ok("MATH_OPERATOR", { sources: ["a", "b"], operator: "le" }, { a: 2, b: 2 })).toBe(true);
    expect(await fails("MATH_OPERATOR", { sources: ["s"], operator: "lt", value: 1 }, { s: "n/a" })).toMatch(/s is not a number/);
  });
  it("MATH_OPERATOR needs value with one source and refuses it with two", () => {
    expect(invalid("MATH_OPERATOR", { sources: ["s"], operator: "lt" }).message).toMatch(/value: is required/);
    expect(invalid("MATH_OPERATOR", { sources: ["a", "b"], operator: "lt", value: 1 }).message).toMatch(/not both/);
    expect(invalid("MATH_OPERATOR", { sources: ["a"], operator: "eq", value: 1 }).message).toMatch(/operator/);
  });
  it("MIN_MAX reads arrays, optionally through a JSONPath", async () => {
    expect(await ok("MIN_MAX", { source: "s", type: "max", json_path: "$[*].value" }, { s: '[{"value":3},{"value":9},{"value":"4"}]' })).toBe(9);
    expect(await ok("MIN_MAX", { source: "s", type: "min" }, { s: [3, -2, 7] })).toBe(-2);
    expect(await fails("MIN_MAX", { source: "s", type: "min" }, { s: '["a"]' })).toMatch(/holds no numbers/);
  });
  it("ABSOLUTE_NUMERIC_DISTANCE", async () => {
    expect(await ok("ABSOLUTE_NUMERIC_DISTANCE", { sources: ["a", "b"] }, { a: "3", b: 10 })).toBe(7);
    expect(await fails("ABSOLUTE_NUMERIC_DISTANCE", { sources: ["a", "b"] }, { a: "x", b: 1 })).toMatch(/a is not a number/);
  });
});

describe("COSINE_SIMILARITY", () => {
  const cfg = { sources: ["a", "b"] };
  it("on numeric vectors (arrays or JSON text of them)", async () => {
    expect(await ok("COSINE_SIMILARITY", cfg, { a: [1, 0], b: [0, 1] })).toBe(0);
    expect(await ok("COSINE_SIMILARITY", cfg, { a: "[1, 2, 3]", b: [2, 4, 6] })).toBeCloseTo(1, 12);
    expect(await ok("COSINE_SIMILARITY", cfg, { a: [1, 0], b: [-1, 0] })).toBe(-1);
    expect(await fails("COSINE_SIMILARITY", cfg, { a: [1, 2], b: [1, 2, 3] })).toMatch(/different lengths/);
    expect(await fails("COSINE_SIMILARITY", cfg, { a: [0, 0], b: [1, 2] })).toMatch(/zero vector/);
    expect(await fails("COSINE_SIMILARITY", cfg, { a: [1, 2], b: "some text" })).toMatch(/one input is a numeric vector/);
  });
  it("on text, as word-count vectors", async () => {
    expect(await ok("COSINE_SIMILARITY", cfg, { a: "The cat sat", b: "the CAT sat!" })).toBeCloseTo(1, 12);
    expect(await ok("COSINE_SIMILARITY", cfg, { a: "red apple", b: "green pear" })).toBe(0);
    expect(await ok("COSINE_SIMILARITY", cfg, { a: "a b", b: "a c" })).toBeCloseTo(0.5, 12);
    expect(await ok("COSINE_SIMILARITY", cfg, { a: "", b: "words" })).toBe(0);
  });
});

describe("APPLY_DIFF", () => {
  const original = "line one\nline two\nline three\n";
  it("applies a unified diff", async () => {
    const diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n line one\n-line two\n+line 2\n line three\n";
    expect(await ok("APPLY_DIFF", { sources: ["o", "d"] }, { o: original, d: diff })).toBe("line one\nline 2\nline three\n");
  });
  it("finds a hunk whose line numbers are off, and refuses one whose context is absent", async () => {
    const shifted = "@@ -7,2 +7,2 @@\n line two\n-line three\n+line 3\n";
    expect(await ok("APPLY_DIFF", { sources: ["o", "d"] }, { o: original, d: shifted })).toBe("line one\nline two\nline 3\n");
    expect(await fails("APPLY_DIFF", { sources: ["o", "d"] }, { o: original, d: "@@ -1,1 +1,1 @@\n-nope\n+yes\n" })).toMatch(/does not apply/);
    expect(await fails("APPLY_DIFF", { sources: ["o", "d"] }, { o: original, d: "just text" })).toMatch(/no hunks/);
  });
  it("handles insertions and a missing final newline", async () => {
    expect(await ok("APPLY_DIFF", { sources: ["o", "d"] }, { o: "a\nb\n", d: "@@ -1,0 +2,1 @@\n+inserted\n" })).toBe("a\ninserted\nb\n");
    expect(await ok("APPLY_DIFF", { sources: ["o", "d"] }, { o: "a\n", d: "@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n" })).toBe("b");
  });
});
