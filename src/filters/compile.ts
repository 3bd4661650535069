// Pure: compiles a validated filter group (parse.ts) to a parameterized SQL condition over
// request_logs (alias r) and its side table. Values and nested keys only ever travel as bound
// parameters; the only text spliced into SQL comes from fields.ts. Parameters are numbered (?N) and
// shared, so the workspace id is bound once; lists travel as one JSON parameter read with json_each,
// which keeps any group within D1's 100 bound parameters (SqlParams refuses to go past it).
import { getTableName } from "drizzle-orm";
import { REQUEST_LOGS_FTS, REQUEST_LOGS_FTS_COLUMNS, requestLogs, requestLogValues, signalResults } from "../db/schema";
import { columnNames } from "../db/sql";
import { ApiError } from "../lib/errors";
import { likePattern, longTextMatch, type TextMatch } from "../lib/query";
import { INDEX_VALUE_MAX, indexed } from "./indexed";
import { FILTER_FIELDS, type FieldSpec } from "./fields";
import { isGroup, type Filter, type FilterGroup, type Scalar } from "./parse";

/** D1 binds at most 100 parameters per statement. */
export const D1_MAX_PARAMS = 100;

const VALUES = getTableName(requestLogValues);
const R = columnNames(requestLogs);
const V = columnNames(requestLogValues);
const RESULTS = getTableName(signalResults);
const S = columnNames(signalResults);

/** Lists of at most this many values are bound one parameter a value, while the statement has room. */
const SHORT_LIST = 8;
const SHORT_LIST_PARAMS = 60;

export class SqlParams {
  readonly values: Scalar[] = [];
  private readonly seen = new Map<string, number>();

  /** The placeholder of a value; equal values share one. */
  add(value: Scalar): string {
    const id = `${typeof value}\u0000${value}`;
    let n = this.seen.get(id);
    if (n === undefined) {
      if (this.values.length >= D1_MAX_PARAMS) {
        throw new ApiError("validation_error", `filter_group: uses more than the ${D1_MAX_PARAMS} distinct values one query can carry; combine values with in / not_in`);
      }
      this.values.push(value);
      n = this.values.length;
      this.seen.set(id, n);
    }
    return `?${n}`;
  }

  /**
   * A list: a short one as one parameter per value, which lets SQLite answer an OR whose branches
   * each have an index with one index search per branch (a json_each list disables that and the
   * OR becomes a scan); a long one, or one that would crowd the 100 parameters, as one JSON array
   * read back with json_each.
   */
  list(values: Scalar[]): string {
    if (values.length > 0 && values.length <= SHORT_LIST && this.values.length + values.length <= SHORT_LIST_PARAMS) {
      return `(${values.map((v) => this.add(v)).join(", ")})`;
    }
    return `(SELECT value FROM json_each(${this.add(JSON.stringify(values))}))`;
  }
}

export { escapeLike } from "../lib/query";

export interface CompileContext {
  params: SqlParams;
  /** Placeholder of the workspace id (side-table lookups are keyed on it for their index). */
  workspace: string;
  /** How many logs a side-table filter matches, when known (facet counts): picks the driving lookup. */
  estimate?: (f: Filter) => number | undefined;
}

/** How a side-table condition is written: a list of log ids to drive from, or a per-log probe. */
type SideMode = "in" | "exists";

/** Filters that need a matching side row (or verdict): in an AND, one drives and the others probe. */
function needsSideRow(f: Filter): boolean {
  const type = FILTER_FIELDS[f.field].type;
  if (type === "signal") return f.operator !== "is_null";
  if (type === "array") return ["contains", "in", "starts_with", "is_not_empty"].includes(f.operator);
  if (type === "nested") return ["key_equals", "key_contains", "in", "is_not_null", "is_not_empty"].includes(f.operator);
  return false;
}

