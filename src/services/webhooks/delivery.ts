// Webhook dispatch and delivery. Dispatch turns a workspace's undispatched outbox events into one
// delivery per subscribed webhook (idempotent: unique per event and webhook) and queues them; the
// consumer makes one attempt per message (a lease keeps two copies of a message from both sending),
// logs it, and on a non-2xx answer, a timeout or a refused connection queues the next attempt with
// exponential backoff, until the last allowed attempt marks the delivery failed. The scheduled
// sweeper re-dispatches events and re-queues deliveries whose queue message was lost.
import type { Deps, Env } from "../../env";
import { webhookUrlProblem } from "./webhooks";
import { sealPlainSecrets, signingSecrets } from "./secrets";
import { toHex } from "../../lib/crypto";
import { chainForLog } from "../../lib/error-text";
import { pythonJsonDumps } from "../../lib/py-json";
import { toIso } from "../../lib/time";
import type { JobMessage } from "../../lib/jobs";
import { and, eq, gte, lt, sql } from "drizzle-orm";
import { webhookDeliveries, webhookDeliveryAttempts, webhookEvents, webhooks } from "../../db/schema";
import { col, columnList } from "../../db/sql";
import { runBatch } from "../../db/batch";

/** What delivery needs: the database, the jobs queue, and its settings. */
export type WebhookDeps = Pick<Deps, "db" | "jobs"> & { env: Partial<Env> };

export interface DeliverySettings {
  timeoutMs: number;
  maxAttempts: number;
  retryBaseSeconds: number;
  allowPrivateAddresses: boolean;
}

const intVar = (v: string | undefined, fallback: number, min: number) => {
  const n = Number(v);
  return v !== undefined && v !== "" && Number.isInteger(n) && n >= min ? n : fallback;
};

export function deliverySettings(env: Partial<Env>): DeliverySettings {
  return {
    timeoutMs: intVar(env.WEBHOOK_TIMEOUT_MS, 10_000, 1),
    maxAttempts: intVar(env.WEBHOOK_MAX_ATTEMPTS, 8, 1),
    retryBaseSeconds: intVar(env.WEBHOOK_RETRY_BASE_SECONDS, 30, 0),
    allowPrivateAddresses: env.ENDPOINT_ALLOW_PRIVATE_ADDRESSES === "true",
  };
}

/** Seconds before attempt n+1 after attempt n failed: base, 2×base, 4×base … at most an hour. */
export function retryDelay(attempt: number, baseSeconds: number): number {
  return Math.min(3600, baseSeconds * 2 ** Math.max(0, Math.min(attempt - 1, 20)));
}

/** Messages per Queue.sendBatch call (the platform's limit). */
const SEND_BATCH = 100;

async function queueDeliveries(deps: WebhookDeps, rows: { id: string; workspace_id: number }[]): Promise<void> {
  for (let i = 0; i < rows.length; i += SEND_BATCH) {
    const batch = rows.slice(i, i + SEND_BATCH).map((r) => ({
      body: { v: 1, kind: "webhook_delivery", workspace_id: r.workspace_id, delivery_id: r.id } satisfies JobMessage,
      contentType: "json" as const,
    }));
    await deps.jobs.sendBatch(batch);
  }
}

/** Events one dispatch round fans out (× at most MAX_WEBHOOKS_PER_WORKSPACE deliveries), and rounds per call. */
export const DISPATCH_EVENTS_PER_ROUND = 100;
export const DISPATCH_ROUNDS = 5;

/**
 * Fans the workspace's undispatched events out to deliveries and queues them, oldest first, in rounds of
 * DISPATCH_EVENTS_PER_ROUND events: a backlog (dispatch down for a while) never becomes one unbounded
 * statement, result or send loop; what one call leaves is taken by the next dispatch or the sweeper.
 * Safe to run twice or concurrently: a delivery is unique per (event, webhook), and both statements of a
 * round are one transaction. A webhook receives only events that happened after it was registered.
 */
