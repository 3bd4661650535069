// Pure: turns a logged request into what search reads: rows of the search side table (kind, key,
// value), so filters over tags, metadata, tools, input variables and JSON outputs are index lookups;
// the autocomplete counts (facets); and the derived columns (texts, output format, intents).
// Values are strings; non-string values are stored as their JSON text.

import type { FacetField, IndexKind, OutputFormat, SearchValue } from "../db/schema";
import { indexed, isDerived } from "../filters";
import { agentIntentOf, userIntentOf } from "./intent";
import type { Blueprints } from "./row-codec";
import { isObj } from "../lib/obj";

type InputOutput = Pick<Blueprints, "input" | "output">;

export type { IndexKind };
/** One keyed search value of a log: kind, key, value, as indexed. */
export type IndexRow = SearchValue;

/**
 * What a log's side rows are made of. The tool names and the answer's text come from the blueprints
 * (toolsOf, textOf), which change after the log is written only when its span's log records complete
 * it (log-records.ts moves them then); the rest may be changed by the tracking calls, so the indexer
 * reads it from the log row as it is when it runs.
 */
export interface IndexableLog {
  tags: string[];
  metadata: Record<string, string>;
  prompt_input_variables: Record<string, unknown>;
  /** Tool names the blueprints declare or call (toolsOf). */
  tools: readonly string[];
  /** The answer's text (textOf(output), the output_text column): its keys are indexed when it is a JSON object. */
  outputText: string;
}

export function indexRowsOf(log: IndexableLog): IndexRow[] {
  const rows: IndexRow[] = [];
  const seen = new Set<string>();
  const add = (kind: IndexKind, rawKey: string, rawValue: string) => {
    const key = indexed(rawKey);
    const value = indexed(rawValue);
    const id = `${kind}\u0000${key}\u0000${value}`;
    if (seen.has(id)) return;
    seen.add(id);
    rows.push([kind, key, value]);
  };

  for (const tag of log.tags) add("tag", "", tag);
  for (const [k, v] of Object.entries(log.metadata)) add("metadata", k, v);
  for (const name of log.tools) add("tool", "", name);
  for (const [k, v] of Object.entries(log.prompt_input_variables)) add("input_variable", k, stringify(v));
  const out = jsonObjectOf(log.outputText);
  if (out) for (const [k, v] of Object.entries(out)) add("output", k, stringify(v));
  return rows;
}

/** The values of `values` a log keeps in extra_values: those its tags and metadata columns do not give as they stand (isDerived). */
export function extraValuesOf(values: readonly IndexRow[]): IndexRow[] {
  return values.filter(([kind, key, value]) => !isDerived(kind, key, value));
}

export function stringify(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === undefined) return "null";
  return JSON.stringify(v);
}

/** The tool names of a log's blueprints, input first, each once: what its `tool` side rows hold. */
export function toolsOf(log: InputOutput): string[] {
  return [...new Set([...toolNamesOf(log.input), ...toolNamesOf(log.output)])];
}

/** Tool names declared (tools, functions) or called (tool_calls, function_call) in a blueprint. */
export function toolNamesOf(blueprint: Record<string, unknown>): string[] {
  const names: string[] = [];
  const push = (n: unknown) => {
    if (typeof n === "string" && n.length > 0) names.push(n);
  };
  const fromTool = (t: unknown) => {
    if (!isObj(t)) return;
    if (isObj(t.function)) push(t.function.name);
    else push(t.name);
  };
  if (Array.isArray(blueprint.tools)) blueprint.tools.forEach(fromTool);
  if (Array.isArray(blueprint.functions)) blueprint.functions.forEach(fromTool);
  if (Array.isArray(blueprint.messages)) {
    for (const m of blueprint.messages) {
      if (!isObj(m)) continue;
      if (Array.isArray(m.tool_calls)) m.tool_calls.forEach(fromTool);
      if (isObj(m.function_call)) push(m.function_call.name);
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
      if (isObj(m) && m.role === "assistant") {
        blocks = m.content;
        break;
      }
    }
  } else {
    blocks = blueprint.content;
  }
  return textOfBlocks(blocks);
}

/** The output as a JSON object when its text is one (structured outputs), else null. */
export function jsonOutputOf(output: Record<string, unknown>): Record<string, unknown> | null {
  return jsonObjectOf(textOf(output));
}