export function compileFilterGroup(group: FilterGroup, ctx: CompileContext): string {
  if (group.filters.length === 0) return "1";
  // In an AND, reading two large id lists to intersect them is the slow plan. The most selective
  // side-row filter (by the facet counts, when given) becomes the list SQLite drives from; the
  // others become index seeks per candidate log.
  let driver: Filter | undefined;
  if (group.logic === "AND") {
    const side = group.filters.filter((f): f is Filter => !isGroup(f) && needsSideRow(f));
    if (side.length > 1) {
      const cost = (f: Filter) => ctx.estimate?.(f) ?? Number.POSITIVE_INFINITY;
      driver = side.reduce((best, f) => (cost(f) < cost(best) ? f : best));
    }
  }
  const parts = group.filters.map((f) => {
    if (isGroup(f)) return compileFilterGroup(f, ctx);
    return compileFilter(f, ctx, driver && f !== driver && needsSideRow(f) ? "exists" : "in");
  });
  return parts.length === 1 ? parts[0] : `(${parts.join(group.logic === "OR" ? " OR " : " AND ")})`;
}

/** A text match: LIKE while its pattern fits D1's limit, instr/substr past it (same case rule). */
function textMatch(col: string, value: string, how: TextMatch, p: SqlParams): string {
  const pattern = likePattern(value, how);
  return pattern !== null ? `${col} LIKE ${p.add(pattern)} ESCAPE '\\'` : longTextMatch(col, p.add(value), how);
}

/**
 * A condition on one value (a column or an expression built from constants) for the operators of the
 * scalar field types (string, enum, text, numeric, datetime, and their is_null / is_not_null): the
 * one meaning of each operator, shared by every filter language. A nullable value's negations keep
 * the rows where it is NULL ("prompt_id is not 5" includes logs without a prompt).
 */
export function valueCondition(col: string, nullable: boolean, f: Pick<Filter<string>, "operator" | "value">, p: SqlParams): string {
  const one = () => p.add(f.value as Scalar);
  const not = (cond: string) => (nullable ? `(${col} IS NULL OR NOT ${cond})` : `NOT ${cond}`);
  switch (f.operator) {
    case "is":
    case "eq":
      return `${col} = ${one()}`;
    case "is_not":
    case "neq":
      return `${col} IS NOT ${one()}`;
    case "in":
      return `${col} IN ${p.list(f.value as Scalar[])}`;
    case "not_in":
      return not(`${col} IN ${p.list(f.value as Scalar[])}`);
    case "gt":
    case "after":
      return `${col} > ${one()}`;
    case "gte":
      return `${col} >= ${one()}`;
    case "lt":
    case "before":
      return `${col} < ${one()}`;
    case "lte":
      return `${col} <= ${one()}`;
    case "between": {
      const [low, high] = f.value as Scalar[];
      return `${col} BETWEEN ${p.add(low)} AND ${p.add(high)}`;
    }
    case "contains":
      return textMatch(col, String(f.value), "contains", p);
    case "not_contains":
      return not(textMatch(col, String(f.value), "contains", p));
    case "starts_with":
      return textMatch(col, String(f.value), "starts_with", p);
    case "ends_with":
      return textMatch(col, String(f.value), "ends_with", p);
    case "is_empty":
      return `${col} = ''`;
    case "is_not_empty":
      return `${col} <> ''`;
    case "is_null":
      return `${col} IS NULL`;
    case "is_not_null":
      return `${col} IS NOT NULL`;
  }
  // parse.ts only lets through operators listed for the field's type.
  throw new Error(`unreachable: ${f.operator} on a value`);
}

