// Pure: compiles a validated filter group (parse.ts) to a parameterized SQL condition over
// request_logs (alias r) and its search index. Values and nested keys only ever travel as bound
// parameters; the only text spliced into SQL comes from fields.ts and the schema. Parameters are
// numbered (?N) and shared, so the workspace id is bound once; lists travel as one JSON parameter read
// with json_each, which keeps any group within D1's 100 bound parameters (SqlParams refuses to go past it).
//
// A filter on a log's keyed values (tags, tool names, metadata, input variables, output keys) is a
// lookup in the search index (request_log_search, its `keys` column): each value a log carries is the
// token "v" + the id of its request_log_facets row. The compiler writes the full-text query in SQL, each
// filter's term read from the facet rows it names (an unknown value has none: no log matches it), and
// the filters of one group meet in one query, so the index intersects them itself.
import { getTableName } from "drizzle-orm";
import { logIndexState, REQUEST_LOGS_FTS, REQUEST_LOGS_FTS_COLUMNS, requestLogFacets, requestLogs, requestLogUnindexed, signalResults } from "../db/schema";
import { columnNames } from "../db/sql";
import { ApiError } from "../lib/errors";
import { likePattern, longTextMatch, type TextMatch } from "../lib/query";
import { DERIVED_VALUE_MAX, INDEX_VALUE_MAX, indexed } from "./indexed";
import { FILTER_FIELDS, type FieldSpec } from "./fields";
import { isGroup, type Filter, type FilterGroup, type Scalar } from "./parse";

/** D1 binds at most 100 parameters per statement. */
export const D1_MAX_PARAMS = 100;

const R = columnNames(requestLogs);
const FACETS = getTableName(requestLogFacets);
const F = columnNames(requestLogFacets);
const STATE = getTableName(logIndexState);
const S = columnNames(logIndexState);
const UNINDEXED = getTableName(requestLogUnindexed);
const U = columnNames(requestLogUnindexed);
const RESULTS = getTableName(signalResults);
const SR = columnNames(signalResults);
const FTS = REQUEST_LOGS_FTS;
const FC = REQUEST_LOGS_FTS_COLUMNS;

/**
 * SQL: true while the log `id` (an expression) has its search entry, facet counts and daily totals: its
 * id is at most the database's watermark and it is not one of the logs from before it still waiting
 * (src/logs/indexing.ts keeps both). The one statement of the rule: the log store uses it too.
 */
export function indexedSql(id: string): string {
  return watermarkSql(id, S.indexedTo);
}

/** SQL: true while the log `id` (an expression) is counted in the daily totals too (the same rule, the watermark counted_to). */
export function countedSql(id: string): string {
  return watermarkSql(id, S.countedTo);
}

function watermarkSql(id: string, column: string): string {
  return `(${id} <= (SELECT st.${column} FROM ${STATE} AS st WHERE st.${S.id} = 1) AND NOT EXISTS (SELECT 1 FROM ${UNINDEXED} AS ix WHERE ix.${U.requestId} = ${id}))`;
}

/** Where a log's keyed values of one kind are: a table-valued source over the log `alias`, its condition, and the key and value it gives. */
export interface ValueSource {
  from: string;
  where: string;
  key: string;
  value: string;
}

/**
 * The sources of the keyed values of `kind` of the log `alias` (each row one value, source alias jv):
 * its tags or metadata column for the values that stand there as they are (DERIVED_VALUE_MAX), and its
 * extra_values (`extra`: that column, or an SQL expression in its place) for the rest.
 */
export function valueSources(kind: string, alias = "r", extra = `${alias}.${R.extraValues}`): ValueSource[] {
  const kept = { from: `json_each(${extra}) AS jv`, where: `jv.value ->> 0 = '${kind}'`, key: "jv.value ->> 1", value: "jv.value ->> 2" };
  const short = (x: string) => `length(${x}) <= ${DERIVED_VALUE_MAX}`;
  if (kind === "tag") return [{ from: `json_each(${alias}.${R.tags}) AS jv`, where: `jv.type = 'text' AND ${short("jv.value")}`, key: "''", value: "jv.value" }, kept];
  if (kind === "metadata") return [{ from: `json_each(${alias}.${R.metadata}) AS jv`, where: `jv.type = 'text' AND ${short("jv.key")} AND ${short("jv.value")}`, key: "jv.key", value: "jv.value" }, kept];
  return [kept];
}

