// The form of each column type (a smart table's columns and an evaluation's use the same blocks):
// its fields, each with a label and a line of help, and how their values become the configuration
// the API takes (docs/blocks.md). Pure: unit-tested in test/console/column-forms.test.ts.
import type { CreateColumnRequest } from "./api.gen";

export type ColumnType = CreateColumnRequest["type"];

export type FieldKind =
  | "column" // one input column, by name
  | "columns" // several input columns
  | "text"
  | "textarea"
  | "number"
  | "select"
  | "checkbox"
  | "prompt" // a stored prompt template, by name
  | "mapping" // template variables → input columns
  | "headers"; // HTTP headers, one "Name: value" a line

export interface FormField {
  /** Where the value goes in the configuration: "source", "engine.model", "sources.0". */
  path: string;
  label: string;
  kind: FieldKind;
  help?: string;
  options?: string[];
  /** A checkbox's starting state, a select's starting choice. */
  initial?: string | boolean;
  optional?: boolean;
}

export interface TypeForm {
  label: string;
  help: string;
  fields: FormField[];
}

const source: FormField = { path: "source", label: "Input column", kind: "column", help: "The column whose value this one reads." };
const pair = (a: string, b: string): FormField[] => [
  { path: "sources.0", label: a, kind: "column" },
  { path: "sources.1", label: b, kind: "column" },
];
const engine: FormField[] = [
  { path: "engine.provider", label: "Provider", kind: "select", options: ["openai", "anthropic"], initial: "openai", help: "Its key is set on the Settings page." },
  { path: "engine.model", label: "Model", kind: "text", optional: true, help: "Empty: the provider's default model." },
];

// Every type a column can have: the keys must be the API's whole enum, so a type the API gains fails
// `tsc -p console` until it has a form here.
export const TYPE_FORMS = {
  TEXT: { label: "Text", help: "Values typed in by hand (or imported).", fields: [] },
  PROMPT_TEMPLATE: {
    label: "Prompt template (LLM)",
    help: "Runs a stored prompt template with each row's values and keeps the model's answer.",
    fields: [
      { path: "template.name", label: "Prompt template", kind: "prompt", help: "Its latest version runs (or the label below)." },
      { path: "template.label", label: "Release label", kind: "text", optional: true, help: "Run the version this label points at, e.g. prod." },
      { path: "prompt_template_variable_mappings", label: "Variables", kind: "mapping", optional: true, help: "Which column fills each variable; a variable named like a column needs none." },
      ...engine,
    ],
  },
  LLM_ASSERTION: {
    label: "LLM assertion (yes/no)",
    help: "Asks a model a yes/no question about a column's value.",
    fields: [source, { path: "prompt", label: "Question", kind: "textarea", help: "e.g. Is the answer polite?" }, ...engine],
  },
  AI_DATA_EXTRACTION: {
    label: "AI data extraction",
    help: "Asks a model to pull a piece of information out of a column's value.",
    fields: [source, { path: "query", label: "What to extract", kind: "textarea", help: "e.g. the order number" }, ...engine],
  },
  COUNT: {
    label: "Count",
    help: "Counts the characters, words, sentences or paragraphs of a column's value.",
    fields: [source, { path: "type", label: "Count", kind: "select", options: ["chars", "words", "sentences", "paragraphs"], initial: "words" }],
  },
  CONTAINS: {
    label: "Contains",
    help: "Whether a column's value contains a text (ignoring case).",
    fields: [
      source,
      { path: "value", label: "Text", kind: "text", optional: true, help: "The text to look for…" },
      { path: "value_source", label: "or the text of column", kind: "column", optional: true, help: "…or another column's value." },
    ],
  },
  REGEX: { label: "Regex match", help: "Whether a column's value matches a regular expression.", fields: [source, { path: "regex_pattern", label: "Pattern", kind: "text", help: "e.g. ^\\d+$ (at most 1000 characters)" }] },
  REGEX_EXTRACTION: { label: "Regex extraction", help: "Every match of a regular expression in a column's value.", fields: [source, { path: "regex_pattern", label: "Pattern", kind: "text" }] },
  JSON_PATH: {
    label: "JSON path",
    help: "Reads a value out of a column's JSON.",
    fields: [source, { path: "json_path", label: "Path", kind: "text", help: "e.g. $.answer.text" }, { path: "return_first_match", label: "First match only", kind: "checkbox", initial: true }],
  },
  XML_PATH: {
    label: "XML path",
    help: "Reads an element out of a column's XML.",
    fields: [
      source,
      { path: "xml_path", label: "Path", kind: "text", help: "ElementTree syntax, e.g. ./item/name" },
      { path: "type", label: "Matches", kind: "select", options: ["find", "findall"], initial: "find" },
      { path: "return_text", label: "Text only", kind: "checkbox", initial: true },
    ],
  },
  PARSE_VALUE: { label: "Parse value", help: "Turns a column's text into a number, a boolean or an object.", fields: [source, { path: "type", label: "Into", kind: "select", options: ["string", "number", "boolean", "object"], initial: "number" }] },
  ASSERT_VALID: { label: "Is valid", help: "Whether a column's value is a valid JSON object, number or SQL statement.", fields: [source, { path: "type", label: "Valid as", kind: "select", options: ["object", "number", "sql"], initial: "object" }] },
  VARIABLE: {
    label: "Fixed value",
    help: "The same value in every row.",
    fields: [
      { path: "value.type", label: "Kind", kind: "select", options: ["string", "json"], initial: "string" },
      { path: "value.value", label: "Value", kind: "textarea" },
    ],
  },
  COALESCE: { label: "First non-empty", help: "The first of several columns that has a value.", fields: [{ path: "sources", label: "Columns, in order", kind: "columns", help: "At least two." }] },
  COMBINE_COLUMNS: { label: "Combine columns", help: "Several columns' values as one object.", fields: [{ path: "sources", label: "Columns", kind: "columns" }] },
  APPLY_DIFF: { label: "Apply diff", help: "A text with a unified diff applied.", fields: pair("Text column", "Diff column") },
  MATH_OPERATOR: {
    label: "Compare numbers",
    help: "Whether a column's number is below or above a value (or another column's).",
    fields: [
      { path: "sources.0", label: "Number column", kind: "column" },
      { path: "operator", label: "Is", kind: "select", options: ["lt", "le", "gt", "ge"], initial: "gt", help: "lt <, le ≤, gt >, ge ≥" },
      { path: "value", label: "Than", kind: "number", optional: true },
      { path: "sources.1", label: "or than column", kind: "column", optional: true },
    ],
  },
  MIN_MAX: {
    label: "Min / max",
    help: "The smallest or largest number in a column's list.",
    fields: [source, { path: "type", label: "Which", kind: "select", options: ["min", "max"], initial: "max" }, { path: "json_path", label: "Path", kind: "text", optional: true }],
  },
  ABSOLUTE_NUMERIC_DISTANCE: { label: "Numeric distance", help: "How far apart two columns' numbers are.", fields: pair("First column", "Second column") },
  COSINE_SIMILARITY: { label: "Similarity", help: "How alike two columns' texts (or vectors) are, 0 to 1.", fields: pair("First column", "Second column") },
  COMPARE: {
    label: "Equal",
    help: "Whether two columns hold the same text or the same JSON.",
    fields: [...pair("First column", "Second column"), { path: "comparison_type.type", label: "Compare as", kind: "select", options: ["STRING", "JSON"], initial: "STRING" }],
  },
  ENDPOINT: {
    label: "HTTP endpoint",
    help: "Sends the row's values to a URL and keeps its answer.",
    fields: [
      { path: "url", label: "URL", kind: "text", help: "https://…" },
      { path: "method", label: "Method", kind: "select", options: ["POST", "GET", "PUT", "PATCH", "DELETE"], initial: "POST" },
      { path: "headers", label: "Headers", kind: "headers", optional: true, help: "One a line: Name: value" },
      { path: "timeout_ms", label: "Timeout (ms)", kind: "number", optional: true },
    ],
  },
} satisfies Record<ColumnType, TypeForm>;

