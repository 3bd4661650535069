// GET /health: liveness, no key needed; also the runtime's ceiling in the log-request benchmark.
// GET /: where to start (the console, the reference, the OpenAPI document).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { CONSOLE_CSP, securePage } from "../../http/static-assets";

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
export const START_LINKS = { console: "/console", docs: "/docs", openapi: "/openapi.json", health: "/health" };

/** The page a browser gets at /: the links, as plain HTML (no script, no style). */
const START_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>PromptEdge</title>
<link rel="icon" href="data:,">
</head>
<body>
<h1>PromptEdge</h1>
<p>A prompt management, observability and evaluation API that speaks PromptLayer's public API.</p>
<ul>
<li><a href="/console">The console</a>: requests, traces, prompts and their playground, tables, datasets, evaluations, analytics and settings, in the browser (asks for an API key).</li>
<li><a href="/docs">The API reference</a>: every endpoint, with a quick start and "try it".</li>
<li><a href="/openapi.json">The OpenAPI document</a>, and <a href="/health">/health</a>.</li>
</ul>
</body>
</html>
`;

const start = defineRoute({
  method: "get",
  path: "/",
  tags: ["meta"],
  summary: "Where to start",
  description: "A browser (Accept: text/html) gets a page linking the console (/console) and the API reference (/docs); any other client gets the same links as JSON.",
  public: true,
  responses: {
    200: {
      description: "The links",
      content: {
        "application/json": {
          schema: z.object({
            success: z.literal(true),
            name: z.string(),
            links: z.object({ console: z.string(), docs: z.string(), openapi: z.string(), health: z.string() }),
          }),
        },
        "text/html": { schema: z.string().openapi({ description: "For a browser: the same links as a page" }) },
      },
    },
  },
});

export function registerHealthRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(health, (c) => c.json({ success: true as const, status: "ok" as const }, 200));
  app.openapi(start, (c) => {
    if (/\btext\/html\b/i.test(c.req.header("accept") ?? "")) return securePage(c.html(START_PAGE, 200), CONSOLE_CSP) as never;
    return c.json({ success: true as const, name: "PromptEdge API", links: START_LINKS }, 200);
  });
}
