// Request-log search and autocomplete suggestions, on the shared filter compiler. Queries are raw
// SQL over D1 because the compiler emits numbered parameters (?N) that drizzle's builder cannot
// carry; every value is bound. Suggestions without a filter_group read the facet counts kept by
// POST /log-request (an index range, no GROUP BY over logs); with one they count the matching logs.
import { getTableName, sql as sqlOf } from "drizzle-orm";
import { d1Of, type Db } from "../db/client";
import { FACET_FIELDS, requestLogFacets, requestLogs, type FacetField } from "../db/schema";
import { col, columnNames } from "../db/sql";
import { compileRequestLogQuery, facetLookupsOf, indexed, indexedSql, isGroup, readsSearchIndex, SPAN_NAME, SqlParams, valueSources, type CompileContext, type Filter, type FilterGroup } from "../filters";
import { groupBy } from "../lib/collections";
import { toIso } from "../lib/time";
import { promptNames } from "./prompt-names";
import { runBatch } from "../db/batch";
import { LOGS_BY_IDS } from "./by-ids";
import { eachPeriod, type WorkspaceLogs } from "./periods";
import { awaitingMove, waitingIn } from "./layout-move";
import { filterSignalIds } from "./signal-names";

// The search's SQL is built as text (numbered, shared parameters): the tables' and columns' names from the schema.
const R = columnNames(requestLogs);
const F = columnNames(requestLogFacets);

export const SORT_COLUMNS = {
  request_start_time: `r.${R.requestStartTime}`,
  input_tokens: `r.${R.inputTokens}`,
  output_tokens: `r.${R.outputTokens}`,
  cost: `r.${R.price}`,
  latency_ms: `(r.${R.requestEndTime} - r.${R.requestStartTime})`,
  status: `r.${R.status}`,
} as const;
export type SortBy = keyof typeof SORT_COLUMNS;

export interface SearchInput {
  filter_group?: FilterGroup | null;
  q?: string | null;
  sort_by?: SortBy | null;
  sort_order?: "asc" | "desc" | null;
  page: number;
  per_page: number;
  include_prompt_name?: boolean | null;
  /** The first PREVIEW_CHARS of each log's input and output text (the console's result columns). */
  include_previews?: boolean | null;
}

/** How much of a log's input and output text a search item previews (include_previews). */
export const PREVIEW_CHARS = 160;

interface SearchRow {
  id: number;
  model: string;
  provider: string;
  api_type: string | null;
  input_tokens: number;
  output_tokens: number;
  price: number;
  request_start_time: number;
  request_end_time: number;
  tags: string;
  metadata: string;
  score: number;
  score_name: string | null;
  scores: string;
  group_id: number | null;
  status: string;
  error_type: string | null;
  prompt_id: number | null;
  prompt_version_number: number | null;
  prompt_version_id: number | null;
  prompt_name: string | null;
  created_at: number;
  trace_id: string | null;
  input_preview?: string;
  output_preview?: string;
}

const LOGS = getTableName(requestLogs);
const FACETS = getTableName(requestLogFacets);

/** The columns a search item is made of (searchItem). */
const PAGE_COLUMNS = `r.${R.id}, r.${R.model}, r.${R.provider}, r.${R.apiType}, r.${R.inputTokens}, r.${R.outputTokens}, r.${R.price}, r.${R.requestStartTime},
                r.${R.requestEndTime}, r.${R.tags}, r.${R.metadata}, r.${R.score}, r.${R.scoreName}, r.${R.scores}, r.${R.groupId}, r.${R.status}, r.${R.errorType}, r.${R.promptId},
                r.${R.promptVersionNumber}, r.${R.promptVersionId}, r.${R.promptName}, r.${R.createdAt}, r.${R.traceId}`;
const PREVIEW_COLUMNS = `, substr(r.${R.inputText}, 1, ${PREVIEW_CHARS}) AS input_preview, substr(r.${R.outputText}, 1, ${PREVIEW_CHARS}) AS output_preview`;
/** A page's columns: PAGE_COLUMNS, and the text previews when asked for (read only then: a log's text can be long). */
const pageColumns = (input: SearchInput) => (input.include_previews ? PAGE_COLUMNS + PREVIEW_COLUMNS : PAGE_COLUMNS);

