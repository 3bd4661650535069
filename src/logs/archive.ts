// Aging out: request logs older than a workspace's retention window move from D1 to R2 as gzip NDJSON
// files (one per workspace, UTC day and id range), listed in the request_log_archives manifest; reads
// by id and the export reach both tiers. Each line is the log exactly as GET /requests/{id} answers
// it. A file is built in memory as gzip (bounded by ARCHIVE_FILE_MAX_BYTES of NDJSON, a small share
// of an isolate's 128 MB) and read back as a stream, never whole.
//
// Crash safety: (1) pick the oldest logs of one whole past day, ids ascending; (2) write the object
// under a key made of workspace, day, id range and revisions only; (3) in one D1 batch, write the manifest row
// and delete exactly those logs. A crash before (3) leaves an object no manifest row names: readers
// never look at it, and the retry writes the same key again. After (3) the logs are gone from D1 and
// covered by the manifest, so every log is in exactly one tier at every moment. A log updated between
// (2) and (3) (a score, metadata, its trace) has a new revision: (3) then writes and deletes nothing,
// and the next run copies the log as it is now.
//
// The steps (pick, upload, commit) and the readers' inner parts take one log database as `logs`; the
// job and the readers take the workspace's logs (every period, periods.ts) and go through its
// databases; the retention settings come from the control database (`db`).
import { and, asc, desc, eq, getTableName, gt, gte, isNotNull, lt, lte, min, sql } from "drizzle-orm";
import { runBatch } from "../db/batch";
import { d1Of, type Db } from "../db/client";
import { requestLogArchives, requestLogs, signalPending, signalResults, workspaces } from "../db/schema";
import { col, columnList, columnNames, inJsonList } from "../db/sql";
import { isCounted } from "./search-index";
import { decodeLogRow, getRequestLogs, requestLogView } from "./write";
import { resultsQuery, shownVerdicts, verdictsByLog, verdictsOf, type Verdict } from "./signal-results";
import { signalNamesOf } from "./signal-names";
import type { WorkspaceLogs } from "./periods";

export const DAY_MS = 86_400_000;

/** Bounds of the setting (days a log stays in D1); null keeps every log in D1. */
export const LOG_RETENTION_DAYS = { min: 1, max: 3650 } as const;

/** A log as GET /requests/{id} answers it: its view and its Signals verdicts (src/logs/signal-results.ts). */
export type ArchivedLog = ReturnType<typeof requestLogView> & { signals: Verdict[] };

export interface ArchiveSettings {
  /** Logs per file at most. */
  fileMaxLogs: number;
  /** NDJSON bytes per file at most (before gzip): a file is built in memory. One larger log still makes a file alone. */
  fileMaxBytes: number;
  /** Files written per run at most; the next cron run goes on. */
  runMaxFiles: number;
}

export const DEFAULT_ARCHIVE_SETTINGS: ArchiveSettings = { fileMaxLogs: 2000, fileMaxBytes: 32 * 1024 * 1024, runMaxFiles: 10 };

