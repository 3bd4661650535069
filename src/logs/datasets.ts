// The log store's reads for datasets: which logs a fill copies, a dataset row's values read from a log
// (scalars built in SQL, blueprints decoded here), and the id-list join every fill, preview and append
// reads logs through. The rows themselves are written by the dataset services, in the control database.
// Compiled statements: their numbered parameters are shared (src/filters/), which drizzle's sql cannot express.
import { compileRequestLogQuery, parseFilterGroup, SqlParams, type CompileContext, type Scalar } from "../filters";
import { and, eq, getTableName } from "drizzle-orm";
import { d1Of, type Db } from "../db/client";
import { requestLogs } from "../db/schema";
import { columnNames } from "../db/sql";
import { MAX_LOGS_PER_JOB, type FillParams } from "./fill-params";
import { filterEstimates, SORT_COLUMNS, sortKeyOrder } from "./search";
import { filterSignalIds } from "./signal-names";
import { eachPeriod, type WorkspaceLogs } from "./periods";
import { markSql } from "./readers";
import { decodeBlueprints, type StoredLogParts } from "./row-codec";
import { LOGS_BY_IDS } from "./by-ids";
import { readyForSnapshot } from "./layout-move";

const LOGS = getTableName(requestLogs);
const R = columnNames(requestLogs);
const iso = (col: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${col} / 1000.0, 'unixepoch')`;

/**
 * Request fields variables_to_parse may name (they win over an input variable of the same name), as
 * SQL over the log row. `input` and `output_blueprint` are the blueprints, which may be stored
 * compressed (row-codec.ts): SQL leaves a placeholder there, which logValues replaces with the
 * decoded JSON.
 */
export const REQUEST_FIELDS: Record<string, string> = {
  request_log_id: `r.${R.id}`,
  input: "NULL",
  output: `r.${R.outputText}`,
  input_text: `r.${R.inputText}`,
  output_blueprint: "NULL",
  engine: `r.${R.model}`,
  model: `r.${R.model}`,
  provider: `r.${R.provider}`,
  provider_type: `r.${R.provider}`,
  tags: `json(r.${R.tags})`,
  metadata: `json(r.${R.metadata})`,
  prompt_input_variables: `json(r.${R.promptInputVariables})`,
  prompt_name: `r.${R.promptName}`,
  prompt_id: `r.${R.promptId}`,
  prompt_version_number: `r.${R.promptVersionNumber}`,
  input_tokens: `r.${R.inputTokens}`,
  output_tokens: `r.${R.outputTokens}`,
  price: `r.${R.price}`,
  score: `r.${R.score}`,
  status: `r.${R.status}`,
  latency_ms: `(r.${R.requestEndTime} - r.${R.requestStartTime})`,
  request_start_time: iso(`r.${R.requestStartTime}`),
  request_end_time: iso(`r.${R.requestEndTime}`),
};

/** Fields of REQUEST_FIELDS that are blueprints, each with the blueprint that goes in its place. */
const BLUEPRINT_FIELDS = { input: "input", output_blueprint: "output" } as const;

type BlueprintField = keyof typeof BLUEPRINT_FIELDS;

/**
 * The SQL of one row's values: the named columns, or every input variable plus input and output. The
 * blueprint fields are `blueprints`' SQL (a placeholder), NULL without it.
 */
export function valuesSql(params: SqlParams, variables: string[] | null | undefined, blueprints?: Record<BlueprintField, string>): string {
  const field = (name: string) => (blueprints && name in BLUEPRINT_FIELDS ? blueprints[name as BlueprintField] : REQUEST_FIELDS[name]);
  if (!variables || variables.length === 0) {
    return `json_set(json(r.${R.promptInputVariables}), '$.input', ${field("input")}, '$.output', r.${R.outputText})`;
  }
  const pairs = variables.map((name) => {
    const key = params.add(name);
    const expr =
      field(name) ??
      `(SELECT CASE WHEN v.type IN ('object', 'array') THEN json(v.value) ELSE v.value END FROM json_each(r.${R.promptInputVariables}) AS v WHERE v.key = ${key})`;
    return `${key}, ${expr}`;
  });
  return `json_object(${pairs.join(", ")})`;
}

/** The blueprint fields a row's values carry, by the variables asked for. */
function blueprintKeys(variables: string[] | null | undefined): BlueprintField[] {
  if (!variables || variables.length === 0) return ["input"];
  return (Object.keys(BLUEPRINT_FIELDS) as BlueprintField[]).filter((k) => variables.includes(k));
}

/** The text a blueprint field's placeholder has in the values SQL builds (a JSON string, nothing to escape). */
const placeholderOf = (nonce: string, field: BlueprintField) => `pe-blueprint-${nonce}-${field}`;

/**
 * The statement logValues reads one page of ids with (pure): the values built in SQL with a
 * placeholder string for each blueprint field (unique by `nonce`), and the stored blueprints when
 * the values carry them.
 */
export function logValuesSql(ws: number, ids: readonly number[], variables: string[] | null | undefined, nonce = "0"): { sql: string; params: Scalar[] } {
  const params = new SqlParams();
  const blueprints = { input: params.add(placeholderOf(nonce, "input")), output_blueprint: params.add(placeholderOf(nonce, "output_blueprint")) };
  const values = valuesSql(params, variables, blueprints);
  const stored = blueprintKeys(variables).length > 0 ? `, r.${R.input}, r.${R.output}, r.${R.parameters}, r.${R.body}, r.${R.inputText} AS inputText, r.${R.outputText} AS outputText` : "";
  const from = LOGS_BY_IDS(params.add(JSON.stringify(ids)), params.add(ws));
  return {
    sql: `SELECT r.${R.id}, ${values} AS v, r.${R.promptId} AS promptId, r.${R.promptVersionNumber} AS promptVersion${stored} FROM ${from} ORDER BY j.key`,
    params: params.values,
  };
}

/** Ids read per statement by logValues at most. */
const VALUES_PAGE = 500;

/**
 * What one logValues statement may bring back, in stored bytes weighed as below: a row carries its
 * values and its blueprints, each up to a log's size, so pages are cut by size, not only by count.
 */
const VALUES_PAGE_BYTES = 4 * 1024 * 1024;

/**
 * The workspace's ids among `ids` (in order, repeats kept) cut into pages of at most VALUES_PAGE ids
 * and, but for a page of one, VALUES_PAGE_BYTES. A row's weight comes from its stored sizes alone
 * (octet_length reads a record's header, not its text): the texts and variables twice (they are in
 * the values and in the dictionary), the JSON columns once, a body eight times (what it holds beyond
 * the texts compresses about that well, or better).
 */
async function valuePages(db: Db, ws: number, ids: readonly number[]): Promise<number[][]> {
  const pages: number[][] = [];
  let page: number[] = [];
  let bytes = 0;
  for (let at = 0; at < ids.length; at += COUNT_CHUNK) {
    const { results } = await d1Of(db)
      .prepare(
        `SELECT r.${R.id}, octet_length(r.${R.input}) + octet_length(r.${R.output}) + octet_length(r.${R.parameters}) + 8 * coalesce(octet_length(r.${R.body}), 0)
           + 2 * (octet_length(r.${R.inputText}) + octet_length(r.${R.outputText}) + octet_length(r.${R.promptInputVariables})) AS n
         FROM ${LOGS_BY_IDS("?1", "?2")} ORDER BY j.key`,
      )
      .bind(JSON.stringify(ids.slice(at, at + COUNT_CHUNK)), ws)
      .all<{ id: number; n: number }>();
    for (const r of results) {
      if (page.length > 0 && (page.length >= VALUES_PAGE || bytes + r.n > VALUES_PAGE_BYTES)) {
        pages.push(page);
        page = [];
        bytes = 0;
      }
      page.push(r.id);
      bytes += r.n;
    }
  }
  if (page.length > 0) pages.push(page);
  return pages;
}

interface ValuesRow extends Partial<StoredLogParts> {
  id: number;
  v: string;
  promptId: number | null;
  promptVersion: number | null;
}

/**
 * The dataset-row values of the workspace's logs among `ids`, as JSON text, in the order of `ids`
 * (another workspace's ids, or unknown ones, are skipped; an id listed twice comes once, at its first
 * place), with the prompt (version) each log records. The rows are written in the control database,
 * which the logs are not in: values cross over as text. SQL builds
 * the values as it always did, with a placeholder string where a blueprint goes; the blueprints,
 * which may be stored compressed, are decoded here and their JSON put in the placeholders' place, so
 * the text is what json(r.input) and json(r.output) made of the plain JSON columns. The placeholder
 * carries a random nonce, so no logged value can be taken for it.
 */
export async function logValues(logs: WorkspaceLogs, ws: number, ids: readonly number[], variables: string[] | null | undefined): Promise<LogValues[]> {
  const first = new Map<number, number>();
  ids.forEach((id, i) => {
    if (!first.has(id)) first.set(id, i);
  });
  const out: LogValues[] = [];
  for (const [db, mine] of await logs.byDatabase([...first.keys()])) out.push(...(await valuesIn(db, ws, mine, first, variables)));
  // Each database answered its ids in order; together, in the order asked.
  return out.sort((a, b) => a.at - b.at);
}

/** logValues for the ids of one database (`first`: each id's index in the ids asked for). */
async function valuesIn(db: Db, ws: number, ids: number[], first: Map<number, number>, variables: string[] | null | undefined): Promise<LogValues[]> {
  const d1 = d1Of(db);
  const keys = blueprintKeys(variables);
  const nonce = crypto.randomUUID();
  const out: LogValues[] = [];
  for (const page of await valuePages(db, ws, ids)) {
    const q = logValuesSql(ws, page, variables, nonce);
    const { results } = await d1
      .prepare(q.sql)
      .bind(...q.params)
      .all<ValuesRow>();
    for (const row of results) {
      let v = row.v;
      if (keys.length > 0) {
        const blueprints = decodeBlueprints(row as StoredLogParts);
        for (const k of keys) v = v.split(JSON.stringify(placeholderOf(nonce, k))).join(JSON.stringify(blueprints[BLUEPRINT_FIELDS[k]]));
      }
      out.push({ at: first.get(row.id)!, id: row.id, v, promptId: row.promptId, promptVersion: row.promptVersion });
    }
  }
  return out;
}

/**
 * The query of a filter-based fill (pure): run by the job, and compiled once when the fill is asked for.
 * `signals`: the ids of the signals its filter group names (filterSignalIds).
 */
export function fillQuery(ws: number, p: FillParams, signals: CompileContext["signals"], estimate?: CompileContext["estimate"], withSortKey = false): { sql: string; params: Scalar[] } {
  let group = null;
  if (p.filter_group) {
    const parsed = parseFilterGroup(p.filter_group);
    // Validated when the request was accepted; a stored group that no longer parses is a bug, not bad input.
    if (!parsed.ok) throw new Error(`stored filter_group no longer parses: ${parsed.issues.map((i) => i.rule).join("; ")}`);
    group = parsed.group;
  }
  const params = new SqlParams();
  let where = compileRequestLogQuery({ filter_group: group, q: p.q }, { params, workspace: params.add(ws), estimate, signals });
  if (p.max_log_id != null) where = `(${where}) AND ${markSql(p.max_log_id, params)}`;
  const dir = p.sort_order === "asc" ? "ASC" : "DESC";
  const sortExpr = SORT_COLUMNS[p.sort_by ?? "request_start_time"];
  const order = `${sortExpr} ${dir}, r.${R.id} ${dir}`;
  const cap = Math.min(p.limit ?? MAX_LOGS_PER_JOB, MAX_LOGS_PER_JOB);
  const columns = withSortKey ? `r.${R.id}, ${sortExpr} AS k` : `r.${R.id}`;
  return { sql: `SELECT ${columns} FROM ${LOGS} AS r WHERE ${where} ORDER BY ${order} LIMIT ${params.add(cap)}`, params: params.values };
}

/**
 * The ids a job copies, in dataset order: explicit ids as given, else the filter's matches in sort
 * order, taken once every log written so far is indexed (a snapshot misses none, however recent).
 */
export async function matchingLogIds(logs: WorkspaceLogs, ws: number, p: FillParams): Promise<number[]> {
  const cap = Math.min(p.limit ?? MAX_LOGS_PER_JOB, MAX_LOGS_PER_JOB);
  if (p.request_log_ids && p.request_log_ids.length > 0) return p.request_log_ids.slice(0, cap);
  await readyForSnapshot(logs);
  const group = p.filter_group ? parseFilterGroup(p.filter_group) : null;
  const filter = group?.ok ? group.group : null;
  const signals = await filterSignalIds(logs.control, ws, filter);
  // A compiled statement (src/filters/): its numbered parameters are shared, which drizzle's sql cannot express.
  const read = async (db: Db, withSortKey: boolean) => {
    const { sql, params } = fillQuery(ws, p, signals, await filterEstimates(db, ws, filter), withSortKey);
    return (await d1Of(db).prepare(sql).bind(...params).all<{ id: number; k: number | string }>()).results;
  };
  if (!logs.spread) return (await read(logs.current, false)).map((r) => r.id);
  // Every period's first matches, merged in sort order, the first `cap` of them.
  const order = sortKeyOrder(p.sort_order !== "asc");
  const merged = (await eachPeriod(logs, (db) => read(db, true))).flat().sort(order);
  return merged.slice(0, cap).map((r) => r.id);
}

/** A log's values as a dataset row holds them, and the prompt (version) the log records. */
export interface LogValues {
  /** The log's index in the ids asked for (the first, when an id is listed twice). */
  at: number;
  id: number;
  /** The row's values, as JSON text. */
  v: string;
  promptId: number | null;
  promptVersion: number | null;
}

/** A log of the workspace by id, or null. */
export async function findLog(logs: WorkspaceLogs, ws: number, id: number): Promise<{ id: number } | null> {
  const db = await logs.holding(id);
  if (!db) return null;
  const [log] = await db
    .select({ id: requestLogs.id })
    .from(requestLogs)
    .where(and(eq(requestLogs.workspaceId, ws), eq(requestLogs.id, id)))
    .limit(1);
  return log ?? null;
}

/** Explicit ids are counted in chunks: each chunk is one JSON parameter, well within D1's statement limits. */
const COUNT_CHUNK = 5000;

/** The workspace's logs among `ids`, in their order (at most `limit` of them), read `COUNT_CHUNK` ids at a time where they are. */
async function existingIds(logs: WorkspaceLogs, ws: number, ids: readonly number[], limit = Infinity): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < ids.length && out.length < limit; i += COUNT_CHUNK) {
    const chunk = ids.slice(i, i + COUNT_CHUNK);
    const found = new Set<number>();
    for (const [db, mine] of await logs.byDatabase(chunk)) {
      const { results } = await d1Of(db)
        .prepare(`SELECT r.${R.id} FROM ${LOGS_BY_IDS("?1", "?2")}`)
        .bind(JSON.stringify(mine), ws)
        .all<{ id: number }>();
      for (const r of results) found.add(r.id);
    }
    out.push(...chunk.filter((id) => found.has(id)));
  }
  return out.slice(0, limit);
}

/**
 * What a fill would copy, without writing: how many logs match (explicit ids or the filter), and the
 * values of the first `rows` of them (limit and cap applied), as dataset rows.
 */
export async function previewLogs(
  logs: WorkspaceLogs,
  ws: number,
  input: FillParams,
  opts: { cap: number; rows: number; variables: string[] | null },
): Promise<{ matching: number; rows: Record<string, unknown>[] }> {
  const { cap } = opts;
  const explicit = input.request_log_ids && input.request_log_ids.length > 0 ? [...new Set(input.request_log_ids)] : null;
  let matching = 0;
  let ids: number[];
  if (explicit) {
    matching = (await existingIds(logs, ws, explicit)).length;
    ids = await existingIds(logs, ws, explicit.slice(0, cap), Math.min(cap, opts.rows));
  } else {
    const parsed = input.filter_group ? parseFilterGroup(input.filter_group) : null;
    const group0 = parsed && parsed.ok ? parsed.group : null;
    const signals = await filterSignalIds(logs.control, ws, group0);
    const counts = await eachPeriod(logs, async (db) => {
      const count = new SqlParams();
      const where = compileRequestLogQuery({ filter_group: group0, q: input.q }, { params: count, workspace: count.add(ws), estimate: await filterEstimates(db, ws, group0), signals });
      return (await d1Of(db).prepare(`SELECT count(*) AS n FROM ${LOGS} AS r WHERE ${where}`).bind(...count.values).first<{ n: number }>())!.n;
    });
    matching = counts.reduce((a, b) => a + b, 0);
    ids = await matchingLogIds(logs, ws, { ...input, request_log_ids: null, limit: Math.min(cap, opts.rows) });
  }
  const rows = (await logValues(logs, ws, ids, opts.variables)).map((r) => JSON.parse(r.v) as Record<string, unknown>);
  return { matching, rows };
}