function compileFilter(f: Filter, ctx: CompileContext, mode: SideMode): string {
  const spec: FieldSpec = FILTER_FIELDS[f.field];
  const p = ctx.params;
  const one = () => p.add(f.value as Scalar);
  const match = (col: string, how: TextMatch) => textMatch(col, String(f.value), how, p);

  switch (spec.type) {
    case "string":
    case "enum":
    case "text":
    case "numeric":
    case "datetime":
      return valueCondition(spec.column, "nullable" in spec && spec.nullable === true, f, p);
    case "boolean": {
      const wanted = f.operator === "is_true" || (f.operator === "is" && f.value === true) || (f.operator === "is_not" && f.value === false);
      return `r.${R.outputFormat} ${wanted ? "=" : "<>"} '${spec.format}'`;
    }
    case "array": {
      // Tags and tools are side rows' values under key ''; *_keys are the side rows' keys.
      const [guard, elColumn] = spec.on === "value" ? [`v.${V.key} = '' AND `, `v.${V.value}`] : ["", `v.${V.key}`];
      const el = `${guard}${elColumn}`;
      const has = (cond: string) => sideRows(ctx, spec.kind, cond, mode);
      switch (f.operator) {
        case "contains":
          return has(`${el} = ${one()}`);
        case "not_contains":
          return `NOT ${has(`${el} = ${one()}`)}`;
        case "in":
          return has(`${el} IN ${p.list(f.value as Scalar[])}`);
        case "not_in":
          return `NOT ${has(`${el} IN ${p.list(f.value as Scalar[])}`)}`;
        case "starts_with":
          return has(`${guard}${match(elColumn, "starts_with")}`);
        case "is_empty":
          return `NOT ${has("1")}`;
        case "is_not_empty":
          return has("1");
      }
      break;
    }
    case "nested": {
      const key = p.add(indexed(f.nested_key!));
      const has = (cond: string) => sideRows(ctx, spec.kind, `v.${V.key} = ${key}${cond ? ` AND ${cond}` : ""}`, mode);
      const equals = () => {
        const value = String(f.value);
        const lookup = has(`v.${V.value} = ${p.add(indexed(value))}`);
        if (value.length <= INDEX_VALUE_MAX) return lookup;
        // The index keeps a long value's first characters: confirm the whole value on the log itself.
        const exact = `EXISTS (SELECT 1 FROM json_each(${spec.json}) AS j WHERE j.key = ${p.add(f.nested_key!)} AND CAST(j.value AS TEXT) = ${p.add(value)})`;
        return `(${lookup} AND ${exact})`;
      };
      switch (f.operator) {
        case "key_equals":
          return equals();
        case "key_not_equals":
          return `NOT ${equals()}`;
        case "key_contains":
          return has(match(`v.${V.value}`, "contains"));
        case "in":
          return has(`v.${V.value} IN ${p.list((f.value as Scalar[]).map((v) => indexed(String(v))))}`);
        case "not_in":
          return `NOT ${has(`v.${V.value} IN ${p.list((f.value as Scalar[]).map((v) => indexed(String(v))))}`)}`;
        case "is_null":
        case "is_empty":
          return `NOT ${has("")}`;
        case "is_not_null":
        case "is_not_empty":
          return has("");
      }
      break;
    }
    case "signal": {
      // The log's verdict of the signal named nested_key (its results carry the name): true or false;
      // no verdict (never judged, skipped, or judging failed) is is_null.
      const verdicts = (cond: string) => `FROM ${RESULTS} AS s WHERE s.${S.workspaceId} = ${ctx.workspace} AND s.${S.signalName} = ${p.add(f.nested_key!)} AND ${cond}`;
      const has = (cond: string) => (mode === "exists" ? `EXISTS (SELECT 1 ${verdicts(cond)} AND s.${S.requestId} = r.${R.id})` : `r.${R.id} IN (SELECT s.${S.requestId} ${verdicts(cond)})`);
      switch (f.operator) {
        case "is_true":
          return has(`s.${S.result} = 1`);
        case "is_false":
          return has(`s.${S.result} = 0`);
        case "is_not_null":
          return has(`s.${S.result} IN (0, 1)`);
        case "is_null":
          return `NOT EXISTS (SELECT 1 ${verdicts(`s.${S.result} IN (0, 1)`)} AND s.${S.requestId} = r.${R.id})`;
      }
      break;
    }
    case "score": {
      // The score named nested_key; a log without it matches only the negations and is_null.
      const name = p.add(f.nested_key!);
      const has = (cond: string) => `EXISTS (SELECT 1 FROM json_each(${spec.json}) AS s WHERE s.key = ${name}${cond ? ` AND s.value ${cond}` : ""})`;
      switch (f.operator) {
        case "is":
        case "eq":
          return has(`= ${one()}`);
        case "is_not":
        case "neq":
          return `NOT ${has(`= ${one()}`)}`;
        case "gt":
          return has(`> ${one()}`);
        case "gte":
          return has(`>= ${one()}`);
        case "lt":
          return has(`< ${one()}`);
        case "lte":
          return has(`<= ${one()}`);
        case "between": {
          const [low, high] = f.value as Scalar[];
          return has(`BETWEEN ${p.add(low)} AND ${p.add(high)}`);
        }
        case "in":
          return has(`IN ${p.list(f.value as Scalar[])}`);
        case "not_in":
          return `NOT ${has(`IN ${p.list(f.value as Scalar[])}`)}`;
        case "is_null":
          return `NOT ${has("")}`;
        case "is_not_null":
          return has("");
      }
      break;
    }
  }
  // parse.ts only lets through operators listed for the field's type.
  throw new Error(`unreachable: ${f.operator} on ${f.field}`);
}

