// The blocks that compute from their inputs alone: variables, comparisons, extraction, parsing, counting, math.
import { z } from "zod";
import { applyUnifiedDiff, DiffError } from "../diff";
import { compileJsonPath, JsonPathError, queryJsonPath } from "../jsonpath";
import { compileRegex, regexFindAll, RegexError, regexProblem, regexTest } from "../regex";
import { BlockError, defineBlock, type BlockDefinition } from "../types";
import { asNumber, deepEqual, input, preview, toNumber, toStructured, toText, tryParseJson } from "../values";
import { compileXPath, parseXml, queryXml, serializeXml, textContent, XmlError } from "../xml";

export const SourceName = z.string({ error: "must be a string naming an input" }).min(1, "must be a non-empty name").max(255, "must be at most 255 characters");
const sourcesList = (min: number, max?: number) => {
  let s = z.array(SourceName, { error: "must be an array of input names" }).min(min, `must name at least ${min} input${min > 1 ? "s" : ""}`);
  if (max !== undefined) s = s.max(max, max === min ? `must name exactly ${max} inputs` : `must name at most ${max} inputs`);
  return s;
};

const jsonPathField = z.string().superRefine((p, ctx) => {
  try {
    compileJsonPath(p);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: err instanceof JsonPathError ? err.message : "is not a valid JSONPath" });
  }
});

const regexField = z.string().min(1, "must be a non-empty pattern").superRefine((p, ctx) => {
  const problem = regexProblem(p);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** A JSONPath query whose bounds (matches, work) come back as the block's error. */
const query = (doc: unknown, path: string) => wrap(() => queryJsonPath(doc, path), JsonPathError, "");

const oneSource = { source: SourceName };
const single = (c: { source: string }) => [c.source];
const many = (c: { sources: string[] }) => c.sources;

function wrap<T>(fn: () => T, errType: new (...a: any[]) => Error, prefix: string): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof errType) throw new BlockError(`${prefix}${err.message}`);
    throw err;
  }
}

const VARIABLE = defineBlock({
  computes: true,
  configSchema: z.looseObject({
    value: z
      .looseObject({ type: z.enum(["string", "json"], { error: 'must be "string" or "json"' }), value: z.unknown().optional() })
      .superRefine((v, ctx) => {
        if (v.value === undefined) ctx.addIssue({ code: "custom", path: ["value"], message: "is required" });
        else if (v.type === "string" && typeof v.value !== "string") ctx.addIssue({ code: "custom", path: ["value"], message: 'must be a string when type is "string"' });
        else if (v.type === "json" && typeof v.value === "string" && !tryParseJson(v.value).ok) {
          ctx.addIssue({ code: "custom", path: ["value"], message: 'must be JSON (a value, or a string holding JSON) when type is "json"' });
        }
      }),
  }),
  sources: () => [],
  evaluate: (c) => (c.value.type === "json" && typeof c.value.value === "string" ? JSON.parse(c.value.value) : c.value.value),
});

const isEmpty = (v: unknown) => v === null || v === undefined || v === "";

const COALESCE = defineBlock({
  computes: true,
  configSchema: z.looseObject({ sources: sourcesList(2) }),
  sources: many,
  evaluate: (c, inputs) => {
    for (const s of c.sources) {
      const v = input(inputs, s);
      if (!isEmpty(v)) return v;
    }
    return null;
  },
});

const COMBINE_COLUMNS = defineBlock({
  computes: true,
  configSchema: z.looseObject({ sources: sourcesList(1) }),
  sources: many,
  evaluate: (c, inputs) => Object.fromEntries(c.sources.map((s) => [s, input(inputs, s) ?? null])),
});

