// POST /mcp: the Model Context Protocol endpoint (Streamable HTTP, stateless), for agents. No key is
// needed to connect and list tools; each tool call, prompt and resource runs as the key the request
// (or the call's api_key argument) gives, through the REST routes in-process (src/mcp). GET and
// DELETE are 405s (no server-sent stream, no session), as the spec allows a stateless server.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { BOOKMARK_HEADER } from "../../db/sessions";
import { validationError } from "../../lib/validation";
import { DEFAULT_PROMPT_LABEL, handleMcpPost, inProcessDoor, type OpenApiDocument } from "../../mcp";
import { LabelName } from "../prompt-templates/schemas";
import { API_INFO, apiDocument } from "../docs";

const JsonRpcError = z
  .object({ jsonrpc: z.literal("2.0"), error: z.object({ code: z.int(), message: z.string() }), id: z.union([z.string(), z.int()]).nullable() })
  .openapi("JsonRpcError");

const Query = z.object({
  label: LabelName.optional().openapi({ description: `The release label the registry's templates are served at as MCP prompts (default ${DEFAULT_PROMPT_LABEL}; a template without it is served at its latest version).` }),
});

const mcp = defineRoute({
  method: "post",
  path: "/mcp",
  tags: ["mcp"],
  summary: "MCP endpoint for agents (Streamable HTTP)",
  description:
    "The Model Context Protocol over Streamable HTTP, stateless: each POST carries one JSON-RPC message (or a batch) and is answered on its own, as one JSON document; " +
    "protocol versions 2024-11-05 to 2025-11-25. Not an operation of PromptLayer's REST API: it serves PromptLayer's MCP tools by their names, each calling the " +
    "REST operation it names in-process (the same validation, errors and rate limits), the registry's templates as MCP prompts and promptedge:// resources. " +
    "`initialize` and `tools/list` need no key; a tool call runs as its `api_key` argument, else `Authorization: Bearer <key>` (read on this route only) or " +
    "`X-API-KEY`, and without one answers a tool error saying how to pass it. GET and DELETE are 405s. A browser page of another origin is refused (403). " +
    "Setup for Claude Code, Claude Desktop and Cursor, and every tool: docs/mcp.md in the repository.",
  public: true,
  request: {
    query: Query,
    body: { required: true, content: { "application/json": { schema: z.looseObject({ jsonrpc: z.literal("2.0"), method: z.string().optional(), id: z.union([z.string(), z.int()]).optional() }).openapi("JsonRpcMessage") } } },
  },
  responses: {
    200: { description: "The JSON-RPC response (or responses, for a batch)", content: { "application/json": { schema: z.looseObject({ jsonrpc: z.literal("2.0") }) } } },
    202: { description: "A notification or response, accepted (no body)" },
    400: { description: "Not JSON, not JSON-RPC, or an unsupported MCP-Protocol-Version header (a JSON-RPC error); or a bad `label`", content: { "application/json": { schema: JsonRpcError } } },
    403: { description: "An Origin header other than this server's (a browser page of another site)", content: { "application/json": { schema: JsonRpcError } } },
    415: { description: "The body is not application/json (a JSON-RPC error)", content: { "application/json": { schema: JsonRpcError } } },
  },
});

/** The key sent with the MCP request: X-API-KEY, else an Authorization: Bearer header (read on this route only). */
function requestKey(apiKey: string | undefined, authorization: string | undefined): string | null {
  if (apiKey) return apiKey;
  const bearer = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  return bearer ? bearer[1] : null;
}

export function registerMcpRoutes(app: OpenAPIHono<AppEnv>) {
  const { middleware, ...doc } = mcp as typeof mcp & { middleware: MiddlewareHandler<AppEnv>[] };
  app.openAPIRegistry.registerPath(doc);
  const document = () => apiDocument(app) as unknown as OpenApiDocument;
  // Registered without the JSON validator: the SDK's transport reads the body, so a malformed one
  // is answered as JSON-RPC says (-32700), not in the REST error shape.
  app.on(["POST"], ["/mcp"], ...middleware, async (c) => {
    const query = Query.safeParse(c.req.query());
    if (!query.success) throw validationError(query.error.issues, { target: "query" });
    let executionCtx: ExecutionContext | undefined;
    try {
      executionCtx = c.executionCtx;
    } catch {
      // No execution context (the app run outside the runtime): calls run without waitUntil.
    }
    const door = inProcessDoor({
      fetch: (request) => Promise.resolve(app.fetch(request, c.env, executionCtx)),
      origin: new URL(c.req.url).origin,
      requestId: c.get("requestId"),
      bookmark: c.req.header(BOOKMARK_HEADER),
    });
    const res = await handleMcpPost(c.req.raw, {
      door,
      key: requestKey(c.req.header("x-api-key"), c.req.header("authorization")),
      document,
      label: query.data.label ?? DEFAULT_PROMPT_LABEL,
      version: API_INFO.version,
    });
    const bookmark = door.bookmark();
    if (bookmark) res.headers.set(BOOKMARK_HEADER, bookmark);
    return res;
  });
}
