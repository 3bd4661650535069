// The workspace's own settings (our namespace; PromptLayer's document has no such operations): the
// log retention window that the archive job (docs/archive.md) ages request logs out by.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { LOG_RETENTION_DAYS } from "../../logs";
import { getLogRetention, setLogRetention } from "../../services/workspace";

const { min, max } = LOG_RETENTION_DAYS;
const RULE = `must be an integer from ${min} to ${max}, or null`;

const RETENTION_NOTE =
  `days: how long request logs stay in the database (by request_start_time), ${min} to ${max}; null (the default) keeps every log there. ` +
  "Once a log's whole UTC day is more than `days` old, the archive job (every minute, a bounded amount each run) moves it to R2 as " +
  "gzip NDJSON. GET /api/public/v2/requests/{request_id} and GET /api/public/v2/requests/export still read archived logs; search, " +
  "suggestions with a filter, dataset and sheet fills from logs, and the tracking calls see only logs still in the database. " +
  "Daily analytics totals keep counting archived logs. Spans are not archived.";

const Retention = z
  .object({
    success: z.literal(true),
    days: z.int().nullable().openapi({ description: `Days logs stay in the database (${min}..${max}); null keeps every log.` }),
  })
  .openapi("LogRetention");

const RetentionBody = z
  .object({
    days: z
      .int({ error: RULE })
      .min(min, { error: RULE })
      .max(max, { error: RULE })
      .nullable()
      .openapi({ description: `${min}..${max}, or null to keep every log in the database.` }),
  })
  .openapi("LogRetentionRequest");

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

const getRetention = defineRoute({
  method: "get",
  path: "/api/public/v2/workspace/log-retention",
  scope: "settings:read",
  tags: ["workspace"],
  summary: "Get the workspace's log retention",
  description: RETENTION_NOTE,
  responses: { 200: json(Retention, "The setting") },
});

const putRetention = defineRoute({
  method: "put",
  path: "/api/public/v2/workspace/log-retention",
  scope: "settings:write",
  tags: ["workspace"],
  summary: "Set the workspace's log retention",
  description: `${RETENTION_NOTE} Shortening the window archives the older logs over the next runs; lengthening it or setting null does not bring archived logs back.`,
  request: { body: { required: true, content: { "application/json": { schema: RetentionBody } } } },
  responses: { 200: json(Retention, "The setting as stored") },
});

export function registerWorkspaceRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(getRetention, async (c) => {
    const days = await getLogRetention(c.var.deps.db, c.get("auth").workspaceId);
    return c.json({ success: true as const, days }, 200);
  });

  app.openapi(putRetention, async (c) => {
    const { days } = c.req.valid("json");
    const stored = await setLogRetention(c.var.deps.db, c.get("auth"), days);
    return c.json({ success: true as const, days: stored }, 200);
  });
}
