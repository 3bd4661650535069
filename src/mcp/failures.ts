// What the MCP server says when a call cannot be made or the API refused it: a tool call says it as
// a tool error (call-tool.ts), prompts and resources as a JSON-RPC error (read-errors.ts).

const SEND_KEY = "send your PromptEdge key with the MCP requests as `Authorization: Bearer <key>` or `X-API-KEY: <key>`";

/** What a tool call without a key is told. */
export const NO_KEY_MESSAGE = `No API key: ${SEND_KEY}, or pass it as the \`api_key\` argument of the tool call.`;

/** What prompts and resources answer without a key (they take no api_key argument). */
export const NO_KEY_FOR_READS = `No API key: ${SEND_KEY}.`;

/** A key that is not (or no longer) valid: the API's 401 names its header, which this caller may not have used. */
export const BAD_KEY_MESSAGE = "the API key is unknown or revoked";
