// Shapes of the webhook endpoints.
import { z } from "@hono/zod-openapi";
import { QueryInt } from "../../lib/query";
import { DEFAULT_ROTATION_OVERLAP_SECONDS, EVENT_TYPES, MAX_DESCRIPTION_LENGTH, MAX_ROTATION_OVERLAP_SECONDS, MAX_URL_LENGTH } from "../../services/webhooks";

export const EventTypeSchema = z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(", ")}` });

export const CreateWebhookBody = z
  .object({
    url: z
      .string({ error: "is required and must be a string" })
      .min(1, `must be 1 to ${MAX_URL_LENGTH} characters`)
      .max(MAX_URL_LENGTH, `must be 1 to ${MAX_URL_LENGTH} characters`)
      .openapi({
        description:
          "https URL the events are POSTed to; plain http, and loopback, private and link-local hosts, are refused unless ENDPOINT_ALLOW_PRIVATE_ADDRESSES is on (local dev).",
      }),
    events: z
      .array(EventTypeSchema)
      .min(1, "must name at least one event type (omit it to receive every event)")
      .max(EVENT_TYPES.length * 2, `at most ${EVENT_TYPES.length * 2} items`)
      .nullish()
      .openapi({ description: "Event types to receive; omitted or null: every event type, including ones added later. Repeats count once." }),
    description: z.string().max(MAX_DESCRIPTION_LENGTH, `must be at most ${MAX_DESCRIPTION_LENGTH} characters`).nullish(),
  })
  .openapi("CreateWebhookRequest");

export const WebhookSchema = z
  .object({
    id: z.int(),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.string()).nullable().openapi({ description: "null: every event type" }),
    created_at: z.string(),
  })
  .openapi("Webhook");

export const DeliverySchema = z
  .object({
    id: z.string().openapi({ description: "The webhook-id header of every attempt of this delivery" }),
    event_id: z.string(),
    event_type: z.string(),
    status: z.enum(["pending", "sending", "retrying", "delivered", "failed"]),
    attempt_count: z.int(),
    next_attempt_at: z.string().nullable(),
    created_at: z.string(),
    attempts: z.array(
      z.object({
        attempt: z.int(),
        attempted_at: z.string(),
        status_code: z.int().nullable().openapi({ description: "null: no answer (timeout, refused connection, URL refused)" }),
        error: z.string().nullable(),
        duration_ms: z.int(),
      }),
    ),
  })
  .openapi("WebhookDelivery");

export const DeliveriesQuery = z.object({
  page: QueryInt(1, Number.MAX_SAFE_INTEGER).default(1),
  per_page: QueryInt(1, 100).default(20),
});

export const RotateSecretBody = z
  .object({
    overlap_seconds: z
      .int("must be a whole number of seconds")
      .min(0, `must be 0 to ${MAX_ROTATION_OVERLAP_SECONDS}`)
      .max(MAX_ROTATION_OVERLAP_SECONDS, `must be 0 to ${MAX_ROTATION_OVERLAP_SECONDS}`)
      .default(DEFAULT_ROTATION_OVERLAP_SECONDS)
      .openapi({ description: `How long the replaced secret keeps signing beside the new one (default ${DEFAULT_ROTATION_OVERLAP_SECONDS}, a day; 0: it stops at once).` }),
  })
  .openapi("RotateWebhookSecretRequest");