function positive(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** The Worker's settings the archive reads (wrangler.toml vars). */
export interface ArchiveEnv {
  ARCHIVE_FILE_MAX_LOGS?: string;
  ARCHIVE_FILE_MAX_BYTES?: string;
  ARCHIVE_RUN_MAX_FILES?: string;
}

export function archiveSettings(env: ArchiveEnv): ArchiveSettings {
  return {
    fileMaxLogs: positive(env.ARCHIVE_FILE_MAX_LOGS, DEFAULT_ARCHIVE_SETTINGS.fileMaxLogs),
    fileMaxBytes: positive(env.ARCHIVE_FILE_MAX_BYTES, DEFAULT_ARCHIVE_SETTINGS.fileMaxBytes),
    runMaxFiles: positive(env.ARCHIVE_RUN_MAX_FILES, DEFAULT_ARCHIVE_SETTINGS.runMaxFiles),
  };
}

const dayOf = (ms: number) => ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
const isoDay = (day: number) => new Date(day).toISOString().slice(0, 10);

/**
 * Logs whose UTC day ends at or before this instant are past a window of `days`: whole days only, so
 * a day's files hold every log of that day in their id ranges, and a live log of a day never has an
 * id inside one of that day's files (a log logged later has a larger id than any file's last id).
 */
export function archiveCutoff(now: number, days: number): number {
  return dayOf(now - days * DAY_MS);
}

/**
 * A file's key: its workspace, day, id range and the sum of its logs' revisions. Revisions only grow,
 * so a copy taken after an update has another key than one taken before it, and a slow run's stale
 * copy can never overwrite a newer one under the key a manifest row names.
 */
export function archiveKey(workspaceId: number, day: number, firstId: number, lastId: number, revisions = 0): string {
  return `log-archive/${workspaceId}/${isoDay(day)}/${firstId}-${lastId}-r${revisions}.ndjson.gz`;
}

/** Step 1 and 2's result: the object written, and the logs it holds. */
export interface ArchiveFile {
  workspaceId: number;
  day: number;
  key: string;
  ids: number[];
  /** Each log's revision when it was copied, in the order of `ids`. */
  revisions: number[];
  bytes: number;
}

/**
 * Step 1: the oldest whole day past the cutoff that still has logs, and its first logs by id (ids
 * only), up to the first one not indexed and counted in the daily totals yet (a log of a past day
 * logged just now): a file never holds a log before its daily totals are counted, and that log, the
 * first left, keeps every later file of the day above it.
 */
export async function pickArchiveBatch(logs: Db, workspaceId: number, cutoff: number, settings: ArchiveSettings): Promise<{ day: number; ids: number[] } | null> {
  const [oldest] = await logs
    .select({ start: min(requestLogs.requestStartTime) })
    .from(requestLogs)
    .where(and(eq(requestLogs.workspaceId, workspaceId), lt(requestLogs.requestStartTime, cutoff)));
  if (oldest?.start === null || oldest?.start === undefined) return null;
  const day = dayOf(oldest.start);
  const rows = await logs
    .select({ id: requestLogs.id, indexed: sql<number>`${isCounted(`${getTableName(requestLogs)}.${requestLogs.id.name}`)}` })
    .from(requestLogs)
    .where(and(eq(requestLogs.workspaceId, workspaceId), gte(requestLogs.requestStartTime, day), lt(requestLogs.requestStartTime, day + DAY_MS)))
    .orderBy(requestLogs.id)
    .limit(settings.fileMaxLogs);
  const waiting = rows.findIndex((r) => !r.indexed);
  return { day, ids: (waiting < 0 ? rows : rows.slice(0, waiting)).map((r) => r.id) };
}

/** Rows read from D1 per query while a file is built. */
const READ_PAGE = 50;

/**
 * Step 2: the picked logs as gzip NDJSON under their key (stopping early at fileMaxBytes; the file then
 * holds a prefix of the ids). Writing the same logs again writes the same key. `control`: the control
 * database, for the names of the signals whose verdicts the lines hold (a test's one database by default).
 */
export async function uploadArchiveFile(logs: Db, blobs: R2Bucket, workspaceId: number, batch: { day: number; ids: number[] }, settings: ArchiveSettings, control: Db = logs): Promise<ArchiveFile | null> {
  const gzip = new CompressionStream("gzip");
  const writer = gzip.writable.getWriter();
  const compressed = new Response(gzip.readable).arrayBuffer();
  const encoder = new TextEncoder();
  const written: number[] = [];
  const revisions: number[] = [];
  let size = 0;
  try {
    outer: for (let at = 0; at < batch.ids.length; at += READ_PAGE) {
      const page = batch.ids.slice(at, at + READ_PAGE);
      const verdicts = await verdictsByLog(logs, control, workspaceId, page);
      for (const row of await getRequestLogs(logs, workspaceId, page)) {
        const line = encoder.encode(`${JSON.stringify({ ...requestLogView(row), signals: verdicts.get(row.id) ?? [] })}\n`);
        if (written.length > 0 && size + line.byteLength > settings.fileMaxBytes) break outer;
        await writer.write(line);
        written.push(row.id);
        revisions.push(row.revision);
        size += line.byteLength;
      }
    }
  } finally {
    await writer.close();
  }
  const body = await compressed;
  if (written.length === 0) return null;
  const key = archiveKey(workspaceId, batch.day, written[0], written[written.length - 1], revisions.reduce((a, b) => a + b, 0));
  await blobs.put(key, body, {
    httpMetadata: { contentType: "application/gzip" },
    customMetadata: { workspace_id: String(workspaceId), day: isoDay(batch.day), logs: String(written.length) },
  });
  return { workspaceId, day: batch.day, key, ids: written, revisions, bytes: body.byteLength };
}

/**
 * Step 3, one transaction: the manifest row, then the logs it covers are deleted (their side rows by
 * cascade, their FTS entries by trigger; daily totals and facet counts stay). The row is written only
 * while every one of the file's logs is still in D1 at the revision the file holds, and the delete
 * only under a manifest row with the file's key, so a log is never deleted uncovered and an update is
 * never deleted unarchived. False when another run committed the same file, or a log changed since.
 */
export async function commitArchiveFile(logs: Db, file: ArchiveFile): Promise<boolean> {
  const copied = JSON.stringify(file.ids.map((id, i) => [id, file.revisions[i]]));
  const inFile = sql`${requestLogs.workspaceId} = ${file.workspaceId} AND ${requestLogs.requestStartTime} >= ${file.day}
    AND ${requestLogs.requestStartTime} < ${file.day + DAY_MS} AND ${inJsonList(requestLogs.id, file.ids)}`;
  const [inserted] = await runBatch(logs, [
    sql`INSERT INTO ${requestLogArchives} (${columnList(requestLogArchives, ["workspaceId", "day", "objectKey", "firstId", "lastId", "logCount", "bytes"])})
      SELECT ${file.workspaceId}, ${file.day}, ${file.key}, ${file.ids[0]}, ${file.ids[file.ids.length - 1]}, ${file.ids.length}, ${file.bytes}
      WHERE (SELECT count(*) FROM ${requestLogs} JOIN json_each(${copied}) AS c
               ON ${requestLogs.id} = json_extract(c.value, '$[0]') AND ${requestLogs.revision} = json_extract(c.value, '$[1]')
             WHERE ${inFile}) = ${file.ids.length}
      ON CONFLICT (${col(requestLogArchives.objectKey)}) DO NOTHING`,
    sql`DELETE FROM ${requestLogs} WHERE ${inFile} AND EXISTS (SELECT 1 FROM ${requestLogArchives} WHERE ${requestLogArchives.objectKey} = ${file.key})`,
    // The logs' Signals results go with them (their lines hold them); the signals' daily totals stay.
    ...[signalResults, signalPending].map(
      (t) => sql`DELETE FROM ${t} WHERE ${inJsonList(t.requestId, file.ids)} AND ${t.workspaceId} = ${file.workspaceId} AND EXISTS (SELECT 1 FROM ${requestLogArchives} WHERE ${requestLogArchives.objectKey} = ${file.key})`,
    ),
  ]);
  return (inserted.meta.changes ?? 0) > 0;
}

/**
 * One file of a workspace: steps 1 to 3. Null when nothing of the workspace is past the window;
 * `committed` false when the batch wrote nothing (a log changed meanwhile, or another run committed
 * the same copy): the next call goes on.
 */
export async function archiveNextFile(
  logs: Db,
  blobs: R2Bucket,
  workspaceId: number,
  cutoff: number,
  settings: ArchiveSettings,
  control: Db = logs,
): Promise<(ArchiveFile & { committed: boolean }) | null> {
  const batch = await pickArchiveBatch(logs, workspaceId, cutoff, settings);
  if (!batch || batch.ids.length === 0) return null;
  const file = await uploadArchiveFile(logs, blobs, workspaceId, batch, settings, control);
  if (!file) return null;
  const committed = await commitArchiveFile(logs, file);
  if (!committed) await dropUncommitted(logs, blobs, file);
  return { ...file, committed };
}

/**
 * After a batch that wrote nothing: the object goes unless a manifest row names its key (another run
 * committed the same copy). With no such row, one of its logs is gone or updated since the copy, and
 * neither comes undone (ids are never reused, revisions only grow), so no run can ever commit this
 * key: it would only sit in R2 unread.
 */
async function dropUncommitted(logs: Db, blobs: R2Bucket, file: ArchiveFile): Promise<void> {
  const [named] = await logs.select({ id: requestLogArchives.id }).from(requestLogArchives).where(eq(requestLogArchives.objectKey, file.key)).limit(1);
  if (!named) await blobs.delete(file.key);
}

/** The next file of a workspace over its periods: the oldest period's past logs first (each file holds one database's logs). */
async function archiveNextFileOf(logs: WorkspaceLogs, blobs: R2Bucket, workspaceId: number, cutoff: number, settings: ArchiveSettings) {
  for (const { db } of [...logs.periods].reverse()) {
    const file = await archiveNextFile(db, blobs, workspaceId, cutoff, settings, logs.control);
    if (file) return file;
  }
  return null;
}

export interface ArchiveRun {
  files: number;
  logs: number;
}

/**
 * The cron's job: for every workspace with a retention window, archive the oldest past logs, one file
 * per workspace in turn (the first workspace turns with the minute, so a busy one never starves the
 * rest), until runMaxFiles files are written or nothing is left. `logsFor` names the log database of
 * a workspace. The run's totals count the files committed and their logs.
 */
export async function archiveOldLogs(db: Db, logsFor: (workspaceId: number) => Promise<WorkspaceLogs>, blobs: R2Bucket, settings: ArchiveSettings, now: number): Promise<ArchiveRun> {
  const due = await db
    .select({ id: workspaces.id, days: workspaces.logRetentionDays })
    .from(workspaces)
    .where(isNotNull(workspaces.logRetentionDays))
    .orderBy(workspaces.id);
  const turn = Math.floor(now / 60_000) % Math.max(due.length, 1);
  let queue = [...due.slice(turn), ...due.slice(0, turn)];
  const run: ArchiveRun = { files: 0, logs: 0 };
  // The bound counts every file written to R2; the totals only the ones committed.
  let written = 0;
  while (queue.length > 0 && written < settings.runMaxFiles) {
    const next: typeof queue = [];
    for (const ws of queue) {
      if (written >= settings.runMaxFiles) break;
      const file = await archiveNextFileOf(await logsFor(ws.id), blobs, ws.id, archiveCutoff(now, ws.days!), settings);
      if (!file) continue;
      written += 1;
      if (file.committed) {
        run.files += 1;
        run.logs += file.ids.length;
      }
      next.push(ws);
    }
    queue = next;
  }
  return run;
}

/** The lines of a gzip NDJSON object, one at a time. */
async function* objectLines(object: R2ObjectBody): AsyncGenerator<string> {
  const reader = object.body.pipeThrough(new DecompressionStream("gzip")).pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    rest += value;
    let nl: number;
    while ((nl = rest.indexOf("\n")) >= 0) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      if (line) yield line;
    }
  }
  if (rest) yield rest;
}

