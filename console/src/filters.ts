// The filter fields of request search (the service's filter group: docs/logging-and-search.md), the
// operators each takes, and which suggestions field lists its values.
import type { Queries, StructuredFilter, StructuredFilterGroup, TraceStructuredFilter } from "./api.gen";

/** A field the suggestions endpoint (GET /api/public/v2/requests/suggestions) lists values of. */
export type SuggestField = Queries["GET /api/public/v2/requests/suggestions"]["field"];

type Operator = StructuredFilter["operator"];

export type FieldKind = "string" | "enum" | "text" | "numeric" | "datetime" | "boolean" | "array" | "score" | "nested" | "signal";

export interface FieldSpec {
  kind: FieldKind;
  label: string;
  /** The suggestions endpoint's field for values (and for nested keys, `keys`). */
  suggest?: SuggestField;
  keys?: SuggestField;
  values?: string[];
  /** A column a log may lack (a request not made from a span has no trace id): it also takes is_null / is_not_null. */
  nullable?: boolean;
}

// Each key is a field of the API's filters (`satisfies` checks it against the generated types).
export const FIELDS: Record<string, FieldSpec> = {
  tags: { kind: "array", label: "Tags", suggest: "tags" },
  engine: { kind: "string", label: "Model", suggest: "engine" },
  provider_type: { kind: "string", label: "Provider", suggest: "provider_type" },
  status: { kind: "enum", label: "Status", values: ["SUCCESS", "WARNING", "ERROR"] },
  metadata: { kind: "nested", label: "Metadata", suggest: "metadata_values", keys: "metadata_keys" },
  metadata_keys: { kind: "array", label: "Metadata keys", suggest: "metadata_keys" },
  prompt_id: { kind: "numeric", label: "Prompt id", suggest: "prompt_id", nullable: true },
  prompt_version_number: { kind: "numeric", label: "Prompt version", nullable: true },
  input_text: { kind: "text", label: "Input text" },
  output_text: { kind: "text", label: "Output text" },
  tool_names: { kind: "array", label: "Tool names", suggest: "tool_names" },
  input_tokens: { kind: "numeric", label: "Input tokens" },
  output_tokens: { kind: "numeric", label: "Output tokens" },
  cost: { kind: "numeric", label: "Cost" },
  latency_ms: { kind: "numeric", label: "Latency (ms)" },
  request_start_time: { kind: "datetime", label: "Start time" },
  scores: { kind: "score", label: "Score" },
  input_variables: { kind: "nested", label: "Input variable", suggest: "input_variable_values", keys: "input_variable_keys" },
  output: { kind: "nested", label: "Output key", suggest: "output_values", keys: "output_keys" },
  is_tool_call: { kind: "boolean", label: "Calls a tool" },
  is_json: { kind: "boolean", label: "JSON answer" },
  user_intent: { kind: "enum", label: "User intent", values: ["frustrated", "satisfied", "curious"], nullable: true },
  agent_intent: { kind: "enum", label: "Agent intent", values: ["apologetic", "refusal", "uncertain"], nullable: true },
  pl_id: { kind: "numeric", label: "Request id" },
  group_id: { kind: "numeric", label: "Group id", nullable: true },
  trace_id: { kind: "string", label: "Trace id", suggest: "trace_id", nullable: true },
  span_name: { kind: "string", label: "Span name", suggest: "span_name", nullable: true },
  signals: { kind: "signal", label: "Signal" },
} satisfies { [F in StructuredFilter["field"]]?: FieldSpec };

export const OPERATORS: Record<FieldKind, Operator[]> = {
  string: ["is", "is_not", "contains", "not_contains", "starts_with", "ends_with", "in", "not_in"],
  enum: ["is", "is_not", "in", "not_in"],
  text: ["contains", "not_contains", "is", "is_not", "starts_with", "ends_with", "is_empty", "is_not_empty"],
  numeric: ["is", "is_not", "gt", "gte", "lt", "lte", "between", "in", "not_in"],
  datetime: ["after", "before", "between", "is"],
  boolean: ["is_true", "is_false"],
  array: ["contains", "not_contains", "in", "not_in", "starts_with", "is_empty", "is_not_empty"],
  score: ["gte", "gt", "lte", "lt", "is", "is_not", "between", "is_null", "is_not_null"],
  nested: ["key_equals", "key_not_equals", "key_contains", "is_null", "is_not_null"],
  signal: ["is_true", "is_false", "is_null", "is_not_null"],
};