/** A search's condition, order and count bound over one database, its parameters so far in `params`. */
function searchParts(workspaceId: number, input: SearchInput, estimate?: CompileContext["estimate"], signals?: CompileContext["signals"]) {
  const params = new SqlParams();
  const ws = params.add(workspaceId);
  const where = compileRequestLogQuery(input, { params, workspace: ws, estimate, signals });
  const desc = input.sort_order !== "asc";
  const sortExpr = SORT_COLUMNS[input.sort_by ?? "request_start_time"];
  const dir = desc ? "DESC" : "ASC";
  // The count stops after `bound` matches, so it reads at most that many index entries however many
  // logs match: exact up to SEARCH_COUNT_CAP (and always past the page asked for, so has_next is
  // right on any page), a lower bound beyond.
  const bound = Math.max(SEARCH_COUNT_CAP, input.page * input.per_page) + 1;
  return { params, where, desc, sortExpr, order: `${sortExpr} ${dir}, r.${R.id} ${dir}`, bound };
}

/**
 * The page and the bounded count of a search, as SQL and bound values: pure, so tests can EXPLAIN them.
 * `signals`: the ids of the signals its `signals` filters name (filterSignalIds).
 */
export function searchQueries(workspaceId: number, input: SearchInput, estimate?: CompileContext["estimate"], signals?: CompileContext["signals"]) {
  const { params, where, order, bound } = searchParts(workspaceId, input, estimate, signals);
  // The count binds exactly the parameters of the condition (a statement must use all it is given).
  const countParams = [...params.values];
  const limit = params.add(input.per_page);
  const offset = params.add((input.page - 1) * input.per_page);
  const idsFirst = `SELECT ${pageColumns(input)} FROM ${LOGS} AS r WHERE r.${R.id} IN (SELECT r.${R.id} FROM ${LOGS} AS r WHERE ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}) ORDER BY ${order}`;
  return {
    // Two plans of the same page (pagePlan chooses): `pageSql` sorts the matches with their wide
    // columns (a multi-index OR costs in proportion to the matches); `walkSql` chooses the page's ids
    // alone, which lets the planner walk the covering scan index in order and stop at the page: cheap
    // when many logs match, a walk of the whole workspace when few do (BENCHMARKS.md, "Issue 37
    // measured again on main" and "Search page plan per query").
    pageSql: `SELECT ${pageColumns(input)} FROM ${LOGS} AS r WHERE ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`,
    walkSql: idsFirst,
    pageParams: params.values,
    countSql: `SELECT count(*) AS n FROM (SELECT 1 FROM ${LOGS} AS r WHERE ${where} LIMIT ${bound})`,
    countParams,
    bound,
  };
}

/**
 * Whether a page is read by walking the scan index in order (walkSql) rather than by sorting every
 * match (pageSql), from the match count (at most the count's bound) and the workspace's logs in the
 * database: the walk reads about want × logs / matches entries before it has the page, at roughly a
 * thirtieth of the CPU a match costs the sort (measured at 1M logs: 122 ms to walk them all, 25 ms to
 * sort 4,000 matches). So the walk wins when matches² × 32 ≥ want × logs, and never when the page is
 * not full (the walk would reach the end of the workspace).
 */
export function walksScanIndex(matches: number, logs: number, want: number): boolean {
  return matches >= want && matches * matches * WALK_COST_RATIO >= want * logs;
}
const WALK_COST_RATIO = 32;

/** The number of the workspace's logs in a database, from its status facet counts (a few rows). */
const logsCounted = (workspaceId: number) =>
  sqlOf`SELECT coalesce(sum(${requestLogFacets.count}), 0) AS n FROM ${requestLogFacets} WHERE ${requestLogFacets.workspaceId} = ${workspaceId} AND ${requestLogFacets.field} = 'status' AND ${requestLogFacets.key} = ''`;

/** A log's place in a search's order: its sort value and id. */
interface SortKey {
  k: number | string;
  id: number;
}

