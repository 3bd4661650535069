// The JSON-RPC error a prompt or resource read answers when the API refused the read.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { BAD_KEY_MESSAGE } from "./failures";

/** The JSON-RPC error of a failed read, with the API's own message. */
export async function apiFailure(res: Response, what: string): Promise<McpError> {
  const body = (await res.json().catch(() => null)) as { message?: unknown } | null;
  const message = typeof body?.message === "string" ? body.message : res.statusText;
  if (res.status === 401) return new McpError(ErrorCode.InvalidRequest, BAD_KEY_MESSAGE);
  if (res.status === 404) return new McpError(ErrorCode.InvalidParams, `${what} not found: ${message}`);
  if (res.status < 500) return new McpError(ErrorCode.InvalidParams, `${what}: ${message} (HTTP ${res.status})`);
  return new McpError(ErrorCode.InternalError, `${what}: ${message} (HTTP ${res.status})`);
}
