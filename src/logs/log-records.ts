// OTLP log records of traces, in the log store. A record is kept with its trace, in the database the
// trace lives in (trace-homes.ts), once per (workspace, trace, identity): sent again it changes nothing.
// The GenAI records of a span complete the request log the span made of itself, whichever arrives
// first: the span's ingestion reads the records already there (spans.ts), a records' ingestion joins
// them to a log already there (joinSpanLogs). A join writes only while the span's GenAI records are
// those it read (their count), so of two joins racing, the one that read fewer records writes nothing,
// and the one that saw every record is the last to write. The log's keyed search values (tools, output
// keys) follow its content in the same batch, and for an indexed log its counts and search entry too;
// a log the indexer has yet to see is indexed from its row as it is then.
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { col, columnList } from "../db/sql";
import { runBatch, type Statement } from "../db/batch";
import { requestLogs, spans, traceLogRecords, type SpanRow, type TraceLogRecordRow } from "../db/schema";
import type { AttrValue, LogRecordInput, SpanEvent, SpanInput } from "./span-input";
import { indexRowsOf, searchColumnsOf, textOf, toolsOf, type IndexRow } from "./index-rows";
import { chunkIndexRows, refreshSearchEntry } from "./search-index";
import { firstOverPeriods, type WorkspaceLogs } from "./periods";
import { encodeBlueprints, type Blueprints } from "./row-codec";
import { byTraceHome } from "./trace-homes";
import { replaceValues } from "./tracking";
import { decodeLogRow, type RequestLog } from "./write";
import { addCounts, redactJoinedContent, redactRecord } from "./redaction";
import type { AuthContext } from "../lib/auth-context";

/** What of a record a log's content is read from. */
export type JoinedRecord = Pick<LogRecordInput, "eventName" | "timeMs" | "body" | "attributes">;
/** The part of a log that a span's records complete. */
export type LogContent = Pick<Blueprints, "input" | "output">;
/** A span's log content given its GenAI records (null: the span makes no log of its own). The mapping is the caller's (src/traces/). */
export type LogContentOf = (span: SpanInput, records: JoinedRecord[]) => LogContent | null;

/** A log joins at most this many of its span's GenAI records, and at most this many bytes of them (bodies and attributes as JSON), oldest first; the rest stay readable in the trace. */
export const JOIN_LIMITS = { records: 1000, bytes: 512 * 1024 } as const;

const lr = traceLogRecords;
/** The records a join reads: GenAI events (gen_ai.user.message, gen_ai.choice, …), not a trace's other logs. */
const GENAI = sql`${col(lr.eventName)} GLOB 'gen_ai.*'`;

export type SpanKey = [traceId: string, spanId: string];
const keyOf = (traceId: string, spanId: string) => `${traceId}:${spanId}`;

/** SQL: how many GenAI records the span (`traceId`, `spanId`: values or columns) has. */
export function genAiRecordCount(ws: number, traceId: SQL | string, spanId: SQL | string): SQL<number> {
  return sql<number>`(SELECT count(*) FROM ${lr} AS gr WHERE gr.${col(lr.workspaceId)} = ${ws} AND gr.${col(lr.traceId)} = ${traceId} AND gr.${col(lr.spanId)} = ${spanId} AND gr.${GENAI})`;
}