/** The order of search and fill results as SQL gives it (sort value, then id), for merging several databases' results. */
export function sortKeyOrder(desc: boolean) {
  return (a: SortKey, b: SortKey) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.id - b.id) * (desc ? -1 : 1);
}

/**
 * One database's part of a search over several (pure): the sort keys of its first `want` matches,
 * only those that sort before `before` (the last key the page can still use, once the databases read
 * so far filled it), and its bounded count.
 */
export function searchKeysQueries(workspaceId: number, input: SearchInput, want: number, before: SortKey | null, estimate?: CompileContext["estimate"], signals?: CompileContext["signals"]) {
  const { params, where, desc, sortExpr, order, bound } = searchParts(workspaceId, input, estimate, signals);
  const countParams = [...params.values];
  let cond = where;
  if (before) {
    const [k, id] = [params.add(before.k), params.add(before.id)];
    // Before `before` in the order: a larger sort value when newest (largest) first, a smaller one when ascending.
    const cmp = desc ? ">" : "<";
    cond = `(${where}) AND (${sortExpr} ${cmp} ${k} OR (${sortExpr} = ${k} AND r.${R.id} ${cmp} ${id}))`;
  }
  return {
    keysSql: `SELECT ${sortExpr} AS k, r.${R.id} AS id FROM ${LOGS} AS r WHERE ${cond} ORDER BY ${order} LIMIT ${params.add(want)}`,
    keysParams: params.values,
    countSql: `SELECT count(*) AS n FROM (SELECT 1 FROM ${LOGS} AS r WHERE ${where} LIMIT ${bound})`,
    countParams,
    bound,
  };
}

/**
 * The statement asking whether `db` holds logs of the workspace the layout move has not reached yet,
 * when the search reads the index (they have no entry there until moved); none otherwise.
 */
const moveCheck = (input: SearchInput | SuggestInput, workspaceId: number) => (readsIndex(input) ? [awaitingMove(workspaceId)] : []);

/** Whether a search or a suggestion reads what a log gets from the layout move (its search entry, its extra_values). */
function readsIndex(input: SearchInput | SuggestInput): boolean {
  if (readsSearchIndex(input)) return true;
  // Keyed values suggested over a filter are read from the matching logs' rows, extra_values included
  // (NULL until moved); without a filter they are the facet counts, which count every log already.
  return "field" in input && (input.filter_group?.filters.length ?? 0) > 0 && !("column" in SOURCES[input.field]);
}

/** A search's page rows and its match count (at most `bound`) in one database: page and count in one batch. */
async function searchOne(logs: Db, workspaceId: number, input: SearchInput, signals: CompileContext["signals"]) {
  // Compiled statements (src/filters/): their numbered parameters are shared, which drizzle's sql cannot express.
  const d1 = d1Of(logs);
  const estimate = await filterEstimates(logs, workspaceId, input.filter_group);
  const q = searchQueries(workspaceId, input, estimate, signals);
  // The count first (with the workspace's log count and the move check, one batch), then the page by
  // the plan the count says is cheaper (walksScanIndex): one more round trip, against a page statement
  // that costs up to twice as much or a walk of every log when few match.
  const [count, total, moving] = await runBatch(logs, [d1.prepare(q.countSql).bind(...q.countParams), logsCounted(workspaceId), ...moveCheck(input, workspaceId)]);
  const counted = (count.results[0] as { n: number }).n;
  const walk = walksScanIndex(counted, (total.results[0] as { n: number }).n, input.page * input.per_page);
  // Nothing past the matches: no page to read.
  const rows = counted <= (input.page - 1) * input.per_page ? [] : (await d1.prepare(walk ? q.walkSql : q.pageSql).bind(...q.pageParams).all<SearchRow>()).results;
  return { page: rows, counted, bound: q.bound, waiting: moving !== undefined && waitingIn(moving) };
}

/**
 * A search over the workspace's periods, newest first: each database gives the sort keys of its
 * matches that can still be on the page (its first page × per_page, only those before the last key
 * of the page so far once it is full, so an older period whose logs all sort later costs one index
 * seek), merged in order; then the page's rows are read by id where they are. Counts add up.
 */