/** A line's log id, from its head (requestLogView puts request_id second) without parsing the whole log. */
function lineId(line: string): number {
  const head = /^\{"success":true,"request_id":(\d+),/.exec(line);
  return head ? Number(head[1]) : (JSON.parse(line) as ArchivedLog).request_id;
}

async function openArchive(blobs: R2Bucket, key: string): Promise<R2ObjectBody> {
  const object = await blobs.get(key);
  // A manifest row is written only after its object: a missing one is lost data, not a bad request.
  if (!object) throw new Error(`archived log file ${key} is listed in the manifest but missing from R2`);
  return object;
}

/** The line of an archived log of the workspace, or null: in the database whose range holds the id, the manifest rows whose range holds it, then their files. */
export async function findArchivedLogLine(store: WorkspaceLogs, blobs: R2Bucket, workspaceId: number, id: number): Promise<string | null> {
  const logs = await store.holding(id);
  return logs ? archivedLineIn(logs, blobs, workspaceId, id) : null;
}

async function archivedLineIn(logs: Db, blobs: R2Bucket, workspaceId: number, id: number): Promise<string | null> {
  const files = await logs
    .select({ key: requestLogArchives.objectKey })
    .from(requestLogArchives)
    .where(and(eq(requestLogArchives.workspaceId, workspaceId), lte(requestLogArchives.firstId, id), gte(requestLogArchives.lastId, id)))
    .orderBy(desc(requestLogArchives.firstId));
  for (const f of files) {
    for await (const line of objectLines(await openArchive(blobs, f.key))) {
      const at = lineId(line);
      if (at === id) return line;
      if (at > id) break;
    }
  }
  return null;
}

/** A log of the workspace as GET /requests/{id} shows it, from D1 or else from the archive, in the database whose range holds the id. */
export async function readRequestLog(store: WorkspaceLogs, blobs: R2Bucket, workspaceId: number, id: number): Promise<ArchivedLog | null> {
  const logs = await store.holding(id);
  if (!logs) return null;
  // The log and its Signals results in one round trip.
  const [rows, results] = await logs.batch([
    logs
      .select()
      .from(requestLogs)
      .where(and(eq(requestLogs.id, id), eq(requestLogs.workspaceId, workspaceId)))
      .limit(1),
    resultsQuery(logs, workspaceId, id),
  ]);
  // Verdicts under their signals' current names, a deleted signal's left out: one more read, only for a log with verdicts.
  const namesOf = (verdicts: readonly { signal_id: number }[]) => (verdicts.length === 0 ? new Map<number, string>() : signalNamesOf(store.control, workspaceId, verdicts.map((v) => v.signal_id)));
  if (rows[0]) return { ...requestLogView(decodeLogRow(rows[0])), signals: verdictsOf(results, await namesOf(results.map((r) => ({ signal_id: r.signalId })))) };
  const line = await archivedLineIn(logs, blobs, workspaceId, id);
  if (line === null) return null;
  // A file written before Signals holds no verdicts.
  const archived = JSON.parse(line) as ArchivedLog;
  const held = archived.signals ?? [];
  return { ...archived, signals: shownVerdicts(held, await namesOf(held)) };
}

type Manifest = { id: number; day: number; key: string };

/** The workspace's manifest rows of days meeting [from, to), in day and id order, a page at a time. */
async function* manifestRows(logs: Db, workspaceId: number, from: number, to: number, seq: { above: number; atMost: number }): AsyncGenerator<Manifest> {
  let after = { day: Number.MIN_SAFE_INTEGER, firstId: -1 };
  for (;;) {
    const rows = await logs
      .select({ id: requestLogArchives.id, day: requestLogArchives.day, key: requestLogArchives.objectKey, firstId: requestLogArchives.firstId })
      .from(requestLogArchives)
      .where(
        and(
          eq(requestLogArchives.workspaceId, workspaceId),
          gte(requestLogArchives.day, dayOf(from)),
          lt(requestLogArchives.day, to),
          sql`(${requestLogArchives.day} > ${after.day} OR (${requestLogArchives.day} = ${after.day} AND ${requestLogArchives.firstId} > ${after.firstId}))`,
          gt(requestLogArchives.id, seq.above),
          lte(requestLogArchives.id, seq.atMost),
        ),
      )
      .orderBy(asc(requestLogArchives.day), asc(requestLogArchives.firstId))
      .limit(100);
    for (const r of rows) yield r;
    if (rows.length < 100) return;
    after = rows[rows.length - 1];
  }
}

/** Where the live scan was when it read one page: its last (start, id), and the newest manifest row it saw. */
interface PageMark {
  start: number;
  id: number;
  seq: number;
}

const before = (a: { start: number; id: number }, b: { start: number; id: number }) => a.start < b.start || (a.start === b.start && a.id <= b.id);

export interface ExportOptions {
  /** Live logs read per page. */
  pageSize?: number;
  /** Called after each page of live logs (tests run the archive job there). */
  onPage?: () => Promise<void>;
}

/**
 * Every log of the workspace with request_start_time in [from, to), once each, as NDJSON lines (each
 * ending in a newline): the archived files of those days in manifest order, then the live logs in
 * (request_start_time, id) order a page at a time, then the files the archive job wrote meanwhile.
 *
 * The job may move logs while this runs. A live page is read together with the newest manifest row
 * then (its mark), and skips a log a manifest row already covers. A file written later holds a log
 * the live scan showed unless the log's page mark had already seen the file, or the log vanished
 * between a page's ids and its rows; those are the logs the last phase sends.
 */
export async function* exportLogs(logs: WorkspaceLogs, blobs: R2Bucket, workspaceId: number, from: number, to: number, options: ExportOptions = {}): AsyncGenerator<string> {
  // Period by period, the oldest first: each database's files and live logs, as below. A log is in
  // one database, so none comes twice.
  for (const { db } of [...logs.periods].reverse()) yield* exportFrom(db, logs.control, blobs, workspaceId, from, to, options);
}

// The export's pages are SQL built as text (numbered parameters, reused), with the tables' names from the schema.
const LOGS = getTableName(requestLogs);
const ARCHIVES = getTableName(requestLogArchives);
const R = columnNames(requestLogs);
const A = columnNames(requestLogArchives);

/** exportLogs over one database. */
async function* exportFrom(logs: Db, control: Db, blobs: R2Bucket, workspaceId: number, from: number, to: number, options: ExportOptions): AsyncGenerator<string> {
  const pageSize = options.pageSize ?? 200;
  const d1 = d1Of(logs);
  const newest = `SELECT coalesce(max(${A.id}), 0) AS seq FROM ${ARCHIVES} WHERE ${A.workspaceId} = ?1`;
  const firstSeq = (await d1.prepare(newest).bind(workspaceId).first<{ seq: number }>())!.seq;
  const inRange = (log: { start: number }) => log.start >= from && log.start < to;
  const startOf = (line: string) => Date.parse((JSON.parse(line) as ArchivedLog).request_start_time);

  // An archived line's verdicts are shown as a live log's are (under their signals' current names, a
  // deleted signal's left out): the workspace's signals read once, when a line with verdicts first needs them.
  let names: Promise<Map<number, string>> | null = null;
  const shown = async (line: string) => {
    if (line.endsWith(`"signals":[]}`) || !line.includes(`"signals":[`)) return line;
    const log = JSON.parse(line) as ArchivedLog;
    return JSON.stringify({ ...log, signals: shownVerdicts(log.signals, await (names ??= signalNamesOf(control, workspaceId))) });
  };
  async function* fileLines(m: Manifest, keep: (line: string) => boolean): AsyncGenerator<string> {
    const whole = m.day >= from && m.day + DAY_MS <= to;
    for await (const line of objectLines(await openArchive(blobs, m.key))) {
      if ((whole || inRange({ start: startOf(line) })) && keep(line)) yield `${await shown(line)}\n`;
    }
  }

  // 1. Files written before the export began.
  for await (const m of manifestRows(logs, workspaceId, from, to, { above: -1, atMost: firstSeq })) yield* fileLines(m, () => true);

  // 2. Live logs. Ids and marks come from one batch (one transaction), so they agree.
  const page = `SELECT r.${R.id}, r.${R.requestStartTime} AS start,
      EXISTS (SELECT 1 FROM ${ARCHIVES} AS a WHERE a.${A.workspaceId} = r.${R.workspaceId}
        AND a.${A.day} = r.${R.requestStartTime} - (r.${R.requestStartTime} % ${DAY_MS}) AND a.${A.firstId} <= r.${R.id} AND a.${A.lastId} >= r.${R.id}) AS archived
    FROM ${LOGS} AS r
    WHERE r.${R.workspaceId} = ?1 AND r.${R.requestStartTime} >= ?2 AND r.${R.requestStartTime} < ?3
      AND (r.${R.requestStartTime} > ?4 OR (r.${R.requestStartTime} = ?4 AND r.${R.id} > ?5))
    ORDER BY r.${R.requestStartTime}, r.${R.id} LIMIT ?6`;
  const marks: PageMark[] = [];
  const vanished = new Set<number>();
  let after = { start: from - 1, id: -1 };
  for (;;) {
    const [seqs, found] = await runBatch(logs, [d1.prepare(newest).bind(workspaceId), d1.prepare(page).bind(workspaceId, from, to, after.start, after.id, pageSize)]);
    const seq = (seqs.results[0] as { seq: number }).seq;
    const rows = found.results as { id: number; start: number; archived: number }[];
    const wanted = rows.filter((r) => !r.archived).map((r) => r.id);
    const read = new Map((await getRequestLogs(logs, workspaceId, wanted)).map((r) => [r.id, r]));
    const verdicts = await verdictsByLog(logs, control, workspaceId, wanted);
    for (const r of rows) {
      const row = read.get(r.id);
      if (row) yield `${JSON.stringify({ ...requestLogView(row), signals: verdicts.get(r.id) ?? [] })}\n`;
      else if (!r.archived) vanished.add(r.id);
    }
    const last = rows.length < pageSize ? { start: Number.MAX_SAFE_INTEGER, id: Number.MAX_SAFE_INTEGER } : { start: rows[rows.length - 1].start, id: rows[rows.length - 1].id };
    // Marks only grow; pages that saw the same manifest collapse into one.
    if (marks.length > 0 && marks[marks.length - 1].seq === seq) marks[marks.length - 1] = { ...last, seq };
    else marks.push({ ...last, seq });
    await options.onPage?.();
    if (rows.length < pageSize) break;
    after = last;
  }

  // 3. Files written while the live logs were read: only the logs the live scan did not show.
  const markOf = (log: { start: number; id: number }) => marks.find((m) => before(log, m))!;
  for await (const m of manifestRows(logs, workspaceId, from, to, { above: firstSeq, atMost: Number.MAX_SAFE_INTEGER })) {
    yield* fileLines(m, (line) => {
      const id = lineId(line);
      return vanished.has(id) || m.id <= markOf({ start: startOf(line), id }).seq;
    });
  }
}
