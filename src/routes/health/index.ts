// GET /health: liveness, no key needed; also the runtime's ceiling in the log-request benchmark.
// GET /: where to start (the reference, the OpenAPI document).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";

const health = defineRoute({
  method: "get",
  path: "/health",
  tags: ["meta"],
  summary: "Liveness check",
  description: "No key needed. Also the baseline every benchmark compares with.",
  public: true,
  responses: {
    200: {
      description: "The Worker is up",
      content: { "application/json": { schema: z.object({ success: z.literal(true), status: z.literal("ok") }) } },
    },
  },
});

/** Where a newcomer who opens the bare URL should go. */
export const START_LINKS = { docs: "/docs", openapi: "/openapi.json", health: "/health" };

const start = defineRoute({
  method: "get",
  path: "/",
  tags: ["meta"],
  summary: "Where to start",
  description: "A browser (Accept: text/html) is redirected to the API reference at /docs; any other client gets the links as JSON.",
  public: true,
  responses: {
    200: {
      description: "The links",
      content: {
        "application/json": {
          schema: z.object({
            success: z.literal(true),
            name: z.string(),
            links: z.object({ docs: z.string(), openapi: z.string(), health: z.string() }),
          }),
        },
      },
    },
    302: { description: "A browser is sent to /docs" },
  },
});

export function registerHealthRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(health, (c) => c.json({ success: true as const, status: "ok" as const }, 200));
  app.openapi(start, (c) => {
    if (/\btext\/html\b/i.test(c.req.header("accept") ?? "")) return c.redirect(START_LINKS.docs, 302);
    return c.json({ success: true as const, name: "PromptEdge API", links: START_LINKS }, 200);
  });
}