/** Logs having a side row of this kind that meets cond, on the (workspace, kind, key, value, request_id) index. */
function sideRows(ctx: CompileContext, kind: string, cond: string, mode: SideMode): string {
  const rows = `FROM ${VALUES} AS v WHERE v.${V.workspaceId} = ${ctx.workspace} AND v.${V.kind} = '${kind}' AND ${cond}`;
  return mode === "exists" ? `EXISTS (SELECT 1 ${rows} AND v.${V.requestId} = r.${R.id})` : `r.${R.id} IN (SELECT v.${V.requestId} ${rows})`;
}

/** The facet counts (field, key, value) whose sum bounds how many logs a side-row filter matches. */
export function facetLookupsOf(f: Filter): [field: string, key: string, value: string][] | null {
  const spec = FILTER_FIELDS[f.field];
  const values = (f.operator === "in" ? (f.value as Scalar[]) : [f.value as Scalar]).map((v) => indexed(String(v)));
  // Array fields are facet fields of the same name; nested ones count under <kind>_values / <kind>_keys.
  if (spec.type === "array" && (f.operator === "contains" || f.operator === "in")) return values.map((v) => [f.field, "", v]);
  if (spec.type === "nested") {
    const key = indexed(f.nested_key!);
    if (f.operator === "key_equals" || f.operator === "in") return values.map((v) => [`${spec.kind}_values`, key, v]);
    if (f.operator === "is_not_null" || f.operator === "is_not_empty") return [[`${spec.kind}_keys`, "", key]];
  }
  return null;
}

/** The words of a free-text query as an FTS5 query: each word quoted and prefix-matched, all required. */
export function ftsQuery(q: string): string | null {
  const words = q.match(/[\p{L}\p{N}]+/gu)?.slice(0, 16) ?? [];
  if (words.length === 0) return null;
  return words.map((w) => `"${w}"*`).join(" ");
}

export interface RequestLogQuery {
  filter_group?: FilterGroup | null;
  q?: string | null;
}

/** The WHERE condition of a request-log query: the workspace, the filter group and the free text. */
export function compileRequestLogQuery(query: RequestLogQuery, ctx: CompileContext): string {
  const parts = [`r.${R.workspaceId} = ${ctx.workspace}`];
  if (query.filter_group && query.filter_group.filters.length > 0) parts.push(compileFilterGroup(query.filter_group, ctx));
  const fts = query.q ? ftsQuery(query.q) : null;
  if (fts) parts.push(`r.${R.id} IN (SELECT ${REQUEST_LOGS_FTS_COLUMNS.rowid} FROM ${REQUEST_LOGS_FTS} WHERE ${REQUEST_LOGS_FTS} MATCH ${ctx.params.add(fts)})`);
  return parts.join(" AND ");
}
