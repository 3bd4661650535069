// What the MCP server says when a call cannot be made or the API refused it: a tool call says it as
// a tool error (call-tool.ts), prompts and resources as a JSON-RPC error.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

const SEND_KEY = "send your PromptEdge key with the MCP requests as `Authorization: Bearer <key>` or `X-API-KEY: <key>`";

/** What a tool call without a key is told. */
export const NO_KEY_MESSAGE = `No API key: ${SEND_KEY}, or pass it as the \`api_key\` argument of the tool call.`;

/** What prompts and resources answer without a key (they take no api_key argument). */
export const NO_KEY_FOR_READS = `No API key: ${SEND_KEY}.`;

/** A key that is not (or no longer) valid: the API's 401 names its header, which this caller may not have used. */
export const BAD_KEY_MESSAGE = "the API key is unknown or revoked";

/** The JSON-RPC error of a failed read, with the API's own message. */
export async function apiFailure(res: Response, what: string): Promise<McpError> {
  const body = (await res.json().catch(() => null)) as { message?: unknown } | null;
  const message = typeof body?.message === "string" ? body.message : res.statusText;
  if (res.status === 401) return new McpError(ErrorCode.InvalidRequest, BAD_KEY_MESSAGE);
  if (res.status === 404) return new McpError(ErrorCode.InvalidParams, `${what} not found: ${message}`);
  if (res.status < 500) return new McpError(ErrorCode.InvalidParams, `${what}: ${message} (HTTP ${res.status})`);
  return new McpError(ErrorCode.InternalError, `${what}: ${message} (HTTP ${res.status})`);
}
