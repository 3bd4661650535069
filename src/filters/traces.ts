// Pure: the filter group of trace analytics. Trace-level fields (trace_*) are values of a trace's row
// (alias t); span-level fields (span_*) of a span's row (alias s); both rows are built by the trace
// analytics query (src/logs/trace-analytics.ts), whose column names this table holds. Validation is
// parse.ts's, the operators' SQL compile.ts's; only the combination across spans is new here:
// AND / OR hold for a trace when each span-level filter is met by some span of it (not necessarily
// the same one), SPAN_AND / SPAN_OR when one and the same span meets all / any of their branches.
import { requestLogs, spans } from "../db/schema";
import { columnNames } from "../db/sql";
import { valueCondition, type SqlParams } from "./compile";
import type { FieldShape } from "./fields";
import { isGroup, parseFilterGroupOf, type Filter, type FilterGroup, type FilterIssue, type Scalar } from "./parse";

export const TRACE_LOGICS = ["AND", "OR", "SPAN_AND", "SPAN_OR"] as const;
export type TraceLogic = (typeof TRACE_LOGICS)[number];
export const TRACE_STATUSES = ["ok", "error"] as const;
export const SPAN_STATUSES = ["unset", "ok", "error"] as const;
export const SPAN_KINDS = ["unspecified", "internal", "server", "client", "producer", "consumer"] as const;
export const SPAN_TYPES = ["llm", "tool", "span"] as const;

export type Level = "trace" | "span";

/**
 * A trace filter field: its level, its shape for the parser, and its SQL over the rows. `sql` is the
 * value (t.* or s.*); for an array (a set of values a trace's spans carry) it is the element over a
 * span row s; for a nested field it is the span query's JSON column the key is looked up in.
 */
export type TraceFieldSpec = FieldShape & { level: Level; sql: string };

// The span query's tables, for the nested fields' JSON columns (sx: spans, rx: request_logs).
const S = columnNames(spans);
const R = columnNames(requestLogs);

export const TRACE_FILTER_FIELDS = {
  trace_id: { level: "trace", type: "string", sql: "t.trace_id" },
  trace_name: { level: "trace", type: "string", sql: "t.trace_name", nullable: true },
  trace_status: { level: "trace", type: "enum", values: TRACE_STATUSES, sql: "t.trace_status" },
  trace_start: { level: "trace", type: "datetime", sql: "t.trace_start" },
  trace_duration_ms: { level: "trace", type: "numeric", integer: false, sql: "t.trace_duration_ms" },
  trace_total_cost_usd: { level: "trace", type: "numeric", integer: false, sql: "t.trace_total_cost_usd" },
  trace_total_tokens: { level: "trace", type: "numeric", integer: true, sql: "t.trace_total_tokens" },
  trace_input_tokens: { level: "trace", type: "numeric", integer: true, sql: "t.trace_input_tokens" },
  trace_output_tokens: { level: "trace", type: "numeric", integer: true, sql: "t.trace_output_tokens" },
  trace_span_count: { level: "trace", type: "numeric", integer: true, sql: "t.trace_span_count" },
  trace_depth: { level: "trace", type: "numeric", integer: true, sql: "t.trace_depth" },
  trace_models_used: { level: "trace", type: "array", sql: "s.span_model" },
  trace_prompt_ids: { level: "trace", type: "array", sql: "CAST(s.span_prompt_id AS TEXT)" },
  trace_tool_names: { level: "trace", type: "array", sql: "s.span_tool_name" },
  trace_workflow_ids: { level: "trace", type: "array", sql: "s.span_workflow_id" },
  span_id: { level: "span", type: "string", sql: "s.span_id" },
  span_name: { level: "span", type: "string", sql: "s.span_name" },
  span_kind: { level: "span", type: "enum", values: SPAN_KINDS, sql: "s.span_kind" },
  span_status: { level: "span", type: "enum", values: SPAN_STATUSES, sql: "s.span_status" },
  span_type: { level: "span", type: "enum", values: SPAN_TYPES, sql: "s.span_type" },
  span_tool_name: { level: "span", type: "string", sql: "s.span_tool_name", nullable: true },
  span_model: { level: "span", type: "string", sql: "s.span_model", nullable: true },
  span_prompt_id: { level: "span", type: "numeric", integer: true, sql: "s.span_prompt_id", nullable: true },
  span_start: { level: "span", type: "datetime", sql: "s.span_start" },
  span_duration_ms: { level: "span", type: "numeric", integer: false, sql: "s.span_duration_ms" },
  span_cost_usd: { level: "span", type: "numeric", integer: false, sql: "s.span_cost_usd", nullable: true },
  span_tokens: { level: "span", type: "numeric", integer: true, sql: "s.span_tokens", nullable: true },
  span_input_tokens: { level: "span", type: "numeric", integer: true, sql: "s.span_input_tokens", nullable: true },
  span_output_tokens: { level: "span", type: "numeric", integer: true, sql: "s.span_output_tokens", nullable: true },
  span_attributes: { level: "span", type: "nested", sql: `sx.${S.attributes}` },
  span_resource: { level: "span", type: "nested", sql: `sx.${S.resource}` },
  span_input_variables: { level: "span", type: "nested", sql: `rx.${R.promptInputVariables}` },
} as const satisfies Record<string, TraceFieldSpec>;

