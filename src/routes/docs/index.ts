// GET /openapi.json (generated from the same zod schemas that validate) and GET /docs: the Scalar API
// reference, its script served from the Worker's static assets (public/docs/, filled by
// `npm run build:assets`), reading /openapi.json from this origin; no request leaves for another host.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { assetFiles, DOCS_CSP, securePage } from "../../http/static-assets";

export const API_INFO = {
  title: "PromptEdge API",
  version: "0.1.0",
  description: [
    "**Quick start**",
    "",
    "1. Get a key: `npm run dev` prints one locally; `npm run keys -- create --workspace <name>` makes one for a deployment.",
    "2. Send it as the `X-API-KEY` header on every call (type it under Authentication here to try a call).",
    "3. Log an LLM call: `POST /log-request` with `provider`, `model`, `input`, `output`, `request_start_time` and `request_end_time`.",
    "4. Find it: `POST /api/public/v2/requests/search`, or in the console at [/console](/console).",
    "5. From code: the official `promptlayer` SDKs with their base URL set to this server (`baseURL` in JavaScript, `base_url` in Python).",
    "",
    "**Conventions.** A PromptLayer-compatible prompt management and evaluation API on Cloudflare Workers. The key is needed on " +
      "every endpoint except /, /health, /openapi.json, /docs and the realtime WebSocket (whose token is its credential); an " +
      'Authorization: Bearer header is not read (401). Every error is JSON {"success": false, "message", "error"} with an ' +
      "X-Request-Id header; a known path asked with another method is a 405 with an Allow header. A body field the API ignores " +
      "is named in the X-PromptEdge-Ignored-Fields header of the answer (which keeps PromptLayer's shape). " +
      "Responses that read or wrote a database carry X-PromptEdge-Bookmark (database=bookmark pairs, D1 sessions): send it back " +
      "on later requests to read your own writes from any read replica; without it, reads may come from a replica a moment " +
      "behind. A malformed bookmark header is a 400. " +
      "Agents (Claude Code, Claude Desktop, Cursor) connect to the MCP endpoint, POST /mcp, which serves PromptLayer's MCP tools by their names on top of " +
      "these operations and reads an Authorization: Bearer key: setup, tools, prompts and resources in docs/mcp.md in the repository.",
  ].join("\n"),
};

const openapiJson = defineRoute({
  method: "get",
  path: "/openapi.json",
  tags: ["meta"],
  summary: "This OpenAPI 3.1 document",
  description: "Generated from the same schemas that validate every request.",
  public: true,
  responses: { 200: { description: "OpenAPI 3.1", content: { "application/json": { schema: z.record(z.string(), z.unknown()) } } } },
});

const docs = defineRoute({
  method: "get",
  path: "/docs",
  tags: ["meta"],
  summary: "Interactive API reference",
  description:
    "The API reference (Scalar), rendered in the browser from /openapi.json; its \"try it\" sends the key entered there as " +
    "X-API-KEY. Every script comes from this origin (/docs/scalar.js, /docs/init.js) under a Content-Security-Policy " +
    "that allows no inline script and no other host.",
  public: true,
  responses: { 200: { description: "HTML", content: { "text/html": { schema: z.string() } } } },
});

const documents = new WeakMap<OpenAPIHono<AppEnv>, Record<string, unknown>>();

/** The app's OpenAPI document (what GET /openapi.json serves), built once per app: the MCP tools' input schemas are read from it too. */
export function apiDocument(app: OpenAPIHono<AppEnv>): Record<string, unknown> {
  let doc = documents.get(app);
  if (!doc) {
    doc = app.getOpenAPI31Document({ openapi: "3.1.0", info: API_INFO, security: [{ ApiKeyAuth: [] }] }) as unknown as Record<string, unknown>;
    documents.set(app, doc);
  }
  return doc;
}

export function registerDocsRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(openapiJson, (c) => c.json(apiDocument(app), 200));
  app.openapi(docs, (c) => securePage(c.html(DOCS_PAGE, 200), DOCS_CSP) as never);
  app.use("/docs/*", assetFiles("/docs/", DOCS_CSP, "the API reference's files are missing: run `npm run build:assets`"));
}

/** The page: a mount point and two same-origin scripts (the Scalar bundle, then its settings). */
export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${API_INFO.title} reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="app"></div>
<script src="/docs/scalar.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;
