// Webhook registration: create (the signing secret is shown once, and stored sealed), rotate the
// secret, list, delete, and the delivery log of one webhook. Every query is scoped to the caller's
// workspace; another's id is 404.
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonList } from "../../db/sql";
import { webhookDeliveries, webhookDeliveryAttempts, webhookEvents, webhooks, type WebhookRow } from "../../db/schema";
import { endpointUrlProblem } from "../../blocks/endpoint";
import type { AuthContext } from "../../env";
import { newSecret, openSecret, sealSecret } from "./secrets";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import type { EventType } from "./events";
import { runBatch } from "../../db/batch";

/** Live webhooks a workspace may have (each event is one delivery per webhook; this bounds the fan-out). */
export const MAX_WEBHOOKS_PER_WORKSPACE = 20;
export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;

export function webhookView(w: WebhookRow) {
  return { id: w.id, url: w.url, description: w.description ?? null, events: w.events ?? null, created_at: toIso(w.createdAt) };
}

export interface CreateWebhookInput {
  url: string;
  events?: EventType[] | null;
  description?: string | null;
}

/**
 * Why a receiver URL may not be used, or null: the outbound guard's reasons, and plain http outside
 * local development (allowPrivateAddresses, ENDPOINT_ALLOW_PRIVATE_ADDRESSES): a delivery carries a
 * signature and the event's details, which must not cross the network in clear.
 */
export function webhookUrlProblem(url: string, allowPrivateAddresses: boolean): string | null {
  const problem = endpointUrlProblem(url, allowPrivateAddresses);
  if (problem) return problem;
  if (!allowPrivateAddresses && !url.toLowerCase().startsWith("https:")) {
    return "must be an https URL (plain http is taken only when ENDPOINT_ALLOW_PRIVATE_ADDRESSES is true, for local development)";
  }
  return null;
}

export async function createWebhook(db: Db, envKey: string | undefined, auth: AuthContext, input: CreateWebhookInput, allowPrivateAddresses: boolean) {
  const problem = webhookUrlProblem(input.url, allowPrivateAddresses);
  if (problem) throw new ApiError("validation_error", `url: ${problem}`);
  const events = input.events ? [...new Set(input.events)] : null;
  const secret = newSecret();
  const sealed = await sealSecret(envKey, auth.workspaceId, secret);
  const now = Date.now();
  const ws = auth.workspaceId;
  // The cap is part of the insert, so concurrent creations cannot pass it together.
  const [row] = await db
    .insert(webhooks)
    .select(
      sql`SELECT NULL, ${ws}, ${input.url}, ${input.description ?? null}, ${events ? JSON.stringify(events) : null}, ${sealed}, NULL, NULL, ${auth.userId}, ${now}, NULL
          WHERE (SELECT count(*) FROM ${webhooks} WHERE ${webhooks.workspaceId} = ${ws} AND ${webhooks.deletedAt} IS NULL) < ${MAX_WEBHOOKS_PER_WORKSPACE}`,
    )
    .returning();
  if (!row) {
    throw new ApiError("conflict", `the workspace already has ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks, the most it may have; delete one first`);
  }
  return { webhook: webhookView(row), secret };
}

export async function listWebhooks(db: Db, ws: number) {
  const rows = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.workspaceId, ws), isNull(webhooks.deletedAt)))
    .orderBy(webhooks.id);
  return rows.map(webhookView);
}

async function requireWebhook(db: Db, ws: number, id: number): Promise<WebhookRow> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.workspaceId, ws), eq(webhooks.id, id), isNull(webhooks.deletedAt)))
    .limit(1);
  if (!row) throw ApiError.notFound("webhook");
  return row;
}

/** The longest and the default overlap of a rotation: how long the replaced secret keeps signing. */
export const MAX_ROTATION_OVERLAP_SECONDS = 7 * 24 * 3600;
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 24 * 3600;

/**
 * A new signing secret, shown once. The replaced one keeps signing beside it for `overlapSeconds`
 * (0: it stops at once), so receivers can move to the new one without missing a delivery. A second
 * rotation during an overlap ends the first one's: only the secret it replaces overlaps.
 */
