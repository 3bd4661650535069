// The MCP server's face. Rule: MCP is a door onto the REST API, not a second implementation of it:
// every tool, prompt and resource is answered by calling the REST operation in-process (door.ts),
// with the caller's key, so its validation, auth, scopes, rate limits, workspace isolation and
// errors apply unchanged. The tool table (tools.ts) is the one place a tool is declared.
export { handleMcpPost } from "./server";
export { inProcessDoor } from "./door";
export { catalogOf, type OpenApiDocument } from "./catalog";
export { PROMPTEDGE_TOOLS, PROMPTLAYER_TOOLS, TOOLS } from "./tools";
export { TOOL_LIST_END, TOOL_LIST_START, toolListMarkdown } from "./tool-list";
export { DEFAULT_PROMPT_LABEL } from "./prompts";
export { NO_KEY_MESSAGE } from "./failures";
