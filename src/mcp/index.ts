// The MCP server's face. Rule: MCP is a door onto the REST API, not a second implementation of it:
// every tool, prompt and resource is answered by calling the REST operation in-process (door.ts),
// with the caller's key, so its validation, auth, scopes, rate limits, workspace isolation and
// errors apply unchanged. The tool table (tools.ts) is the one place a tool is declared.
import type { McpContext } from "./server";

export type { McpContext };

/**
 * Answers one POST to the MCP endpoint. The server (the SDK and its protocol schemas) is loaded on
 * the first call, not when the Worker starts: the bundle evaluates a module imported this way only
 * when it is first asked for, so requests that never reach /mcp do not pay for it.
 */
export async function handleMcpPost(request: Request, ctx: McpContext): Promise<Response> {
  const { handleMcpPost: handle } = await import("./server");
  return handle(request, ctx);
}
export { inProcessDoor } from "./door";
export { catalogOf, type OpenApiDocument } from "./catalog";
export { PROMPTEDGE_TOOLS, PROMPTLAYER_TOOLS, TOOLS } from "./tools";
export { TOOL_LIST_END, TOOL_LIST_START, toolListMarkdown } from "./tool-list";
export { DEFAULT_PROMPT_LABEL } from "./defaults";
export { NO_KEY_MESSAGE } from "./failures";