export type TraceFilterField = keyof typeof TRACE_FILTER_FIELDS;
export type TraceFilter = Filter<TraceFilterField>;
export type TraceFilterGroup = FilterGroup<TraceFilterField, TraceLogic>;

const FIELDS: Record<TraceFilterField, TraceFieldSpec> = TRACE_FILTER_FIELDS;

export const levelOfField = (field: TraceFilterField): Level => FIELDS[field].level;

export type TraceParseResult = { ok: true; group: TraceFilterGroup } | { ok: false; issues: FilterIssue[] };

/** Validates a trace filter group: parse.ts's rules, and SPAN_AND / SPAN_OR groups holding span-level fields only. */
export function parseTraceFilterGroup(input: unknown): TraceParseResult {
  const parsed = parseFilterGroupOf(input, { fields: FIELDS, logics: TRACE_LOGICS });
  if (!parsed.ok) return parsed;
  const issues: FilterIssue[] = [];
  const visit = (g: TraceFilterGroup, path: (string | number)[], within: TraceLogic | null) => {
    const spanOnly = within ?? (g.logic === "SPAN_AND" || g.logic === "SPAN_OR" ? g.logic : null);
    g.filters.forEach((f, i) => {
      if (isGroup(f)) return visit(f, [...path, "filters", i], spanOnly);
      if (spanOnly && FIELDS[f.field].level === "trace") {
        issues.push({ path: [...path, "filters", i, "field"], rule: `${f.field} is a trace-level field; a ${spanOnly} group takes span-level (span_*) fields only, as it is met by one span` });
      }
    });
  };
  visit(parsed.group, [], null);
  return issues.length ? { ok: false, issues } : parsed;
}

/** Every field a group names. */
export function fieldsOfGroup(group: TraceFilterGroup | null | undefined): Set<TraceFilterField> {
  const out = new Set<TraceFilterField>();
  const visit = (g: TraceFilterGroup) => g.filters.forEach((f) => (isGroup(f) ? visit(f) : out.add(f.field)));
  if (group) visit(group);
  return out;
}

/** Bounds on the trace start that hold for every matching trace: the top-level AND's trace_start filters. */
export function traceStartBounds(group: TraceFilterGroup | null | undefined): { from: number | null; to: number | null } {
  let from: number | null = null;
  let to: number | null = null;
  const top = group && (group.logic === "AND" || group.filters.length === 1) ? group.filters : [];
  const low = (v: number) => (from = from === null ? v : Math.max(from, v));
  const high = (v: number) => (to = to === null ? v : Math.min(to, v));
  for (const f of top) {
    if (isGroup(f) || f.field !== "trace_start") continue;
    const v = f.value as number;
    if (f.operator === "between") {
      low((f.value as number[])[0]);
      high((f.value as number[])[1]);
    } else if (f.operator === "gt" || f.operator === "gte" || f.operator === "after") low(v);
    else if (f.operator === "lt" || f.operator === "lte" || f.operator === "before") high(v);
    else if (f.operator === "is") {
      low(v);
      high(v);
    }
  }
  return { from, to };
}

