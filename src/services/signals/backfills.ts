// Backfills: a signal judges past logs. A backfill is a row here and a job on the jobs queue that pages
// through the workspace's logs in (request_start_time, id) order, database by database, samples them
// (deterministically, as hooks do), records the judgements owed beside the logs and announces them on
// the signals queue, then commits where it stands. A crash mid-way is resumed from that point by the
// job sweeper; a page read twice records nothing twice (the judgements owed are keyed by log and
// signal, and logs judged at the signal's revision are left out), so it finishes once. Progress past
// the paging (judged, errors, cost) is counted from the results themselves.
// The signals queue is every workspace's (live judgements and signal_triggered ride on it, first in,
// first out): a backfill keeps at most BACKFILL_WINDOW of its judgements owed at once, reading its next
// pages only as they are made, so a live judgement never waits behind more than that per backfill; and
// a workspace has at most JOB_CAPS.signal_backfill backfills open at once (a 429 beyond).
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { signalBackfills, type BackfillCursor, type SignalBackfillRow } from "../../db/schema";
import type { Deps } from "../../env";
import type { FilterGroup } from "../../filters";
import type { AuthContext } from "../../lib/auth-context";
import { ApiError } from "../../lib/errors";
import { enqueue, sendJudgements } from "../../lib/jobs";
import { toIso } from "../../lib/time";
import { JOB_CAPS, jobCapError, roomForJobSql } from "../workspace";
import { backfillCounts, backfillOwed, coveredLogsPage, dropBackfillJudgements, queueBackfillJudgements, type PendingJudgement } from "../../logs";
import { checkFiltersCompile, requireSignal } from "./definitions";
import { isSampled } from "./sampling";

export const MAX_BACKFILL_LOGS = 100_000;
export const DEFAULT_BACKFILL_LOGS = 1_000;
/** Open (queued or running) backfills a signal may have at once. */
export const MAX_OPEN_BACKFILLS = 3;
/** Logs read per page, and pages per delivery of the job (each delivery stays well within a Worker's budgets). */
const PAGE = 200;
const PAGES_PER_RUN = 5;
/** Once every log is read, how often the job looks whether what it queued has been judged. */
export const DRAIN_CHECK_SECONDS = 10;
/** Judgements a backfill has owed (queued and not made yet) at most: it reads on only below this. */
export const BACKFILL_WINDOW = 500;
/** With its window full, how long the job waits before it looks again. */
export const WINDOW_WAIT_SECONDS = 2;

export interface BackfillInput {
  from: number;
  to: number;
  filters?: FilterGroup | null;
  sample_rate?: number;
  max_logs?: number;
}

const OPEN = ["queued", "running"] as const;

/** The signal's open backfills, as SQL (for the guard inside the insert). */
const openOfSignal = (signalId: number) =>
  sql`(SELECT count(*) FROM ${signalBackfills} WHERE ${signalBackfills.signalId} = ${signalId} AND ${signalBackfills.status} IN ('queued', 'running'))`;

/** Open backfills a workspace may have at once, over all its signals (the job caps' rule). */
export const MAX_OPEN_BACKFILLS_PER_WORKSPACE = JOB_CAPS.signal_backfill;

export async function createBackfill(deps: Deps, auth: AuthContext, signalId: number, input: BackfillInput) {
  const ws = auth.workspaceId;
  await requireSignal(deps.db, ws, signalId);
  const now = deps.now();
  const filters = input.filters && input.filters.filters.length > 0 ? input.filters : null;
  checkFiltersCompile({ promptId: null, versionNumber: null, labelVersions: null, labelReleases: null, abVariant: null, filter: filters }, "filters");
  const [row] = await deps.db
    .insert(signalBackfills)
    .select(
      sql`SELECT NULL, ${ws}, ${signalId}, 'queued', ${input.from}, ${input.to}, ${filters ? JSON.stringify(filters) : null}, ${input.sample_rate ?? 1}, ${input.max_logs ?? DEFAULT_BACKFILL_LOGS},
                 0, 0, 0, NULL, NULL, NULL, 0, ${auth.userId}, ${now}, ${now}, NULL
          WHERE ${openOfSignal(signalId)} < ${MAX_OPEN_BACKFILLS} AND ${roomForJobSql("signal_backfill", ws)}`,
    )
    .returning();
  if (!row) {
    // Refused by one of the two caps read inside the insert: say which (the signal's first).
    const open = await deps.db.get<{ n: number }>(sql`SELECT ${openOfSignal(signalId)} AS n`);
    if ((open?.n ?? 0) >= MAX_OPEN_BACKFILLS) throw new ApiError("conflict", `the signal already has ${MAX_OPEN_BACKFILLS} backfills queued or running, the most it may have at once; wait for one or cancel it`);
    throw jobCapError("signal_backfill");
  }
  await enqueue(deps.jobs, { v: 1, kind: "signal_backfill", workspace_id: ws, backfill_id: row.id });
  return backfillView(row, { owed: 0, done: 0, errors: 0, cost: 0 });
}