const COMPARE = defineBlock({
  computes: true,
  configSchema: z
    .looseObject({
      sources: sourcesList(2, 2),
      comparison_type: z
        .looseObject({ type: z.enum(["STRING", "JSON"], { error: 'must be "STRING" or "JSON"' }), json_path: jsonPathField.nullish() })
        .default({ type: "STRING" }),
    })
    .superRefine((c, ctx) => {
      if (c.comparison_type.type === "STRING" && c.comparison_type.json_path) {
        ctx.addIssue({ code: "custom", path: ["comparison_type", "json_path"], message: 'applies only when type is "JSON"' });
      }
    }),
  sources: many,
  evaluate: (c, inputs) => {
    const [a, b] = c.sources.map((s) => input(inputs, s));
    if (c.comparison_type.type === "STRING") return toText(a) === toText(b);
    const pick = (v: unknown, name: string) => {
      const doc = toStructured(v, name);
      if (!c.comparison_type.json_path) return doc;
      const hits = query(doc, c.comparison_type.json_path);
      return hits.length === 0 ? undefined : hits[0];
    };
    const left = pick(a, c.sources[0]), right = pick(b, c.sources[1]);
    return left !== undefined && right !== undefined && deepEqual(left, right);
  },
});

const CONTAINS = defineBlock({
  computes: true,
  configSchema: z
    .looseObject({ source: SourceName, value: z.string().nullish(), value_source: SourceName.nullish() })
    .superRefine((c, ctx) => {
      const has = [c.value != null, c.value_source != null].filter(Boolean).length;
      if (has !== 1) ctx.addIssue({ code: "custom", path: ["value"], message: "give exactly one of value or value_source" });
    }),
  sources: (c) => [c.source, ...(c.value_source ? [c.value_source] : [])],
  evaluate: (c, inputs) => {
    const hay = toText(input(inputs, c.source)).toLowerCase();
    const needle = toText(c.value_source ? input(inputs, c.value_source) : c.value).toLowerCase();
    return hay.includes(needle);
  },
});

const REGEX = defineBlock({
  computes: true,
  configSchema: z.looseObject({ ...oneSource, regex_pattern: regexField }),
  sources: single,
  evaluate: (c, inputs) => wrap(() => regexTest(compileRegex(c.regex_pattern), toText(input(inputs, c.source))), RegexError, ""),
});

/** Python's re.findall: whole matches without groups, the group with one, a list of groups with several. */
const REGEX_EXTRACTION = defineBlock({
  computes: true,
  configSchema: z.looseObject({ ...oneSource, regex_pattern: regexField }),
  sources: single,
  evaluate: (c, inputs) => wrap(() => regexFindAll(compileRegex(c.regex_pattern), toText(input(inputs, c.source))), RegexError, ""),
});

const JSON_PATH = defineBlock({
  computes: true,
  configSchema: z.looseObject({ ...oneSource, json_path: jsonPathField, return_first_match: z.boolean().default(true) }),
  sources: single,
  evaluate: (c, inputs) => {
    const hits = query(toStructured(input(inputs, c.source), c.source), c.json_path);
    return c.return_first_match ? (hits[0] ?? null) : hits;
  },
});

const XML_PATH = defineBlock({
  computes: true,
  configSchema: z.looseObject({
    ...oneSource,
    xml_path: z.string().superRefine((p, ctx) => {
      try {
        compileXPath(p);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: err instanceof XmlError ? err.message : "is not a supported XML path" });
      }
    }),
    type: z.enum(["find", "findall"], { error: 'must be "find" or "findall"' }).default("find"),
    return_text: z.boolean().default(true),
  }),
  sources: single,
  evaluate: (c, inputs) => {
    const root = wrap(() => parseXml(toText(input(inputs, c.source))), XmlError, `${c.source} is not valid XML: `);
    const hits = queryXml(root, c.xml_path);
    const render = (e: (typeof hits)[number]) => (c.return_text ? textContent(e).trim() : serializeXml(e));
    return c.type === "find" ? (hits[0] ? render(hits[0]) : null) : hits.map(render);
  },
});

const TRUE_WORDS = new Set(["true", "yes", "y", "1", "on"]);
const FALSE_WORDS = new Set(["false", "no", "n", "0", "off"]);