/**
 * SQL text: every keyed value of the log `alias` as rows (kind, key, value) of a subquery, once each:
 * what its search entry's keys, its facet counts and every per-log reading of its values are made of.
 * The log is a table of an enclosing query, or, with `of`, one the subquery reads itself (its FROM
 * items and condition: a subquery in FROM cannot see a table beside it).
 */
export function logValuesSql(alias = "r", extra = `${alias}.${R.extraValues}`, of?: { from: string; where: string }): string {
  const [tags] = valueSources("tag", alias, extra);
  const [metadata] = valueSources("metadata", alias, extra);
  const from = (source: string) => (of ? `${of.from} CROSS JOIN ${source}` : source);
  const where = (cond: string) => (of ? `${of.where} AND ${cond}` : cond);
  return `(SELECT 'tag' AS kind, ${tags.key} AS key, ${tags.value} AS value FROM ${from(tags.from)} WHERE ${where(tags.where)}
    UNION SELECT 'metadata', ${metadata.key}, ${metadata.value} FROM ${from(metadata.from)} WHERE ${where(metadata.where)}
    UNION SELECT jv.value ->> 0, jv.value ->> 1, jv.value ->> 2 FROM ${from(`json_each(${extra}) AS jv`)} WHERE ${where("true")})`;
}

/** The token no facet row has (ids start at 1): a full-text query that matches nothing. */
const NO_MATCH = `'${FC.keys} : v0'`;

/** `r.id IN` (or NOT IN) the logs whose keyed values match `query`, an SQL expression of an FTS5 query over `keys` (NULL: none). */
export function keysMatch(query: string, negate = false): string {
  return `r.${R.id} ${negate ? "NOT IN" : "IN"} (SELECT ${FC.rowid} FROM ${FTS} WHERE ${FTS} MATCH coalesce('${FC.keys} : ' || ${query}, ${NO_MATCH}))`;
}

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
  /** Placeholder of the workspace id (facet lookups are keyed on it). */
  workspace: string;
  /** How many logs a keyed-value filter matches, when known (facet counts): accepted for its callers, the index intersects by itself. */
  estimate?: (f: Filter) => number | undefined;
  /**
   * The ids of the signals the group's `signals` filters name, by name (the control database's, which
   * the caller reads: src/logs/signal-names.ts); a name not in it is no signal of the workspace. Needed
   * only by a group with a `signals` filter.
   */
  signals?: ReadonlyMap<string, number>;
}

/** A compiled filter: SQL over the log row, or a term of the group's full-text query over `keys` (an SQL expression, NULL when it matches nothing). */
type Compiled = { sql: string } | { term: string };

