// Tracking calls on a stored request log: a named score, metadata merged in, a prompt link, a group;
// and request groups. One service for the SDK's /library-track-* and /track-group routes and their
// REST twins /rest/track-*. Every write is one db.batch() keyed on (id, workspace), so another
// workspace's log, group or prompt is a 404 that changes nothing. The row's keyed search values move
// with what they are made of; a log already indexed also has its autocomplete counts, search entry and
// daily totals moved in the same transaction; a log not yet indexed only has its row changed, and the
// indexer builds its rows from the row as it finds it (indexing.ts), so a call before or after indexing
// leaves the same rows.
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { runBatch, type Statement as Stmt } from "../db/batch";
import { requestGroups, requestLogFacets, requestLogs, type IndexKind } from "../db/schema";
import { col } from "../db/sql";
import type { AuthContext } from "../lib/auth-context";
import { ApiError } from "../lib/errors";
import { indexed } from "../filters";
import { requirePromptVersion } from "../prompts";
import { extraValuesOf, facetRowsOf, indexRowsOf, type FacetRow, type IndexRow } from "./index-rows";
import { dailyTotals, dropEmptyDailyTotals } from "./indexing";
import { addFacetCounts, countFacets, facetsDown, facetsOfValues, isCounted, isIndexed, refreshSearchEntry, valuesOfLogId } from "./search-index";
import type { WorkspaceLogs } from "./periods";
import { scoreChangeStatement } from "./ab-rollups";
import { redactAddedMap } from "./redaction";

/** The score name that is also the log's `score`. */
export const DEFAULT_SCORE_NAME = "default";

const notFoundLog = () => ApiError.notFound("request");

async function requireLog(db: Db, workspaceId: number, requestId: number) {
  const [row] = await db
    .select({ id: requestLogs.id, promptId: requestLogs.promptId, promptName: requestLogs.promptName })
    .from(requestLogs)
    .where(and(eq(requestLogs.id, requestId), eq(requestLogs.workspaceId, workspaceId)))
    .limit(1);
  if (!row) throw notFoundLog();
  return row;
}

const ofLog = (workspaceId: number, requestId: number) => and(eq(requestLogs.id, requestId), eq(requestLogs.workspaceId, workspaceId));

// ---- score ----

export interface TrackScoreInput {
  request_id: number;
  score: number;
  name?: string | null;
}

/** The database holding the workspace's log `requestId` (another workspace's or an unknown id: 404). */
async function logDatabase(logs: WorkspaceLogs, requestId: number): Promise<Db> {
  const db = await logs.holding(requestId);
  if (!db) throw notFoundLog();
  return db;
}

/** Sets one named score (0..100) of the log; the name `default` (or none) is also the log's `score`. */
export async function trackScore(logs: WorkspaceLogs, auth: AuthContext, input: TrackScoreInput): Promise<void> {
  const db = await logDatabase(logs, input.request_id);
  const name = input.name ?? DEFAULT_SCORE_NAME;
  // An A/B log already counted in its variant's rollups moves its score there in the same batch (ab-rollups.ts).
  const [, updated] = await runBatch(db, [
    scoreChangeStatement(auth.workspaceId, input.request_id, name, input.score),
    db
      .update(requestLogs)
      .set({
        // json_object takes the name as a bound value, so any name is a plain key (no JSON-path quoting).
        scores: sql`json_patch(${requestLogs.scores}, json_object(${name}, ${input.score}))`,
        ...(name === DEFAULT_SCORE_NAME ? { score: input.score } : {}),
      })
      .where(ofLog(auth.workspaceId, input.request_id)),
  ]);
  if (updated.meta.changes === 0) throw notFoundLog();
}

// ---- keyed values of some kinds (metadata, input variables, tools and output keys) ----

const SCALAR_FACETS = new Set(["engine", "provider_type", "status", "prompt_id", "prompt"]);

/** The autocomplete rows of keyed values alone (no model, provider or status). */
function facetsOfRows(rows: IndexRow[]): FacetRow[] {
  return facetRowsOf({ model: "", provider: "", status: "", promptId: null, promptName: null }, rows).filter(([field]) => !SCALAR_FACETS.has(field));
}

/**
 * How a call replaces a log's keyed values of `kinds` (only those under `keys`, indexed keys, when given)
 * by `next`, the caller's UPDATE of the log changing the columns they are made of: `extra`, the SQL of
 * the row's new extra_values for that UPDATE (a log whose extra values were never stored keeps none: the
 * indexer makes them from the updated row); `before`, the statements to run before the UPDATE (the old
 * values' autocomplete counts go down) and `after`, those to run after it (the new values' counts go up,
 * the search entry follows the row), each only for an indexed log and only `when` holds.
 */