/** The compiled group: a condition over the rows, and the per-trace flags it reads. */
export interface CompiledTraceFilter {
  /** Over t (trace charts) or s and t (span charts). */
  where: string;
  /** Conditions over a span row s; the query keeps, per trace, whether any span met each, as t.f0, t.f1, … (1 or 0). */
  flags: string[];
  /**
   * Nested filters, met or not by each span: the span rows carry s.nv0, s.nv1, … = 1 or 0 by these
   * conditions over the raw span and log (sx, rx), so no attribute value is copied into them.
   */
  nested: string[];
}

/** Array operators as a condition on one element (met by some span) and whether the answer is its negation. */
const ARRAY_AS_ELEMENT: Record<string, { operator: "is" | "in" | "starts_with" | "is_not_null"; negate: boolean }> = {
  contains: { operator: "is", negate: false },
  not_contains: { operator: "is", negate: true },
  in: { operator: "in", negate: false },
  not_in: { operator: "in", negate: true },
  starts_with: { operator: "starts_with", negate: false },
  is_not_empty: { operator: "is_not_null", negate: false },
  is_empty: { operator: "is_not_null", negate: true },
};

/** Nested-field operators as the scalar operators on the key's value (absent: NULL), as request-log metadata filters mean them. */
const NESTED_AS_VALUE: Record<string, string> = {
  key_equals: "is",
  key_not_equals: "is_not",
  key_contains: "contains",
  in: "in",
  not_in: "not_in",
  is_null: "is_null",
  is_empty: "is_null",
  is_not_null: "is_not_null",
  is_not_empty: "is_not_null",
};

/**
 * Compiles a validated group for trace charts (a condition on each trace) or span charts (a condition
 * on each span, its trace's fields read from its trace: every group then concerns the one span, so
 * AND and SPAN_AND, OR and SPAN_OR, select the same spans).
 */
export function compileTraceFilter(group: TraceFilterGroup | null | undefined, level: Level, params: SqlParams): CompiledTraceFilter {
  const flags: string[] = [];
  const nested: string[] = [];
  const flag = (cond: string) => {
    flags.push(cond);
    return `t.f${flags.length - 1}`;
  };

  /** A leaf over the rows: trace fields over t, span fields over s. */
  const leaf = (f: TraceFilter): string => {
    const spec = FIELDS[f.field];
    switch (spec.type) {
      case "array": {
        const el = ARRAY_AS_ELEMENT[f.operator];
        const some = flag(valueCondition(spec.sql, true, { operator: el.operator, value: f.value }, params));
        return `${some} = ${el.negate ? 0 : 1}`;
      }
      case "nested": {
        // The value under the key, as text (numbers and booleans as their JSON text), NULL when absent.
        const key = params.add(f.nested_key!);
        const under = `(SELECT CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN NULL ELSE CAST(j.value AS TEXT) END FROM json_each(${spec.sql}) AS j WHERE j.key = ${key} LIMIT 1)`;
        const value = f.value === undefined ? undefined : Array.isArray(f.value) ? f.value.map(String) : (String(f.value) as Scalar);
        nested.push(valueCondition(under, true, { operator: NESTED_AS_VALUE[f.operator] as TraceFilter["operator"], value }, params));
        return `s.nv${nested.length - 1} = 1`;
      }
      default:
        return valueCondition(spec.sql, spec.nullable === true, f, params);
    }
  };

  /** The group over one span (and its trace). */
  const onSpan = (g: TraceFilterGroup): string => {
    if (g.filters.length === 0) return "1";
    const parts = g.filters.map((f) => (isGroup(f) ? onSpan(f) : leaf(f)));
    return parts.length === 1 ? parts[0] : `(${parts.join(g.logic === "OR" || g.logic === "SPAN_OR" ? " OR " : " AND ")})`;
  };

  /** The group over one trace: span-level parts become "some span meets it" flags. */
  const onTrace = (g: TraceFilterGroup): string => {
    if (g.logic === "SPAN_AND" || g.logic === "SPAN_OR") return `${flag(onSpan(g))} = 1`;
    if (g.filters.length === 0) return "1";
    const parts = g.filters.map((f) => (isGroup(f) ? onTrace(f) : FIELDS[f.field].level === "span" ? `${flag(leaf(f))} = 1` : leaf(f)));
    return parts.length === 1 ? parts[0] : `(${parts.join(g.logic === "OR" ? " OR " : " AND ")})`;
  };

  const where = !group ? "1" : level === "trace" ? onTrace(group) : onSpan(group);
  return { where, flags, nested };
}