export async function dispatchEvents(deps: WebhookDeps, workspaceId: number): Promise<number> {
  let queued = 0;
  for (let round = 0; round < DISPATCH_ROUNDS; round++) {
    const now = Date.now();
    // The same events in both statements: the INSERT does not change what the subquery selects.
    const [ev, wh, d] = [webhookEvents, webhooks, webhookDeliveries];
    const chunk = sql`SELECT c.${col(ev.id)} FROM ${ev} AS c WHERE c.${col(ev.workspaceId)} = ${workspaceId} AND c.${col(ev.dispatchedAt)} IS NULL
      ORDER BY c.${col(ev.createdAt)}, c.${col(ev.id)} LIMIT ${DISPATCH_EVENTS_PER_ROUND}`;
    const [inserted, marked] = await runBatch(deps.db, [
      sql`INSERT INTO ${d} (${columnList(d, ["id", "workspaceId", "webhookId", "eventId", "status", "attempts", "nextAttemptAt", "createdAt", "updatedAt"])})
          SELECT 'msg_' || lower(hex(randomblob(16))), e.${col(ev.workspaceId)}, w.${col(wh.id)}, e.${col(ev.id)}, 'pending', 0, ${now}, ${now}, ${now}
          FROM ${ev} AS e
          JOIN ${wh} AS w ON w.${col(wh.workspaceId)} = e.${col(ev.workspaceId)} AND w.${col(wh.deletedAt)} IS NULL AND w.${col(wh.createdAt)} <= e.${col(ev.createdAt)}
          WHERE e.${col(ev.id)} IN (${chunk})
            AND (w.${col(wh.events)} IS NULL OR e.${col(ev.eventType)} IN (SELECT value FROM json_each(w.${col(wh.events)})))
          ON CONFLICT (${col(d.eventId)}, ${col(d.webhookId)}) DO NOTHING
          RETURNING ${col(d.id)}, ${col(d.workspaceId)}`,
      sql`UPDATE ${ev} SET ${col(ev.dispatchedAt)} = ${now} WHERE ${ev.id} IN (${chunk})`,
    ]);
    const rows = inserted.results as { id: string; workspace_id: number }[];
    await queueDeliveries(deps, rows);
    queued += rows.length;
    if ((marked.meta.changes ?? 0) < DISPATCH_EVENTS_PER_ROUND) break;
  }
  return queued;
}

/** Dispatches after a request or job; a failure is logged, never surfaced (the sweeper retries it). */
export async function dispatchQuietly(deps: WebhookDeps, workspaces: number[]): Promise<void> {
  for (const ws of workspaces) {
    try {
      await dispatchEvents(deps, ws);
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "webhook dispatch failed; the sweeper will retry", workspace_id: ws, error: chainForLog(err) }));
    }
  }
}

// ---- signing ----

const encoder = new TextEncoder();

async function hmac(secret: string, data: string): Promise<ArrayBuffer> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return crypto.subtle.sign("HMAC", key, encoder.encode(data));
}

function base64(buf: ArrayBuffer): string {
  let s = "";
  for (const b of new Uint8Array(buf)) s += String.fromCharCode(b);
  return btoa(s);
}

export interface Envelope {
  event_type: string;
  details: unknown;
  workspace_id: number;
  user_id: number | null;
  timestamp: string;
}

/**
 * The body and headers of one attempt. The secret's UTF-8 bytes are the HMAC key of both signatures.
 * During a rotation's overlap (`previous` set) both secrets sign: webhook-signature lists both
 * (Standard Webhooks' space-separated list, the new one first); X-PromptLayer-Signature, one value
 * that receivers compare whole, stays the previous secret's until the overlap ends, so a receiver
 * not yet moved keeps verifying, and X-PromptLayer-Signature-New carries the new secret's.
 */
export async function signedRequest(envelope: Envelope, secret: string, webhookId: string, nowSeconds: number, previous: string | null = null) {
  const body = pythonJsonDumps(envelope);
  const timestamp = String(nowSeconds);
  const standardText = `${webhookId}.${timestamp}.${body}`;
  const [plain, standard] = await Promise.all([hmac(secret, body), hmac(secret, standardText)]);
  const [oldPlain, oldStandard] = previous === null ? [null, null] : await Promise.all([hmac(previous, body), hmac(previous, standardText)]);
  return {
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": "PromptEdge-Webhooks/1",
      "x-promptlayer-signature": toHex(oldPlain ?? plain),
      ...(oldPlain ? { "x-promptlayer-signature-new": toHex(plain) } : {}),
      "webhook-id": webhookId,
      "webhook-timestamp": timestamp,
      "webhook-signature": oldStandard ? `v1,${base64(standard)} v1,${base64(oldStandard)}` : `v1,${base64(standard)}`,
    },
  };
}

// ---- one attempt ----

interface Claimed {
  attempts: number;
  event_id: string;
  webhook_id: number;
}

interface Target {
  event_type: string;
  details: string;
  user_id: number | null;
  created_at: number;
  url: string | null;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_until: number | null;
  deleted_at: number | null;
}

export type AttemptOutcome = { state: "skipped" } | { state: "delivered" | "retrying" | "failed"; attempt: number; statusCode: number | null; error: string | null };

const ERROR_TEXT = 300;

