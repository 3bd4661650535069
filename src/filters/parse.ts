// Pure: validates a structured filter group (any JSON value) against the fields, operators and value
// types of fields.ts, returning the typed group or every problem with its path and rule. Nothing here
// touches SQL; compile.ts only ever sees a group this function accepted. The same rules serve other
// filter languages over their own field tables and logics (trace analytics: src/filters/traces.ts).
import { parseTimestamp } from "../lib/time";
import { FILTER_FIELDS, FILTER_LIMITS, FILTER_OPERATORS, operatorsFor, UNARY_OPERATORS, type FieldShape, type FilterField, type FilterOperator } from "./fields";
import { isObj } from "../lib/obj";

export type Scalar = string | number;

/** A filter after validation: values normalized (timestamps to epoch ms, nested values to strings). */
export interface Filter<F extends string = FilterField> {
  field: F;
  operator: FilterOperator;
  /** Absent for unary operators; a list for in/not_in; [low, high] for between. */
  value?: Scalar | boolean | Scalar[];
  nested_key?: string;
}

export interface FilterGroup<F extends string = FilterField, L extends string = "AND" | "OR"> {
  logic: L;
  filters: (Filter<F> | FilterGroup<F, L>)[];
}

export interface FilterIssue {
  path: (string | number)[];
  rule: string;
}

export type ParseResult<F extends string = FilterField, L extends string = "AND" | "OR"> = { ok: true; group: FilterGroup<F, L> } | { ok: false; issues: FilterIssue[] };

/** A filter language: its fields and the logics its groups take (the first is the default). */
export interface FilterLanguage<F extends string, L extends string> {
  fields: Record<F, FieldShape>;
  logics: readonly [L, ...L[]];
}

export function isGroup<F extends string, L extends string>(f: Filter<F> | FilterGroup<F, L>): f is FilterGroup<F, L> {
  return "filters" in f;
}


const describe = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`);

/** "a, b and c" (or "a, b or c") */
const listText = (items: readonly string[], conjunction = "and") =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} ${conjunction} ${items[items.length - 1]}`;

const REQUEST_LOG_FILTERS: FilterLanguage<FilterField, "AND" | "OR"> = { fields: FILTER_FIELDS, logics: ["AND", "OR"] };

export function parseFilterGroup(input: unknown): ParseResult {
  return parseFilterGroupOf(input, REQUEST_LOG_FILTERS);
}

