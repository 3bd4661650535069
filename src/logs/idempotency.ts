// Idempotency keys of the log writes (POST /log-request, POST /track-request): a retried write with the
// same key and body gets the first answer again and makes no second log. The key row is written in the
// log's own batch (one transaction), so a key is never recorded without its log nor a log without its
// key; the (workspace, key) primary key makes the second of two racing writes fail whole, log and all,
// and that request then answers with what the first recorded. Keys live a day (IDEMPOTENCY_WINDOW_MS):
// an older row counts as absent and the cron deletes it.
//
// The table is clustered by (window, period, workspace, key), a period being window-long
// (floor(created_at / window)): a key's row is one entry written, and the cron deletes whole old
// periods, a range of the key, with no index on created_at beside it. A key is looked up in the
// periods around now (PERIODS_AROUND: a row within the window is in the current or the previous
// period, and the next one covers another Worker's clock a little ahead), and a write goes into the
// period of the key's live row when it has one: the primary key then makes it fail as before.
import { and, eq, gte, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { Statement } from "../db/batch";
import type { Db } from "../db/client";
import { idempotencyKeys } from "../db/schema";
import { sha256Hex } from "../lib/crypto";
import { ApiError } from "../lib/errors";
import { pythonJsonDumps } from "../lib/py-json";
import { columnList, isUniqueViolation } from "../db/sql";
import { eachPeriod, type WorkspaceLogs } from "./periods";

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * A request without an Idempotency-Key is keyed by its body: the same bytes again on the same route
 * within this window are a retry (the SDKs send both timestamps to the microsecond, so two real calls
 * never match). Its key starts with "body " (a space: no Idempotency-Key header can), and lives only
 * this long.
 */
export const BODY_RETRY_WINDOW_MS = 10 * 60 * 1000;
const BODY_KEY_PREFIX = "body ";

/** The claim of a request without an Idempotency-Key: its method, path and body bytes. */
export async function bodyRetryClaim(method: string, path: string, body: string): Promise<IdempotencyClaim> {
  const digest = await sha256Hex(`${method.toUpperCase()} ${path}\n${body}`);
  return { key: `${BODY_KEY_PREFIX}${digest}`, fingerprint: digest };
}

/** How long a claim's row counts: a day for an Idempotency-Key, ten minutes for a body. */
const windowOf = (claim: Pick<IdempotencyClaim, "key">) => (claim.key.startsWith(BODY_KEY_PREFIX) ? BODY_RETRY_WINDOW_MS : IDEMPOTENCY_WINDOW_MS);

/** What a key stands for: the key, and the request it was first used with. */
export interface IdempotencyClaim {
  key: string;
  fingerprint: string;
}

export interface RecordedAnswer {
  status: number;
  /** The answer's JSON text, as stored. */
  answer: string;
}

/**
 * The request a key is bound to: method, path and body as canonical JSON (keys sorted), so the same
 * body sent again with its keys in another order or other spacing is the same request. A top-level
 * `api_key` (track-request's key in the body) is a credential, not part of the request.
 */
export async function idempotencyFingerprint(method: string, path: string, body: unknown): Promise<string> {
  const content = body !== null && typeof body === "object" && !Array.isArray(body) ? { ...(body as Record<string, unknown>), api_key: undefined } : body;
  return sha256Hex(`${method.toUpperCase()} ${path}\n${pythonJsonDumps(content)}`);
}

const cutoff = (now: number, claim: Pick<IdempotencyClaim, "key"> = { key: "" }) => now - windowOf(claim);

/** The period of `now` in the claim's window, and the periods a live row of the key may be in. */
function periodsOf(claim: Pick<IdempotencyClaim, "key">, now: number): { window: number; current: number; around: number[] } {
  const window = windowOf(claim);
  const current = Math.floor(now / window);
  return { window, current, around: [current - 1, current, current + 1] };
}

/** SQL: the claim's rows in the periods around now that are still within its window. */
function liveRow(workspaceId: number, claim: IdempotencyClaim, now: number): SQL {
  const k = idempotencyKeys;
  const { window, around } = periodsOf(claim, now);
  return and(eq(k.windowMs, window), inArray(k.bucket, around), eq(k.workspaceId, workspaceId), eq(k.key, claim.key), gte(k.createdAt, cutoff(now, claim)))!;
}

/** The answer recorded under the key within the window; null when none is. Another request's key: 409. */
function answerFor(row: { fingerprint: string; status: number; answer: string } | undefined, claim: IdempotencyClaim): RecordedAnswer | null {
  if (!row) return null;
  if (row.fingerprint !== claim.fingerprint) {
    throw new ApiError("conflict", "Idempotency-Key: was used within the last 24 hours with another request (method, path or body); send a new key for a new request", {
      details: [{ field: "Idempotency-Key", rule: "was used with another request" }],
    });
  }
  return { status: row.status, answer: row.answer };
}

/**
 * Before the write: the answer to replay, if the key was used within the window (409 for another
 * request). A key is recorded beside its log, in the period that was current then: every period is
 * asked at once, and the newest that holds the key answers.
 */
export async function recordedAnswer(logs: WorkspaceLogs, workspaceId: number, claim: IdempotencyClaim, now: number): Promise<RecordedAnswer | null> {
  const found = await eachPeriod(logs, (db) =>
    db
      .select({ fingerprint: idempotencyKeys.fingerprint, status: idempotencyKeys.status, answer: idempotencyKeys.answer })
      .from(idempotencyKeys)
      .where(liveRow(workspaceId, claim, now))
      .limit(1),
  );
  return answerFor(found.flat()[0], claim);
}

/**
 * After a write lost the race for its key (isKeyTaken): the winner's answer. Read by a no-op UPDATE,
 * which D1 runs on the primary, where the winner's row is: a read could be served by a replica that
 * has not seen it yet.
 */
export async function winnerAnswer(logs: Db, workspaceId: number, claim: IdempotencyClaim, now: number): Promise<RecordedAnswer | null> {
  const [row] = await logs
    .update(idempotencyKeys)
    .set({ createdAt: sql`${idempotencyKeys.createdAt}` })
    .where(liveRow(workspaceId, claim, now))
    .returning({ fingerprint: idempotencyKeys.fingerprint, status: idempotencyKeys.status, answer: idempotencyKeys.answer });
  return answerFor(row, claim);
}

/**
 * The statements that record a write's answer in the write's own batch: an expired row of the key in
 * the periods around now is dropped (in practice there is none: a row in the current period is
 * live), then the key is inserted with the answer, `idField` set to the new log's id (`logId`, SQL
 * naming the row the batch inserted), into the period of the key's live row if it has one, else the
 * current period. A live row of the key makes the insert, so the batch, fail.
 */
export function recordAnswerStatements(
  workspaceId: number,
  claim: IdempotencyClaim,
  status: number,
  answer: Record<string, unknown>,
  idField: string,
  logId: SQL,
  now: number,
): SQL[] {
  const k = idempotencyKeys;
  const { window, current, around } = periodsOf(claim, now);
  const ofKey = and(eq(k.windowMs, window), inArray(k.bucket, around), eq(k.workspaceId, workspaceId), eq(k.key, claim.key));
  return [
    sql`DELETE FROM ${k} WHERE ${ofKey} AND ${lt(k.createdAt, cutoff(now, claim))}`,
    sql`INSERT INTO ${k} (${columnList(k, ["windowMs", "bucket", "workspaceId", "key", "fingerprint", "requestLogId", "status", "answer", "createdAt"])})
        VALUES (${window}, coalesce((SELECT ${k.bucket} FROM ${k} WHERE ${liveRow(workspaceId, claim, now)} LIMIT 1), ${current}), ${workspaceId}, ${claim.key}, ${claim.fingerprint}, ${logId}, ${status},
                json_set(${JSON.stringify(answer)}, ${`$.${idField}`}, ${logId}), ${now})`,
  ];
}

/** Records a write's answer in its batch: `answer` with the new log's id (`logId`, SQL) at `idField`. */
export type RecordAnswer = (answer: Record<string, unknown>, idField: string, logId: SQL) => Statement[];

/** Whether a write failed because its idempotency key was recorded meanwhile. */
export function isKeyTaken(err: unknown): boolean {
  return isUniqueViolation(err, idempotencyKeys);
}

/** Rows deleted per statement of the sweep (a range of the primary key). */
const SWEEP_CHUNK = 1000;

/**
 * Deletes keys past their window from one log database, a chunk at a time: Idempotency-Keys after a
 * day, body keys after ten minutes, each a range of the primary key (the periods up to the previous
 * one: every row before that is past its window, and the previous period's rows are read for their
 * time). The number deleted.
 */
export async function sweepIdempotencyKeys(logs: Db, now: number, maxChunks = 20): Promise<number> {
  let deleted = 0;
  const k = idempotencyKeys;
  const expired = [{ key: "" }, { key: BODY_KEY_PREFIX }].map((claim) => {
    const { window, current } = periodsOf(claim, now);
    return and(eq(k.windowMs, window), lt(k.bucket, current), lt(k.createdAt, cutoff(now, claim)))!;
  });
  for (const which of expired) {
    for (let i = 0; i < maxChunks; i++) {
      const res = await logs.run(sql`DELETE FROM ${k} WHERE (${k.windowMs}, ${k.bucket}, ${k.workspaceId}, ${k.key}) IN (
        SELECT ${k.windowMs}, ${k.bucket}, ${k.workspaceId}, ${k.key} FROM ${k} WHERE ${which} LIMIT ${SWEEP_CHUNK})`);
      const n = res.meta.changes ?? 0;
      deleted += n;
      if (n < SWEEP_CHUNK) break;
    }
  }
  return deleted;
}
