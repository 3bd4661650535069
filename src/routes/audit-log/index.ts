// GET /api/public/v2/audit-log: the workspace's administrative actions, newest first, with the list
// filters every list takes. Read only: nothing in the API changes or removes an entry.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { QueryInt, ResourceFilterShape, SortOrder } from "../../lib/query";
import { AUDIT_ACTIONS, listAuditEvents } from "../../services/workspace";

const AuditEvent = z
  .object({
    id: z.int(),
    action: z.string().openapi({ description: `One of ${AUDIT_ACTIONS.join(", ")}.` }),
    target_type: z.string(),
    target_id: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).openapi({ description: "What changed, by name (a key's name and scopes, an env var's key, a label and its versions): never a secret value." }),
    api_key_id: z.int().nullable().openapi({ description: "The key that acted (null: the keys CLI)." }),
    api_key_prefix: z.string().nullable(),
    user_email: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("AuditEvent");

const Query = z.object({
  page: QueryInt(1).default(1),
  per_page: QueryInt(1, 100).default(20),
  action: z.enum(AUDIT_ACTIONS, { error: `must be one of ${AUDIT_ACTIONS.join(", ")}` }).optional(),
  target_type: z.string().min(1).max(64).optional(),
  target_id: z.string().min(1).max(64).optional(),
  created_by_email: ResourceFilterShape.created_by_email,
  created_after: ResourceFilterShape.created_after,
  created_before: ResourceFilterShape.created_before,
  sort_order: SortOrder,
});

const listRoute = defineRoute({
  method: "get",
  path: "/api/public/v2/audit-log",
  scope: "admin",
  tags: ["audit log"],
  summary: "The workspace's audit log",
  description:
    `Administrative actions: ${AUDIT_ACTIONS.join(", ")}. Each entry says who (the key and its user), when, and what changed (never a secret value). ` +
    "Paged (`page`, `per_page` 1..100, default 20), newest first (`sort_order`); filtered by `action`, `target_type`, `target_id` and the list " +
    "filters every list takes (`created_by_email`, `created_after`, `created_before`). Entries are never changed or removed; another workspace's are never seen.",
  request: { query: Query },
  responses: {
    200: {
      description: "A page of entries",
      content: {
        "application/json": {
          schema: z.object({ success: z.literal(true), items: z.array(AuditEvent), page: z.int(), per_page: z.int(), total: z.int(), pages: z.int(), has_next: z.boolean(), has_prev: z.boolean() }),
        },
      },
    },
  },
});

export function registerAuditLogRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listRoute, async (c) => c.json(await listAuditEvents(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("query")), 200));
}
