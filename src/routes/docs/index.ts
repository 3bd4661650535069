// GET /openapi.json (generated from the same zod schemas that validate) and GET /docs (rendered).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { renderDocs } from "./render";

export const API_INFO = {
  title: "PromptEdge API",
  version: "0.1.0",
  description:
    "A PromptLayer-compatible prompt management and evaluation API on Cloudflare Workers. " +
    "Send the API key in the X-API-KEY header on every endpoint except /, /health, /openapi.json, /docs and the realtime " +
    "WebSocket (whose token is its credential); an Authorization: Bearer header is not read (401). " +
    'Every error is JSON {"success": false, "message", "error"} with an X-Request-Id header; a known path asked with ' +
    "another method is a 405 with an Allow header.",
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
  summary: "Rendered API reference",
  description: "The API reference, rendered from /openapi.json.",
  public: true,
  responses: { 200: { description: "HTML", content: { "text/html": { schema: z.string() } } } },
});

export function registerDocsRoutes(app: OpenAPIHono<AppEnv>) {
  let cached: Record<string, unknown> | null = null;
  const document = () => {
    cached ??= app.getOpenAPI31Document({ openapi: "3.1.0", info: API_INFO, security: [{ ApiKeyAuth: [] }] }) as unknown as Record<
      string,
      unknown
    >;
    return cached;
  };
  let html: string | null = null;
  app.openapi(openapiJson, (c) => c.json(document(), 200));
  app.openapi(docs, (c) => {
    html ??= renderDocs(document() as Parameters<typeof renderDocs>[0]);
    return c.html(html, 200);
  });
}
