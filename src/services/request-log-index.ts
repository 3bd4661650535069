// Pure: turns a logged request into rows of the search side table (kind, key, value), so that
// filters and autocomplete over tags, metadata, tools, input variables and JSON outputs are index
// lookups. Values are strings; non-string values are stored as their JSON text.

import type { IndexKind } from "../db/schema";

export type { IndexKind };
export type IndexRow = [kind: IndexKind, key: string, value: string];

export interface IndexableLog {
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  tags: string[];
  metadata: Record<string, string>;
  prompt_input_variables: Record<string, unknown>;
}

export function indexRowsOf(log: IndexableLog): IndexRow[] {
  const rows: IndexRow[] = [];
  const seen = new Set<string>();
  const add = (kind: IndexKind, key: string, value: string) => {
    const id = `${kind}\u0000${key}\u0000${value}`;
    if (seen.has(id)) return;
    seen.add(id);
    rows.push([kind, key, value]);
  };

  for (const tag of log.tags) add("tag", "", tag);
  for (const [k, v] of Object.entries(log.metadata)) add("metadata", k, v);
  for (const name of toolNamesOf(log.input)) add("tool", "", name);
  for (const name of toolNamesOf(log.output)) add("tool", "", name);
  for (const [k, v] of Object.entries(log.prompt_input_variables)) add("input_variable", k, stringify(v));
  const out = jsonOutputOf(log.output);
  if (out) for (const [k, v] of Object.entries(out)) add("output", k, stringify(v));
  return rows;
}

export function stringify(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === undefined) return "null";
  return JSON.stringify(v);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Tool names declared (tools, functions) or called (tool_calls, function_call) in a blueprint. */
export function toolNamesOf(blueprint: Record<string, unknown>): string[] {
  const names: string[] = [];
  const push = (n: unknown) => {
    if (typeof n === "string" && n.length > 0) names.push(n);
  };
  const fromTool = (t: unknown) => {
    if (!isObject(t)) return;
    if (isObject(t.function)) push(t.function.name);
    else push(t.name);
  };
  if (Array.isArray(blueprint.tools)) blueprint.tools.forEach(fromTool);
  if (Array.isArray(blueprint.functions)) blueprint.functions.forEach(fromTool);
  if (Array.isArray(blueprint.messages)) {
    for (const m of blueprint.messages) {
      if (!isObject(m)) continue;
      if (Array.isArray(m.tool_calls)) m.tool_calls.forEach(fromTool);
      if (isObject(m.function_call)) push(m.function_call.name);
    }
  }
  return names;
}

/** The text of a blueprint's answer: the last assistant message (chat) or the content (completion). */
export function textOf(blueprint: Record<string, unknown>): string {
  let blocks: unknown = null;
  if (Array.isArray(blueprint.messages)) {
    for (let i = blueprint.messages.length - 1; i >= 0; i--) {
      const m = blueprint.messages[i];
      if (isObject(m) && m.role === "assistant") {
        blocks = m.content;
        break;
      }
    }
  } else {
    blocks = blueprint.content;
  }
  if (!Array.isArray(blocks)) return "";
  return blocks
    .filter((b): b is Record<string, unknown> => isObject(b) && b.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string)
    .join("");
}

/** The output as a JSON object when its text is one (structured outputs), else null. */
export function jsonOutputOf(output: Record<string, unknown>): Record<string, unknown> | null {
  const text = textOf(output).trim();
  if (!text.startsWith("{")) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}