export const COLUMN_TYPES = Object.keys(TYPE_FORMS) as ColumnType[];

/** A form's values: text for most fields, a boolean for a checkbox, a list for columns, pairs for a mapping. */
export type FieldValue = string | boolean | string[] | [string, string][];

export function initialValues(type: ColumnType): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  for (const f of TYPE_FORMS[type].fields as FormField[]) {
    out[f.path] = f.kind === "checkbox" ? f.initial === true : f.kind === "columns" ? [] : f.kind === "mapping" ? [] : typeof f.initial === "string" ? f.initial : "";
  }
  return out;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown) {
  const keys = path.split(".");
  let cur: Record<string, unknown> | unknown[] = target;
  keys.forEach((k, i) => {
    const last = i === keys.length - 1;
    const index = /^\d+$/.test(k) ? Number(k) : null;
    const holder = cur as Record<string, unknown> & unknown[];
    const slot = index ?? k;
    if (last) {
      holder[slot as number] = value;
      return;
    }
    const nextIsIndex = /^\d+$/.test(keys[i + 1]!);
    if (holder[slot as number] === undefined) holder[slot as number] = nextIsIndex ? [] : {};
    cur = holder[slot as number] as Record<string, unknown>;
  });
}

/**
 * The configuration the API takes from a form's values. An empty optional field is left out; an
 * empty required one is sent as it is, for the API to refuse by name (the console checks nothing the
 * API checks). A list of sources keeps its order and drops its gaps.
 */
export function configOf(type: ColumnType, values: Record<string, FieldValue>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const f of TYPE_FORMS[type].fields as FormField[]) {
    const v = values[f.path];
    if (f.kind === "checkbox") setPath(config, f.path, v === true);
    else if (f.kind === "columns") setPath(config, f.path, Array.isArray(v) ? v : []);
    else if (f.kind === "mapping") {
      const pairs = (Array.isArray(v) ? v : []) as [string, string][];
      const entries = pairs.filter(([k, c]) => k.trim() && c);
      if (entries.length || !f.optional) setPath(config, f.path, Object.fromEntries(entries.map(([k, c]) => [k.trim(), c])));
    } else if (f.kind === "headers") {
      const lines = String(v ?? "").split("\n").map((l) => l.trim()).filter(Boolean);
      if (lines.length) setPath(config, f.path, Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":") < 0 ? l.length : l.indexOf(":")).trim(), l.includes(":") ? l.slice(l.indexOf(":") + 1).trim() : ""])));
    } else {
      const text = typeof v === "string" ? v : "";
      if (!text.trim() && f.optional) continue;
      setPath(config, f.path, f.kind === "number" && text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text);
    }
  }
  // A list of sources filled by separate boxes: no holes.
  if (Array.isArray(config.sources)) config.sources = (config.sources as unknown[]).filter((s) => s !== undefined && s !== "");
  return config;
}

/** The form field an API rule names (config.source → "source"), for showing the rule next to it. */
export function fieldOfRule(type: ColumnType, ruleField: string): string | null {
  const path = ruleField.replace(/^(config|configuration)\./, "").replace(/\[(\d+)\]/g, ".$1");
  const fields = TYPE_FORMS[type].fields as FormField[];
  return fields.find((f) => path === f.path || path.startsWith(`${f.path}.`))?.path ?? fields.find((f) => f.path.startsWith(`${path}.`))?.path ?? null;
}
