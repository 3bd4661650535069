// Spans and the request logs they make, written in one D1 batch per ingestion whatever the number of
// spans: each kind of row travels as JSON in one bound parameter per statement (json_each), chunked by
// size. A span is keyed by (workspace, trace id, span id): sent again it is stored once and makes one
// log. Spans of a closed trace are refused, and the insert itself checks the closure too. A log made
// from a span itself takes in the span's OTLP log records already stored (log-records.ts).
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { runBatch } from "../db/batch";
import { requestLogs, spans, traceClosures, type SpanRow } from "../db/schema";
import { col, columnList, columnNames } from "../db/sql";
import type { AuthContext } from "../lib/auth-context";
import { abOfLog, findPromptVersion, releasesForLog, type LogRelease } from "../prompts";
import type { SpanExtras, SpanInput } from "./span-input";
import { facetRowsOf } from "./index-rows";
import { addFacetCountsFrom, chunkIndexRows, isIndexed } from "./search-index";
import { guardRevoked } from "./write";
import { JSON_LOG_COLUMNS, jsonLogRow, requestLogRow, type RequestLogInput } from "./log-row";
import { eachPeriod, firstOverPeriods, type WorkspaceLogs } from "./periods";
import { genAiRecordCount, joinSpanLogs, spanRecords, type LogContentOf } from "./log-records";
import { byTraceHome, traceHomes } from "./trace-homes";
import { addCounts, redactJoinedContent, redactLog, redactSpan } from "./redaction";

/** What a span says about the prompt its log used: by name or id, with a version number or a label. */
export interface SpanPromptRef {
  name: string | null;
  id: number | null;
  version: number | null;
  label: string | null;
}

export interface SpanToStore {
  span: SpanInput;
  extras: SpanExtras;
  /** The log the span makes, if any. */
  log: Omit<RequestLogInput, "group_id"> | null;
  prompt: SpanPromptRef | null;
  /** The log is made from the span itself (its attributes and events), not given with it: the span's log records complete it. */
  logFromSpan?: boolean;
}

export interface StoreOptions {
  ingestId: string;
  closeAfter: boolean;
  /** The mapping of a span and its GenAI log records to its log's content (for spans with logFromSpan). */
  contentOf?: LogContentOf;
}

export interface StoredSpans {
  /** Spans taken (new ones and ones stored before), in the order given. */
  spans: { id: string; name: string; span_id: string; trace_id: string; created: boolean }[];
  /** The logs of the spans taken (made now or before). */
  requestLogs: { id: number; span_id: string; trace_id: string }[];
  /** Spans refused because their trace is closed. */
  rejected: { span_id: string; trace_id: string }[];
  closedTraceIds: string[];
}

const key = (traceId: string, spanId: string) => `${traceId}:${spanId}`;

/** The span columns storeSpansIn writes, in the order of its SELECT. */
const SPAN_COLUMNS = columnList(spans, [
  "workspaceId", "traceId", "spanId", "parentSpanId", "name", "kind", "startTime", "endTime", "statusCode", "statusMessage",
  "attributes", "events", "links", "resource", "scope", "logFromSpan", "redactions", "ingestId", "createdAt",
]);
const R = columnNames(requestLogs);

/** The trace ids among `traceIds` that are closed in the workspace. */
export async function closedTraces(db: Db, workspaceId: number, traceIds: string[]): Promise<Set<string>> {
  if (traceIds.length === 0) return new Set();
  const rows = await db
    .select({ traceId: traceClosures.traceId })
    .from(traceClosures)
    .where(and(eq(traceClosures.workspaceId, workspaceId), sql`${traceClosures.traceId} IN (SELECT value FROM json_each(${JSON.stringify(traceIds)}))`));
  return new Set(rows.map((r) => r.traceId));
}

/** Prompt references looked up at once (a batch of spans may name many): a few round trips in flight, not hundreds. */
const PROMPT_LOOKUPS_AT_ONCE = 8;