function backfillView(row: SignalBackfillRow, counts: { owed: number; done: number; errors: number; cost: number }) {
  return {
    id: row.id,
    signal_id: row.signalId,
    status: row.status,
    from: toIso(row.fromMs),
    to: toIso(row.toMs),
    filters: (row.filters ?? null) as FilterGroup | null,
    sample_rate: row.sampleRate,
    max_logs: row.maxLogs,
    matched: row.matched,
    enqueued: row.enqueued,
    judged: counts.done,
    errors: counts.errors,
    skipped: row.skipped,
    remaining: counts.owed,
    cost_usd: Math.round(counts.cost * 1e9) / 1e9,
    error: row.error ?? null,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
    finished_at: row.finishedAt === null ? null : toIso(row.finishedAt),
  };
}
export type BackfillView = ReturnType<typeof backfillView>;

async function requireBackfill(db: Db, ws: number, signalId: number, id: number): Promise<SignalBackfillRow> {
  await requireSignal(db, ws, signalId);
  const [row] = await db
    .select()
    .from(signalBackfills)
    .where(and(eq(signalBackfills.workspaceId, ws), eq(signalBackfills.signalId, signalId), eq(signalBackfills.id, id)))
    .limit(1);
  if (!row) throw ApiError.notFound("backfill");
  return row;
}

/** Marks a backfill completed once every log is read and nothing it queued is still owed (the job does, and so does a read). */
async function completeIfDrained(db: Db, row: SignalBackfillRow, owed: number, now: number): Promise<SignalBackfillRow> {
  if (row.status !== "running" || row.pagedAt === null || owed > 0) return row;
  const [done] = await db
    .update(signalBackfills)
    .set({ status: "completed", finishedAt: now, updatedAt: now })
    .where(and(eq(signalBackfills.id, row.id), eq(signalBackfills.status, "running")))
    .returning();
  return done ?? row;
}

export async function getBackfill(deps: Deps, ws: number, signalId: number, id: number): Promise<BackfillView> {
  let row = await requireBackfill(deps.db, ws, signalId, id);
  const counts = await backfillCounts(await deps.logs(ws), id);
  row = await completeIfDrained(deps.db, row, counts.owed, deps.now());
  return backfillView(row, counts);
}

export async function listBackfills(deps: Deps, ws: number, signalId: number): Promise<BackfillView[]> {
  await requireSignal(deps.db, ws, signalId);
  const rows = await deps.db
    .select()
    .from(signalBackfills)
    .where(and(eq(signalBackfills.workspaceId, ws), eq(signalBackfills.signalId, signalId)))
    .orderBy(desc(signalBackfills.id))
    .limit(100);
  const logs = await deps.logs(ws);
  return Promise.all(rows.map(async (r) => backfillView(r, await backfillCounts(logs, r.id))));
}

/** Cancels an open backfill: it reads no more logs, and what it queued and was not judged yet is forgotten. */
export async function cancelBackfill(deps: Deps, ws: number, signalId: number, id: number): Promise<BackfillView> {
  const row = await requireBackfill(deps.db, ws, signalId, id);
  const now = deps.now();
  const [cancelled] = await deps.db
    .update(signalBackfills)
    .set({ status: "cancelled", finishedAt: now, updatedAt: now })
    .where(and(eq(signalBackfills.id, id), inArray(signalBackfills.status, [...OPEN])))
    .returning();
  if (!cancelled) throw new ApiError("conflict", `the backfill is already ${row.status}`);
  const logs = await deps.logs(ws);
  await dropBackfillJudgements(logs, id);
  return backfillView(cancelled, await backfillCounts(logs, id));
}

/** What the job does next: nothing (finished, cancelled), another delivery at once, or one after a wait. */
export type BackfillStep = "done" | "continue" | { waitSeconds: number };

/**
 * One delivery of a backfill's job: up to PAGES_PER_RUN pages while its window has room, or a look at
 * whether its judgements are all made. `pageSize` and `window` are the defaults but for tests.
 */