export function replaceValues(ws: number, id: number, kinds: readonly IndexKind[], keys: readonly string[] | null, next: IndexRow[], when: SQL = sql`true`) {
  const r = requestLogs;
  const these = (kind: SQL, key: SQL) =>
    sql`${kind} IN (SELECT value FROM json_each(${JSON.stringify(kinds)}))${keys ? sql` AND ${key} IN (SELECT value FROM json_each(${JSON.stringify(keys)}))` : sql``}`;
  // The log's values of those kinds (and keys) as its row gives them now.
  const old = sql`(SELECT e.kind, e.key, e.value FROM ${valuesOfLogId(ws, id)} AS e WHERE ${these(sql`e.kind`, sql`e.key`)})`;
  const f = requestLogFacets;
  const indexed = sql`${isIndexed(id)} AND ${when}`;
  const extra = sql`CASE WHEN ${r.extraValues} IS NULL THEN NULL ELSE (SELECT json_group_array(json(v)) FROM (
      SELECT e.value AS v FROM json_each(${r.extraValues}) AS e WHERE NOT (${these(sql`e.value ->> 0`, sql`e.value ->> 1`)})
      UNION ALL SELECT n.value FROM json_each(${JSON.stringify(extraValuesOf(next))}) AS n)) END`;
  return {
    extra,
    before: facetsDown(ws, sql`(${f.field}, ${f.key}, ${f.value}) IN (SELECT field, key, value FROM ${facetsOfValues(old)})`, indexed),
    after: [...addFacetCounts(countFacets([[ws, facetsOfRows(next)]]), indexed), refreshSearchEntry(id, when)],
  };
}

const EMPTY_LOG = { tags: [], tools: [], outputText: "", metadata: {}, prompt_input_variables: {} };

// ---- metadata ----

export interface TrackMetadataInput {
  request_id: number;
  metadata: Record<string, string>;
}

/** Merges string metadata into the log's (a key sent again takes the new value); search and suggestions see it at once. */
export async function trackMetadata(logs: WorkspaceLogs, auth: AuthContext, input: TrackMetadataInput): Promise<void> {
  const db = await logDatabase(logs, input.request_id);
  const ws = auth.workspaceId;
  await requireLog(db, ws, input.request_id);
  if (Object.keys(input.metadata).length === 0) return;
  // Redacted like a new log's metadata; a value the policy drops is not merged in.
  const { value: metadata, redactions } = await redactAddedMap(auth, input.metadata, "metadata");
  const keys = Object.keys(metadata);
  const next = indexRowsOf({ ...EMPTY_LOG, metadata });
  const change = replaceValues(ws, input.request_id, ["metadata"], [...new Set(keys.map(indexed))], next);
  await runBatch(db, [
    ...change.before,
    db
      .update(requestLogs)
      .set({ metadata: sql`json_patch(${requestLogs.metadata}, ${JSON.stringify(metadata)})`, extraValues: change.extra, ...addedRedactions(redactions) })
      .where(ofLog(ws, input.request_id)),
    ...change.after,
  ]);
}

/** The log's redaction counts with `more` added (nothing to set when there is nothing to add). */
function addedRedactions(more: Record<string, number> | null): { redactions?: SQL } {
  if (!more) return {};
  let expr = sql`coalesce(${requestLogs.redactions}, '{}')`;
  for (const [name, n] of Object.entries(more)) {
    // Names are letters, digits, _ . - (policy.ts): quoted, a dot is part of the key, not a path step.
    const path = `$."${name}"`;
    expr = sql`json_set(${expr}, ${path}, coalesce(json_extract(${requestLogs.redactions}, ${path}), 0) + ${n})`;
  }
  return { redactions: expr };
}

// ---- prompt ----

export interface TrackPromptInput {
  request_id: number;
  prompt_name: string;
  prompt_input_variables?: Record<string, unknown> | null;
  version?: number | null;
  label?: string | null;
}

export interface TrackedPrompt {
  prompt_id: number;
  prompt_version_id: number;
  version: number;
}

/**
 * Links the log to a prompt version of this workspace, by template name and version number or release
 * label (neither: the latest version). Input variables, when given, replace the log's. `db` is the
 * control database (the prompt), `store` the workspace's log databases.
 */
