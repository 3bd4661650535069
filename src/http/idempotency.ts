// The Idempotency-Key header of the log writes (POST /log-request, POST /track-request): the header's
// schema for the route definitions, and the handler wrapper that replays a recorded answer, refuses a
// key used for another request (409), or runs the write with the key recorded in its batch. A request
// without the header is keyed by its body, the same way, for ten minutes: an SDK's retry of a call
// whose answer it never got is answered the first answer and stores nothing. The rules and the storage
// are src/logs/idempotency.ts's.
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { bodyRetryClaim, idempotencyFingerprint, isKeyTaken, recordAnswerStatements, recordedAnswer, winnerAnswer, type IdempotencyClaim, type RecordAnswer, type RecordedAnswer, type WorkspaceLogs } from "../logs";

const IDEMPOTENCY_KEY_MAX = 255;

/** Hono hands header validation lower-cased names, hence the key (header names are case-insensitive). */
export const IdempotencyKeyHeaders = z.object({
  "idempotency-key": z
    .string()
    .regex(new RegExp(`^[\\x21-\\x7e]{1,${IDEMPOTENCY_KEY_MAX}}$`), `must be 1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters without spaces`)
    .optional()
    .openapi({
      description:
        `Optional, 1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters (a UUID is usual). Sent again within 24 hours with the same body, the request makes no second log ` +
        "and gets the first answer again (same status and body, with the header Idempotent-Replayed: true); with another body (or on the other log route): 409. " +
        "Keys are the workspace's own. A request that failed (4xx) recorded nothing: its key is free.",
      example: "5f0c3a6e-2b7d-4c1e-9a4f-8d2e6b1c0a97",
    }),
});

export const IDEMPOTENCY_DOC =
  " With an Idempotency-Key header, a retry (same key, same body, within 24 hours) gets the first answer and makes no second log, also when two retries race; " +
  "the same key with another body is a 409. Without one, a body byte-identical to one this workspace sent to the same route in the last 10 minutes is a " +
  "retry too (the SDKs retry without a key) when its request_start_time and request_end_time are both finer than a second, as the SDKs write them: " +
  "the first answer again, with Idempotent-Replayed: true, and nothing stored. Bodies timed to the whole second are never taken for retries (docs/logging-and-search.md).";

/** A time written finer than a second: an ISO string with a fraction, seconds with a fraction, or milliseconds off a whole second. */
function subSecond(v: unknown): boolean {
  if (typeof v === "string") return /T\d{2}:\d{2}:\d{2}[.,]\d/.test(v) || (/^\d+\.\d*[1-9]/.test(v.trim()));
  if (typeof v !== "number" || !Number.isFinite(v)) return false;
  return !Number.isInteger(v) || (v >= 1e11 && v % 1000 !== 0);
}

/**
 * Whether a body sent without an Idempotency-Key may be taken for a retry of an earlier one (the same
 * bytes): only when both its request_start_time and request_end_time are finer than a second, as both
 * official SDKs write them (the JavaScript SDK an ISO string with milliseconds, the Python SDK seconds
 * with microseconds). Two calls alike to the second are two calls: a script with coarse or repeated
 * times sends an Idempotency-Key to be retried safely.
 */
export function timedFinely(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const b = body as Record<string, unknown>;
  return subSecond(b.request_start_time) && subSecond(b.request_end_time);
}

function replay(c: Context<AppEnv>, recorded: RecordedAnswer): Response {
  return c.body(recorded.answer, recorded.status as 200, { "Content-Type": "application/json", "Idempotent-Replayed": "true" });
}

/**
 * Answers a log write under its Idempotency-Key, if it has one. `write` makes the log, adding what
 * `record` returns to the log's batch (the key's row, or the body's), and gives the answer; `status` is the
 * answer's status.
 */
export async function answerIdempotently<T extends Record<string, unknown>>(
  c: Context<AppEnv>,
  logs: WorkspaceLogs,
  status: 200 | 201,
  write: (record: RecordAnswer | undefined) => Promise<T>,
): Promise<Response> {
  const key = c.req.header("idempotency-key");
  const ws = c.get("auth").workspaceId;
  const now = Date.now();
  const path = new URL(c.req.url).pathname;
  let claim: IdempotencyClaim;
  if (key === undefined) {
    // Only a body timed as finely as the SDKs time theirs can be a retry: two calls of a script with
    // whole-second times are two logs, however alike.
    if (!timedFinely(await c.req.json())) return c.json(await write(undefined), status);
    // The body's bytes as received (Hono keeps the text it parsed). No read before the write: the
    // key's row rides in the log's batch, and a retry finds it when that batch fails on it (below).
    claim = await bodyRetryClaim(c.req.method, path, await c.req.text());
  } else {
    // The body as parsed for validation (Hono keeps it), not the validated one with its defaults.
    claim = { key, fingerprint: await idempotencyFingerprint(c.req.method, path, await c.req.json()) };
    const before = await recordedAnswer(logs, ws, claim, now);
    if (before) return replay(c, before);
  }
  try {
    return c.json(await write((answer, idField, logId) => recordAnswerStatements(ws, claim, status, answer, idField, logId, now)), status);
  } catch (err) {
    if (!isKeyTaken(err)) throw err;
    // Another request with this key committed first; this one's batch was rolled back whole.
    const winner = await winnerAnswer(logs.current, ws, claim, now);
    if (!winner) throw err;
    return replay(c, winner);
  }
}