/** The same rules over another language's fields and logics. */
export function parseFilterGroupOf<F extends string, L extends string>(input: unknown, language: FilterLanguage<F, L>): ParseResult<F, L> {
  const FIELDS: Record<string, FieldShape> = language.fields;
  const nestedFields = Object.keys(FIELDS).filter((f) => FIELDS[f].type === "nested" || FIELDS[f].type === "score" || FIELDS[f].type === "signal");
  const issues: FilterIssue[] = [];
  let leaves = 0;

  const group = (raw: unknown, path: (string | number)[], depth: number): FilterGroup<F, L> | null => {
    if (!isObj(raw)) {
      issues.push({ path, rule: `must be a filter group object, got ${describe(raw)}` });
      return null;
    }
    if (depth > FILTER_LIMITS.maxDepth) {
      issues.push({ path, rule: `groups nest at most ${FILTER_LIMITS.maxDepth} levels deep` });
      return null;
    }
    const unknownKeys = Object.keys(raw).filter((k) => k !== "logic" && k !== "filters");
    if (unknownKeys.length > 0) issues.push({ path, rule: `has unknown keys: ${unknownKeys.join(", ")}` });
    let logic: L = language.logics[0];
    if (raw.logic !== undefined && raw.logic !== null) {
      if ((language.logics as readonly unknown[]).includes(raw.logic)) logic = raw.logic as L;
      else issues.push({ path: [...path, "logic"], rule: `must be ${listText(language.logics, "or")}` });
    }
    if (!Array.isArray(raw.filters)) {
      issues.push({ path: [...path, "filters"], rule: raw.filters === undefined ? "is required" : "must be an array" });
      return null;
    }
    const filters: (Filter<F> | FilterGroup<F, L>)[] = [];
    raw.filters.forEach((item, i) => {
      const at = [...path, "filters", i];
      const parsed = isObj(item) && "filters" in item && !("field" in item) ? group(item, at, depth + 1) : filter(item, at);
      if (parsed) filters.push(parsed);
    });
    return { logic, filters };
  };

  const filter = (raw: unknown, path: (string | number)[]): Filter<F> | null => {
    if (!isObj(raw)) {
      issues.push({ path, rule: `must be a filter object or a filter group, got ${describe(raw)}` });
      return null;
    }
    if (++leaves > FILTER_LIMITS.maxFilters) {
      if (leaves === FILTER_LIMITS.maxFilters + 1) issues.push({ path, rule: `a filter group holds at most ${FILTER_LIMITS.maxFilters} filters` });
      return null;
    }
    const unknownKeys = Object.keys(raw).filter((k) => !["field", "operator", "value", "nested_key"].includes(k));
    if (unknownKeys.length > 0) issues.push({ path, rule: `has unknown keys: ${unknownKeys.join(", ")}` });
    if (typeof raw.field !== "string" || !Object.hasOwn(FIELDS, raw.field)) {
      issues.push({ path: [...path, "field"], rule: raw.field === undefined ? "is required" : `must be one of ${Object.keys(FIELDS).join(", ")}` });
      return null;
    }
    const field = raw.field as F;
    const spec = FIELDS[field];
    if (typeof raw.operator !== "string" || !(FILTER_OPERATORS as readonly string[]).includes(raw.operator)) {
      issues.push({ path: [...path, "operator"], rule: raw.operator === undefined ? "is required" : `must be one of ${FILTER_OPERATORS.join(", ")}` });
      return null;
    }
    const operator = raw.operator as FilterOperator;
    const allowed = operatorsFor(spec);
    if (!allowed.includes(operator)) {
      issues.push({ path: [...path, "operator"], rule: `${operator} does not apply to ${field} (${spec.type}); use one of ${allowed.join(", ")}` });
      return null;
    }

    const out: Filter<F> = { field, operator };
    const nestedKey = raw.nested_key;
    if (spec.type === "nested" || spec.type === "score" || spec.type === "signal") {
      if (typeof nestedKey !== "string" || nestedKey.length === 0) {
        issues.push({ path: [...path, "nested_key"], rule: `is required for ${field} (the key within it to filter on)` });
        return null;
      }
      if (nestedKey.length > FILTER_LIMITS.maxNestedKeyLength) {
        issues.push({ path: [...path, "nested_key"], rule: `must be at most ${FILTER_LIMITS.maxNestedKeyLength} characters` });
        return null;
      }
      out.nested_key = nestedKey;
    } else if (nestedKey !== undefined && nestedKey !== null) {
      issues.push({ path: [...path, "nested_key"], rule: `only applies to ${listText(nestedFields)}, not ${field}` });
      return null;
    }

    if (UNARY_OPERATORS.has(operator)) return out;
    const value = valueFor(spec, field, operator, raw.value, [...path, "value"]);
    if (value === undefined) return null;
    out.value = value;
    return out;
  };

  const valueFor = (spec: FieldShape, field: F, op: FilterOperator, v: unknown, path: (string | number)[]): Filter["value"] | undefined => {
    const fail = (rule: string) => {
      issues.push({ path, rule });
      return undefined;
    };
    if (v === undefined || v === null) return fail(`is required for ${op}`);

    // One scalar of the field's type, normalized.
    const scalar = (x: unknown, at: string): Scalar | undefined => {
      const where = at ? ` (${at})` : "";
      switch (spec.type) {
        case "numeric":
        case "score": {
          if (typeof x !== "number" || !Number.isFinite(x)) return fail(`must be a number for ${field}${where}, got ${describe(x)}`);
          if (spec.type === "numeric" && spec.integer && !Number.isInteger(x)) return fail(`must be an integer for ${field}${where}`);
          return x;
        }
        case "datetime": {
          const t = parseTimestamp(x);
          if (!t.ok) return fail(`${t.reason} for ${field}${where}`);
          return t.ms;
        }
        case "enum": {
          if (typeof x !== "string" || !spec.values.includes(x)) return fail(`must be one of ${spec.values.join(", ")} for ${field}${where}`);
          return x;
        }
        case "nested": {
          // Nested values are indexed as text; numbers and booleans match their JSON text.
          if (typeof x === "number" || typeof x === "boolean") return JSON.stringify(x);
          if (typeof x !== "string") return fail(`must be a string, number or boolean for ${field}${where}, got ${describe(x)}`);
          if (x.length > FILTER_LIMITS.maxValueLength) return fail(`must be at most ${FILTER_LIMITS.maxValueLength} characters`);
          return x;
        }
        default: {
          if (typeof x !== "string") return fail(`must be a string for ${field}${where}, got ${describe(x)}`);
          if (x.length > FILTER_LIMITS.maxValueLength) return fail(`must be at most ${FILTER_LIMITS.maxValueLength} characters`);
          return x;
        }
      }
    };

    if (op === "in" || op === "not_in") {
      if (!Array.isArray(v)) return fail(`must be an array for ${op}, got ${describe(v)}`);
      if (v.length === 0) return fail(`must hold at least one value for ${op}`);
      if (v.length > FILTER_LIMITS.maxListItems) return fail(`must hold at most ${FILTER_LIMITS.maxListItems} values`);
      const out: Scalar[] = [];
      for (let i = 0; i < v.length; i++) {
        const s = scalar(v[i], `item ${i}`);
        if (s === undefined) return undefined;
        out.push(s);
      }
      return out;
    }
    if (op === "between") {
      if (!Array.isArray(v) || v.length !== 2) return fail(`must be [low, high] for between`);
      const low = scalar(v[0], "low");
      const high = scalar(v[1], "high");
      if (low === undefined || high === undefined) return undefined;
      if (low > high) return fail("low must not be above high");
      return [low, high];
    }
    if (spec.type === "boolean") {
      if (typeof v !== "boolean") return fail(`must be true or false for ${field}, got ${describe(v)}`);
      return v;
    }
    if (Array.isArray(v)) return fail(`must be a single value for ${op}; use in / not_in for a list`);
    return scalar(v, "");
  };

  const result = group(input, [], 1);
  if (!result || issues.length > 0) return { ok: false, issues: issues.length ? issues : [{ path: [], rule: "is not a valid filter group" }] };
  return { ok: true, group: result };
}