/** The GenAI records of each span among `keys` that has some, oldest first (by time, then arrival), within JOIN_LIMITS, with how many it has in all. */
export async function spanRecords(db: Db, ws: number, keys: readonly SpanKey[]): Promise<Map<string, JoinSource>> {
  const out = new Map<string, JoinSource & { bytes: number }>();
  for (const json of chunkIndexRows(keys)) {
    const rows = await db.all<{ t: string; s: string; e: string | null; tm: number; b: string | null; a: string; x: string | null; total: number }>(sql`
      SELECT t, s, e, tm, b, a, x, total FROM (
        SELECT ${col(lr.traceId)} AS t, ${col(lr.spanId)} AS s, ${col(lr.eventName)} AS e, ${col(lr.time)} AS tm, ${col(lr.body)} AS b, ${col(lr.attributes)} AS a, ${col(lr.redactions)} AS x,
               row_number() OVER (PARTITION BY ${col(lr.traceId)}, ${col(lr.spanId)} ORDER BY ${col(lr.time)}, ${col(lr.id)}) AS n,
               count(*) OVER (PARTITION BY ${col(lr.traceId)}, ${col(lr.spanId)}) AS total
        FROM ${lr}
        WHERE ${col(lr.workspaceId)} = ${ws} AND (${col(lr.traceId)}, ${col(lr.spanId)}) IN (SELECT value ->> 0, value ->> 1 FROM json_each(${json})) AND ${GENAI}
      ) WHERE n <= ${JOIN_LIMITS.records} ORDER BY t, s, n`);
    for (const r of rows) {
      const k = keyOf(r.t, r.s);
      let entry = out.get(k);
      if (!entry) out.set(k, (entry = { records: [], count: r.total, bytes: 0, redactions: null }));
      const size = (r.b ?? "null").length + r.a.length;
      // Past the budget nothing more is taken, so the log never skips a record and shows a later one.
      if (entry.bytes + size > JOIN_LIMITS.bytes) {
        entry.bytes = Number.POSITIVE_INFINITY;
        continue;
      }
      entry.bytes += size;
      if (r.x) entry.redactions = addCounts(entry.redactions, JSON.parse(r.x) as Record<string, number>);
      entry.records.push({ eventName: r.e, timeMs: r.tm, body: JSON.parse(r.b ?? "null") as AttrValue, attributes: JSON.parse(r.a) as Record<string, AttrValue> });
    }
  }
  return new Map([...out].map(([k, { records, count, redactions }]) => [k, { records, count, redactions }]));
}

/** A span's GenAI records as a join reads them: those taken, how many it has in all, and what the taken ones redacted. */
export interface JoinSource {
  records: JoinedRecord[];
  count: number;
  redactions: Record<string, number> | null;
}

/** A stored span as the mapping reads it. */
function spanInputOf(r: SpanRow): SpanInput {
  return {
    traceId: r.traceId,
    spanId: r.spanId,
    parentSpanId: r.parentSpanId,
    name: r.name,
    kind: r.kind,
    startTimeMs: r.startTime,
    endTimeMs: r.endTime,
    status: { code: r.statusCode, message: r.statusMessage },
    attributes: r.attributes as Record<string, AttrValue>,
    events: r.events as SpanEvent[],
    resource: r.resource as Record<string, AttrValue>,
  };
}

/** The keyed values a log's content makes (tool names, the keys of a JSON answer). */
const contentRows = (c: LogContent): IndexRow[] => indexRowsOf({ tools: toolsOf(c), outputText: textOf(c.output), tags: [], metadata: {}, prompt_input_variables: {} });

const sameContent = (a: LogContent, b: LogContent) => JSON.stringify([a.input, a.output]) === JSON.stringify([b.input, b.output]);

/**
 * Statements giving `log` the content `next` (its texts and keyed values with it), each only `when`
 * holds. Counts and the search entry move only for an indexed log (replaceValues' statements test it).
 */
function contentStatements(db: Db, ws: number, log: RequestLog, next: LogContent, when: SQL, redactions: Record<string, number> | null): Statement[] {
  const search = searchColumnsOf(next);
  const [before, after] = [contentRows(log), contentRows(next)];
  // The same keyed values: only the texts change (the search entry's too).
  const change = JSON.stringify(before) !== JSON.stringify(after) ? replaceValues(ws, log.id, ["tool", "output"], null, after, when) : null;
  return [
    ...(change?.before ?? []),
    db
      .update(requestLogs)
      .set({ ...encodeBlueprints({ ...next, parameters: log.parameters }, search), ...search, redactions, ...(change ? { extraValues: change.extra } : {}) })
      .where(and(eq(requestLogs.id, log.id), eq(requestLogs.workspaceId, ws), when)),
    ...(change?.after ?? [refreshSearchEntry(log.id, when)]),
  ];
}

/** Spans joined per batch: each brings its log's blueprints as bound values. */
const JOIN_BATCH = 25;

/**
 * Gives each span among `keys` that made its log of itself the content its GenAI records complete
 * (when that changes the log), in `db` (the trace's database).
 */
