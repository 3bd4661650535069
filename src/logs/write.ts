// Logging requests: the hottest write path. One statement (in a batch with an idempotency key's, when
// there is one): the log row, with its keyed search values. Its search entry, facet counts and daily
// totals are written after the answer, many logs at a time, by the indexer (indexing.ts), which finds
// it past its database's watermark. Nothing else slow happens here.
import { and, eq, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { requestLogs, type RequestLogRow } from "../db/schema";
import type { AuthContext } from "../lib/auth-context";
import { ApiError, REVOKED_KEY_ABORT, UNKNOWN_KEY } from "../lib/errors";
import { chainIncludes } from "../lib/error-text";
import { toIso } from "../lib/time";
import { abOfLog, loggedPromptVersion, releasesForLog, type PromptVersionView } from "../prompts";
import { NEWEST_LOG } from "./indexing";
import { runBatch, type Statement } from "../db/batch";
import { insertRow } from "../db/insert";
import { inJsonList } from "../db/sql";
import { decodeBlueprints, type Blueprints } from "./row-codec";
import { requestLogRow, type RequestLogInput } from "./log-row";
import type { WorkspaceLogs } from "./periods";
import { redactLog } from "./redaction";

export interface LoggedRequest {
  id: number;
  promptVersion: PromptVersionView | null;
  /** The log as stored: redacted by the workspace's policy (what an answer may echo). */
  stored: RequestLogInput;
}

/**
 * More statements for a log's batch, given SQL naming the new log's id: they commit with the log or
 * not at all (an idempotency key's row, src/logs/idempotency.ts).
 */
export type AlsoWrite = (logId: SQL, promptVersion: PromptVersionView | null, stored: RequestLogInput) => Statement[];

/**
 * `db` is the control database (the prompt the log names); the log goes to the workspace's current log
 * database. `linked`: the version the input names, when the caller has already looked it up (saves
 * the lookup). The workspace's redaction policy, if any, is applied first: nothing else sees the input.
 */
export async function createRequestLog(
  db: Db,
  store: WorkspaceLogs,
  auth: AuthContext,
  raw: RequestLogInput,
  alsoWrite?: AlsoWrite,
  linked?: { promptVersion: PromptVersionView | null },
): Promise<LoggedRequest> {
  const logs = store.current;
  const input = await redactLog(auth, raw);
  const ref = { promptId: input.prompt_id, promptName: input.prompt_name, versionNumber: input.prompt_version_number };
  // The releases the log may have been served by are read beside its version: no round trip more.
  // The variant is judged on the redacted metadata (nothing sees the raw input): a unit whose value
  // the policy changes is attributed by its version only (`inferred`).
  const [promptVersion, releases] = await Promise.all([
    linked ? linked.promptVersion : loggedPromptVersion(db, auth.workspaceId, ref),
    input.prompt_version_number ? releasesForLog(db, auth.workspaceId, ref) : [],
  ]);
  const ab = promptVersion && releases.length > 0 ? await abOfLog(releases, promptVersion.prompt_id, input.metadata, promptVersion.version) : null;

  const row = requestLogRow(
    auth,
    input,
    {
      name: input.prompt_name ?? promptVersion?.prompt_name ?? null,
      id: input.prompt_id ?? promptVersion?.prompt_id ?? null,
      versionNumber: input.prompt_version_number ?? null,
      versionId: promptVersion?.id ?? null,
      ab,
    },
    { traceId: null, spanId: input.span_id ?? null },
  );
  const insertLog = insertRow(logs, requestLogs, row, ["id"]);

  const [inserted] = await guardRevoked(runBatch(logs, [insertLog, ...(alsoWrite?.(NEWEST_LOG, promptVersion, input) ?? [])]));
  return { id: (inserted.results[0] as { id: number }).id, promptVersion, stored: input };
}

/** The control database's request_logs_key_guard trigger refuses a log written under a revoked key (see auth cache). */
export async function guardRevoked<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (chainIncludes(err, REVOKED_KEY_ABORT)) throw new ApiError("unauthorized", UNKNOWN_KEY);
    throw err;
  }
}

/** A stored log with its blueprints decoded (row-codec.ts), whichever form they were stored in. */
export type RequestLog = Omit<RequestLogRow, "input" | "output" | "parameters" | "body"> & Blueprints;

export function decodeLogRow(row: RequestLogRow): RequestLog {
  const { body: _body, ...rest } = row;
  return { ...rest, ...decodeBlueprints(row) };
}

export async function getRequestLog(db: Db, workspaceId: number, id: number): Promise<RequestLog | null> {
  const rows = await db
    .select()
    .from(requestLogs)
    .where(and(eq(requestLogs.id, id), eq(requestLogs.workspaceId, workspaceId)))
    .limit(1);
  return rows[0] ? decodeLogRow(rows[0]) : null;
}

/**
 * The workspace's stored logs among `ids` (another workspace's or unknown ids are skipped), in id
 * order: the rows getRequestLog reads, many at once, for the archive job and the export. Keep the two
 * readers alike: whatever getRequestLog does to a row, this does too.
 */
export async function getRequestLogs(logs: Db, workspaceId: number, ids: readonly number[]): Promise<RequestLog[]> {
  if (ids.length === 0) return [];
  const rows = await logs
    .select()
    .from(requestLogs)
    .where(and(inJsonList(requestLogs.id, ids), eq(requestLogs.workspaceId, workspaceId)))
    .orderBy(requestLogs.id);
  return rows.map(decodeLogRow);
}

/** The stored log as the API shows it: PromptLayer's request detail fields plus every logged field. */
export function requestLogView(r: RequestLog) {
  const latency = r.requestEndTime - r.requestStartTime;
  return {
    success: true as const,
    request_id: r.id,
    prompt_blueprint: {
      prompt_template: r.input,
      metadata: { model: { provider: r.provider, name: r.model, parameters: r.parameters } },
      inference_client_name: null,
    },
    provider: r.provider,
    model: r.model,
    api_type: r.apiType,
    input: r.input,
    output: r.output,
    parameters: r.parameters,
    tags: r.tags,
    metadata: r.metadata,
    prompt_name: r.promptName,
    prompt_id: r.promptId,
    prompt_version_number: r.promptVersionNumber,
    prompt_version_id: r.promptVersionId,
    prompt_input_variables: r.promptInputVariables,
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
    tokens: r.inputTokens + r.outputTokens,
    price: r.price,
    function_name: r.functionName,
    score: r.score,
    score_name: r.scoreName,
    scores: r.scores,
    group_id: r.groupId,
    status: r.status,
    error_type: r.errorType,
    error_message: r.errorMessage,
    request_start_time: toIso(r.requestStartTime),
    request_end_time: toIso(r.requestEndTime),
    latency_ms: latency,
    trace_id: r.traceId,
    span_id: r.spanId,
    // ?? null: a log archived before these columns existed has no such keys.
    ab_test_id: r.abTestId ?? null,
    ab_variant: r.abVariant ?? null,
    ab_assignment: r.abAssignment ?? null,
    redactions: r.redactions ?? {},
    created_at: toIso(r.createdAt),
  };
}