/** Resolves each distinct prompt reference once; an unknown prompt, version or label links nothing. */
async function resolvePrompts(db: Db, workspaceId: number, refs: SpanPromptRef[]) {
  const out = new Map<string, { promptId: number; promptName: string; version: number; versionId: number } | null>();
  const distinct = [...new Map(refs.map((ref) => [JSON.stringify(ref), ref]))];
  for (let at = 0; at < distinct.length; at += PROMPT_LOOKUPS_AT_ONCE) {
    await Promise.all(
      distinct.slice(at, at + PROMPT_LOOKUPS_AT_ONCE).map(async ([id, ref]) => {
        // A name is a path identifier here: a span naming prompt "42" links template 42 when there is one.
        const found = await findPromptVersion(db, workspaceId, {
          ...(ref.id != null ? { id: ref.id } : { identifier: ref.name ?? "" }),
          ...(ref.version != null ? { version: ref.version } : ref.label != null ? { label: ref.label } : { latest: true as const }),
        });
        out.set(id, found ? { promptId: found.template.id, promptName: found.template.name, version: found.version.version, versionId: found.version.id } : null);
      }),
    );
  }
  return out;
}

/** The A/B releases the linked templates' logs may have been served by (one query per template, in flight together). */
async function releasesOfLinks(db: Db, workspaceId: number, links: ({ promptId: number } | null)[]): Promise<LogRelease[]> {
  const ids = [...new Set(links.filter((l) => l !== null).map((l) => l!.promptId))];
  const out: LogRelease[] = [];
  for (let at = 0; at < ids.length; at += PROMPT_LOOKUPS_AT_ONCE) {
    const found = await Promise.all(ids.slice(at, at + PROMPT_LOOKUPS_AT_ONCE).map((promptId) => releasesForLog(db, workspaceId, { promptId })));
    out.push(...found.flat());
  }
  return out;
}

/**
 * Stores the spans not stored before and the logs of the new ones, refusing spans of closed traces;
 * with `closeAfter`, closes every trace of the batch afterwards. `db` is the control database (the
 * prompts spans name), `store` the workspace's log databases.
 *
 * A trace stays in one database: its spans (and the logs they make, and its closure) go to the
 * newest period that already holds a span of it, a new trace's to the current one. So a trace begun
 * before a period change goes on where it began, and the trace reads and analytics see it whole. A
 * log logged earlier with the span's id alone (track-request's span_id) learns its trace wherever it is.
 */
export async function storeSpans(db: Db, store: WorkspaceLogs, auth: AuthContext, given: SpanToStore[], opts: StoreOptions): Promise<StoredSpans> {
  const items = await redactSpans(auth, given);
  if (!store.spread) return storeSpansIn(db, store.current, auth, items, opts);
  const byHome = await byTraceHome(store, auth.workspaceId, items, (i) => i.span.traceId);
  const parts: StoredSpans[] = [];
  // One batch per database: each is whole or nothing, as one batch is in a single database.
  for (const [home, mine] of byHome) {
    const part = await storeSpansIn(db, home, auth, mine, opts);
    await linkEarlierLogs(store, home, auth.workspaceId, part);
    parts.push(part);
  }
  return mergeStored(items, parts);
}

/**
 * The spans and their logs redacted by the workspace's policy (none: as given). A span's log is
 * redacted apart from the span (it was mapped from the span as sent), so its counts are its own.
 */
async function redactSpans(auth: AuthContext, items: SpanToStore[]): Promise<SpanToStore[]> {
  if (!auth.redaction) return items;
  const out: SpanToStore[] = [];
  for (const i of items) out.push({ ...i, span: await redactSpan(auth, i.span), log: i.log ? await redactLog(auth, i.log) : null });
  return out;
}

/**
 * After spans were stored in `home`: a new span that made no log there may have one logged earlier
 * for its span id alone in another period's database. That log learns its trace, and the span its log.
 */