async function searchPeriods(logs: WorkspaceLogs, workspaceId: number, input: SearchInput, signals: CompileContext["signals"]) {
  const want = input.page * input.per_page;
  const cmp = sortKeyOrder(input.sort_order !== "asc");
  let merged: (SortKey & { db: Db })[] = [];
  let counted = 0;
  let bound = 0;
  let waiting = false;
  // The filters' estimates do not depend on the page so far: every database's at once.
  const estimates = await eachPeriod(logs, (db) => filterEstimates(db, workspaceId, input.filter_group));
  for (const [i, { db }] of logs.periods.entries()) {
    const d1 = d1Of(db);
    const q = searchKeysQueries(workspaceId, input, want, merged.length >= want ? merged[want - 1] : null, estimates[i], signals);
    const [keys, count, moving] = await runBatch(db, [d1.prepare(q.keysSql).bind(...q.keysParams), d1.prepare(q.countSql).bind(...q.countParams), ...moveCheck(input, workspaceId)]);
    counted += (count.results[0] as { n: number }).n;
    if (moving !== undefined && waitingIn(moving)) waiting = true;
    bound = q.bound;
    merged = [...merged, ...(keys.results as unknown as SortKey[]).map((k) => ({ ...k, db }))].sort(cmp).slice(0, want);
  }
  const onPage = merged.slice((input.page - 1) * input.per_page);
  const rows = new Map<number, SearchRow>();
  for (const [db, ids] of groupBy(onPage, (k) => k.db)) {
    const { results } = await d1Of(db)
      .prepare(`SELECT ${pageColumns(input)} FROM ${LOGS_BY_IDS("?1", "?2")}`)
      .bind(JSON.stringify(ids.map((k) => k.id)), workspaceId)
      .all<SearchRow>();
    for (const r of results) rows.set(r.id, r);
  }
  // A log archived between the two reads is no longer on the page.
  const page = onPage.flatMap((k) => rows.get(k.id) ?? []);
  return { page, counted: Math.min(counted, bound), bound, waiting };
}

/** `db` is the control database (current prompt names, with include_prompt_name), `logs` the workspace's log databases. */
export async function searchRequestLogs(db: Db, logs: WorkspaceLogs, workspaceId: number, input: SearchInput) {
  const signals = await filterSignalIds(logs.control, workspaceId, input.filter_group);
  const { page, counted, bound, waiting } = logs.spread ? await searchPeriods(logs, workspaceId, input, signals) : await searchOne(logs.current, workspaceId, input, signals);
  const capped = counted >= bound;
  const total = capped ? bound - 1 : counted;
  // When capped there is at least one match past `total`: one more page than total fills.
  const pages = Math.ceil(counted / input.per_page);
  const hasNext = input.page < pages;
  const hasPrev = input.page > 1;
  // The template's current name when the log links one; the logged name otherwise.
  const names = input.include_prompt_name ? await promptNames(db, workspaceId, page.map((r) => r.prompt_id)) : null;
  return {
    success: true as const,
    items: page.map((r) => searchItem(r, names)),
    page: input.page,
    pages,
    per_page: input.per_page,
    total,
    total_is_estimate: capped,
    has_next: hasNext,
    has_prev: hasPrev,
    next_num: hasNext ? input.page + 1 : null,
    prev_num: hasPrev ? input.page - 1 : null,
    // Logs from before an upgrade still waiting for the layout move are not found by the index yet.
    index_incomplete: waiting,
  };
}

/**
 * Past this many matches a search's `total` is a lower bound (`total_is_estimate: true`) instead of
 * an exact count: counting stops there, so a search over millions of logs does not read them all.
 */
export const SEARCH_COUNT_CAP = 10_000;