/** An answer's text (textOf) as a JSON object when it is one, else null. */
export function jsonObjectOf(answer: string): Record<string, unknown> | null {
  const text = answer.trim();
  if (!text.startsWith("{")) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObj(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function isChatMessages(blueprint: Record<string, unknown>): blueprint is { messages: unknown[] } {
  return Array.isArray(blueprint.messages);
}

function textOfBlocks(blocks: unknown): string {
  if (typeof blocks === "string") return blocks;
  if (!Array.isArray(blocks)) return "";
  return blocks
    .filter((b): b is Record<string, unknown> => isObj(b) && b.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string)
    .join("");
}

/** Every message's text (chat) or the content (completion), one message per line: what `q` searches. */
export function inputTextOf(blueprint: Record<string, unknown>): string {
  if (isChatMessages(blueprint)) {
    return blueprint.messages
      .map((m) => (isObj(m) ? textOfBlocks(m.content) : ""))
      .filter((t) => t.length > 0)
      .join("\n");
  }
  return textOfBlocks(blueprint.content);
}

/** The text of the last user message: what user_intent classifies. */
export function lastUserTextOf(blueprint: Record<string, unknown>): string {
  if (!isChatMessages(blueprint)) return textOfBlocks(blueprint.content);
  for (let i = blueprint.messages.length - 1; i >= 0; i--) {
    const m = blueprint.messages[i];
    if (isObj(m) && m.role === "user") return textOfBlocks(m.content);
  }
  return "";
}

/** tool_call when the answer calls a tool; json when its text is a JSON object; text; or empty. */
export function outputFormatOf(output: Record<string, unknown>): OutputFormat {
  if (isChatMessages(output)) {
    for (let i = output.messages.length - 1; i >= 0; i--) {
      const m = output.messages[i];
      if (!isObj(m) || m.role !== "assistant") continue;
      if ((Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || isObj(m.function_call)) return "tool_call";
      break;
    }
  }
  if (jsonOutputOf(output)) return "json";
  return textOf(output).trim().length > 0 ? "text" : "empty";
}

export interface SearchColumns {
  inputText: string;
  outputText: string;
  outputFormat: OutputFormat;
  userIntent: ReturnType<typeof userIntentOf>;
  agentIntent: ReturnType<typeof agentIntentOf>;
}

export function searchColumnsOf(log: InputOutput): SearchColumns {
  const outputText = textOf(log.output);
  return {
    inputText: inputTextOf(log.input),
    outputText,
    outputFormat: outputFormatOf(log.output),
    userIntent: userIntentOf(lastUserTextOf(log.input)),
    agentIntent: agentIntentOf(outputText),
  };
}

/** A facet a log counts in: field, key, value, and the value lower-cased when that differs from it (else null). */
export type FacetRow = [field: FacetField, key: string, value: string, fold: string | null];

export interface FacetScalars {
  model: string;
  provider: string;
  status: string;
  promptId: number | null;
  promptName: string | null;
  /** A log made from a span: its trace and the span's name. */
  traceId?: string | null;
  spanName?: string | null;
}

const KEY_FIELDS: Partial<Record<IndexKind, [keys: FacetField, values: FacetField]>> = {
  metadata: ["metadata_keys", "metadata_values"],
  output: ["output_keys", "output_values"],
  input_variable: ["input_variable_keys", "input_variable_values"],
};

/** One row per suggestion value the log carries, each once: the log adds 1 to each count. */
export function facetRowsOf(scalars: FacetScalars, rows: IndexRow[]): FacetRow[] {
  const out: FacetRow[] = [];
  const seen = new Set<string>();
  const add = (field: FacetField, key: string, rawValue: string) => {
    const value = indexed(rawValue);
    const id = `${field}\u0000${key}\u0000${value}`;
    if (seen.has(id)) return;
    seen.add(id);
    const fold = value.toLowerCase();
    out.push([field, key, value, fold === value ? null : fold]);
  };
  add("engine", "", scalars.model);
  add("provider_type", "", scalars.provider);
  add("status", "", scalars.status);
  if (scalars.promptId !== null) add("prompt_id", "", String(scalars.promptId));
  if (scalars.promptName) add("prompt", scalars.promptId === null ? "" : String(scalars.promptId), scalars.promptName);
  if (scalars.traceId) add("trace_id", "", scalars.traceId);
  if (scalars.spanName) add("span_name", "", scalars.spanName);
  for (const [kind, key, value] of rows) {
    if (kind === "tag") add("tags", "", value);
    else if (kind === "tool") add("tool_names", "", value);
    else {
      const [keysField, valuesField] = KEY_FIELDS[kind]!;
      add(keysField, "", key);
      add(valuesField, key, value);
    }
  }
  return out;
}