async function linkEarlierLogs(store: WorkspaceLogs, home: Db, ws: number, part: StoredSpans): Promise<void> {
  const logged = new Set(part.requestLogs.map((l) => key(l.trace_id, l.span_id)));
  const bare = part.spans.filter((s) => s.created && !logged.has(key(s.trace_id, s.span_id))).map((s) => [s.trace_id, s.span_id]);
  if (bare.length === 0) return;
  // A log indexed before it learns its trace is counted under the trace now, in its own database, as
  // that database's indexer counts a log that has its trace when it runs (under the trace only: the
  // span, and so its name, is in `home`, where neither sees it). The first span named wins, as below.
  const firstBySpan = new Map<string, string>();
  for (const [traceId, spanId] of bare) if (!firstBySpan.has(spanId)) firstBySpan.set(spanId, traceId);
  const traceFacets = JSON.stringify(
    [...firstBySpan].flatMap(([spanId, traceId]) =>
      facetRowsOf({ model: "", provider: "", status: "", promptId: null, promptName: null, traceId, spanName: null }, [])
        .filter(([field]) => field === "trace_id")
        .map((f) => [spanId, ...f]),
    ),
  );
  for (const { db } of store.periods) {
    if (db === home) continue;
    const results = await runBatch(db, [
      ...addFacetCountsFrom(
        sql`
          SELECT ${ws}, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, count(*)
          FROM json_each(${traceFacets}) AS j
          CROSS JOIN ${requestLogs} AS r ON r.${col(requestLogs.workspaceId)} = ${ws} AND r.${col(requestLogs.spanId)} = j.value ->> 0 AND r.${col(requestLogs.traceId)} IS NULL
          WHERE ${isIndexed(`r.${R.id}`)}
          GROUP BY j.value ->> 1, j.value ->> 2, j.value ->> 3`,
        firstBySpan.size,
      ),
      sql`
        UPDATE ${requestLogs} SET ${col(requestLogs.traceId)} = (SELECT j.value ->> 0 FROM json_each(${JSON.stringify(bare)}) AS j WHERE j.value ->> 1 = ${requestLogs.spanId} LIMIT 1)
        WHERE ${requestLogs.workspaceId} = ${ws} AND ${requestLogs.traceId} IS NULL AND ${requestLogs.spanId} IN (SELECT j.value ->> 1 FROM json_each(${JSON.stringify(bare)}) AS j)
        RETURNING ${col(requestLogs.id)}, ${col(requestLogs.spanId)}, ${col(requestLogs.traceId)}`,
    ]);
    const linked = results[2].results as { id: number; span_id: string; trace_id: string }[];
    if (linked.length === 0) continue;
    await runBatch(
      home,
      linked.map((l) =>
        home
          .update(spans)
          .set({ requestLogId: l.id })
          .where(and(eq(spans.workspaceId, ws), eq(spans.traceId, l.trace_id), eq(spans.spanId, l.span_id), isNull(spans.requestLogId))),
      ),
    );
    part.requestLogs.push(...linked);
  }
}

/** The answers of several databases' batches as one, in the order the spans were given. */
function mergeStored(items: SpanToStore[], parts: StoredSpans[]): StoredSpans {
  const spansByKey = new Map(parts.flatMap((p) => p.spans.map((s) => [key(s.trace_id, s.span_id), s] as const)));
  const logsByKey = new Map(parts.flatMap((p) => p.requestLogs.map((l) => [key(l.trace_id, l.span_id), l] as const)));
  const out: StoredSpans = { spans: [], requestLogs: [], rejected: parts.flatMap((p) => p.rejected), closedTraceIds: [...new Set(parts.flatMap((p) => p.closedTraceIds))] };
  const seen = new Set<string>();
  for (const i of items) {
    const k = key(i.span.traceId, i.span.spanId);
    if (seen.has(k)) continue;
    seen.add(k);
    const span = spansByKey.get(k);
    if (span) out.spans.push(span);
    const log = logsByKey.get(k);
    if (log) out.requestLogs.push(log);
  }
  return out;
}