function searchItem(r: SearchRow, names: Map<number, string> | null) {
  const metadata = JSON.parse(r.metadata) as Record<string, string>;
  const latencyMs = r.request_end_time - r.request_start_time;
  return {
    id: r.id,
    engine: r.model,
    provider_type: r.provider,
    api_type: r.api_type,
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    tokens: r.input_tokens + r.output_tokens,
    price: r.price,
    request_start_time: toIso(r.request_start_time),
    request_end_time: toIso(r.request_end_time),
    latency: latencyMs / 1000,
    latency_ms: latencyMs,
    status: r.status,
    error_type: r.error_type,
    tags_array: JSON.parse(r.tags) as string[],
    metadata: Object.keys(metadata).length > 0 ? [metadata] : [],
    // Every named score (logged with the request or tracked since), by name.
    scores: Object.entries(JSON.parse(r.scores) as Record<string, number>)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, score]) => ({ name, score })),
    group_id: r.group_id,
    prompt_id: r.prompt_id,
    prompt_version_number: r.prompt_version_number,
    prompt_version_id: r.prompt_version_id,
    created_at: toIso(r.created_at),
    trace_id: r.trace_id,
    ...(names ? { prompt_name: (r.prompt_id !== null ? names.get(r.prompt_id) : undefined) ?? r.prompt_name } : {}),
    ...(r.input_preview !== undefined ? { input_preview: r.input_preview, output_preview: r.output_preview ?? "" } : {}),
  };
}

// ---- suggestions ----

/** The 13 suggestion fields of the interface: exactly the facet fields the log path counts. */
export const SUGGESTION_FIELDS = FACET_FIELDS;
export type SuggestionField = FacetField;

/** Fields whose values belong to one key, named by metadata_key. */
export const KEYED_FIELDS: ReadonlySet<SuggestionField> = new Set(["metadata_values", "output_values", "input_variable_values"]);

/** Where a field's values live in the logs: a column of request_logs, or a kind of its keyed search values. */
const SOURCES: Record<SuggestionField, { column: string } | { kind: string; on: "key" | "value" }> = {
  engine: { column: `r.${R.model}` },
  provider_type: { column: `r.${R.provider}` },
  status: { column: `r.${R.status}` },
  prompt_id: { column: `CAST(r.${R.promptId} AS TEXT)` },
  prompt: { column: `r.${R.promptName}` },
  tags: { kind: "tag", on: "value" },
  tool_names: { kind: "tool", on: "value" },
  metadata_keys: { kind: "metadata", on: "key" },
  output_keys: { kind: "output", on: "key" },
  input_variable_keys: { kind: "input_variable", on: "key" },
  metadata_values: { kind: "metadata", on: "value" },
  output_values: { kind: "output", on: "value" },
  input_variable_values: { kind: "input_variable", on: "value" },
  trace_id: { column: `r.${R.traceId}` },
  span_name: { column: SPAN_NAME },
};

export const SUGGESTION_LIMIT = { default: 50, max: 1000 } as const;

export interface SuggestInput {
  field: SuggestionField;
  prefix?: string;
  metadata_key?: string;
  prompt_id?: number;
  filter_group?: FilterGroup;
  limit: number;
}

/**
 * The suggestion query for an input: pure, so tests can EXPLAIN it. `only`: count just these values
 * (a search over several databases counts, in each, the values the others suggested).
 */
