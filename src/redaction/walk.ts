// Where a policy reaches into what is logged: a request log's blueprints, parameters, metadata, tags,
// input variables and error message; a span's attributes, events and status; an OTLP log record's
// body and attributes. Each text is redacted in the field group it belongs to (policy.ts), and only
// when the policy covers that group. Keys and structure stay (a message's role and type, a tool
// call's id): only values change. A dropped value is removed from a map (metadata, attributes,
// variables) or a list of strings (tags), and emptied where the shape needs a value (a message text).
import type { FieldGroup } from "./policy";
import type { Redaction } from "./redact";

type Json = unknown;
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Keys whose string values name structure, not content: never redacted, but only at the top of a
 * blueprint, a message, a content block or a tool call (never in a map: metadata's `id` is content).
 */
const STRUCTURAL = new Set(["type", "role", "id", "tool_call_id", "tool_use_id", "call_id", "template_format"]);

/** Content blocks and message keys that carry tool calls and their results. */
const TOOL_BLOCKS = new Set(["tool_use", "tool_result", "tool_call", "function_call", "function_call_output", "server_tool_use", "web_search_tool_result"]);
const TOOL_ROLES = new Set(["tool", "function"]);

const DROPPED = Symbol("dropped");

/**
 * Redacts every string of a JSON value in `group`. `keyed`: a dropped value takes its key (or list
 * element) with it; otherwise it becomes "". `structural`: the value is a block (or a list of blocks)
 * whose own STRUCTURAL keys stay; what they hold below is content.
 */
async function value(r: Redaction, v: Json, group: FieldGroup, keyed: boolean, structural: boolean): Promise<Json | typeof DROPPED> {
  if (typeof v === "string") {
    if (!r.applies(group)) return v;
    const out = await r.text(v);
    return out.drop ? (keyed ? DROPPED : "") : out.value;
  }
  if (Array.isArray(v)) {
    const out: Json[] = [];
    for (const item of v) {
      const x = await value(r, item, group, keyed, structural);
      if (x !== DROPPED) out.push(x);
    }
    return out;
  }
  if (isObj(v)) {
    const out: Obj = {};
    for (const [k, item] of Object.entries(v)) {
      if (structural && STRUCTURAL.has(k) && typeof item === "string") {
        out[k] = item;
        continue;
      }
      const x = await value(r, item, group, keyed, false);
      if (x !== DROPPED) out[k] = x;
    }
    return out;
  }
  return v;
}

/** A JSON value redacted in `group` (a dropped value becomes null at the top); every string is content. */
export async function redactJson<T>(r: Redaction, v: T, group: FieldGroup, keyed = true): Promise<T> {
  const out = await value(r, v, group, keyed, false);
  return (out === DROPPED ? null : out) as T;
}

/** A block of a blueprint (or a list of them): its own structural keys (type, role, id …) stay. */
async function redactBlock<T>(r: Redaction, v: T, group: FieldGroup): Promise<T> {
  const out = await value(r, v, group, false, true);
  return (out === DROPPED ? null : out) as T;
}

/**
 * A map of values (metadata, attributes, input variables): every value is content, whatever its key
 * (`id`, `type` …); a dropped value takes its key with it. Keys are not redacted: they are the names
 * a caller filters and groups by (docs/privacy.md).
 */
export async function redactMap<T extends Record<string, unknown>>(r: Redaction, map: T, group: FieldGroup): Promise<T> {
  if (!r.applies(group)) return map;
  return (await redactJson(r, map, group, true)) ?? ({} as T);
}

async function contentOf(r: Redaction, content: Json, group: FieldGroup): Promise<Json> {
  if (!Array.isArray(content)) return redactBlock(r, content, group);
  const out: Json[] = [];
  for (const block of content) {
    const toolBlock = isObj(block) && typeof block.type === "string" && TOOL_BLOCKS.has(block.type);
    out.push(await redactBlock(r, block, toolBlock ? "tool_calls" : group));
  }
  return out;
}

async function message(r: Redaction, m: Json, group: FieldGroup): Promise<Json> {
  if (!isObj(m)) return redactBlock(r, m, group);
  const own: FieldGroup = typeof m.role === "string" && TOOL_ROLES.has(m.role) ? "tool_calls" : group;
  const out: Obj = {};
  for (const [k, v] of Object.entries(m)) {
    if (STRUCTURAL.has(k) && typeof v === "string") out[k] = v;
    else if (k === "content") out[k] = await contentOf(r, v, own);
    else if (k === "tool_calls" || k === "function_call") out[k] = await redactBlock(r, v, "tool_calls");
    else out[k] = await redactJson(r, v, own, false);
  }
  return out;
}

/**
 * A prompt blueprint (chat `messages` or completion `content`), its texts in `group` (messages for the
 * input, outputs for the answer), tool calls and results in tool_calls, tool definitions in parameters.
 */
export async function redactBlueprint<T>(r: Redaction, bp: T, group: "messages" | "outputs"): Promise<T> {
  if (!isObj(bp)) return redactBlock(r, bp, group);
  const out: Obj = {};
  for (const [k, v] of Object.entries(bp)) {
    if (STRUCTURAL.has(k) && typeof v === "string") out[k] = v;
    else if (k === "messages" && Array.isArray(v)) {
      const msgs: Json[] = [];
      for (const m of v) msgs.push(await message(r, m, group));
      out[k] = msgs;
    } else if (k === "content") out[k] = await contentOf(r, v, group);
    else if (k === "functions" || k === "tools" || k === "tool_choice" || k === "function_call") out[k] = await redactJson(r, v, "parameters", false);
    else if (k === "input_variables") out[k] = v;
    else out[k] = await redactJson(r, v, group, false);
  }
  return out as T;
}

/** What a request log carries that a policy reaches. */
export interface LogContent {
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  parameters: Record<string, unknown>;
  tags: string[];
  metadata: Record<string, string>;
  prompt_input_variables: Record<string, unknown>;
  error_message?: string | null;
}

/** A request log with its content redacted (everything else as it was). */
export async function redactLogContent<T extends LogContent>(r: Redaction, log: T): Promise<T> {
  const tags = r.applies("metadata") ? ((await redactJson(r, log.tags, "metadata", true)) ?? []) : log.tags;
  let error = log.error_message ?? null;
  if (error && r.applies("error_messages")) {
    const out = await r.text(error);
    error = out.drop ? null : out.value;
  }
  return {
    ...log,
    input: await redactBlueprint(r, log.input, "messages"),
    output: await redactBlueprint(r, log.output, "outputs"),
    parameters: r.applies("parameters") ? await redactJson(r, log.parameters, "parameters", true) ?? {} : log.parameters,
    tags,
    metadata: await redactMap(r, log.metadata, "metadata"),
    prompt_input_variables: await redactMap(r, log.prompt_input_variables, "input_variables"),
    ...(log.error_message !== undefined ? { error_message: error } : {}),
  };
}

/** What a span carries that a policy reaches. */
export interface SpanContent {
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  events: { attributes: Record<string, unknown> }[];
  status: { code: number; message: string | null };
}

export async function redactSpanContent<T extends SpanContent>(r: Redaction, span: T): Promise<T> {
  let message = span.status.message;
  if (message && r.applies("error_messages")) {
    const out = await r.text(message);
    message = out.drop ? null : out.value;
  }
  const events = [];
  for (const e of span.events) events.push({ ...e, attributes: await redactMap(r, e.attributes, "span_events") });
  return {
    ...span,
    attributes: await redactMap(r, span.attributes, "span_attributes"),
    resource: await redactMap(r, span.resource, "span_attributes"),
    events,
    status: { ...span.status, message },
  };
}

/** What an OTLP log record carries that a policy reaches. */
export interface RecordContent {
  body: unknown;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

export async function redactRecordContent<T extends RecordContent>(r: Redaction, record: T): Promise<T> {
  return {
    ...record,
    body: r.applies("log_bodies") ? await redactJson(r, record.body, "log_bodies", true) : record.body,
    attributes: await redactMap(r, record.attributes, "log_bodies"),
    resource: await redactMap(r, record.resource, "span_attributes"),
  };
}