export async function rotateWebhookSecret(db: Db, envKey: string | undefined, ws: number, id: number, overlapSeconds: number) {
  const row = await requireWebhook(db, ws, id);
  const secret = newSecret();
  const now = Date.now();
  const [sealed, previous] = await Promise.all([
    sealSecret(envKey, ws, secret),
    overlapSeconds > 0 ? openSecret(envKey, ws, row.secret).then((old) => sealSecret(envKey, ws, old)) : Promise.resolve(null),
  ]);
  const until = overlapSeconds > 0 ? now + overlapSeconds * 1000 : null;
  const [updated] = await db
    .update(webhooks)
    .set({ secret: sealed, previousSecret: previous, previousSecretUntil: until })
    .where(and(eq(webhooks.workspaceId, ws), eq(webhooks.id, id), isNull(webhooks.deletedAt), eq(webhooks.secret, row.secret)))
    .returning();
  if (!updated) throw new ApiError("conflict", "the webhook's secret changed while rotating it (another rotation, or it was deleted); try again");
  return { webhook: webhookView(updated), secret, previous_secret_expires_at: until === null ? null : toIso(until) };
}

/** Deletes the webhook; deliveries still waiting for a retry are given up. */
export async function deleteWebhook(db: Db, ws: number, id: number): Promise<void> {
  await requireWebhook(db, ws, id);
  const now = Date.now();
  const [gone] = await runBatch(db, [
    db
      .update(webhooks)
      .set({ deletedAt: now })
      .where(and(eq(webhooks.workspaceId, ws), eq(webhooks.id, id), isNull(webhooks.deletedAt)))
      .returning({ id: webhooks.id }),
    db
      .update(webhookDeliveries)
      .set({ status: "failed", lastError: "the webhook was deleted", updatedAt: now })
      .where(and(eq(webhookDeliveries.webhookId, id), sql`${webhookDeliveries.status} IN ('pending', 'retrying')`)),
  ]);
  if (gone.results.length === 0) throw ApiError.notFound("webhook");
}

/** A page of the webhook's deliveries, newest first, each with every attempt made. */
export async function webhookDeliveriesPage(db: Db, ws: number, id: number, q: { page: number; per_page: number }) {
  await requireWebhook(db, ws, id);
  const d = webhookDeliveries;
  const where = and(eq(d.workspaceId, ws), eq(d.webhookId, id));
  const [{ n }] = await db.select({ n: sql<number>`count(*)` }).from(d).where(where);
  const rows = await db
    .select({ d, eventType: webhookEvents.eventType })
    .from(d)
    .innerJoin(webhookEvents, eq(webhookEvents.id, d.eventId))
    .where(where)
    .orderBy(desc(d.createdAt), desc(d.id))
    .limit(q.per_page)
    .offset((q.page - 1) * q.per_page);
  const ids = rows.map((r) => r.d.id);
  const attempts = ids.length
    ? await db
        .select()
        .from(webhookDeliveryAttempts)
        .where(and(eq(webhookDeliveryAttempts.workspaceId, ws), inJsonList(webhookDeliveryAttempts.deliveryId, ids)))
        .orderBy(webhookDeliveryAttempts.attempt)
    : [];
  const byDelivery = new Map<string, typeof attempts>();
  for (const a of attempts) byDelivery.set(a.deliveryId, [...(byDelivery.get(a.deliveryId) ?? []), a]);
  return {
    deliveries: rows.map(({ d: row, eventType }) => ({
      id: row.id,
      event_id: row.eventId,
      event_type: eventType,
      status: row.status,
      attempt_count: row.attempts,
      next_attempt_at: row.status === "retrying" || row.status === "pending" ? toIso(row.nextAttemptAt) : null,
      created_at: toIso(row.createdAt),
      attempts: (byDelivery.get(row.id) ?? []).map((a) => ({
        attempt: a.attempt,
        attempted_at: toIso(a.attemptedAt),
        status_code: a.statusCode ?? null,
        error: a.error ?? null,
        duration_ms: a.durationMs,
      })),
    })),
    page: q.page,
    per_page: q.per_page,
    total: n,
    pages: Math.ceil(n / q.per_page),
  };
}