const PARSE_VALUE = defineBlock({
  computes: true,
  configSchema: z.looseObject({ ...oneSource, type: z.enum(["string", "number", "boolean", "object"], { error: 'must be "string", "number", "boolean" or "object"' }) }),
  sources: single,
  evaluate: (c, inputs) => {
    const v = input(inputs, c.source);
    switch (c.type) {
      case "string":
        return toText(v);
      case "number":
        return toNumber(v, c.source);
      case "boolean": {
        if (typeof v === "boolean") return v;
        const w = toText(v).trim().toLowerCase();
        if (TRUE_WORDS.has(w)) return true;
        if (FALSE_WORDS.has(w)) return false;
        throw new BlockError(`${c.source} is not a boolean: ${preview(v)}`);
      }
      case "object": {
        const o = toStructured(v, c.source);
        if (o === null || typeof o !== "object") throw new BlockError(`${c.source} is not a JSON object or array: ${preview(v)}`);
        return o;
      }
    }
  },
});

const SQL_START = /^\s*(select|with|insert|update|delete|create|drop|alter|replace|merge|explain|pragma|values|truncate|grant|revoke|begin|commit|rollback)\b/i;

/** A syntax sanity check, not a parser: a known statement keyword, balanced quotes and parentheses. */
export function looksLikeSql(s: string): boolean {
  if (!SQL_START.test(s)) return false;
  let depth = 0, quote = "";
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (quote) {
      if (ch === quote) {
        if (s[i + 1] === quote) i++;
        else quote = "";
      }
    } else if (ch === "'" || ch === '"' || ch === "`") quote = ch;
    else if (ch === "(") depth++;
    else if (ch === ")" && --depth < 0) return false;
  }
  return depth === 0 && !quote;
}

const ASSERT_VALID = defineBlock({
  computes: true,
  configSchema: z.looseObject({ ...oneSource, type: z.enum(["object", "number", "sql"], { error: 'must be "object", "number" or "sql"' }) }),
  sources: single,
  evaluate: (c, inputs) => {
    const v = input(inputs, c.source);
    if (c.type === "number") return asNumber(v) !== undefined && typeof v !== "boolean";
    if (c.type === "sql") return typeof v === "string" && looksLikeSql(v);
    if (v !== null && typeof v === "object") return true;
    if (typeof v !== "string") return false;
    const p = tryParseJson(v.trim());
    return p.ok && p.value !== null && typeof p.value === "object";
  },
});

const COUNT = defineBlock({
  computes: true,
  configSchema: z.looseObject({ ...oneSource, type: z.enum(["chars", "words", "sentences", "paragraphs"], { error: 'must be "chars", "words", "sentences" or "paragraphs"' }) }),
  sources: single,
  evaluate: (c, inputs) => {
    const t = toText(input(inputs, c.source));
    switch (c.type) {
      case "chars":
        return [...t].length;
      case "words":
        return t.split(/\s+/).filter(Boolean).length;
      case "sentences":
        return t.split(/(?<=[.!?])\s+|[.!?]+$/).map((s) => s.trim()).filter((s) => /[\p{L}\p{N}]/u.test(s)).length;
      case "paragraphs":
        return t.split(/\n\s*\n/).filter((p) => p.trim()).length;
    }
  },
});

const OPS = { lt: (a: number, b: number) => a < b, le: (a: number, b: number) => a <= b, gt: (a: number, b: number) => a > b, ge: (a: number, b: number) => a >= b };

const MATH_OPERATOR = defineBlock({
  computes: true,
  configSchema: z
    .looseObject({
      sources: sourcesList(1, 2),
      operator: z.enum(["lt", "le", "gt", "ge"], { error: 'must be "lt", "le", "gt" or "ge"' }),
      value: z.number().nullish(),
    })
    .superRefine((c, ctx) => {
      if (c.sources.length === 1 && c.value == null) ctx.addIssue({ code: "custom", path: ["value"], message: "is required when sources names one input" });
      if (c.sources.length === 2 && c.value != null) ctx.addIssue({ code: "custom", path: ["value"], message: "give either a second source or value, not both" });
    }),
  sources: many,
  evaluate: (c, inputs) => {
    const a = toNumber(input(inputs, c.sources[0]), c.sources[0]);
    const b = c.sources.length === 2 ? toNumber(input(inputs, c.sources[1]), c.sources[1]) : (c.value as number);
    return OPS[c.operator](a, b);
  },
});