/** The operators a field takes: its kind's, and is_null / is_not_null when the column may be empty. */
export function operatorsOf(field: string): Operator[] {
  const spec = FIELDS[field];
  if (!spec) return [];
  const base = OPERATORS[spec.kind];
  return spec.nullable && !base.includes("is_null") ? [...base, "is_null", "is_not_null"] : base;
}

const NO_VALUE = new Set(["is_empty", "is_not_empty", "is_null", "is_not_null", "is_true", "is_false"]);
const LIST = new Set(["in", "not_in"]);

export interface FilterRow {
  field: string;
  operator: string;
  value: string;
  nested_key: string;
}

export const takesValue = (operator: string) => !NO_VALUE.has(operator);
export const needsKey = (field: string) => FIELDS[field]?.kind === "nested" || FIELDS[field]?.kind === "score" || FIELDS[field]?.kind === "signal";

export function newRow(field = "tags"): FilterRow {
  return { field, operator: operatorsOf(field)[0], value: "", nested_key: FIELDS[field].kind === "score" ? "default" : "" };
}

const isField = (field: string): field is StructuredFilter["field"] => field in FIELDS;
const isOperator = (operator: string): operator is Operator => Object.values(OPERATORS).some((ops) => ops.some((o) => o === operator));

function typed(kind: FieldKind, raw: string): string | number {
  const s = raw.trim();
  if (kind === "numeric" || kind === "score") {
    const n = Number(s);
    return s !== "" && Number.isFinite(n) ? n : s;
  }
  return s;
}

/** One row as the API's filter, or null while it is incomplete (an empty value, a missing key). */
export function toFilter(row: FilterRow): StructuredFilter | null {
  const spec = FIELDS[row.field];
  if (!spec || !isField(row.field) || !isOperator(row.operator)) return null;
  const out: StructuredFilter = { field: row.field, operator: row.operator };
  if (needsKey(row.field)) {
    if (!row.nested_key.trim()) return null;
    out.nested_key = row.nested_key.trim();
  }
  if (!takesValue(row.operator)) return out;
  if (row.value.trim() === "") return null;
  if (LIST.has(row.operator)) out.value = row.value.split(",").map((v) => typed(spec.kind, v)).filter((v) => v !== "");
  else if (row.operator === "between") out.value = row.value.split(",").slice(0, 2).map((v) => typed(spec.kind, v));
  else out.value = typed(spec.kind, row.value);
  return out;
}

export function hint(row: FilterRow): string {
  if (LIST.has(row.operator)) return "a, b, c";
  if (row.operator === "between") return "low, high";
  if (FIELDS[row.field]?.kind === "datetime") return "2024-01-31T00:00:00Z";
  return "value";
}

/** A group of rows and groups, as the API nests them (at most 5 levels, 30 filters in all). */
export interface FilterGroupDraft {
  logic: "AND" | "OR";
  items: (FilterRow | FilterGroupDraft)[];
}

export const MAX_DEPTH = 5;

export const isGroup = (n: FilterRow | FilterGroupDraft): n is FilterGroupDraft => "items" in n;

/** The API's filter group, leaving out incomplete rows and empty groups; null when nothing is left. */
export function toGroup(g: FilterGroupDraft): StructuredFilterGroup | null {
  const filters = g.items.map((n) => (isGroup(n) ? toGroup(n) : toFilter(n))).filter((f) => f !== null);
  return filters.length ? { logic: g.logic, filters } : null;
}

/** The trace list's filters (all optional); `toTraceGroup` turns them into the trace search's filter group. */
export interface TraceListFilters {
  status: "" | "ok" | "error";
  name: string;
  spanName: string;
  model: string;
  minDurationMs: string;
}

export const NO_TRACE_FILTERS: TraceListFilters = { status: "", name: "", spanName: "", model: "", minDurationMs: "" };

/**
 * The trace search's filter group (POST /api/public/v2/traces/search, AND across the trace's spans),
 * or null when no filter is set. Values go as typed: the API's rules judge them.
 */
export function toTraceGroup(f: TraceListFilters): { logic: "AND"; filters: TraceStructuredFilter[] } | null {
  const filters: TraceStructuredFilter[] = [];
  if (f.status) filters.push({ field: "trace_status", operator: "is", value: f.status });
  if (f.name.trim()) filters.push({ field: "trace_name", operator: "contains", value: f.name.trim() });
  if (f.spanName.trim()) filters.push({ field: "span_name", operator: "contains", value: f.spanName.trim() });
  if (f.model.trim()) filters.push({ field: "trace_models_used", operator: "contains", value: f.model.trim() });
  if (f.minDurationMs.trim()) filters.push({ field: "trace_duration_ms", operator: "gte", value: typed("numeric", f.minDurationMs) });
  return filters.length ? { logic: "AND", filters } : null;
}