export function suggestionQuery(workspaceId: number, input: SuggestInput, only?: readonly string[], signals?: CompileContext["signals"]): { sql: string; params: (string | number)[] } {
  const params = new SqlParams();
  const ws = params.add(workspaceId);
  const field = params.add(input.field);
  const keyed = KEYED_FIELDS.has(input.field);
  const key = keyed ? params.add(indexed(input.metadata_key ?? "")) : null;
  const promptKey = input.field === "prompt" && input.prompt_id !== undefined ? params.add(String(input.prompt_id)) : null;
  // The facet key: the named key for *_values, the prompt id for prompt (all ids when none), '' otherwise.
  const facetKey = key ?? promptKey ?? (input.field === "prompt" ? null : params.add(""));
  const fold = input.prefix ? input.prefix.toLowerCase() : "";
  // A value whose lower case is itself has no value_fold (its own key range answers the prefix); the
  // others are found through the fold's index.
  const [low, high] = fold ? [params.add(fold), params.add(`${fold}\u{10FFFF}`)] : [];
  const prefixRange = fold
    ? `((f.${F.valueFold} IS NULL AND f.${F.value} >= ${low} AND f.${F.value} < ${high}) OR (f.${F.valueFold} >= ${low} AND f.${F.valueFold} < ${high}))`
    : null;
  const onlyIn = (expr: string) => (only ? ` AND ${expr} IN (SELECT value FROM json_each(${params.add(JSON.stringify(only))}))` : "");

  if (!input.filter_group || input.filter_group.filters.length === 0) {
    const conds = [`f.${F.workspaceId} = ${ws}`, `f.${F.field} = ${field}`];
    if (facetKey) conds.push(`f.${F.key} = ${facetKey}`);
    if (prefixRange) conds.push(prefixRange);
    const limit = params.add(input.limit);
    const onlyValues = onlyIn(`f.${F.value}`);
    // Without a prompt id, a prompt's name is counted across the ids it was logged under.
    const sql = facetKey
      ? `SELECT f.${F.value} AS suggestion, f.${F.count} AS n FROM ${FACETS} AS f WHERE ${conds.join(" AND ")}${onlyValues} ORDER BY n DESC, suggestion LIMIT ${limit}`
      : `SELECT f.${F.value} AS suggestion, sum(f.${F.count}) AS n FROM ${FACETS} AS f WHERE ${conds.join(" AND ")}${onlyValues} GROUP BY f.${F.value} ORDER BY n DESC, suggestion LIMIT ${limit}`;
    return { sql, params: params.values };
  }

  const where = compileRequestLogQuery({ filter_group: input.filter_group }, { params, workspace: ws, signals });
  const source = SOURCES[input.field];
  // The case-insensitive prefix goes through the facets' folded index, so it is Unicode-aware here too.
  const prefixIn = (expr: string) =>
    prefixRange
      ? ` AND ${expr} IN (SELECT f.${F.value} FROM ${FACETS} AS f WHERE f.${F.workspaceId} = ${ws} AND f.${F.field} = ${field}${facetKey ? ` AND f.${F.key} = ${facetKey}` : ""} AND ${prefixRange})`
      : "";
  let sql: string;
  if ("column" in source) {
    const promptCond = promptKey ? ` AND r.${R.promptId} = ${params.add(input.prompt_id!)}` : "";
    sql = `SELECT ${source.column} AS suggestion, count(*) AS n FROM ${LOGS} AS r
           WHERE ${where} AND ${source.column} IS NOT NULL${promptCond}${prefixIn(source.column)}${onlyIn(source.column)}
           GROUP BY suggestion ORDER BY n DESC, suggestion LIMIT ${params.add(input.limit)}`;
  } else {
    // The keyed values of the matching indexed logs, read from their rows (valueSources).
    const rows = valueSources(source.kind)
      .map((src) => {
        const side = source.on === "key" ? src.key : src.value;
        const keyCond = key ? ` AND ${src.key} = ${key}` : "";
        return `SELECT ${side} AS suggestion, r.${R.id} AS id FROM ${LOGS} AS r CROSS JOIN ${src.from}
           WHERE ${where} AND ${indexedSql(`r.${R.id}`)} AND ${src.where}${keyCond}${prefixIn(side)}${onlyIn(side)}`;
      })
      .join(" UNION ALL ");
    sql = `SELECT suggestion, count(DISTINCT id) AS n FROM (${rows}) GROUP BY suggestion ORDER BY n DESC, suggestion LIMIT ${params.add(input.limit)}`;
  }
  return { sql, params: params.values };
}

type Suggestions = { values: string[]; counts: Record<string, number>; index_incomplete: boolean };

async function suggestOne(logs: Db, workspaceId: number, input: SuggestInput, signals: CompileContext["signals"], only?: readonly string[]): Promise<{ rows: { suggestion: string; n: number }[]; waiting: boolean }> {
  // A compiled statement (src/filters/): its numbered parameters are shared, which drizzle's sql cannot express.
  const { sql, params } = suggestionQuery(workspaceId, input, only, signals);
  const statement = d1Of(logs).prepare(sql).bind(...params);
  const check = moveCheck(input, workspaceId);
  if (check.length === 0) return { rows: (await statement.all<{ suggestion: string; n: number }>()).results, waiting: false };
  const [rows, moving] = await runBatch(logs, [statement, ...check]);
  return { rows: rows.results as unknown as { suggestion: string; n: number }[], waiting: waitingIn(moving) };
}

