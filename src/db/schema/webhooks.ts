// Webhooks. Events go to an outbox (webhook_events) in the same batch as the change
// that causes them; dispatch fans each event out to one delivery per subscribed webhook, and the
// queue consumer makes the attempts, each one logged.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";
import { workspaces } from "./accounts";

/** A workspace's receiver. `events` null: every event type (those added later too). */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    url: text("url").notNull(),
    description: text("description"),
    events: text("events", { mode: "json" }).$type<string[] | null>(),
    /**
     * The signing secret, sealed like environment variables (lib/secret-box.ts, "v1:…"): HMAC needs the
     * secret itself, so it cannot be hashed. Rows written before sealing hold it in plain text until the
     * cron seals them (services/webhooks/secrets.ts). Never returned after creation or rotation.
     */
    secret: text("secret").notNull(),
    /** The secret a rotation replaced (sealed), still signing beside the new one until previous_secret_until. */
    previousSecret: text("previous_secret"),
    previousSecretUntil: integer("previous_secret_until"),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("webhooks_workspace").on(t.workspaceId, t.deletedAt)],
);

/** The outbox. `id` is random, or deterministic where one change must give one event (a job's end). */
export const webhookEvents = sqliteTable(
  "webhook_events",
  {
    id: text("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull(),
    userId: integer("user_id"),
    eventType: text("event_type").notNull(),
    details: text("details", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    createdAt: integer("created_at").notNull().default(now),
    /** Set once the event's deliveries exist; null rows are what dispatch (and the sweeper) pick up. */
    dispatchedAt: integer("dispatched_at"),
  },
  (t) => [
    index("webhook_events_undispatched").on(t.workspaceId, t.createdAt).where(sql`dispatched_at IS NULL`),
    index("webhook_events_created").on(t.createdAt),
  ],
);

export const WEBHOOK_DELIVERY_STATUSES = ["pending", "sending", "retrying", "delivered", "failed"] as const;

export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** One event to one webhook; `id` is the Standard Webhooks `webhook-id` (the same on every attempt). */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull(),
    webhookId: integer("webhook_id").notNull(),
    eventId: text("event_id").notNull(),
    status: text("status", { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    /** While an attempt is in flight: after this time the attempt is presumed lost and may be made again. */
    leaseUntil: integer("lease_until"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_webhook").on(t.eventId, t.webhookId),
    index("webhook_deliveries_webhook").on(t.webhookId, t.createdAt),
    index("webhook_deliveries_open").on(t.nextAttemptAt).where(sql`status IN ('pending', 'sending', 'retrying')`),
    // The sweeper's retention pass reads closed deliveries by age every minute: without this it scans them all.
    index("webhook_deliveries_closed").on(t.createdAt).where(sql`status IN ('delivered', 'failed')`),
  ],
);

/** The delivery log: every attempt, its time, the receiver's status code (null: no answer) and error. */
export const webhookDeliveryAttempts = sqliteTable(
  "webhook_delivery_attempts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull(),
    deliveryId: text("delivery_id").notNull(),
    attempt: integer("attempt").notNull(),
    attemptedAt: integer("attempted_at").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
  },
  (t) => [uniqueIndex("webhook_delivery_attempts_number").on(t.deliveryId, t.attempt)],
);

export type WebhookRow = typeof webhooks.$inferSelect;

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
