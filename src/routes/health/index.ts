// GET /health: liveness, no key needed; also the runtime's ceiling in the log-request benchmark.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../lib/openapi";

const health = defineRoute({
  method: "get",
  path: "/health",
  tags: ["meta"],
  summary: "Liveness check",
  public: true,
  responses: {
    200: {
      description: "The Worker is up",
      content: { "application/json": { schema: z.object({ success: z.literal(true), status: z.literal("ok") }) } },
    },
  },
});

export function registerHealthRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(health, (c) => c.json({ success: true as const, status: "ok" as const }, 200));
}
