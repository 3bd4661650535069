// A tool call: its arguments put where the operation takes them (path, query, JSON body), the call
// made through the door as the key the call resolves, and the answer as PromptLayer's server gives
// it: the JSON as text, or an `isError` result carrying the API's own message. The rules of each
// argument are the operation's, checked by REST; here only what a URL needs (a path argument).
import type { CatalogEntry } from "./catalog";
import { API_KEY_ARGUMENT } from "./catalog";
import type { ApiDoor } from "./door";
import { BAD_KEY_MESSAGE, NO_KEY_MESSAGE } from "./failures";

interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  isError?: boolean;
}

const toolError = (text: string): ToolResult => ({ content: [{ type: "text", text: `Error: ${text}` }], isError: true });

/** The key a call runs as: its `api_key` argument, else the one sent with the MCP request. */
function keyFor(args: Record<string, unknown>, requestKey: string | null): string | null {
  const arg = args[API_KEY_ARGUMENT];
  if (typeof arg === "string" && arg !== "") return arg;
  return requestKey;
}

function queryValue(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v);
}

/** The operation's path and query for these arguments, or the argument that cannot make a path. */
function requestTarget(entry: CatalogEntry, args: Record<string, unknown>): { pathAndQuery: string; body?: Record<string, unknown> } | { error: string } {
  const { route } = entry;
  let path = route.template;
  for (const [arg, param] of Object.entries(route.path)) {
    const v = args[arg];
    if (v === undefined || v === null || v === "") return { error: `${arg}: is required` };
    if (typeof v !== "string" && typeof v !== "number") return { error: `${arg}: must be a string or a number` };
    path = path.replace(`{${param}}`, encodeURIComponent(String(v)));
  }
  const query = new URLSearchParams();
  for (const [arg, param] of Object.entries(route.query)) {
    const v = args[arg];
    if (v === undefined || v === null) continue;
    // A list is sent as the parameter repeated (the API also reads one comma-separated value).
    if (Array.isArray(v)) for (const item of v) query.append(param, queryValue(item));
    else query.set(param, queryValue(v));
  }
  const qs = query.toString();
  const pathAndQuery = qs ? `${path}?${qs}` : path;
  if (!route.hasBody) return { pathAndQuery };
  const body: Record<string, unknown> = {};
  for (const [arg, field] of Object.entries(route.body)) if (args[arg] !== undefined) body[field] = args[arg];
  return { pathAndQuery, body };
}

/** The API's answer as a tool result. */
async function toolResult(res: Response, entry?: CatalogEntry): Promise<ToolResult> {
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (res.ok) {
    const out = parsed === undefined ? (text ? text : JSON.stringify({ success: true }, null, 2)) : JSON.stringify(parsed, null, 2);
    return { content: [{ type: "text", text: out }] };
  }
  const body = parsed && typeof parsed === "object" ? (parsed as { message?: unknown; error?: unknown }) : {};
  let message = res.status === 401 ? BAD_KEY_MESSAGE : typeof body.message === "string" ? body.message : text || res.statusText;
  // The operation names a renamed argument by its own name (identifier for prompt_name).
  for (const [arg, param] of Object.entries(entry?.route.path ?? {})) {
    if (arg !== param) message = message.replace(new RegExp(`(^|; )${param}(?=[:.[])`, "g"), `$1${arg}`);
  }
  const code = typeof body.error === "string" ? ` ${body.error}` : "";
  const retry = res.headers.get("Retry-After");
  return toolError(`${message} (HTTP ${res.status}${code}${retry ? `; retry after ${retry} s` : ""})`);
}

/** Runs one tool call through the door. */
export async function callTool(entry: CatalogEntry, args: Record<string, unknown>, door: ApiDoor, requestKey: string | null): Promise<ToolResult> {
  const key = keyFor(args, requestKey);
  if (!key) return toolError(NO_KEY_MESSAGE);
  const target = requestTarget(entry, args);
  if ("error" in target) return toolError(`${target.error} (nothing was sent)`);
  return toolResult(await door.send(entry.route.method, target.pathAndQuery, key, target.body), entry);
}