/** storeSpans in one database: one batch, so a failure leaves nothing. */
async function storeSpansIn(db: Db, logs: Db, auth: AuthContext, items: SpanToStore[], opts: StoreOptions): Promise<StoredSpans> {
  const ws = auth.workspaceId;
  const traceIds = [...new Set(items.map((i) => i.span.traceId))];
  const closed = await closedTraces(logs, ws, traceIds);
  const rejected = items.filter((i) => closed.has(i.span.traceId)).map((i) => ({ span_id: i.span.spanId, trace_id: i.span.traceId }));
  // A span twice in one batch is taken once (the first).
  const seen = new Set<string>();
  const open = items.filter((i) => {
    const k = key(i.span.traceId, i.span.spanId);
    if (closed.has(i.span.traceId) || seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const before = await existingSpans(logs, ws, open.map((i) => i.span));
  const fresh = open.filter((i) => !before.has(key(i.span.traceId, i.span.spanId)));
  const withLogs = fresh.filter((i) => i.log !== null);
  const prompts = await resolvePrompts(db, ws, withLogs.map((i) => i.prompt).filter((p): p is SpanPromptRef => p !== null));
  const now = Date.now();
  // Log records that came before their span: the log is made with them.
  const joinable = open.filter((i) => i.log !== null && i.logFromSpan && opts.contentOf);
  const joined = await joinedLogs(logs, auth, withLogs.filter((i) => i.logFromSpan), opts.contentOf);

  const spanRows = fresh.map((i) => ({
    t: i.span.traceId,
    s: i.span.spanId,
    p: i.span.parentSpanId,
    n: i.span.name,
    k: i.span.kind,
    st: i.span.startTimeMs,
    et: i.span.endTimeMs,
    sc: i.span.status.code,
    sm: i.span.status.message,
    a: i.span.attributes,
    e: i.span.events,
    l: i.extras.links,
    r: i.span.resource,
    o: i.extras.scope,
    m: i.log !== null && i.logFromSpan === true,
    x: i.log !== null && i.logFromSpan === true ? (i.log.redactions ?? null) : null,
  }));
  const statements = [];
  for (const json of chunkIndexRows(spanRows, 512 * 1024)) {
    statements.push(sql`
      INSERT INTO ${spans} (${SPAN_COLUMNS})
      SELECT ${ws}, j.value ->> 't', j.value ->> 's', j.value ->> 'p', j.value ->> 'n', j.value ->> 'k', j.value ->> 'st', j.value ->> 'et',
             j.value ->> 'sc', j.value ->> 'sm', j.value -> 'a', j.value -> 'e', j.value -> 'l', j.value -> 'r', j.value -> 'o', j.value ->> 'm', nullif(j.value -> 'x', 'null'), ${opts.ingestId}, ${now}
      FROM json_each(${json}) AS j
      WHERE NOT EXISTS (SELECT 1 FROM ${traceClosures} c WHERE c.${col(traceClosures.workspaceId)} = ${ws} AND c.${col(traceClosures.traceId)} = j.value ->> 't')
      ON CONFLICT DO NOTHING`);
  }

  const logRows: Record<string, unknown>[] = [];
  const releases = await releasesOfLinks(db, ws, [...prompts.values()]);
  for (const i of withLogs) {
    const log = joined.get(i)?.log ?? i.log!;
    const link = i.prompt ? prompts.get(JSON.stringify(i.prompt)) : null;
    const ab = link ? await abOfLog(releases, link.promptId, log.metadata, link.version) : null;
    const prompt = { name: link?.promptName ?? log.prompt_name ?? i.prompt?.name ?? null, id: link?.promptId ?? null, versionNumber: link?.version ?? null, versionId: link?.versionId ?? null, ab };
    logRows.push(jsonLogRow(requestLogRow(auth, log, prompt, { traceId: i.span.traceId, spanId: i.span.spanId })));
  }
  const { columns, values } = JSON_LOG_COLUMNS;
  for (const json of chunkIndexRows(logRows, 512 * 1024)) {
    // Only for spans this batch stored: a span another ingestion stored meanwhile makes no second log.
    // Each log made here waits for the indexer (indexing.ts), which writes its search entry, facet
    // counts and daily totals from the row.
    statements.push(sql`
      INSERT INTO ${requestLogs} (${columns})
      SELECT ${values} FROM json_each(${json}) AS j
      WHERE EXISTS (SELECT 1 FROM ${spans} s WHERE s.${col(spans.workspaceId)} = ${ws} AND s.${col(spans.traceId)} = j.value ->> 'trace_id' AND s.${col(spans.spanId)} = j.value ->> 'span_id' AND s.${col(spans.ingestId)} = ${opts.ingestId})`);
  }
  if (fresh.length > 0) {
    // Each new span points at its log: the one made above, or one logged earlier for the span id
    // alone (track-request's span_id), which then learns its trace.
    statements.push(sql`
      UPDATE ${requestLogs} SET ${col(requestLogs.traceId)} = (SELECT s.${col(spans.traceId)} FROM ${spans} s WHERE s.${col(spans.workspaceId)} = ${ws} AND s.${col(spans.spanId)} = ${requestLogs.spanId} AND s.${col(spans.ingestId)} = ${opts.ingestId} LIMIT 1)
      WHERE ${requestLogs.workspaceId} = ${ws} AND ${requestLogs.traceId} IS NULL
        AND ${requestLogs.spanId} IN (SELECT s.${col(spans.spanId)} FROM ${spans} s WHERE s.${col(spans.workspaceId)} = ${ws} AND s.${col(spans.ingestId)} = ${opts.ingestId})
        AND NOT EXISTS (SELECT 1 FROM ${spans} s2 CROSS JOIN ${requestLogs} r2 ON r2.${col(requestLogs.workspaceId)} = s2.${col(spans.workspaceId)} AND r2.${col(requestLogs.traceId)} = s2.${col(spans.traceId)} AND r2.${col(requestLogs.spanId)} = s2.${col(spans.spanId)}
                        WHERE s2.${col(spans.workspaceId)} = ${ws} AND s2.${col(spans.ingestId)} = ${opts.ingestId} AND s2.${col(spans.spanId)} = ${requestLogs.spanId})`);
    // A log indexed before its span arrived is counted under the span's trace and name now, as the
    // indexer counts a log that has its trace when it runs. The logs made above are not indexed yet,
    // and only a log just linked can be indexed and have the ids of a span stored only now.
    const spanFacets = fresh.flatMap((i) =>
      facetRowsOf({ model: "", provider: "", status: "", promptId: null, promptName: null, traceId: i.span.traceId, spanName: i.span.name || null }, [])
        .filter(([field]) => field === "trace_id" || field === "span_name")
        .map((f) => [i.span.traceId, i.span.spanId, ...f]),
    );
    // CROSS JOIN keeps the rows given as the outer loop, each finding its span and its log by key; left
    // to choose, SQLite ran a list like this inside a loop over the workspace's logs.
    for (const json of chunkIndexRows(spanFacets)) {
      statements.push(
        ...addFacetCountsFrom(
          sql`
          SELECT ${ws}, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, count(*)
          FROM json_each(${json}) AS j
          CROSS JOIN ${spans} AS s ON s.${col(spans.workspaceId)} = ${ws} AND s.${col(spans.traceId)} = j.value ->> 0 AND s.${col(spans.spanId)} = j.value ->> 1 AND s.${col(spans.ingestId)} = ${opts.ingestId}
          CROSS JOIN ${requestLogs} AS r ON r.${col(requestLogs.workspaceId)} = ${ws} AND r.${col(requestLogs.traceId)} = j.value ->> 0 AND r.${col(requestLogs.spanId)} = j.value ->> 1
          WHERE ${isIndexed(`r.${R.id}`)}
          GROUP BY j.value ->> 2, j.value ->> 3, j.value ->> 4`,
          spanFacets.length,
        ),
      );
    }
    statements.push(sql`
      UPDATE ${spans} SET ${col(spans.requestLogId)} = (SELECT r.${col(requestLogs.id)} FROM ${requestLogs} r WHERE r.${col(requestLogs.workspaceId)} = ${ws} AND r.${col(requestLogs.traceId)} = ${spans.traceId} AND r.${col(requestLogs.spanId)} = ${spans.spanId})
      WHERE ${spans.workspaceId} = ${ws} AND ${spans.ingestId} = ${opts.ingestId} AND ${spans.requestLogId} IS NULL`);
  }
  if (opts.closeAfter && traceIds.length > 0) {
    const closures = traceIds.filter((t) => !closed.has(t)).map((t) => [crypto.randomUUID(), t]);
    if (closures.length > 0) {
      statements.push(sql`
        INSERT INTO ${traceClosures} (${columnList(traceClosures, ["id", "workspaceId", "traceId", "createdAt"])})
        SELECT j.value ->> 0, ${ws}, j.value ->> 1, ${now} FROM json_each(${JSON.stringify(closures)}) AS j
        WHERE true ON CONFLICT DO NOTHING`);
    }
  }
  await guardRevoked(runBatch(logs, statements));

  const kept = await spansByKey(logs, ws, open.map((i) => i.span), joinable.length > 0);
  const out: StoredSpans = { spans: [], requestLogs: [], rejected, closedTraceIds: [...closed].filter((t) => rejected.some((r) => r.trace_id === t)) };
  for (const i of open) {
    const row = kept.get(key(i.span.traceId, i.span.spanId));
    if (!row) {
      // Closed between the check and the write: refused like the others.
      out.rejected.push({ span_id: i.span.spanId, trace_id: i.span.traceId });
      if (!out.closedTraceIds.includes(i.span.traceId)) out.closedTraceIds.push(i.span.traceId);
      continue;
    }
    out.spans.push({ id: `${row.traceId}-${row.spanId}`, name: row.name, span_id: row.spanId, trace_id: row.traceId, created: row.ingestId === opts.ingestId });
    if (row.requestLogId !== null) out.requestLogs.push({ id: row.requestLogId, span_id: row.spanId, trace_id: row.traceId });
  }
  if (opts.contentOf && joinable.length > 0) await joinLateRecords(logs, auth, joinable, joined, kept, opts.contentOf);
  return out;
}

/** A log completed by its span's GenAI records, and how many records it read. */
type Joined = Map<SpanToStore, { log: Omit<RequestLogInput, "group_id">; records: number }>;

/** The logs of `items` completed by the GenAI log records already stored for their spans (only those that have some). */
async function joinedLogs(logs: Db, auth: AuthContext, items: SpanToStore[], contentOf: LogContentOf | undefined): Promise<Joined> {
  const out: Joined = new Map();
  if (!contentOf || items.length === 0) return out;
  const found = await spanRecords(logs, auth.workspaceId, items.map((i) => [i.span.traceId, i.span.spanId]));
  for (const i of items) {
    const source = found.get(key(i.span.traceId, i.span.spanId));
    const made = source ? contentOf(i.span, source.records) : null;
    if (!source || !made) continue;
    // Redacted as a log's content is (the records were only as log bodies); the log's findings: the span's own, its records' and their content's.
    const { content, redactions } = await redactJoinedContent(auth, made);
    out.set(i, { log: { ...i.log!, ...content, redactions: addCounts(i.log!.redactions, source.redactions, redactions) }, records: source.count });
  }
  return out;
}

/**
 * After the batch: records that arrived while it ran were not read into the logs it made, and a span
 * stored before (sent again) may have records its log lacks (a join that failed half way). Those spans'
 * logs are joined again; the records' own ingestion joins whatever lands after this read.
 */
async function joinLateRecords(logs: Db, auth: AuthContext, items: SpanToStore[], joined: Joined, kept: Map<string, KeptSpan>, contentOf: LogContentOf) {
  const late = items.filter((i) => (kept.get(key(i.span.traceId, i.span.spanId))?.records ?? 0) !== (joined.get(i)?.records ?? 0));
  if (late.length > 0) await joinSpanLogs(logs, auth, late.map((i) => [i.span.traceId, i.span.spanId]), contentOf);
}

async function existingSpans(db: Db, ws: number, list: SpanInput[]): Promise<Set<string>> {
  const rows = await spansByKey(db, ws, list);
  return new Set(rows.keys());
}

type KeptSpan = Pick<SpanRow, "traceId" | "spanId" | "name" | "requestLogId" | "ingestId"> & { records: number };

/** The stored spans among `list`, by trace and span id; `withRecords`: with how many GenAI log records each has (else 0). */
async function spansByKey(db: Db, ws: number, list: SpanInput[], withRecords = false): Promise<Map<string, KeptSpan>> {
  const out = new Map<string, KeptSpan>();
  const records = withRecords ? genAiRecordCount(ws, sql`${spans.traceId}`, sql`${spans.spanId}`) : sql<number>`0`;
  for (const json of chunkIndexRows(list.map((s) => [s.traceId, s.spanId]))) {
    const rows = await db
      .select({ traceId: spans.traceId, spanId: spans.spanId, name: spans.name, requestLogId: spans.requestLogId, ingestId: spans.ingestId, records })
      .from(spans)
      .where(sql`${spans.workspaceId} = ${ws} AND (${spans.traceId}, ${spans.spanId}) IN (SELECT value ->> 0, value ->> 1 FROM json_each(${json}))`);
    for (const r of rows) out.set(key(r.traceId, r.spanId), r);
  }
  return out;
}

/** The first `limit` spans of a trace, by start time, from every period; empty when the workspace has none. */
export async function traceSpans(logs: WorkspaceLogs, workspaceId: number, traceId: string, limit: number): Promise<SpanRow[]> {
  return firstOverPeriods(
    logs,
    limit,
    (db) =>
      db
        .select()
        .from(spans)
        .where(and(eq(spans.workspaceId, workspaceId), eq(spans.traceId, traceId)))
        .orderBy(asc(spans.startTime), asc(spans.spanId))
        .limit(limit),
    (a, b) => a.startTime - b.startTime || (a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0),
  );
}

/** Whether the workspace holds the trace (with `spanId`: that span of it), in any period. */
export async function traceHasSpan(logs: WorkspaceLogs, workspaceId: number, traceId: string, spanId: string | null = null): Promise<boolean> {
  const where = [eq(spans.workspaceId, workspaceId), eq(spans.traceId, traceId)];
  if (spanId) where.push(eq(spans.spanId, spanId));
  const found = await eachPeriod(logs, (db) => db.select({ one: sql`1` }).from(spans).where(and(...where)).limit(1));
  return found.some((rows) => rows.length > 0);
}

/** Closes a trace, where its spans are (the database its next spans go to); null when it was closed already. */
export async function closeTrace(logs: WorkspaceLogs, workspaceId: number, traceId: string): Promise<{ id: string; createdAt: number } | null> {
  const home = (await traceHomes(logs, workspaceId, [traceId])).get(traceId) ?? logs.current;
  const id = crypto.randomUUID();
  const rows = await home
    .insert(traceClosures)
    .values({ id, workspaceId, traceId, createdAt: Date.now() })
    .onConflictDoNothing()
    .returning({ id: traceClosures.id, createdAt: traceClosures.createdAt });
  return rows[0] ?? null;
}

/** The request log ids of a trace's spans (or of one span and its direct children), oldest first, from every period. */
export async function traceLogIds(logs: WorkspaceLogs, workspaceId: number, traceId: string, spanId: string | null): Promise<number[]> {
  let children: string[] = [];
  if (spanId) {
    const found = await eachPeriod(logs, (db) =>
      db
        .select({ id: spans.spanId })
        .from(spans)
        .where(and(eq(spans.workspaceId, workspaceId), eq(spans.traceId, traceId), eq(spans.parentSpanId, spanId))),
    );
    children = found.flat().map((r) => r.id);
  }
  const where = [eq(requestLogs.workspaceId, workspaceId), eq(requestLogs.traceId, traceId)];
  if (spanId) where.push(sql`(${requestLogs.spanId} = ${spanId} OR ${requestLogs.spanId} IN (SELECT value FROM json_each(${JSON.stringify(children)})))`);
  const found = await eachPeriod(logs, (db) =>
    db
      .select({ id: requestLogs.id, start: requestLogs.requestStartTime })
      .from(requestLogs)
      .where(and(...where))
      .orderBy(asc(requestLogs.requestStartTime), asc(requestLogs.id)),
  );
  return found
    .flat()
    .sort((a, b) => a.start - b.start || a.id - b.id)
    .map((r) => r.id);
}
