// Pure: the input and output messages of an LLM span as blueprint messages, in every GenAI dialect
// (current gen_ai.* messages or events, OpenLLMetry's indexed gen_ai.prompt.N, OpenInference's llm.*,
// the Vercel AI SDK's ai.*), and which of a span's events carry them. For span-mapping.ts, which
// makes the rest of the log.
import type { AttrValue, SpanEvent, SpanInput } from "../logs";
import { asText, count, indexed, json, record, str, text, under } from "./span-values";
import { isObj, type Obj } from "../lib/obj";

type Block = Obj;
interface ToolCall {
  id: string | null;
  type: "function";
  function: { name: string; arguments: string };
}
interface Message {
  role: string;
  content: Block[] | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

// ---- blueprint pieces ---------------------------------------------------------------------------

const ROLES = new Set(["system", "user", "assistant", "function", "tool", "developer"]);
const ROLE_ALIASES: Record<string, string> = { model: "assistant", ai: "assistant", bot: "assistant", human: "user", chatbot: "assistant" };

function roleOf(v: unknown, fallback: string): string {
  const r = str(v)?.trim().toLowerCase();
  if (!r) return fallback;
  if (ROLES.has(r)) return r;
  return ROLE_ALIASES[r] ?? fallback;
}

const textBlock = (t: string): Block => ({ type: "text", text: t });

function toolCall(id: unknown, name: unknown, args: unknown): ToolCall {
  return { id: text(id), type: "function", function: { name: str(name) ?? "", arguments: typeof args === "string" ? args : asText(args ?? {}) } };
}

function imageBlock(url: string): Block {
  return { type: "image_url", image_url: { url } };
}

/** One content part of any dialect as blueprint blocks (text, thinking, images); other parts are left out. */
function blocksOfPart(p: unknown): Block[] {
  if (typeof p === "string") return p === "" ? [] : [textBlock(p)];
  if (!isObj(p)) return [];
  const type = str(p.type) ?? "";
  if (["text", "input_text", "output_text"].includes(type)) {
    const t = str(p.text) ?? str(p.content);
    return t ? [textBlock(t)] : [];
  }
  if (type === "reasoning" || type === "thinking") {
    const t = str(p.content) ?? str(p.text) ?? str(p.thinking);
    return t ? [{ type: "thinking", thinking: t }] : [];
  }
  if (type === "image_url") {
    const url = isObj(p.image_url) ? str(p.image_url.url) : str(p.image_url);
    return url ? [imageBlock(url)] : [];
  }
  if (type === "uri" && str(p.modality) === "image") {
    const url = str(p.uri);
    return url ? [imageBlock(url)] : [];
  }
  if (type === "blob" && str(p.modality) === "image") {
    const data = str(p.content);
    return data ? [imageBlock(`data:${str(p.mime_type) ?? "image/png"};base64,${data}`)] : [];
  }
  if (type === "image") {
    const url = str(p.image) ?? str(p.url);
    if (!url) return [];
    return [imageBlock(/^(https?:|data:)/.test(url) ? url : `data:${str(p.mediaType) ?? str(p.mimeType) ?? "image/png"};base64,${url}`)];
  }
  if (!type) {
    const t = str(p.text) ?? (isObj(p.text) ? str(p.text.value) : null);
    return t ? [textBlock(t)] : [];
  }
  return [];
}

/** Content as a string, a list of parts, or one part object. */
function blocksOf(content: unknown): Block[] {
  if (content === undefined || content === null) return [];
  if (Array.isArray(content)) return content.flatMap(blocksOfPart);
  if (typeof content === "number" || typeof content === "boolean") return [textBlock(String(content))];
  return blocksOfPart(content);
}

/** A message in the service's shape; an assistant turn that only calls tools has content null. */
function message(role: string, blocks: Block[], calls: ToolCall[] = [], extra: { tool_call_id?: string | null; name?: string | null } = {}): Message {
  const m: Message = { role, content: blocks };
  if (calls.length) m.tool_calls = calls;
  if (extra.tool_call_id) m.tool_call_id = extra.tool_call_id;
  if (extra.name) m.name = extra.name;
  if ((role === "assistant" || role === "function") && blocks.length === 0 && calls.length) m.content = null;
  return m;
}

const toolResult = (id: unknown, result: unknown): Message => message("tool", [textBlock(asText(result))], [], { tool_call_id: text(id) });

/** OpenAI-style tool calls (`{id, function: {name, arguments}}`), or flat `{id, name, arguments}`. */
function openAIToolCalls(v: unknown): ToolCall[] {
  const list = json(v);
  if (!Array.isArray(list)) return [];
  return list.filter(isObj).map((c) => (isObj(c.function) ? toolCall(c.id, c.function.name, c.function.arguments) : toolCall(c.id, c.name, c.arguments ?? c.input ?? c.args)));
}

/** Content parts carried as JSON text ("[{\"type\": \"text\", …}]"); undefined for any other text. */
function partsJson(v: unknown): unknown[] | undefined {
  if (typeof v !== "string" || !/^\s*\[/.test(v)) return undefined;
  const parsed = json(v);
  return Array.isArray(parsed) && parsed.length > 0 && parsed.every((p) => isObj(p) && typeof p.type === "string") ? parsed : undefined;
}

/** An OpenAI-format message (and the event bodies, which follow it). */
function fromOpenAIMessage(m: Obj, fallbackRole = "user"): Message {
  const role = roleOf(m.role, fallbackRole);
  const calls = openAIToolCalls(m.tool_calls);
  if (isObj(m.function_call)) calls.push(toolCall(null, m.function_call.name, m.function_call.arguments));
  return message(role, blocksOf(partsJson(m.content) ?? m.content), calls, { tool_call_id: text(m.tool_call_id) ?? (role === "tool" ? text(m.id) : null), name: text(m.name) });
}

/** A message of the current semantic conventions: role + parts (text, tool_call, tool_call_response, …). */
function fromPartsMessage(m: Obj, fallbackRole: string): Message[] {
  if (!Array.isArray(m.parts)) return [fromOpenAIMessage(m, fallbackRole)];
  const role = roleOf(m.role, fallbackRole);
  const blocks: Block[] = [];
  const calls: ToolCall[] = [];
  const results: Message[] = [];
  for (const p of m.parts) {
    if (isObj(p) && p.type === "tool_call") calls.push(toolCall(p.id, p.name, p.arguments));
    else if (isObj(p) && p.type === "tool_call_response") results.push(toolResult(p.id, p.response ?? p.result));
    else blocks.push(...blocksOfPart(p));
  }
  // Tool results first: a user turn that answers tool calls and says more comes after the answers.
  if (results.length && !blocks.length && !calls.length) return results;
  return [...results, message(role, blocks, calls, { name: text(m.name) })];
}

/** A list of messages carried as JSON (or structured); null when the value is not a list. */
function messageList(v: unknown, fallbackRole: string): Message[] | null {
  const list = json(v);
  if (!Array.isArray(list)) return null;
  return list.filter(isObj).flatMap((m) => fromPartsMessage(m, fallbackRole));
}

/** gen_ai.system_instructions: parts as JSON, or plain text. */
function systemInstructions(v: unknown): Message | null {
  if (v === undefined || v === null) return null;
  const parsed = json(v);
  const blocks = Array.isArray(parsed) ? parsed.flatMap(blocksOfPart) : isObj(parsed) ? blocksOfPart(parsed) : blocksOf(str(v));
  return blocks.length ? message("system", blocks) : null;
}

// ---- dialects: the input and the output messages --------------------------------------------------

type Side = (a: Obj, span: SpanInput) => Message[] | null;

/** Current semantic conventions: gen_ai.input.messages / gen_ai.output.messages (JSON or structured). */
const genAiInput: Side = (a) => messageList(a["gen_ai.input.messages"], "user");
const genAiOutput: Side = (a) => messageList(a["gen_ai.output.messages"], "assistant");

/** Older single-attribute form: gen_ai.prompt / gen_ai.completion as JSON lists of OpenAI messages. */
const genAiPromptJson: Side = (a) => messageList(a["gen_ai.prompt"], "user");
const genAiCompletionJson: Side = (a) => messageList(a["gen_ai.completion"], "assistant");

/** OpenLLMetry: gen_ai.prompt.N.role/content (+ tool_calls.M.*, tool_call_id) and gen_ai.completion.N.*. */
function openLlmetry(prefix: string, fallbackRole: string): Side {
  return (a) => {
    const items = indexed(a, prefix);
    if (!items.length) return null;
    return items.map((m) => {
      const role = roleOf(m.role, fallbackRole);
      const calls = indexed(m, "tool_calls").map((c) => toolCall(c.id, c.name, c.arguments));
      if (m["function_call.name"] !== undefined) calls.push(toolCall(null, m["function_call.name"], m["function_call.arguments"]));
      // A null content is written as the text "null" by some versions.
      const raw = role === "assistant" && m.content === "null" ? null : m.content;
      return message(role, blocksOf(partsJson(raw) ?? raw), calls, { tool_call_id: text(m.tool_call_id), name: text(m.name) });
    });
  };
}

/** OpenInference: llm.input_messages.N.message.{role, content, contents.K.*, tool_calls.M.tool_call.*, tool_call_id}. */
function openInference(prefix: string, fallbackRole: string): Side {
  return (a) => {
    const items = indexed(a, prefix);
    if (!items.length) return null;
    return items.map((raw) => {
      const m = record(under(raw, "message."));
      const role = roleOf(m.role, fallbackRole);
      const blocks = m.content !== undefined ? blocksOf(m.content) : indexed(m, "contents").flatMap((c) => {
        const type = str(c["message_content.type"]);
        if (type === "image") return blocksOfPart({ type: "image_url", image_url: c["message_content.image.image.url"] });
        return blocksOf(c["message_content.text"]);
      });
      const calls = indexed(m, "tool_calls").map((c) => toolCall(c["tool_call.id"], c["tool_call.function.name"], c["tool_call.function.arguments"]));
      if (m.function_call_name !== undefined) calls.push(toolCall(null, m.function_call_name, m.function_call_arguments_json));
      return message(role, blocks, calls, { tool_call_id: text(m.tool_call_id), name: text(m.name) });
    });
  };
}

/** The Vercel AI SDK's tool result: v5+ wraps it as {type, value} under `output`, v4 puts it under `result`. */
function vercelToolOutput(p: Obj): unknown {
  if (isObj(p.output) && "value" in p.output) return p.output.value;
  return p.output !== undefined ? p.output : p.result;
}

/** Vercel AI SDK: ai.prompt.messages, its own message format (tool-call and tool-result parts). */
const vercelInput: Side = (a) => {
  const list = json(a["ai.prompt.messages"]);
  if (!Array.isArray(list)) return null;
  return list.filter(isObj).flatMap((m): Message[] => {
    const role = roleOf(m.role, "user");
    const parts = typeof m.content === "string" ? [m.content] : Array.isArray(m.content) ? m.content : [];
    const blocks: Block[] = [];
    const calls: ToolCall[] = [];
    const results: Message[] = [];
    for (const p of parts) {
      if (isObj(p) && p.type === "tool-call") calls.push(toolCall(p.toolCallId, p.toolName, p.input ?? p.args));
      else if (isObj(p) && p.type === "tool-result") results.push(toolResult(p.toolCallId, vercelToolOutput(p)));
      else blocks.push(...blocksOfPart(p));
    }
    if (role === "tool") return results;
    return [message(role, blocks, calls), ...results];
  });
};

/** Vercel AI SDK: ai.response.text / object / reasoning / toolCalls on the do* span. */
const vercelOutput: Side = (a) => {
  const t = str(a["ai.response.text"]) ?? str(a["ai.response.object"]);
  const reasoning = str(a["ai.response.reasoning"]);
  const callList = json(a["ai.response.toolCalls"]);
  if (t === null && reasoning === null && !Array.isArray(callList)) return null;
  const blocks: Block[] = [];
  if (reasoning) blocks.push({ type: "thinking", thinking: reasoning });
  if (t) blocks.push(textBlock(t));
  const calls = (Array.isArray(callList) ? callList : []).filter(isObj).map((c) => toolCall(c.toolCallId, c.toolName, c.input ?? c.args));
  return [message("assistant", blocks, calls)];
};

/** An event's body: its attributes, with the JSON in gen_ai.event.content (where some SDKs put the body) merged in. */
function eventBody(attrs: Record<string, AttrValue>): Obj {
  const own = isObj(attrs) ? attrs : {};
  const body = json(own["gen_ai.event.content"]);
  return record([...Object.entries(own).filter(([k]) => k !== "gen_ai.event.content"), ...(isObj(body) ? Object.entries(body) : [])]);
}

export const MESSAGE_EVENTS: Record<string, string> = {
  "gen_ai.system.message": "system",
  "gen_ai.user.message": "user",
  "gen_ai.assistant.message": "assistant",
  "gen_ai.tool.message": "tool",
};

export const eventsOf = (span: SpanInput) => (Array.isArray(span.events) ? span.events.filter((e) => isObj(e) && typeof e.name === "string") : []);

/** The event of the current conventions that carries the messages as its attributes. */
export const DETAILS_EVENT = "gen_ai.client.inference.operation.details";

/** An attribute of the details event (the span's messages, system instructions or tools recorded there). */
export function detailsAttr(span: SpanInput, name: string): unknown {
  return eventsOf(span).find((ev) => ev.name === DETAILS_EVENT && isObj(ev.attributes) && ev.attributes[name] !== undefined)?.attributes[name];
}

/** The messages of the details event's `attr`, when it has them. */
function detailsMessages(attr: string, fallbackRole: string): Side {
  return (_a, span) => {
    const v = detailsAttr(span, attr);
    return v === undefined ? null : messageList(v, fallbackRole);
  };
}

/** The event-based convention: one event per input message. */
const eventInput: Side = (_a, span) => {
  const events = eventsOf(span).filter((e) => MESSAGE_EVENTS[e.name] !== undefined);
  if (!events.length) return null;
  return events.map((e) => {
    const body = eventBody(e.attributes);
    const role = MESSAGE_EVENTS[e.name];
    return fromOpenAIMessage({ ...body, role: roleOf(body.role, role) }, role);
  });
};

/** The event-based convention: one gen_ai.choice event per choice, in index order. */
const eventOutput: Side = (_a, span) => {
  const choices = eventsOf(span)
    .filter((e) => e.name === "gen_ai.choice")
    .map((e) => eventBody(e.attributes))
    .map((body, i) => ({ body, index: count(body.index) ?? i }))
    .sort((x, y) => x.index - y.index);
  if (!choices.length) return null;
  return choices.map(({ body }) => {
    const msg = json(body.message);
    return fromOpenAIMessage(isObj(msg) ? msg : { content: body.content, tool_calls: body.tool_calls }, "assistant");
  });
};

/** The oldest span events: gen_ai.content.prompt / gen_ai.content.completion with a JSON list. */
function contentEvent(name: string, attr: string, fallbackRole: string): Side {
  return (_a, span) => {
    const e = eventsOf(span).find((ev) => ev.name === name && isObj(ev.attributes));
    return e ? messageList(e.attributes[attr], fallbackRole) : null;
  };
}

/** Readers in precedence order: attributes of every dialect first, then the event forms. */
const INPUT_READERS: Side[] = [
  genAiInput,
  openLlmetry("gen_ai.prompt", "user"),
  genAiPromptJson,
  openInference("llm.input_messages", "user"),
  vercelInput,
  detailsMessages("gen_ai.input.messages", "user"),
  eventInput,
  contentEvent("gen_ai.content.prompt", "gen_ai.prompt", "user"),
];
const OUTPUT_READERS: Side[] = [
  genAiOutput,
  openLlmetry("gen_ai.completion", "assistant"),
  genAiCompletionJson,
  openInference("llm.output_messages", "assistant"),
  vercelOutput,
  detailsMessages("gen_ai.output.messages", "assistant"),
  eventOutput,
  contentEvent("gen_ai.content.completion", "gen_ai.completion", "assistant"),
];

const firstOf = (readers: Side[], a: Obj, span: SpanInput): Message[] => {
  for (const read of readers) {
    const found = read(a, span);
    if (found) return found;
  }
  return [];
};

/** The input messages, the system instructions (on the span or its details event) first. */
export function inputMessagesOf(a: Obj, span: SpanInput): Message[] {
  const messages = firstOf(INPUT_READERS, a, span);
  const system = systemInstructions(a["gen_ai.system_instructions"] ?? detailsAttr(span, "gen_ai.system_instructions"));
  if (system) messages.unshift(system);
  return messages;
}

export const outputMessagesOf = (a: Obj, span: SpanInput): Message[] => firstOf(OUTPUT_READERS, a, span);

// ---- log records: GenAI events that come apart from their span ----------------------------------

/** The kinds of GenAI event a span's messages may come from: the span's own events of a kind win over its log records of that kind. */
function eventKind(name: string): "input" | "output" | "details" | null {
  if (MESSAGE_EVENTS[name] !== undefined || name === "gen_ai.content.prompt") return "input";
  if (name === "gen_ai.choice" || name === "gen_ai.content.completion") return "output";
  return name === DETAILS_EVENT ? "details" : null;
}

/** The span with its log records' events after its own, save the kinds its own events already give. */
export function withRecords(span: SpanInput, records: readonly SpanEvent[]): SpanInput {
  if (records.length === 0) return span;
  const own = new Set(eventsOf(span).map((e) => eventKind(e.name)));
  const taken = records.filter((r) => {
    const kind = eventKind(r.name);
    return kind !== null && !own.has(kind);
  });
  return taken.length ? { ...span, events: [...eventsOf(span), ...taken] } : span;
}
