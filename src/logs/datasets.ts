// The log store's reads for datasets: which logs a fill copies, a dataset row's values built from a log
// inside the log database, and the id-list join every fill, preview and append reads logs through.
// The rows themselves are written by the dataset services, in the control database.
// Compiled statements: their numbered parameters are shared (src/filters/), which drizzle's sql cannot express.
import { compileRequestLogQuery, parseFilterGroup, SqlParams, type CompileContext, type Scalar } from "../filters";
import { and, eq } from "drizzle-orm";
import { d1Of, type Db } from "../db/client";
import { requestLogs } from "../db/schema";
import { MAX_LOGS_PER_JOB, type FillParams } from "../services/dataset-job-params";
import { filterEstimates, SORT_COLUMNS } from "./search";

const iso = (col: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${col} / 1000.0, 'unixepoch')`;

/** Request fields variables_to_parse may name (they win over an input variable of the same name). */
export const REQUEST_FIELDS: Record<string, string> = {
  request_log_id: "r.id",
  input: "json(r.input)",
  output: "r.output_text",
  input_text: "r.input_text",
  output_blueprint: "json(r.output)",
  engine: "r.model",
  model: "r.model",
  provider: "r.provider",
  provider_type: "r.provider",
  tags: "json(r.tags)",
  metadata: "json(r.metadata)",
  prompt_input_variables: "json(r.prompt_input_variables)",
  prompt_name: "r.prompt_name",
  prompt_id: "r.prompt_id",
  prompt_version_number: "r.prompt_version_number",
  input_tokens: "r.input_tokens",
  output_tokens: "r.output_tokens",
  price: "r.price",
  score: "r.score",
  status: "r.status",
  latency_ms: "(r.request_end_time - r.request_start_time)",
  request_start_time: iso("r.request_start_time"),
  request_end_time: iso("r.request_end_time"),
};

/** The SQL of one row's values: the named columns, or every input variable plus input and output. */
export function valuesSql(params: SqlParams, variables: string[] | null | undefined): string {
  if (!variables || variables.length === 0) {
    return `json_set(json(r.prompt_input_variables), '$.input', json(r.input), '$.output', r.output_text)`;
  }
  const pairs = variables.map((name) => {
    const key = params.add(name);
    const expr =
      REQUEST_FIELDS[name] ??
      `(SELECT CASE WHEN v.type IN ('object', 'array') THEN json(v.value) ELSE v.value END FROM json_each(r.prompt_input_variables) AS v WHERE v.key = ${key})`;
    return `${key}, ${expr}`;
  });
  return `json_object(${pairs.join(", ")})`;
}

/** The query of a filter-based fill (pure): run by the job, and compiled once when the fill is asked for. */
export function fillQuery(ws: number, p: FillParams, estimate?: CompileContext["estimate"]): { sql: string; params: Scalar[] } {
  let group = null;
  if (p.filter_group) {
    const parsed = parseFilterGroup(p.filter_group);
    // Validated when the request was accepted; a stored group that no longer parses is a bug, not bad input.
    if (!parsed.ok) throw new Error(`stored filter_group no longer parses: ${parsed.issues.map((i) => i.rule).join("; ")}`);
    group = parsed.group;
  }
  const params = new SqlParams();
  let where = compileRequestLogQuery({ filter_group: group, q: p.q }, { params, workspace: params.add(ws), estimate });
  if (p.max_log_id != null) where = `(${where}) AND r.id <= ${params.add(p.max_log_id)}`;
  const dir = p.sort_order === "asc" ? "ASC" : "DESC";
  const order = `${SORT_COLUMNS[p.sort_by ?? "request_start_time"]} ${dir}, r.id ${dir}`;
  const cap = Math.min(p.limit ?? MAX_LOGS_PER_JOB, MAX_LOGS_PER_JOB);
  return { sql: `SELECT r.id FROM request_logs AS r WHERE ${where} ORDER BY ${order} LIMIT ${params.add(cap)}`, params: params.values };
}

/** The ids a job copies, in dataset order: explicit ids as given, else the filter's matches in sort order. */
export async function matchingLogIds(db: Db, ws: number, p: FillParams): Promise<number[]> {
  const d1 = d1Of(db);
  const cap = Math.min(p.limit ?? MAX_LOGS_PER_JOB, MAX_LOGS_PER_JOB);
  if (p.request_log_ids && p.request_log_ids.length > 0) return p.request_log_ids.slice(0, cap);
  const group = p.filter_group ? parseFilterGroup(p.filter_group) : null;
  const estimate = await filterEstimates(db, ws, group?.ok ? group.group : null);
  const { sql, params } = fillQuery(ws, p, estimate);
  // A compiled statement (src/filters/): its numbered parameters are shared, which drizzle's sql cannot express.
  const { results } = await d1.prepare(sql).bind(...params).all<{ id: number }>();
  return results.map((r) => r.id);
}

/**
 * `FROM json_each(ids) CROSS JOIN request_logs`: the CROSS JOIN keeps the id list as the outer loop, so
 * each id is one primary-key lookup whatever statistics SQLite has (with a plain JOIN and no
 * sqlite_stat1 the planner may scan the workspace's logs once per chunk instead).
 */
export const LOGS_BY_IDS = (idsJson: string, ws: string) => `json_each(${idsJson}) AS j CROSS JOIN request_logs AS r ON r.id = j.value AND r.workspace_id = ${ws}`;

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

/**
 * The values dataset rows copy from the workspace's logs among `ids`, in the order of `ids` (ids that
 * are not the workspace's logs are skipped). The rows are written in the control database, which the
 * logs are not in: values cross over as text.
 */
export async function logValues(logs: Db, ws: number, ids: readonly number[], variables: string[] | null | undefined): Promise<LogValues[]> {
  if (ids.length === 0) return [];
  const params = new SqlParams();
  const values = valuesSql(params, variables);
  const { results } = await d1Of(logs)
    .prepare(
      `SELECT min(j.key) AS at, r.id, ${values} AS v, r.prompt_id AS promptId, r.prompt_version_number AS promptVersion
       FROM ${LOGS_BY_IDS(params.add(JSON.stringify(ids)), params.add(ws))} GROUP BY r.id ORDER BY at`,
    )
    .bind(...params.values)
    .all<LogValues>();
  return results;
}

/** A log of the workspace by id, or null. */
export async function findLog(db: Db, ws: number, id: number): Promise<{ id: number } | null> {
  const [log] = await db
    .select({ id: requestLogs.id })
    .from(requestLogs)
    .where(and(eq(requestLogs.workspaceId, ws), eq(requestLogs.id, id)))
    .limit(1);
  return log ?? null;
}

/** Explicit ids are counted in chunks: each chunk is one JSON parameter, well within D1's statement limits. */
const COUNT_CHUNK = 5000;

/**
 * What a fill would copy, without writing: how many logs match (explicit ids or the filter), and the
 * values of the first `rows` of them (limit and cap applied), as dataset rows.
 */
export async function previewLogs(
  db: Db,
  ws: number,
  input: FillParams,
  opts: { cap: number; rows: number; variables: string[] | null },
): Promise<{ matching: number; rows: Record<string, unknown>[] }> {
  const d1 = d1Of(db);
  const { cap } = opts;
  const explicit = input.request_log_ids && input.request_log_ids.length > 0 ? [...new Set(input.request_log_ids)] : null;
  let matching = 0;
  let ids: number[];
  if (explicit) {
    for (let i = 0; i < explicit.length; i += COUNT_CHUNK) {
      const row = await d1
        .prepare(`SELECT count(*) AS n FROM ${LOGS_BY_IDS("?1", "?2")}`)
        .bind(JSON.stringify(explicit.slice(i, i + COUNT_CHUNK)), ws)
        .first<{ n: number }>();
      matching += row!.n;
    }
    const wanted = Math.min(cap, opts.rows);
    const { results } = await d1
      .prepare(`SELECT r.id FROM ${LOGS_BY_IDS("?1", "?2")} ORDER BY j.key LIMIT ?3`)
      .bind(JSON.stringify(explicit.slice(0, cap)), ws, wanted)
      .all<{ id: number }>();
    ids = results.map((r) => r.id);
  } else {
    const parsed = input.filter_group ? parseFilterGroup(input.filter_group) : null;
    const group0 = parsed && parsed.ok ? parsed.group : null;
    const estimate = await filterEstimates(db, ws, group0);
    const count = new SqlParams();
    const where = compileRequestLogQuery({ filter_group: group0, q: input.q }, { params: count, workspace: count.add(ws), estimate });
    matching = (await d1.prepare(`SELECT count(*) AS n FROM request_logs AS r WHERE ${where}`).bind(...count.values).first<{ n: number }>())!.n;
    const q = fillQuery(ws, { ...input, limit: Math.min(cap, opts.rows) }, estimate);
    ids = (await d1.prepare(q.sql).bind(...q.params).all<{ id: number }>()).results.map((r) => r.id);
  }
  const rows = (await logValues(db, ws, ids, opts.variables)).map((r) => JSON.parse(r.v) as Record<string, unknown>);
  return { matching, rows };
}
