// What the route needs from the MCP server before the server itself is loaded (index.ts loads it on
// the first MCP request): plain values, no SDK import.

/** The release label the registry's templates are served at as MCP prompts, unless the endpoint's `?label=` names another. */
export const DEFAULT_PROMPT_LABEL = "prod";
