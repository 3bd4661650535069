// The registry's prompt templates as MCP prompts: prompts/list names each template with its input
// variables as arguments, prompts/get answers its messages with the arguments filled in. Each
// template is served at a release label (prod unless the MCP endpoint's `?label=` says otherwise),
// or at its latest version when it has no such label. Reads go through the door to the template
// routes, so snippets are expanded and variables filled by the prompt store, as REST does.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { templateVariableNames } from "../prompts";
import { isObj, type Obj } from "../lib/obj";
import type { ApiDoor } from "./door";
import { apiFailure } from "./read-errors";

/** The release label templates are served at, unless the endpoint's `?label=` names another. */
export const DEFAULT_PROMPT_LABEL = "prod";
/** Templates per prompts/list page. */
const PROMPTS_PAGE_SIZE = 20;

interface PromptArgument {
  name: string;
  description?: string;
  required?: boolean;
}

interface McpPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
}

interface PromptMessage {
  role: "user" | "assistant";
  content: { type: "text"; text: string };
}

/** A template version as GET /prompt-templates/{identifier} answers it (the fields read here). */
interface TemplateVersion {
  id: number;
  prompt_name: string;
  version: number;
  prompt_template: Obj;
  release_labels?: string[];
  commit_message?: string | null;
}

const templatePath = (identifier: string | number, query = "") => `/prompt-templates/${encodeURIComponent(String(identifier))}${query}`;

/**
 * The version a template is served at: the one `label` names, else (when the template has no such
 * label) its latest. `null` when there is no such template.
 */
async function servedVersion(door: ApiDoor, key: string, identifier: string | number, label: string): Promise<TemplateVersion | null> {
  const labelled = await door.send("GET", templatePath(identifier, `?label=${encodeURIComponent(label)}`), key);
  if (labelled.ok) return (await labelled.json()) as TemplateVersion;
  if (labelled.status !== 404) throw await apiFailure(labelled, `prompt ${identifier}`);
  await labelled.body?.cancel();
  const latest = await door.send("GET", templatePath(identifier), key);
  if (latest.status === 404) return null;
  if (!latest.ok) throw await apiFailure(latest, `prompt ${identifier}`);
  return (await latest.json()) as TemplateVersion;
}

/** The input variables of a version: those its blueprint declares, then those its text uses (snippets expanded). */
function variablesOf(template: Obj): string[] {
  const declared = Array.isArray(template.input_variables) ? template.input_variables.filter((v): v is string => typeof v === "string") : [];
  return [...new Set([...declared, ...templateVariableNames(template)])];
}

function describe(v: TemplateVersion, label: string): string {
  const at = v.release_labels?.includes(label) ? `version ${v.version} (label ${label})` : `version ${v.version} (latest; no ${label} label)`;
  return v.commit_message ? `${v.prompt_name}, ${at}: ${v.commit_message}` : `${v.prompt_name}, ${at}`;
}

function asPrompt(v: TemplateVersion, label: string): McpPrompt {
  return {
    name: v.prompt_name,
    title: v.prompt_name,
    description: describe(v, label),
    arguments: variablesOf(v.prompt_template).map((name) => ({ name, description: `The template's input variable ${name}.`, required: true })),
  };
}

/** One page of prompts: the templates by name, each at the label or latest. */
export async function listPrompts(door: ApiDoor, key: string, label: string, cursor: string | undefined): Promise<{ prompts: McpPrompt[]; nextCursor?: string }> {
  const page = cursor === undefined ? 1 : Number(cursor);
  if (!Number.isSafeInteger(page) || page < 1) throw new McpError(ErrorCode.InvalidParams, `cursor: not one prompts/list gave`);
  const res = await door.send("GET", `/prompt-templates?page=${page}&per_page=${PROMPTS_PAGE_SIZE}&sort_by=name&sort_order=asc`, key);
  if (!res.ok) throw await apiFailure(res, "prompt templates");
  const list = (await res.json()) as { items: { id: number }[]; has_next: boolean };
  const versions = await Promise.all(list.items.map((t) => servedVersion(door, key, t.id, label)));
  const prompts = versions.filter((v): v is TemplateVersion => v !== null).map((v) => asPrompt(v, label));
  return list.has_next ? { prompts, nextCursor: String(page + 1) } : { prompts };
}

/** A content block as prompt text: its text, or what it is (an image by its URL). */
function blockText(block: unknown): string {
  if (!isObj(block)) return "";
  if (typeof block.text === "string") return block.text;
  const url = isObj(block.image_url) ? block.image_url.url : undefined;
  if (typeof url === "string") return `[image: ${url}]`;
  return `[${String(block.type)} block]`;
}

function messageText(m: Obj): string {
  const parts = Array.isArray(m.content) ? m.content.map(blockText).filter(Boolean) : [];
  if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) parts.push(`tool calls: ${JSON.stringify(m.tool_calls)}`);
  return parts.join("\n\n");
}

/**
 * A filled blueprint as MCP prompt messages: MCP has only user and assistant turns, so a system (or
 * developer, tool) message becomes a user turn; a placeholder message (a variable holding messages,
 * which an MCP argument cannot carry) is left out.
 */
function promptMessages(template: Obj): PromptMessage[] {
  const turn = (role: unknown, text: string): PromptMessage => ({ role: role === "assistant" ? "assistant" : "user", content: { type: "text", text } });
  if (template.type === "completion") return [turn("user", messageText(template))];
  const messages = Array.isArray(template.messages) ? template.messages.filter(isObj) : [];
  return messages.filter((m) => m.role !== "placeholder").map((m) => turn(m.role, messageText(m)));
}

/** One prompt with its arguments filled: the template at the label or latest, variables filled by the API. */
export async function getPrompt(
  door: ApiDoor,
  key: string,
  label: string,
  name: string,
  args: Record<string, string> | undefined,
): Promise<{ description: string; messages: PromptMessage[] }> {
  const served = await servedVersion(door, key, name, label);
  if (!served) throw new McpError(ErrorCode.InvalidParams, `no prompt template named ${name}`);
  const given = args ?? {};
  const missing = variablesOf(served.prompt_template).filter((v) => given[v] === undefined);
  if (missing.length > 0) throw new McpError(ErrorCode.InvalidParams, `missing arguments: ${missing.join(", ")} (every input variable of ${name} is required)`);
  // The version just chosen, pinned, with the variables filled by the template route.
  const res = await door.send("POST", templatePath(served.id), key, { version: served.version, input_variables: given });
  if (!res.ok) throw await apiFailure(res, `prompt ${name}`);
  const filled = (await res.json()) as TemplateVersion;
  return { description: describe(served, label), messages: promptMessages(filled.prompt_template) };
}