export function compileFilterGroup(group: FilterGroup, ctx: CompileContext): string {
  if (group.filters.length === 0) return "1";
  const terms: string[] = [];
  const parts: string[] = [];
  for (const f of group.filters) {
    if (isGroup(f)) {
      parts.push(compileFilterGroup(f, ctx));
      continue;
    }
    const c = compileFilter(f, ctx);
    if ("term" in c) terms.push(c.term);
    else parts.push(c.sql);
  }
  // The keyed-value filters of the group meet in one full-text query: AND of terms is NULL (no match)
  // when any is; OR keeps those that match something.
  if (terms.length > 0) {
    const query = group.logic === "OR" ? `nullif(concat_ws(' OR ', ${terms.join(", ")}), '')` : terms.join(" || ' AND ' || ");
    parts.unshift(keysMatch(terms.length === 1 ? terms[0] : `'(' || ${query} || ')'`));
  }
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

function compileFilter(f: Filter, ctx: CompileContext): Compiled {
  const spec: FieldSpec = FILTER_FIELDS[f.field];
  const p = ctx.params;
  const one = () => p.add(f.value as Scalar);
  const sqlOf = (text: string): Compiled => ({ sql: text });

  switch (spec.type) {
    case "string":
    case "enum":
    case "text":
    case "numeric":
    case "datetime":
      return sqlOf(valueCondition(spec.column, "nullable" in spec && spec.nullable === true, f, p));
    case "boolean": {
      const wanted = f.operator === "is_true" || (f.operator === "is" && f.value === true) || (f.operator === "is_not" && f.value === false);
      return sqlOf(`r.${R.outputFormat} ${wanted ? "=" : "<>"} '${spec.format}'`);
    }
    case "array": {
      // Tags and tools are facet values of their field; *_keys fields' elements are keys, their facet values.
      const term = (cond: string) => facetTerm(ctx, f.field, p.add(""), cond);
      const not = (t: string) => sqlOf(keysMatch(t, true));
      switch (f.operator) {
        case "contains":
          return { term: term(`f.${F.value} = ${one()}`) };
        case "not_contains":
          return not(term(`f.${F.value} = ${one()}`));
        case "in":
          return { term: term(`f.${F.value} IN ${p.list(f.value as Scalar[])}`) };
        case "not_in":
          return not(term(`f.${F.value} IN ${p.list(f.value as Scalar[])}`));
        case "starts_with":
          return { term: term(textMatch(`f.${F.value}`, String(f.value), "starts_with", p)) };
        case "is_empty":
          return sqlOf(`NOT ${hasValues(spec.kind)}`);
        case "is_not_empty":
          return sqlOf(hasValues(spec.kind));
      }
      break;
    }
    case "nested": {
      const key = p.add(indexed(f.nested_key!));
      const value = (cond: string) => facetTerm(ctx, `${spec.kind}_values`, key, cond);
      const hasKey = () => facetTerm(ctx, `${spec.kind}_keys`, p.add(""), `f.${F.value} = ${key}`);
      const equals = (negate: boolean): Compiled => {
        const v = String(f.value);
        const lookup = value(`f.${F.value} = ${p.add(indexed(v))}`);
        if (v.length <= INDEX_VALUE_MAX) return negate ? sqlOf(keysMatch(lookup, true)) : { term: lookup };
        // The index keeps a long value's first characters: confirm the whole value on the log itself.
        const exact = `EXISTS (SELECT 1 FROM json_each(${spec.json}) AS j WHERE j.key = ${p.add(f.nested_key!)} AND CAST(j.value AS TEXT) = ${p.add(v)})`;
        return sqlOf(`${negate ? "NOT " : ""}(${keysMatch(lookup)} AND ${exact})`);
      };
      const list = () => `f.${F.value} IN ${p.list((f.value as Scalar[]).map((v) => indexed(String(v))))}`;
      switch (f.operator) {
        case "key_equals":
          return equals(false);
        case "key_not_equals":
          return equals(true);
        case "key_contains":
          return { term: value(textMatch(`f.${F.value}`, String(f.value), "contains", p)) };
        case "in":
          return { term: value(list()) };
        case "not_in":
          return sqlOf(keysMatch(value(list()), true));
        case "is_null":
        case "is_empty":
          return sqlOf(keysMatch(hasKey(), true));
        case "is_not_null":
        case "is_not_empty":
          return { term: hasKey() };
      }
      break;
    }
    case "signal": {
      // The log's verdict of the signal named nested_key, read from the results beside the log by the
      // signal's id (results carry no name) through their (workspace, signal, result) index. No verdict
      // (never judged, skipped, or judging failed) is is_null. A name that is no signal of the workspace
      // (never made, deleted, renamed) has no verdicts: is_true, is_false and is_not_null match no log,
      // is_null every log.
      if (!ctx.signals) throw new Error("a signals filter compiled without the workspace's signal ids (CompileContext.signals)");
      const id = ctx.signals.get(f.nested_key!);
      const verdicts = (cond: string) => `FROM ${RESULTS} AS s WHERE s.${SR.workspaceId} = ${ctx.workspace} AND s.${SR.signalId} = ${p.add(id!)} AND ${cond}`;
      const has = (cond: string) => sqlOf(id === undefined ? "0" : `r.${R.id} IN (SELECT s.${SR.requestId} ${verdicts(cond)})`);
      switch (f.operator) {
        case "is_true":
          return has(`s.${SR.result} = 1`);
        case "is_false":
          return has(`s.${SR.result} = 0`);
        case "is_not_null":
          return has(`s.${SR.result} IN (0, 1)`);
        case "is_null":
          return sqlOf(id === undefined ? "1" : `NOT EXISTS (SELECT 1 ${verdicts(`s.${SR.result} IN (0, 1)`)} AND s.${SR.requestId} = r.${R.id})`);
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
          return sqlOf(has(`= ${one()}`));
        case "is_not":
        case "neq":
          return sqlOf(`NOT ${has(`= ${one()}`)}`);
        case "gt":
          return sqlOf(has(`> ${one()}`));
        case "gte":
          return sqlOf(has(`>= ${one()}`));
        case "lt":
          return sqlOf(has(`< ${one()}`));
        case "lte":
          return sqlOf(has(`<= ${one()}`));
        case "between": {
          const [low, high] = f.value as Scalar[];
          return sqlOf(has(`BETWEEN ${p.add(low)} AND ${p.add(high)}`));
        }
        case "in":
          return sqlOf(has(`IN ${p.list(f.value as Scalar[])}`));
        case "not_in":
          return sqlOf(`NOT ${has(`IN ${p.list(f.value as Scalar[])}`)}`);
        case "is_null":
          return sqlOf(`NOT ${has("")}`);
        case "is_not_null":
          return sqlOf(has(""));
      }
      break;
    }
  }
  // parse.ts only lets through operators listed for the field's type.
  throw new Error(`unreachable: ${f.operator} on ${f.field}`);
}

/**
 * SQL: the full-text term of the facet rows of `field` and `key` (a placeholder) that meet `cond` (over
 * alias f): "(v12 OR v40 …)", NULL when there is none.
 */
function facetTerm(ctx: CompileContext, field: string, key: string, cond: string): string {
  return `(SELECT '(' || group_concat('v' || f.${F.id}, ' OR ') || ')' FROM ${FACETS} AS f WHERE f.${F.workspaceId} = ${ctx.workspace} AND f.${F.field} = '${field}' AND f.${F.key} = ${key} AND ${cond})`;
}

/**
 * SQL: the log is indexed and has keyed values of this kind (read from its row: valueSources); a log
 * still unindexed has none yet, as for every lookup above.
 */
function hasValues(kind: string): string {
  const any = valueSources(kind).map((v) => `EXISTS (SELECT 1 FROM ${v.from} WHERE ${v.where})`);
  return `(${indexedSql(`r.${R.id}`)} AND (${any.join(" OR ")}))`;
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

/**
 * Whether a request-log query reads the search index (request_log_search): free-text words, or a filter
 * on a log's keyed values (tags, tool names, metadata, input variables, output keys; every operator,
 * the negations and is_empty too, which read the index or extra_values). A query that does not reads
 * only the log rows' own columns, which every log has from its write.
 */
export function readsSearchIndex(query: RequestLogQuery): boolean {
  const inGroup = (g: FilterGroup): boolean =>
    g.filters.some((f) => (isGroup(f) ? inGroup(f) : FILTER_FIELDS[f.field].type === "array" || FILTER_FIELDS[f.field].type === "nested"));
  return (query.q ? ftsQuery(query.q) !== null : false) || (query.filter_group ? inGroup(query.filter_group) : false);
}

/** The WHERE condition of a request-log query: the workspace, the filter group and the free text. */
export function compileRequestLogQuery(query: RequestLogQuery, ctx: CompileContext): string {
  const parts = [`r.${R.workspaceId} = ${ctx.workspace}`];
  if (query.filter_group && query.filter_group.filters.length > 0) parts.push(compileFilterGroup(query.filter_group, ctx));
  const fts = query.q ? ftsQuery(query.q) : null;
  // The words are looked for in the texts only (the keys column holds tokens of its own).
  if (fts) parts.push(`r.${R.id} IN (SELECT ${FC.rowid} FROM ${FTS} WHERE ${FTS} MATCH ${ctx.params.add(`{${FC.inputText} ${FC.outputText}} : (${fts})`)})`);
  return parts.join(" AND ");
}