async function post(url: string, init: { body: string; headers: Record<string, string> }, timeoutMs: number, fetchImpl: typeof fetch) {
  try {
    const res = await fetchImpl(url, { method: "POST", body: init.body, headers: init.headers, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    // Only the start of the answer matters (for the log); the rest is not read.
    const text = res.ok ? "" : (await res.text().catch(() => "")).slice(0, 200);
    if (!res.ok && res.body && !res.bodyUsed) await res.body.cancel().catch(() => {});
    return { statusCode: res.status, error: res.ok ? null : `the receiver answered ${res.status}${text ? `: ${text}` : ""}` };
  } catch (err) {
    const name = err instanceof Error ? err.name : "";
    if (name === "TimeoutError" || name === "AbortError") return { statusCode: null, error: `no answer within ${timeoutMs} ms` };
    return { statusCode: null, error: `could not connect: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * Makes the next attempt of a delivery, if one is due and no other copy of the message is making it.
 * Every attempt is logged; the delivery ends delivered (2xx) or, after maxAttempts, failed.
 */
export async function deliverWebhook(
  deps: WebhookDeps,
  workspaceId: number,
  deliveryId: string,
  opts: { fetch?: typeof fetch; settings?: Partial<DeliverySettings> } = {},
): Promise<AttemptOutcome> {
  const s = { ...deliverySettings(deps.env), ...opts.settings };
  const db = deps.db;
  const started = Date.now();
  // An attempt whose lease ran out without an outcome (the Worker died mid-send) was made all the same:
  // with no attempt left the delivery fails, or a delivery that keeps dying would be retried forever.
  const d = webhookDeliveries;
  const [, claimedResult] = await runBatch(db, [
    db
      .update(d)
      .set({ status: "failed", leaseUntil: null, lastError: "the last attempt gave no outcome (it was cut off) and no attempt is left", updatedAt: started })
      .where(and(eq(d.id, deliveryId), eq(d.workspaceId, workspaceId), eq(d.status, "sending"), lt(d.leaseUntil, started), gte(d.attempts, s.maxAttempts))),
    sql`UPDATE ${d} SET ${col(d.status)} = 'sending', ${col(d.attempts)} = ${col(d.attempts)} + 1, ${col(d.leaseUntil)} = ${started + s.timeoutMs + 60_000}, ${col(d.updatedAt)} = ${started}
        WHERE ${d.id} = ${deliveryId} AND ${d.workspaceId} = ${workspaceId}
          AND ((${d.status} IN ('pending', 'retrying') AND ${d.nextAttemptAt} <= ${started + 1000}) OR (${d.status} = 'sending' AND ${d.leaseUntil} < ${started}))
        RETURNING ${col(d.attempts)}, ${col(d.eventId)}, ${col(d.webhookId)}`,
  ]);
  const claimed = (claimedResult.results[0] as Claimed | undefined) ?? null;
  if (!claimed) return { state: "skipped" };
  const [ev, wh] = [webhookEvents, webhooks];

  const target = await db.get<Target>(
    sql`SELECT e.${col(ev.eventType)}, e.${col(ev.details)}, e.${col(ev.userId)}, e.${col(ev.createdAt)}, w.${col(wh.url)}, w.${col(wh.secret)}, w.${col(wh.previousSecret)}, w.${col(wh.previousSecretUntil)}, w.${col(wh.deletedAt)}
        FROM ${ev} AS e LEFT JOIN ${wh} AS w ON w.${col(wh.id)} = ${claimed.webhook_id} AND w.${col(wh.workspaceId)} = e.${col(ev.workspaceId)}
        WHERE e.${col(ev.id)} = ${claimed.event_id} AND e.${col(ev.workspaceId)} = ${workspaceId}`,
  );
  if (!target || target.url === null || target.secret === null || target.deleted_at !== null) {
    await db
      .update(d)
      .set({ status: "failed", attempts: sql`${d.attempts} - 1`, leaseUntil: null, lastError: "the webhook was deleted before the event could be sent", updatedAt: Date.now() })
      .where(eq(d.id, deliveryId));
    return { state: "skipped" };
  }

  const attempt = claimed.attempts;
  let result: { statusCode: number | null; error: string | null };
  const problem = webhookUrlProblem(target.url, s.allowPrivateAddresses);
  if (problem) {
    result = { statusCode: null, error: `not sent: the url ${problem}` };
  } else {
    const secrets = await signingSecrets(deps.env.ENV_VARS_KEY, workspaceId, { ...target, secret: target.secret });
    const envelope: Envelope = {
      event_type: target.event_type,
      details: JSON.parse(target.details) as unknown,
      workspace_id: workspaceId,
      user_id: target.user_id,
      timestamp: toIso(target.created_at),
    };
    const request = await signedRequest(envelope, secrets.current, deliveryId, Math.floor(Date.now() / 1000), secrets.previous);
    result = await post(target.url, request, s.timeoutMs, opts.fetch ?? fetch);
  }

  const finished = Date.now();
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  // A URL the guard refuses stays refused: retrying cannot help.
  const state = ok ? "delivered" : problem || attempt >= s.maxAttempts ? "failed" : "retrying";
  const delay = state === "retrying" ? retryDelay(attempt, s.retryBaseSeconds) : 0;
  const error = result.error?.slice(0, ERROR_TEXT) ?? null;
  await runBatch(db, [
    db
      .insert(webhookDeliveryAttempts)
      .values({ workspaceId, deliveryId, attempt, attemptedAt: started, statusCode: result.statusCode, error, durationMs: finished - started })
      .onConflictDoNothing({ target: [webhookDeliveryAttempts.deliveryId, webhookDeliveryAttempts.attempt] }),
    db
      .update(d)
      .set({ status: state, nextAttemptAt: finished + delay * 1000, leaseUntil: null, lastStatusCode: result.statusCode, lastError: error, updatedAt: finished })
      .where(and(eq(d.id, deliveryId), eq(d.attempts, attempt))),
  ]);
  if (state === "retrying") {
    await deps.jobs.send({ v: 1, kind: "webhook_delivery", workspace_id: workspaceId, delivery_id: deliveryId } satisfies JobMessage, {
      contentType: "json",
      delaySeconds: delay,
    });
  }
  return { state, attempt, statusCode: result.statusCode, error };
}

// ---- the safety net ----

/** Events older than this without deliveries, and deliveries this overdue, are picked up by the sweeper. */
const SWEEP_GRACE_MS = 60_000;
/** Delivered and failed deliveries (and their events and attempts) are kept this long. */
const RETENTION_MS = 30 * 24 * 3600_000;
const SWEEP_LIMIT = 500;

/** Run by the cron trigger: dispatch what was missed, re-queue what was lost, forget what is old. */
/** The retention pass's pick of closed deliveries older than `cutoff` (read through webhook_deliveries_closed). */
export const closedDeliveriesBefore = (cutoff: number) =>
  sql`SELECT ${webhookDeliveries.id} FROM ${webhookDeliveries} WHERE ${webhookDeliveries.createdAt} < ${cutoff} AND ${webhookDeliveries.status} IN ('delivered', 'failed')
    LIMIT ${sql.raw(String(SWEEP_LIMIT))}`;

export async function sweepWebhooks(deps: WebhookDeps, now = Date.now()): Promise<{ workspaces: number; requeued: number; sealed: number }> {
  // Webhooks registered before secrets were sealed are sealed here, a batch a minute.
  const sealed = await sealPlainSecrets(deps.db, deps.env.ENV_VARS_KEY);
  const [ev, d] = [webhookEvents, webhookDeliveries];
  const stale = await deps.db.all<{ workspace_id: number }>(
    sql`SELECT DISTINCT ${ev.workspaceId} FROM ${ev} WHERE ${ev.dispatchedAt} IS NULL AND ${ev.createdAt} < ${now - SWEEP_GRACE_MS} LIMIT 100`,
  );
  await dispatchQuietly(deps, stale.map((r) => r.workspace_id));

  const overdue = await deps.db.all<{ id: string; workspace_id: number }>(
    sql`SELECT ${d.id}, ${d.workspaceId} FROM ${d}
        WHERE ${d.status} IN ('pending', 'sending', 'retrying') AND ${d.nextAttemptAt} < ${now - SWEEP_GRACE_MS} AND (${d.leaseUntil} IS NULL OR ${d.leaseUntil} < ${now})
        ORDER BY ${d.nextAttemptAt} LIMIT ${SWEEP_LIMIT}`,
  );
  await queueDeliveries(deps, overdue);

  const cutoff = now - RETENTION_MS;
  await runBatch(deps.db, [
    sql`DELETE FROM ${webhookDeliveryAttempts} WHERE ${webhookDeliveryAttempts.deliveryId} IN (${closedDeliveriesBefore(cutoff)})`,
    sql`DELETE FROM ${d} WHERE ${d.id} IN (${closedDeliveriesBefore(cutoff)})`,
    sql`DELETE FROM ${ev} WHERE ${ev.id} IN (SELECT e.${col(ev.id)} FROM ${ev} AS e WHERE e.${col(ev.createdAt)} < ${cutoff} AND e.${col(ev.dispatchedAt)} IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM ${d} AS d WHERE d.${col(d.eventId)} = e.${col(ev.id)}) LIMIT ${SWEEP_LIMIT})`,
  ]);
  return { workspaces: stale.length, requeued: overdue.length, sealed };
}

