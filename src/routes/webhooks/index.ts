// /api/public/v2/webhooks: register a receiver (secret shown once), list, delete, and its delivery log.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { recordAudit } from "../../services/workspace";
import { IdParam } from "../../lib/schemas";
import { createWebhook, deleteWebhook, listWebhooks, MAX_WEBHOOKS_PER_WORKSPACE, rotateWebhookSecret, webhookDeliveriesPage } from "../../services/webhooks";
import { CreateWebhookBody, DeliveriesQuery, DeliverySchema, RotateSecretBody, WebhookSchema } from "./schemas";

const tags = ["webhooks"];
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const Params = z.object({ webhook_id: IdParam("webhook_id") });

const create = defineRoute({
  method: "post",
  path: "/api/public/v2/webhooks",
  scope: "webhooks:write",
  tags,
  summary: "Register a webhook",
  description:
    "Answers the webhook and its signing `secret`, which is never shown again (it is stored sealed, AES-256-GCM under the ENV_VARS_KEY secret). " +
    "Deliveries are signed with it: `X-PromptLayer-Signature` (hex HMAC-SHA256 of the body) and the Standard Webhooks headers. The url must be https " +
    "(plain http only when ENDPOINT_ALLOW_PRIVATE_ADDRESSES is on, for local development). " +
    `A workspace has at most ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks (409 beyond).`,
  errors: [409],
  request: { body: { required: true, content: { "application/json": { schema: CreateWebhookBody } } } },
  responses: {
    201: json(z.object({ success: z.literal(true), message: z.string(), webhook: WebhookSchema, secret: z.string() }), "Registered"),
  },
});

const rotate = defineRoute({
  method: "post",
  path: "/api/public/v2/webhooks/{webhook_id}/rotate-secret",
  scope: "webhooks:write",
  tags,
  summary: "Rotate a webhook's signing secret",
  description:
    "Answers a new `secret`, shown only here. For `overlap_seconds` (default a day, at most 7 days; 0: none) the replaced secret keeps signing " +
    "beside it: `webhook-signature` lists both signatures, and `X-PromptLayer-Signature` stays the replaced secret's while " +
    "`X-PromptLayer-Signature-New` carries the new one's; after the overlap only the new secret signs. `previous_secret_expires_at` says when. " +
    "A rotation during an overlap ends it (only the secret it replaces overlaps). Another workspace's webhook: 404.",
  errors: [404, 409],
  request: { params: Params, body: { required: true, content: { "application/json": { schema: RotateSecretBody } } } },
  responses: {
    200: json(
      z.object({ success: z.literal(true), message: z.string(), webhook: WebhookSchema, secret: z.string(), previous_secret_expires_at: z.string().nullable() }),
      "Rotated",
    ),
  },
});

const list = defineRoute({
  method: "get",
  path: "/api/public/v2/webhooks",
  scope: "webhooks:read",
  tags,
  summary: "List webhooks",
  description: "The workspace's webhooks, oldest first; secrets are never answered.",
  responses: { 200: json(z.object({ success: z.literal(true), webhooks: z.array(WebhookSchema) }), "The workspace's webhooks, oldest first (no secrets)") },
});

const remove = defineRoute({
  method: "delete",
  path: "/api/public/v2/webhooks/{webhook_id}",
  scope: "webhooks:write",
  tags,
  summary: "Delete a webhook",
  description: "Nothing more is sent to it; deliveries waiting for a retry are given up.",
  errors: [404],
  request: { params: Params },
  responses: { 200: json(z.object({ success: z.literal(true), message: z.string() }), "Deleted") },
});

const deliveries = defineRoute({
  method: "get",
  path: "/api/public/v2/webhooks/{webhook_id}/deliveries",
  scope: "webhooks:read",
  tags,
  summary: "A webhook's delivery log",
  description: "Deliveries newest first, each with every attempt: its time, the receiver's status code (null: no answer) and the error.",
  errors: [404],
  request: { params: Params, query: DeliveriesQuery },
  responses: {
    200: json(
      z.object({ success: z.literal(true), deliveries: z.array(DeliverySchema), page: z.int(), per_page: z.int(), total: z.int(), pages: z.int() }),
      "A page of deliveries",
    ),
  },
});

export function registerWebhookRoutes(app: OpenAPIHono<AppEnv>) {
  // The audit rows of webhooks are written right after the change (the webhooks domain sits beside the
  // workspace domain, whose audit log it cannot reach inside its own batch).
  app.openapi(create, async (c) => {
    const auth = c.get("auth");
    const created = await createWebhook(c.var.deps.db, c.var.deps.env.ENV_VARS_KEY, auth, c.req.valid("json"), c.var.deps.env.ENDPOINT_ALLOW_PRIVATE_ADDRESSES === "true");
    await recordAudit(c.var.deps.db, {
      workspaceId: auth.workspaceId,
      action: "webhook.created",
      by: auth,
      targetType: "webhook",
      targetId: created.webhook.id,
      details: { url: created.webhook.url, events: created.webhook.events ?? null },
    });
    return c.json({ success: true as const, message: "Webhook created; store the secret now, it is not shown again", ...created }, 201);
  });

  app.openapi(rotate, async (c) => {
    const auth = c.get("auth");
    const { webhook_id } = c.req.valid("param");
    const rotated = await rotateWebhookSecret(c.var.deps.db, c.var.deps.env.ENV_VARS_KEY, auth.workspaceId, webhook_id, c.req.valid("json").overlap_seconds);
    await recordAudit(c.var.deps.db, {
      workspaceId: auth.workspaceId,
      action: "webhook.secret_rotated",
      by: auth,
      targetType: "webhook",
      targetId: webhook_id,
      details: { previous_secret_expires_at: rotated.previous_secret_expires_at },
    });
    return c.json({ success: true as const, message: "Secret rotated; store the new secret now, it is not shown again", ...rotated }, 200);
  });

  app.openapi(list, async (c) => c.json({ success: true as const, webhooks: await listWebhooks(c.var.deps.db, c.get("auth").workspaceId) }, 200));

  app.openapi(remove, async (c) => {
    const auth = c.get("auth");
    const id = c.req.valid("param").webhook_id;
    await deleteWebhook(c.var.deps.db, auth.workspaceId, id);
    await recordAudit(c.var.deps.db, { workspaceId: auth.workspaceId, action: "webhook.deleted", by: auth, targetType: "webhook", targetId: id, details: {} });
    return c.json({ success: true as const, message: "Webhook deleted" }, 200);
  });

  app.openapi(deliveries, async (c) => {
    const page = await webhookDeliveriesPage(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").webhook_id, c.req.valid("query"));
    return c.json({ success: true as const, ...page }, 200);
  });
}
