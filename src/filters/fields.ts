// The fields and operators of PromptLayer's structured filter group, and which operators each kind
// of field takes. Pure data: the parser validates against it and the compiler reads it.
import { getTableName } from "drizzle-orm";
import { AGENT_INTENTS, REQUEST_STATUSES, requestLogs, spans, USER_INTENTS, type IndexKind, type OutputFormat } from "../db/schema";
import { columnNames } from "../db/sql";

export const FILTER_OPERATORS = [
  "is",
  "is_not",
  "in",
  "not_in",
  "contains",
  "not_contains",
  "starts_with",
  "ends_with",
  "eq",
  "neq",
  "gt",
  "gte",
  "lt",
  "lte",
  "between",
  "before",
  "after",
  "is_true",
  "is_false",
  "is_empty",
  "is_not_empty",
  "is_null",
  "is_not_null",
  "key_equals",
  "key_not_equals",
  "key_contains",
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

// Columns of request_logs (alias r) and spans, their names from the schema.
const R = columnNames(requestLogs);
const S = columnNames(spans);

/** The name of the span a log was made from (a correlated lookup by its primary key). */
export const SPAN_NAME = `(SELECT s.${S.name} FROM ${getTableName(spans)} AS s WHERE s.${S.workspaceId} = r.${R.workspaceId} AND s.${S.traceId} = r.${R.traceId} AND s.${S.spanId} = r.${R.spanId})`;

export type FieldType = "string" | "enum" | "text" | "numeric" | "datetime" | "boolean" | "array" | "nested" | "score" | "signal";

/** A column of request_logs (alias r), as SQL built from constants only. */
interface ColumnField {
  column: string;
  nullable?: boolean;
}

export type FieldSpec =
  | ({ type: "string" } & ColumnField)
  | ({ type: "enum"; values: readonly string[] } & ColumnField)
  | ({ type: "text" } & ColumnField)
  | ({ type: "numeric"; integer: boolean } & ColumnField)
  | ({ type: "datetime" } & ColumnField)
  | { type: "boolean"; format: OutputFormat }
  /** `on`: whether the array's elements are the side rows' values (tags, tools) or their keys. */
  | { type: "array"; kind: IndexKind; on: "value" | "key" }
  /** `json`: the log column holding the object, for exact checks of values longer than the index keeps. */
  | { type: "nested"; kind: IndexKind; json: string }
  /** Named numbers (scores, redaction counts): a JSON object column of name → number; nested_key names one. */
  | { type: "score"; json: string }
  /** Signals' verdicts (signal_results, beside the log); nested_key names the signal. */
  | { type: "signal" };

export const FILTER_FIELDS = {
  pl_id: { type: "numeric", integer: true, column: `r.${R.id}` },
  prompt_id: { type: "numeric", integer: true, column: `r.${R.promptId}`, nullable: true },
  engine: { type: "string", column: `r.${R.model}` },
  provider_type: { type: "string", column: `r.${R.provider}` },
  input_text: { type: "text", column: `r.${R.inputText}` },
  output_text: { type: "text", column: `r.${R.outputText}` },
  prompt_version_number: { type: "numeric", integer: true, column: `r.${R.promptVersionNumber}`, nullable: true },
  input_tokens: { type: "numeric", integer: true, column: `r.${R.inputTokens}` },
  output_tokens: { type: "numeric", integer: true, column: `r.${R.outputTokens}` },
  cost: { type: "numeric", integer: false, column: `r.${R.price}` },
  latency_ms: { type: "numeric", integer: false, column: `(r.${R.requestEndTime} - r.${R.requestStartTime})` },
  request_start_time: { type: "datetime", column: `r.${R.requestStartTime}` },
  request_end_time: { type: "datetime", column: `r.${R.requestEndTime}` },
  status: { type: "enum", values: REQUEST_STATUSES, column: `r.${R.status}` },
  is_json: { type: "boolean", format: "json" },
  is_tool_call: { type: "boolean", format: "tool_call" },
  is_plain_text: { type: "boolean", format: "text" },
  tags: { type: "array", kind: "tag", on: "value" },
  metadata_keys: { type: "array", kind: "metadata", on: "key" },
  metadata: { type: "nested", kind: "metadata", json: `r.${R.metadata}` },
  tool_names: { type: "array", kind: "tool", on: "value" },
  output: { type: "nested", kind: "output", json: `CASE WHEN r.${R.outputFormat} = 'json' THEN trim(r.${R.outputText}) END` },
  output_keys: { type: "array", kind: "output", on: "key" },
  input_variables: { type: "nested", kind: "input_variable", json: `r.${R.promptInputVariables}` },
  input_variable_keys: { type: "array", kind: "input_variable", on: "key" },
  user_intent: { type: "enum", values: USER_INTENTS, column: `r.${R.userIntent}`, nullable: true },
  agent_intent: { type: "enum", values: AGENT_INTENTS, column: `r.${R.agentIntent}`, nullable: true },
  // Not in PromptLayer's list: the request group and the named scores the tracking calls add.
  group_id: { type: "numeric", integer: true, column: `r.${R.groupId}`, nullable: true },
  scores: { type: "score", json: `r.${R.scores}` },
  // How many values each redaction detector replaced (nested_key: the detector or custom pattern's name).
  redactions: { type: "score", json: `r.${R.redactions}` },
  // Logs made from spans: the trace, and the name of the span that made the log.
  trace_id: { type: "string", column: `r.${R.traceId}`, nullable: true },
  span_name: { type: "string", column: SPAN_NAME, nullable: true },
  // A/B releases: the release (ab_tests.id) and variant that served the log, null for every other log.
  ab_test_id: { type: "numeric", integer: true, column: `r.${R.abTestId}`, nullable: true },
  ab_variant: { type: "string", column: `r.${R.abVariant}`, nullable: true },
  // Signals' verdicts (docs/signals.md): nested_key names the signal (resolved to its id before compiling); is_null is "no verdict".
  signals: { type: "signal" },
} as const satisfies Record<string, FieldSpec>;

export type FilterField = keyof typeof FILTER_FIELDS;
export const FILTER_FIELD_NAMES = Object.keys(FILTER_FIELDS) as FilterField[];

const NULL_OPS: FilterOperator[] = ["is_null", "is_not_null"];

/** Operators each field type takes (nullable columns also take is_null / is_not_null). */
export const OPERATORS_BY_TYPE: Record<FieldType, readonly FilterOperator[]> = {
  string: ["is", "is_not", "in", "not_in", "contains", "not_contains", "starts_with", "ends_with"],
  enum: ["is", "is_not", "in", "not_in"],
  text: ["is", "is_not", "contains", "not_contains", "starts_with", "ends_with", "is_empty", "is_not_empty"],
  numeric: ["is", "is_not", "eq", "neq", "gt", "gte", "lt", "lte", "between", "in", "not_in"],
  datetime: ["is", "is_not", "before", "after", "gt", "gte", "lt", "lte", "between"],
  boolean: ["is", "is_not", "is_true", "is_false"],
  array: ["contains", "not_contains", "in", "not_in", "starts_with", "is_empty", "is_not_empty"],
  nested: ["key_equals", "key_not_equals", "key_contains", "in", "not_in", "is_null", "is_not_null", "is_empty", "is_not_empty"],
  score: ["is", "is_not", "eq", "neq", "gt", "gte", "lt", "lte", "between", "in", "not_in", "is_null", "is_not_null"],
  signal: ["is_true", "is_false", "is_null", "is_not_null"],
};

/**
 * What the parser needs of a field in any filter language: its type, an enum's values, whether a
 * number is whole, whether it may be null. Every FieldSpec is one; the trace fields are others.
 */
export type FieldShape =
  | { type: "string" | "text" | "datetime" | "boolean" | "array" | "nested" | "score" | "signal"; nullable?: boolean }
  | { type: "enum"; values: readonly string[]; nullable?: boolean }
  | { type: "numeric"; integer: boolean; nullable?: boolean };

export function operatorsFor(spec: FieldShape): readonly FilterOperator[] {
  const base = OPERATORS_BY_TYPE[spec.type];
  return "nullable" in spec && spec.nullable ? [...base, ...NULL_OPS] : base;
}

/** Each field and the operators it takes, one line per field: the reference shows it beside the filter's schema. */
export function operatorsByFieldText(fields: Record<string, FieldShape> = FILTER_FIELDS): string {
  return Object.entries(fields)
    .map(([f, spec]) => `${f}: ${operatorsFor(spec).join(", ")}`)
    .join("; ");
}

/** Operators that take no value (a value sent with them is ignored). */
export const UNARY_OPERATORS: ReadonlySet<FilterOperator> = new Set(["is_true", "is_false", "is_empty", "is_not_empty", ...NULL_OPS]);

/** Caps that keep a filter group's SQL within D1's limits (100 bound parameters, statement size). */
export const FILTER_LIMITS = {
  maxDepth: 5,
  maxFilters: 30,
  maxListItems: 5000,
  maxValueLength: 10_000,
  maxNestedKeyLength: 1024,
} as const;
