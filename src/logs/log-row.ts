// Pure: what a log is made from (RequestLogInput) and the one place a request_logs row is made, for
// both ways a log is written: POST /log-request and the SDK's tracking (write.ts), one row by a
// prepared INSERT, and the logs made from spans (spans.ts), many rows as JSON read by
// `INSERT … SELECT … FROM json_each(?)`. The row type holds every column a new log sets, each
// required, and the JSON form's columns come from the drizzle schema: so a new column of request_logs
// fails the compiler here until the row sets it, and both paths store it.
import { getTableColumns, sql, type SQL } from "drizzle-orm";
import { requestLogs, type RequestStatus } from "../db/schema";
import type { AuthContext } from "../lib/auth-context";
import type { LogAb } from "../prompts";
import { extraValuesOf, indexRowsOf, searchColumnsOf, toolsOf } from "./index-rows";
import { encodeBlueprints, hexOf } from "./row-codec";

/** A validated logged request (defaults applied, times in epoch milliseconds). */
export interface RequestLogInput {
  provider: string;
  model: string;
  api_type?: string | null;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  parameters: Record<string, unknown>;
  tags: string[];
  metadata: Record<string, string>;
  prompt_name?: string | null;
  prompt_id?: number | null;
  prompt_version_number?: number | null;
  prompt_input_variables: Record<string, unknown>;
  input_tokens: number;
  output_tokens: number;
  price: number;
  function_name: string;
  score: number;
  score_name?: string | null;
  /** The request group (request_groups.id, already checked to be the workspace's). */
  group_id?: number | null;
  status: RequestStatus;
  error_type?: string | null;
  error_message?: string | null;
  request_start_time: number;
  request_end_time: number;
  /** The span the call ran in (track-request's span_id); the log learns its trace when the span arrives. */
  span_id?: string | null;
  /** How many values each redaction detector replaced (logs/redaction.ts sets it; null: none). */
  redactions?: Record<string, number> | null;
}

/** The columns the database sets itself: the id, the insert time and the revision its triggers bump. */
const SET_BY_DB = ["id", "createdAt", "revision"] as const;

/** A new request_logs row: every column but those the database sets, none left out. */
export type NewRequestLogRow = Required<Omit<typeof requestLogs.$inferInsert, (typeof SET_BY_DB)[number]>>;

/** The prompt a log is linked to, as its caller resolved it (each path has its own precedence). */
export interface PromptLink {
  name: string | null;
  id: number | null;
  versionNumber: number | null;
  versionId: number | null;
  /** The A/B release variant that served the version (prompts/releases.ts abOfLog), when one did. */
  ab?: LogAb | null;
}

/** Where the log was made: the trace and span of a span's log, the span track-request named, or neither. */
export interface LogPlace {
  traceId: string | null;
  spanId: string | null;
}

/**
 * The row of a new log: its blueprints stored (row-codec.ts) with the search columns derived from them,
 * and the keyed search values its tags and metadata do not give as they stand (index-rows.ts).
 */
export function requestLogRow(auth: AuthContext, input: RequestLogInput, prompt: PromptLink, at: LogPlace): NewRequestLogRow {
  const search = searchColumnsOf(input);
  const extraValues = extraValuesOf(
    indexRowsOf({
      tags: input.tags,
      metadata: input.metadata,
      prompt_input_variables: input.prompt_input_variables,
      tools: toolsOf(input),
      outputText: search.outputText,
    }),
  );
  const stored = encodeBlueprints(input, search);
  return {
    workspaceId: auth.workspaceId,
    provider: input.provider,
    model: input.model,
    apiType: input.api_type ?? null,
    input: stored.input,
    output: stored.output,
    parameters: stored.parameters,
    body: stored.body,
    tags: input.tags,
    metadata: input.metadata,
    promptName: prompt.name,
    promptId: prompt.id,
    promptVersionNumber: prompt.versionNumber,
    promptVersionId: prompt.versionId,
    promptInputVariables: input.prompt_input_variables,
    inputTokens: input.input_tokens,
    outputTokens: input.output_tokens,
    price: input.price,
    functionName: input.function_name,
    score: input.score,
    scoreName: input.score_name ?? null,
    scores: initialScores(input),
    groupId: input.group_id ?? null,
    status: input.status,
    errorType: input.error_type ?? null,
    errorMessage: input.error_message ?? null,
    // Whole milliseconds: OTLP times arrive in nanoseconds; log-request's are whole already.
    requestStartTime: Math.round(input.request_start_time),
    requestEndTime: Math.round(input.request_end_time),
    createdBy: auth.userId,
    apiKeyId: auth.apiKeyId,
    inputText: search.inputText,
    outputText: search.outputText,
    outputFormat: search.outputFormat,
    userIntent: search.userIntent,
    agentIntent: search.agentIntent,
    extraValues,
    traceId: at.traceId,
    spanId: at.spanId,
    redactions: input.redactions ?? null,
    abTestId: prompt.ab?.testId ?? null,
    abVariant: prompt.ab?.variant ?? null,
    abAssignment: prompt.ab?.assignment ?? null,
  };
}

/** The named scores a new log starts with: its score under score_name, or "default"; none for an unnamed 0. */
function initialScores(input: Pick<RequestLogInput, "score" | "score_name">): Record<string, number> {
  if (input.score_name) return { [input.score_name]: input.score };
  return input.score !== 0 ? { default: input.score } : {};
}

/** The columns of a new row, in the table's order, with how each is read back from a JSON row. */
const NEW_COLUMNS = Object.entries(getTableColumns(requestLogs))
  .filter(([key]) => !(SET_BY_DB as readonly string[]).includes(key))
  .map(([key, column]) => {
    const name = column.name;
    // JSON columns travel as JSON and are stored as its text; the bytes of `body` travel as hex.
    const kind = column.columnType === "SQLiteTextJson" ? "json" : column.columnType === "SQLiteCustomColumn" ? "bytes" : "scalar";
    const value = kind === "json" ? `j.value -> '${name}'` : kind === "bytes" ? `unhex(j.value ->> '${name}')` : `j.value ->> '${name}'`;
    return { key: key as keyof NewRequestLogRow, name, bytes: kind === "bytes", value };
  });

/**
 * For `INSERT INTO request_logs (${columns}) SELECT ${values} FROM json_each(?) AS j`: the column list
 * and the expressions that read each column from a row made by jsonLogRow.
 */
export const JSON_LOG_COLUMNS: { columns: SQL; values: SQL } = {
  columns: sql.raw(NEW_COLUMNS.map((c) => c.name).join(", ")),
  values: sql.raw(NEW_COLUMNS.map((c) => c.value).join(", ")),
};

/** A new row as the JSON that JSON_LOG_COLUMNS reads: keyed by column name, bytes as hex. */
export function jsonLogRow(row: NewRequestLogRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of NEW_COLUMNS) out[c.name] = c.bytes ? hexOf(row[c.key] as Uint8Array | null) : row[c.key];
  return out;
}