const MIN_MAX = defineBlock({
  computes: true,
  configSchema: z.looseObject({ ...oneSource, type: z.enum(["min", "max"], { error: 'must be "min" or "max"' }), json_path: jsonPathField.nullish() }),
  sources: single,
  evaluate: (c, inputs) => {
    const doc = toStructured(input(inputs, c.source), c.source);
    const values = c.json_path ? query(doc, c.json_path) : Array.isArray(doc) ? doc : [doc];
    const nums = values.map((v) => asNumber(v)).filter((n): n is number => n !== undefined && Number.isFinite(n));
    if (nums.length === 0) throw new BlockError(`${c.source} holds no numbers${c.json_path ? ` at ${c.json_path}` : ""}`);
    return c.type === "min" ? Math.min(...nums) : Math.max(...nums);
  },
});

const ABSOLUTE_NUMERIC_DISTANCE = defineBlock({
  computes: true,
  configSchema: z.looseObject({ sources: sourcesList(2, 2) }),
  sources: many,
  evaluate: (c, inputs) => Math.abs(toNumber(input(inputs, c.sources[0]), c.sources[0]) - toNumber(input(inputs, c.sources[1]), c.sources[1])),
});

function numericVector(v: unknown): number[] | undefined {
  let arr = v;
  if (typeof v === "string" && v.trim().startsWith("[")) {
    const p = tryParseJson(v.trim());
    if (!p.ok) return undefined;
    arr = p.value;
  }
  if (!Array.isArray(arr) || arr.length === 0 || !arr.every((x) => typeof x === "number" && Number.isFinite(x))) return undefined;
  return arr as number[];
}

function termFrequencies(t: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const w of t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) m.set(w, (m.get(w) ?? 0) + 1);
  return m;
}

/**
 * Numeric vectors (arrays of numbers, or JSON text of one): their cosine, -1..1; lengths must match.
 * Text: the cosine of the two texts' word-count vectors (lower-cased letters/digits runs), 0..1.
 */
export function cosineSimilarity(a: unknown, b: unknown): number {
  const va = numericVector(a), vb = numericVector(b);
  if (va && vb) {
    if (va.length !== vb.length) throw new BlockError(`the vectors have different lengths (${va.length} and ${vb.length})`);
    let dot = 0, na = 0, nb = 0;
    for (let i = 0; i < va.length; i++) {
      dot += va[i] * vb[i];
      na += va[i] * va[i];
      nb += vb[i] * vb[i];
    }
    if (na === 0 || nb === 0) throw new BlockError("cosine similarity is undefined for a zero vector");
    return dot / Math.sqrt(na * nb);
  }
  if (va || vb) throw new BlockError("one input is a numeric vector and the other is not");
  const ta = termFrequencies(toText(a)), tb = termFrequencies(toText(b));
  if (ta.size === 0 || tb.size === 0) return 0;
  let dot = 0, na = 0, nb = 0;
  for (const [w, n] of ta) {
    na += n * n;
    dot += n * (tb.get(w) ?? 0);
  }
  for (const n of tb.values()) nb += n * n;
  return dot / Math.sqrt(na * nb);
}

const COSINE_SIMILARITY = defineBlock({
  computes: true,
  configSchema: z.looseObject({ sources: sourcesList(2, 2) }),
  sources: many,
  evaluate: (c, inputs) => cosineSimilarity(input(inputs, c.sources[0]), input(inputs, c.sources[1])),
});

/** sources: [text, unified diff] → the patched text. */
const APPLY_DIFF = defineBlock({
  computes: true,
  configSchema: z.looseObject({ sources: sourcesList(2, 2) }),
  sources: many,
  evaluate: (c, inputs) =>
    wrap(() => applyUnifiedDiff(toText(input(inputs, c.sources[0])), toText(input(inputs, c.sources[1]))), DiffError, "the diff does not apply: "),
});

export const DATA_BLOCKS = {
  VARIABLE,
  COALESCE,
  COMBINE_COLUMNS,
  COMPARE,
  CONTAINS,
  REGEX,
  REGEX_EXTRACTION,
  JSON_PATH,
  XML_PATH,
  PARSE_VALUE,
  ASSERT_VALID,
  COUNT,
  MATH_OPERATOR,
  MIN_MAX,
  ABSOLUTE_NUMERIC_DISTANCE,
  COSINE_SIMILARITY,
  APPLY_DIFF,
} satisfies Record<string, BlockDefinition>;