export async function trackPrompt(db: Db, store: WorkspaceLogs, auth: AuthContext, input: TrackPromptInput): Promise<TrackedPrompt> {
  const ws = auth.workspaceId;
  if (input.version != null && input.label != null) throw new ApiError("validation_error", "version: give either version or label, not both");
  const { template, version } = await requirePromptVersion(db, ws, { name: input.prompt_name }, { version: input.version, label: input.label });
  const logs = await logDatabase(store, input.request_id);
  await requireLog(logs, ws, input.request_id);

  const id = input.request_id;
  const [r, f] = [requestLogs, requestLogFacets];
  const current = sql`(SELECT CAST(r.${col(r.promptId)} AS TEXT) AS pid, r.${col(r.promptName)} AS pname FROM ${r} AS r WHERE r.${col(r.id)} = ${id} AND r.${col(r.workspaceId)} = ${ws})`;
  // The old link's autocomplete counts go down (and vanish at 0) in the batch, the new one's go up.
  const oldPromptId = sql`${f.field} = 'prompt_id' AND ${f.key} = '' AND ${f.value} = (SELECT pid FROM ${current})`;
  const oldPrompt = sql`${f.field} = 'prompt' AND (${f.key}, ${f.value}) = (SELECT coalesce(pid, ''), pname FROM ${current})`;
  const indexedLog = isIndexed(id);
  const statements: Stmt[] = [];
  for (const match of [oldPromptId, oldPrompt]) statements.push(...facetsDown(ws, match, indexedLog));
  // The daily totals by prompt follow the link too: out of the old prompt's day here, into the new one's after the update.
  // The daily totals count a log once counted (indexing.ts, countDaily), the facets once indexed.
  const thisLog = sql`r.${col(r.id)} = ${id} AND r.${col(r.workspaceId)} = ${ws} AND ${isCounted(id)}`;
  const logsR = sql`${r} AS r`;
  statements.push(dailyTotals(logsR, ["prompt"], -1, thisLog), dropEmptyDailyTotals(logsR, "prompt", thisLog));
  const added = input.prompt_input_variables ? await redactAddedMap(auth, input.prompt_input_variables, "input_variables") : null;
  const variables = added?.value ?? null;
  const change = variables ? replaceValues(ws, id, ["input_variable"], null, indexRowsOf({ ...EMPTY_LOG, prompt_input_variables: variables })) : null;
  if (change) statements.push(...change.before);
  statements.push(
    logs
      .update(requestLogs)
      .set({
        promptId: template.id,
        promptName: template.name,
        promptVersionNumber: version.version,
        promptVersionId: version.id,
        ...(variables && change ? { promptInputVariables: variables, extraValues: change.extra } : {}),
        ...addedRedactions(added?.redactions ?? null),
      })
      .where(ofLog(ws, id)),
  );
  const promptFacets = facetRowsOf({ model: "", provider: "", status: "", promptId: template.id, promptName: template.name }, []).filter(
    ([field]) => field === "prompt_id" || field === "prompt",
  );
  statements.push(...addFacetCounts(countFacets([[ws, promptFacets]]), indexedLog), dailyTotals(logsR, ["prompt"], 1, thisLog));
  if (change) statements.push(...change.after);
  await runBatch(logs, statements);
  return { prompt_id: template.id, prompt_version_id: version.id, version: version.version };
}

// ---- groups ----

/** A new group of the workspace, in its current log database (so its id is in that database's range). */
export async function createGroup(logs: WorkspaceLogs, auth: AuthContext): Promise<{ id: number }> {
  const [row] = await logs.current.insert(requestGroups).values({ workspaceId: auth.workspaceId, createdBy: auth.userId }).returning({ id: requestGroups.id });
  return { id: row.id };
}

/** Whether the group exists in this workspace (groups are never deleted: once there, always there). */
async function groupExists(logs: WorkspaceLogs, workspaceId: number, groupId: number): Promise<boolean> {
  const db = await logs.holding(groupId);
  if (!db) return false;
  const [row] = await db
    .select({ id: requestGroups.id })
    .from(requestGroups)
    .where(and(eq(requestGroups.id, groupId), eq(requestGroups.workspaceId, workspaceId)))
    .limit(1);
  return Boolean(row);
}

export async function requireGroup(logs: WorkspaceLogs, workspaceId: number, groupId: number): Promise<void> {
  if (!(await groupExists(logs, workspaceId, groupId))) throw ApiError.notFound("group");
}

export interface TrackGroupInput {
  request_id: number;
  group_id: number;
}

/**
 * Puts the log in a group of this workspace (a log is in at most one group; tracking another moves
 * it). Log and group in one database: one conditional statement checks the group in the same write.
 * In two (periods): the group is checked first, which is as good, since groups are never deleted.
 */
export async function trackGroup(logs: WorkspaceLogs, auth: AuthContext, input: TrackGroupInput): Promise<void> {
  const ws = auth.workspaceId;
  const db = await logs.holding(input.request_id);
  const groupDb = await logs.holding(input.group_id);
  if (db && groupDb && (db === groupDb || (await groupExists(logs, ws, input.group_id)))) {
    const rows = await db
      .update(requestLogs)
      .set({ groupId: input.group_id })
      .where(
        and(
          ofLog(ws, input.request_id),
          db === groupDb ? sql`EXISTS (SELECT 1 FROM ${requestGroups} AS g WHERE g.${col(requestGroups.id)} = ${input.group_id} AND g.${col(requestGroups.workspaceId)} = ${ws})` : undefined,
        ),
      )
      .returning({ id: requestLogs.id });
    if (rows.length > 0) return;
  }
  await requireGroup(logs, ws, input.group_id);
  throw notFoundLog();
}