export async function joinSpanLogs(db: Db, auth: Pick<AuthContext, "workspaceId" | "redaction">, keys: readonly SpanKey[], contentOf: LogContentOf): Promise<void> {
  const ws = auth.workspaceId;
  for (let at = 0; at < keys.length; at += JOIN_BATCH) {
    const chunk = keys.slice(at, at + JOIN_BATCH);
    const sources = await spanRecords(db, ws, chunk);
    if (sources.size === 0) continue;
    const rows = await db
      .select({ span: spans, log: requestLogs })
      .from(spans)
      .innerJoin(requestLogs, and(eq(requestLogs.id, spans.requestLogId), eq(requestLogs.workspaceId, spans.workspaceId)))
      .where(
        and(
          eq(spans.workspaceId, ws),
          eq(spans.logFromSpan, true),
          sql`(${spans.traceId}, ${spans.spanId}) IN (SELECT value ->> 0, value ->> 1 FROM json_each(${JSON.stringify(chunk.filter(([t, s]) => sources.has(keyOf(t, s))))}))`,
        ),
      );
    const statements: Statement[] = [];
    for (const { span, log: row } of rows) {
      const source = sources.get(keyOf(span.traceId, span.spanId))!;
      const made = contentOf(spanInputOf(span), source.records);
      if (!made) continue;
      const { content: next, redactions } = await redactJoinedContent(auth, made);
      const log = decodeLogRow(row);
      if (sameContent(log, next)) continue;
      const unchanged = sql`${genAiRecordCount(ws, span.traceId, span.spanId)} = ${source.count}`;
      // The log's findings: those of the span's own content, of the records it now joins, and of the content they make.
      statements.push(...contentStatements(db, ws, log, next, unchanged, addCounts(span.redactions, source.redactions, redactions)));
    }
    await runBatch(db, statements);
  }
}

/**
 * Stores an export's records (each in its trace's database, once), then joins the GenAI ones to the
 * logs their spans made. `contentOf` is the mapping of spans to log content.
 */
export async function storeLogRecords(store: WorkspaceLogs, auth: AuthContext, given: readonly LogRecordInput[], contentOf: LogContentOf): Promise<void> {
  const ws = auth.workspaceId;
  // Redacted by the workspace's policy before anything is stored (the record's key, a hash of it as sent, stays).
  const records: (LogRecordInput & { redactions: Record<string, number> | null })[] = [];
  for (const r of given) {
    const out = await redactRecord(auth, r);
    records.push({ ...out.record, redactions: out.redactions });
  }
  const byHome = await byTraceHome(store, ws, records, (r) => r.traceId);
  const now = Date.now();
  for (const [db, mine] of byHome) {
    const rows = mine.map((r) => ({
      t: r.traceId,
      s: r.spanId,
      k: r.key,
      tm: r.timeMs,
      ot: r.observedTimeMs,
      sn: r.severityNumber,
      st: r.severityText,
      en: r.eventName,
      b: r.body,
      a: r.attributes,
      r: r.resource,
      o: r.scope,
      f: r.flags,
      x: r.redactions,
    }));
    // One batch per database: the records of an export are stored whole or not at all.
    await runBatch(
      db,
      chunkIndexRows(rows, 512 * 1024).map(
        (json) => sql`
        INSERT INTO ${lr} (${columnList(lr, ["workspaceId", "traceId", "spanId", "recordKey", "time", "observedTime", "severityNumber", "severityText", "eventName",
                                             "body", "attributes", "resource", "scope", "flags", "redactions", "createdAt"])})
        SELECT ${ws}, j.value ->> 't', j.value ->> 's', j.value ->> 'k', j.value ->> 'tm', j.value ->> 'ot', j.value ->> 'sn', j.value ->> 'st', j.value ->> 'en',
               j.value -> 'b', j.value -> 'a', j.value -> 'r', j.value -> 'o', j.value ->> 'f', nullif(j.value -> 'x', 'null'), ${now}
        FROM json_each(${json}) AS j
        WHERE true ON CONFLICT DO NOTHING`,
      ),
    );
    const spanKeys = new Map<string, SpanKey>();
    for (const r of mine) if (r.spanId && r.eventName?.startsWith("gen_ai.")) spanKeys.set(keyOf(r.traceId, r.spanId), [r.traceId, r.spanId]);
    await joinSpanLogs(db, auth, [...spanKeys.values()], contentOf);
  }
}

/** The first `limit` records of a trace, by time then arrival, from every period; empty when the workspace has none. */
export async function traceLogRecordRows(logs: WorkspaceLogs, ws: number, traceId: string, limit: number): Promise<TraceLogRecordRow[]> {
  return firstOverPeriods(
    logs,
    limit,
    (db) =>
      db
        .select()
        .from(traceLogRecords)
        .where(and(eq(traceLogRecords.workspaceId, ws), eq(traceLogRecords.traceId, traceId)))
        .orderBy(asc(traceLogRecords.time), asc(traceLogRecords.id))
        .limit(limit),
    (a, b) => a.time - b.time || a.id - b.id,
  );
}
