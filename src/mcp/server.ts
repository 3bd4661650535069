// One MCP request answered: a new SDK Server and a stateless Streamable HTTP transport for it (a
// stateless transport serves exactly one request), its handlers reading the tool table, the
// registry's templates and the API's resources through the door. The SDK negotiates the protocol
// version (2024-11-05 to 2025-11-25), checks the transport's headers and speaks JSON-RPC.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { drainBody } from "../lib/drain";
import { catalogOf, type OpenApiDocument } from "./catalog";
import { callTool } from "./call-tool";
import type { ApiDoor } from "./door";
import { NO_KEY_FOR_READS } from "./failures";
import { instructions } from "./instructions";
import { getPrompt, listPrompts } from "./prompts";
import { listResources, readResource, RESOURCE_TEMPLATES } from "./resources";

export interface McpContext {
  /** The API, in-process. */
  door: ApiDoor;
  /** The key sent with the MCP request (Authorization: Bearer or X-API-KEY), if any. */
  key: string | null;
  /** The API's OpenAPI document: the tools' input schemas are its operations'. */
  document: () => OpenApiDocument;
  /** The release label prompts are served at. */
  label: string;
  /** The server's version, as initialize answers it. */
  version: string;
}

function requireKey(ctx: McpContext): string {
  if (!ctx.key) throw new McpError(ErrorCode.InvalidRequest, NO_KEY_FOR_READS);
  return ctx.key;
}

function buildServer(ctx: McpContext): Server {
  const server = new Server(
    { name: "promptedge", title: "PromptEdge", version: ctx.version },
    {
      capabilities: { tools: {}, prompts: {}, resources: {} },
      instructions: instructions(ctx.label),
      // Used only to check what a client answers to elicitation, which this server never asks for;
      // the SDK's default (Ajv) compiles code at run time, which Workers refuse.
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...catalogOf(ctx.document()).values()].map((e) => e.definition) }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const entry = catalogOf(ctx.document()).get(req.params.name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Tool ${req.params.name} not found`);
    return callTool(entry, req.params.arguments ?? {}, ctx.door, ctx.key);
  });
  server.setRequestHandler(ListPromptsRequestSchema, (req) => listPrompts(ctx.door, requireKey(ctx), ctx.label, req.params?.cursor));
  server.setRequestHandler(GetPromptRequestSchema, (req) => getPrompt(ctx.door, requireKey(ctx), ctx.label, req.params.name, req.params.arguments));
  server.setRequestHandler(ListResourcesRequestSchema, (req) => listResources(ctx.door, requireKey(ctx), req.params?.cursor));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(ctx.door, requireKey(ctx), req.params.uri));
  return server;
}

const jsonRpcError = (status: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }), { status, headers: { "Content-Type": "application/json" } });

/**
 * Answers one POST to the MCP endpoint. A browser page of another origin is refused (the spec's
 * guard against DNS rebinding); clients that are not browsers send no Origin. The answer is always
 * one JSON document (nothing here streams), so any Accept is taken: curl and clients that list only
 * one of JSON and SSE work too.
 */
export async function handleMcpPost(request: Request, ctx: McpContext): Promise<Response> {
  const origin = request.headers.get("Origin");
  if (origin !== null && origin !== new URL(request.url).origin) return jsonRpcError(403, `Forbidden: requests from the origin ${origin} are not accepted`);
  const headers = new Headers(request.headers);
  headers.set("Accept", "application/json, text/event-stream");
  const normalized = new Request(request, { headers, duplex: "half" } as RequestInit);
  const server = buildServer(ctx);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(normalized);
  } finally {
    // The copy took the request's body, so the app's drain of a body no one read (http/middleware.ts)
    // finds nothing: what the transport left unread (all of a body it refused as not JSON with a 415,
    // the rest of one it stopped reading at its own size cap) is read to its end here. Left on the
    // connection, it made the next request on that connection fail locally.
    if (normalized.body && !normalized.body.locked) await drainBody(normalized.body.getReader());
    await server.close();
  }
}