export async function runBackfill(deps: Deps, ws: number, id: number, pageSize = PAGE, window = BACKFILL_WINDOW): Promise<BackfillStep> {
  const db = deps.db;
  const now = deps.now();
  const [row] = await db
    .update(signalBackfills)
    .set({ status: "running", updatedAt: now })
    .where(and(eq(signalBackfills.workspaceId, ws), eq(signalBackfills.id, id), inArray(signalBackfills.status, [...OPEN])))
    .returning();
  if (!row) return "done";
  let signal;
  try {
    signal = await requireSignal(db, ws, row.signalId);
  } catch {
    await failBackfill(db, id, "the signal was deleted");
    return "done";
  }
  const store = await deps.logs(ws);
  if (row.pagedAt !== null) {
    const { owed } = await backfillCounts(store, id);
    const after = await completeIfDrained(db, row, owed, now);
    return after.status === "completed" ? "done" : { waitSeconds: DRAIN_CHECK_SECONDS };
  }
  const periods = [...store.periods].reverse();
  const coverage = { promptId: null, versionNumber: null, labelVersions: null, labelReleases: null, abVariant: null, filter: (row.filters ?? null) as FilterGroup | null };
  let cursor: BackfillCursor = row.cursor ?? { period: 0, after: null };
  let { matched, enqueued } = row;
  // The window: what it queued and is not judged yet. A page is read only with room for all it may
  // sample (a page of that size at most), and only once a whole page (or half the window) is free, so
  // pages stay worth a read. `outstanding` only grows here: judging meanwhile can only make more room.
  let outstanding = await backfillOwed(store, id);
  const least = Math.min(pageSize, Math.ceil(window / 2));
  let paged = false;
  let full = false;
  for (let pages = 0; pages < PAGES_PER_RUN; pages++) {
    if (cursor.period >= periods.length || enqueued >= row.maxLogs) {
      paged = true;
      break;
    }
    const room = window - outstanding;
    if (room < least) {
      full = true;
      break;
    }
    const logs = periods[cursor.period].db;
    const page = await coveredLogsPage(logs, ws, coverage, row.fromMs, row.toMs, cursor.after, Math.min(pageSize, room));
    if (page.length === 0) {
      cursor = { period: cursor.period + 1, after: null };
      continue;
    }
    const sampled = page.filter((l) => isSampled(signal.id, { backfill: id }, l.id, row.sampleRate));
    const owed: PendingJudgement[] = sampled.map((l) => ({ requestId: l.id, signalId: signal.id, workspaceId: ws, hookId: null, backfillId: id, notBefore: now }));
    const mine = await queueBackfillJudgements(logs, owed.slice(0, row.maxLogs - enqueued), signal.revision, now);
    await sendJudgements(
      deps.signalsQueue,
      mine.map((j) => ({ workspaceId: ws, requestId: j.requestId, signalId: j.signalId, delaySeconds: 0 })),
    );
    matched += page.length;
    enqueued += mine.length;
    outstanding += mine.length;
    cursor = { period: cursor.period, after: page[page.length - 1] };
    const [kept] = await db
      .update(signalBackfills)
      .set({ cursor, matched, enqueued, updatedAt: deps.now() })
      .where(and(eq(signalBackfills.id, id), eq(signalBackfills.status, "running")))
      .returning({ id: signalBackfills.id });
    // Cancelled meanwhile: what this page queued was already forgotten, or finds nothing owed.
    if (!kept) {
      await dropBackfillJudgements(store, id);
      return "done";
    }
  }
  // The window is full: look again once some of it is judged (each look is the job's heartbeat too).
  if (full) return { waitSeconds: WINDOW_WAIT_SECONDS };
  if (!paged) return "continue";
  await db
    .update(signalBackfills)
    .set({ pagedAt: deps.now(), updatedAt: deps.now() })
    .where(and(eq(signalBackfills.id, id), eq(signalBackfills.status, "running")));
  return { waitSeconds: 1 };
}

/** Ends a backfill as failed (the job sweeper's give-up, or its signal gone). */
export async function failBackfill(db: Db, id: number, reason: string): Promise<void> {
  const now = Date.now();
  await db
    .update(signalBackfills)
    .set({ status: "failed", error: reason, finishedAt: now, updatedAt: now })
    .where(and(eq(signalBackfills.id, id), inArray(signalBackfills.status, [...OPEN])));
}