/**
 * Suggested values with their counts. Over several periods: each database's top values, then each
 * counts the values the others suggested and it did not, so every value shown has its exact count
 * across periods; the top `limit` of those are the answer.
 */
export async function suggestRequestValues(logs: WorkspaceLogs, workspaceId: number, input: SuggestInput): Promise<Suggestions> {
  let rows: { suggestion: string; n: number }[];
  let waiting: boolean;
  const signals = await filterSignalIds(logs.control, workspaceId, input.filter_group);
  if (!logs.spread) ({ rows, waiting } = await suggestOne(logs.current, workspaceId, input, signals));
  else {
    const tops = await eachPeriod(logs, (db) => suggestOne(db, workspaceId, input, signals));
    waiting = tops.some((t) => t.waiting);
    const counts = new Map<string, number>();
    for (const top of tops) for (const r of top.rows) counts.set(r.suggestion, (counts.get(r.suggestion) ?? 0) + r.n);
    const rest = await eachPeriod(logs, (db, i) => {
      const had = new Set(tops[i].rows.map((r) => r.suggestion));
      const missing = [...counts.keys()].filter((v) => !had.has(v));
      return missing.length > 0 ? suggestOne(db, workspaceId, { ...input, limit: missing.length }, signals, missing) : Promise.resolve({ rows: [], waiting: false });
    });
    for (const more of rest) for (const r of more.rows) counts.set(r.suggestion, counts.get(r.suggestion)! + r.n);
    rows = [...counts]
      .map(([suggestion, n]) => ({ suggestion, n }))
      .sort((a, b) => b.n - a.n || (a.suggestion < b.suggestion ? -1 : a.suggestion > b.suggestion ? 1 : 0))
      .slice(0, input.limit);
  }
  return {
    values: rows.map((r) => r.suggestion),
    counts: Object.fromEntries(rows.map((r) => [r.suggestion, r.n])) as Record<string, number>,
    index_incomplete: waiting,
  };
}

/**
 * Facet counts for the side-row filters of a group's AND branches, so the compiler can drive from
 * the most selective one. One query, and only when some AND has two or more such filters.
 */
export async function filterEstimates(db: Db, workspaceId: number, group: FilterGroup | null | undefined): Promise<CompileContext["estimate"]> {
  if (!group) return undefined;
  const wanted = new Map<Filter, [string, string, string][]>();
  const visit = (g: FilterGroup) => {
    const leaves = g.filters.filter((f): f is Filter => !isGroup(f));
    const lookups = leaves.map((f) => [f, facetLookupsOf(f)] as const).filter(([, l]) => l !== null);
    if (g.logic === "AND" && lookups.length > 1) for (const [f, l] of lookups) wanted.set(f, l!);
    for (const f of g.filters) if (isGroup(f)) visit(f);
  };
  visit(group);
  if (wanted.size === 0) return undefined;
  const keys = [...new Set([...wanted.values()].flat().map((t) => JSON.stringify(t)))].slice(0, 5000);
  const results = await db.all<{ i: number; n: number }>(
    sqlOf`SELECT j.key AS i, f.${col(requestLogFacets.count)} AS n FROM json_each(${JSON.stringify(keys.map((k) => JSON.parse(k)))}) AS j
        JOIN ${requestLogFacets} AS f ON f.${col(requestLogFacets.workspaceId)} = ${workspaceId} AND f.${col(requestLogFacets.field)} = json_extract(j.value, '$[0]')
         AND f.${col(requestLogFacets.key)} = json_extract(j.value, '$[1]') AND f.${col(requestLogFacets.value)} = json_extract(j.value, '$[2]')`,
  );
  const counts = new Map(results.map((r) => [keys[r.i], r.n]));
  // A value no log carries counts 0: the best possible driver.
  return (f) => wanted.get(f)?.reduce((sum, t) => sum + (counts.get(JSON.stringify(t)) ?? 0), 0);
}
