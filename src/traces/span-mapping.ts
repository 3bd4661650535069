// Pure: one OpenTelemetry span that records an LLM call → the request log it stands for, whatever
// GenAI dialect the instrumentation speaks (current gen_ai.* messages or events, OpenLLMetry's indexed
// gen_ai.prompt.N, OpenInference's llm.*, the Vercel AI SDK's ai.*). No bindings, no I/O. Attribute
// values of the wrong type never throw: they are ignored or stringified, and the fields keep within
// the limits POST /log-request and the tracking calls hold logged requests to (docs/traces.md).
import { priceOf } from "../converters/pricing";

import type { AttrValue, RequestLogInput, SpanEvent, SpanInput } from "../logs";

export type { AttrValue, SpanInput };

export interface SpanLog {
  log: Omit<RequestLogInput, "group_id">;
  /** promptlayer.prompt.label when no version number is given; the caller resolves it to a version. */
  promptLabel: string | null;
}

/** The limits of a logged request (POST /log-request, /track-request, /library-track-prompt, prompt names and labels). */
export const SPAN_LOG_LIMITS = {
  metadataKey: 1024,
  tag: 512,
  errorType: 64,
  errorMessage: 1024,
  functionName: 256,
  promptName: 512,
  promptLabel: 255,
} as const;

type Obj = Record<string, unknown>;
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

// ---- values of any type -------------------------------------------------------------------------

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A string attribute; numbers and booleans as their text; anything else is absent. */
function str(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (typeof v === "boolean") return String(v);
  return null;
}

/** A string attribute with something in it. */
function text(v: unknown): string | null {
  const s = str(v);
  return s !== null && s.trim() !== "" ? s : null;
}

/** A non-negative whole number (token counts, versions): a number or a string of digits. */
function count(v: unknown): number | null {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\s*\d{1,15}\s*$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** JSON carried as a string (or already structured, as OTLP kvlists and arrays arrive); undefined when unreadable. */
function json(v: unknown): unknown {
  if (typeof v !== "string") return v === null ? undefined : v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

/** A string as itself; any other value as its JSON text. */
function asText(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === undefined || v === null) return "";
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}

/** An object from entries whose keys come from the span: `__proto__` becomes a key like any other. */
const record = <T>(entries: Iterable<[string, T]>): Record<string, T> => Object.fromEntries(entries);

/**
 * Flattened lists (`prefix.N.rest`), as OpenLLMetry and OpenInference write them: one object per
 * index, in index order, keyed by the rest of the attribute name.
 */
function indexed(attrs: Obj, prefix: string): Obj[] {
  const groups = new Map<number, [string, unknown][]>();
  const head = `${prefix}.`;
  for (const [key, value] of Object.entries(attrs)) {
    if (!key.startsWith(head)) continue;
    const rest = key.slice(head.length);
    const dot = rest.indexOf(".");
    const index = rest.slice(0, dot);
    if (dot <= 0 || !/^\d{1,9}$/.test(index)) continue;
    const group = groups.get(Number(index)) ?? [];
    group.push([rest.slice(dot + 1), value]);
    groups.set(Number(index), group);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([, entries]) => record(entries));
}

/** The entries of `attrs` under `prefix.` with the prefix cut off (metadata maps). */
function under(attrs: Obj, prefix: string): [string, unknown][] {
  return Object.entries(attrs)
    .filter(([k]) => k.startsWith(prefix) && k.length > prefix.length)
    .map(([k, v]) => [k.slice(prefix.length), v]);
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

const MESSAGE_EVENTS: Record<string, string> = {
  "gen_ai.system.message": "system",
  "gen_ai.user.message": "user",
  "gen_ai.assistant.message": "assistant",
  "gen_ai.tool.message": "tool",
};

const eventsOf = (span: SpanInput) => (Array.isArray(span.events) ? span.events.filter((e) => isObj(e) && typeof e.name === "string") : []);

/** The event of the current conventions that carries the messages as its attributes. */
const DETAILS_EVENT = "gen_ai.client.inference.operation.details";

/** An attribute of the details event (the span's messages, system instructions or tools recorded there). */
function detailsAttr(span: SpanInput, name: string): unknown {
  return eventsOf(span).find((ev) => ev.name === DETAILS_EVENT && isObj(ev.attributes) && ev.attributes[name] !== undefined)?.attributes[name];
}

const detailsInput: Side = (_a, span) => {
  const e = eventsOf(span).find((ev) => ev.name === DETAILS_EVENT && isObj(ev.attributes) && ev.attributes["gen_ai.input.messages"] !== undefined);
  return e ? messageList(e.attributes["gen_ai.input.messages"], "user") : null;
};
const detailsOutput: Side = (_a, span) => {
  const e = eventsOf(span).find((ev) => ev.name === DETAILS_EVENT && isObj(ev.attributes) && ev.attributes["gen_ai.output.messages"] !== undefined);
  return e ? messageList(e.attributes["gen_ai.output.messages"], "assistant") : null;
};

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
  detailsInput,
  eventInput,
  contentEvent("gen_ai.content.prompt", "gen_ai.prompt", "user"),
];
const OUTPUT_READERS: Side[] = [
  genAiOutput,
  openLlmetry("gen_ai.completion", "assistant"),
  genAiCompletionJson,
  openInference("llm.output_messages", "assistant"),
  vercelOutput,
  detailsOutput,
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

// ---- tools, parameters, model, provider, usage ---------------------------------------------------

/** A tool definition in OpenAI's shape, from OpenAI's, the semantic conventions' or the Vercel AI SDK's. */
function toolDefinition(t: unknown): Obj | null {
  const v = json(t);
  if (!isObj(v)) return null;
  if (isObj(v.function) && str(v.function.name)) return { type: "function", function: v.function };
  const name = str(v.name);
  if (!name) return null;
  const fn: Obj = { name };
  if (str(v.description)) fn.description = str(v.description);
  const parameters = json(v.parameters ?? v.inputSchema ?? v.input_schema ?? v.arguments);
  if (isObj(parameters)) fn.parameters = parameters;
  return { type: "function", function: fn };
}

function toolsOf(a: Obj, invocation: Obj, span: SpanInput): Obj[] {
  const lists: unknown[] = [
    json(a["gen_ai.tool.definitions"]),
    json(detailsAttr(span, "gen_ai.tool.definitions")),
    indexed(a, "llm.tools").map((t) => t["tool.json_schema"]),
    indexed(a, "llm.request.functions"),
    Array.isArray(a["ai.prompt.tools"]) ? a["ai.prompt.tools"] : json(a["ai.prompt.tools"]),
    invocation.tools,
  ];
  for (const list of lists) {
    if (!Array.isArray(list) || !list.length) continue;
    const tools = list.map(toolDefinition).filter((t): t is Obj => t !== null);
    if (tools.length) return tools;
  }
  return [];
}

/** gen_ai.request.* names that the providers' own arguments spell differently. */
const PARAMETER_NAMES: Record<string, string> = { stop_sequences: "stop", "choice.count": "n" };
/** Arguments that are the call's content or transport, not its parameters. */
const NOT_PARAMETERS = new Set(["model", "messages", "tools", "functions", "prompt", "input", "stream", "stream_options", "api_key", "base_url", "baseURL", "apiKey"]);

function parametersOf(a: Obj, invocation: Obj): Obj {
  const entries: [string, unknown][] = Object.entries(invocation).filter(([k, v]) => !NOT_PARAMETERS.has(k) && v !== null && v !== undefined);
  for (const [k, v] of under(a, "gen_ai.request.")) {
    if (k === "model" || v === null || v === undefined) continue;
    entries.push([PARAMETER_NAMES[k] ?? k, v]);
  }
  return record(entries);
}

/** Provider names of the semantic conventions and the SDKs, in this service's vocabulary. */
const PROVIDERS: Record<string, string> = {
  openai: "openai",
  "azure.ai.openai": "openai.azure",
  "az.ai.openai": "openai.azure",
  azure: "openai.azure",
  "azure-openai": "openai.azure",
  anthropic: "anthropic",
  "aws.bedrock": "amazon.bedrock",
  "amazon-bedrock": "amazon.bedrock",
  aws: "amazon.bedrock",
  bedrock: "amazon.bedrock",
  "gcp.gemini": "google",
  "gcp.gen_ai": "google",
  gemini: "google",
  google: "google",
  "google.generative-ai": "google",
  "gcp.vertex_ai": "vertexai",
  vertex_ai: "vertexai",
  vertexai: "vertexai",
  "google.vertex": "vertexai",
  mistral_ai: "mistral",
  mistralai: "mistral",
  mistral: "mistral",
};

export function normalizeProvider(raw: string): string {
  const p = raw.trim().toLowerCase();
  if (PROVIDERS[p]) return PROVIDERS[p];
  // The Vercel AI SDK names the API after the provider: "openai.chat", "anthropic.messages", "google.vertex.chat".
  const base = p.replace(/\.(chat|responses|completion|completions|messages|generative-ai|embedding|image|transcription|speech)$/, "");
  return PROVIDERS[base] ?? base;
}

function providerOf(a: Obj, model: string): string {
  for (const key of ["gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system", "ai.model.provider"]) {
    const v = text(a[key]);
    if (v) return normalizeProvider(v);
  }
  const m = model.toLowerCase();
  if (/^(gpt-|o\d|chatgpt|text-davinci)/.test(m)) return "openai";
  if (m.startsWith("claude")) return "anthropic";
  if (m.startsWith("gemini")) return "google";
  if (/^(mistral|mixtral|codestral)/.test(m)) return "mistral";
  return "unknown";
}

const firstCount = (a: Obj, keys: string[]) => {
  for (const k of keys) {
    const n = count(a[k]);
    if (n !== null) return n;
  }
  return 0;
};

const INPUT_TOKENS = ["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt", "ai.usage.inputTokens", "ai.usage.promptTokens"];
const OUTPUT_TOKENS = ["gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion", "ai.usage.outputTokens", "ai.usage.completionTokens"];

/** Finish reasons of every dialect, for the cut-short check. */
function finishReasonsOf(a: Obj): string[] {
  const reasons: unknown[] = [];
  const listed = json(a["gen_ai.response.finish_reasons"]);
  if (Array.isArray(listed)) reasons.push(...listed);
  else reasons.push(a["gen_ai.response.finish_reasons"]);
  reasons.push(a["llm.finish_reason"], a["ai.response.finishReason"]);
  for (const c of indexed(a, "gen_ai.completion")) reasons.push(c.finish_reason);
  const out = json(a["gen_ai.output.messages"]);
  if (Array.isArray(out)) for (const m of out) if (isObj(m)) reasons.push(m.finish_reason);
  return reasons.map(str).filter((r): r is string => r !== null);
}

const CUT_SHORT = new Set(["length", "max_tokens", "max_output_tokens"]);

// ---- which spans are LLM calls --------------------------------------------------------------------

/** gen_ai.operation.name values that are not one model call (agents, tools, embeddings). */
const NOT_A_CALL = new Set(["execute_tool", "invoke_agent", "create_agent", "embeddings", "invoke_workflow", "retrieval"]);
/** OpenLLMetry's llm.request.type values that are not chat or completion calls. */
const NOT_CHAT = new Set(["embedding", "rerank", "unknown"]);

const merged = (span: SpanInput): Obj => ({ ...(isObj(span.resource) ? span.resource : {}), ...(isObj(span.attributes) ? span.attributes : {}) });

/**
 * Whether the span is one LLM call (a chat or completion request), in any dialect. Decided on the
 * span's own attributes and events: resource attributes describe the service, not the call.
 */
export function isLlmSpan(span: SpanInput): boolean {
  const a: Obj = isObj(span.attributes) ? span.attributes : {};
  // OpenInference says what every span is.
  const oiKind = str(a["openinference.span.kind"]);
  if (oiKind !== null) return oiKind.toUpperCase() === "LLM";
  // The Vercel AI SDK: the outer ai.generateText / ai.streamText span wraps its do* calls (one per
  // step); only those are model calls, and embeddings are not chat calls.
  const aiOp = str(a["ai.operationId"]) ?? (typeof span.name === "string" && /^ai\.[A-Za-z]+(\.|$)/.test(span.name) ? span.name : null);
  if (aiOp !== null && aiOp.startsWith("ai.")) return /\.do(Generate|Stream)$/.test(aiOp);
  const op = str(a["gen_ai.operation.name"]);
  if (op !== null && NOT_A_CALL.has(op)) return false;
  const reqType = str(a["llm.request.type"]);
  if (reqType !== null && NOT_CHAT.has(reqType)) return false;
  if (op !== null) return true;
  if (Object.keys(a).some((k) => /^gen_ai\.(request\.model|response\.model|input\.messages|output\.messages|prompt\.\d|completion\.\d|usage\.)/.test(k) || k === "llm.model_name" || k.startsWith("llm.input_messages."))) return true;
  return eventsOf(span).some((e) => MESSAGE_EVENTS[e.name] !== undefined || e.name === "gen_ai.choice" || e.name === DETAILS_EVENT);
}

// ---- metadata, tags, the prompt link, the error -------------------------------------------------

/** A metadata value as text: strings as they are, numbers and booleans as text, lists and objects as JSON. */
const metadataValue = (v: unknown): string | null => (v === null || v === undefined ? null : asText(v));

function metadataOf(a: Obj): Record<string, string> {
  const out = new Map<string, string>();
  const put = (k: string, v: unknown) => {
    const value = metadataValue(v);
    if (value !== null && k.length >= 1 && k.length <= SPAN_LOG_LIMITS.metadataKey) out.set(k, value);
  };
  // The dialects' own metadata first, so the standard attributes and promptlayer.metadata.* win.
  const oiMetadata = json(a.metadata);
  if (isObj(oiMetadata)) for (const [k, v] of Object.entries(oiMetadata)) put(k, v);
  for (const [k, v] of under(a, "traceloop.association.properties.")) put(k, v);
  for (const [k, v] of under(a, "ai.telemetry.metadata.")) put(k, v);
  const user = text(a["user.id"]) ?? text(a["enduser.id"]);
  if (user !== null) put("user_id", user);
  const conversation = text(a["gen_ai.conversation.id"]) ?? text(a["session.id"]);
  if (conversation !== null) put("conversation_id", conversation);
  for (const [k, v] of under(a, "promptlayer.metadata.")) put(k, v);
  return record(out);
}

function tagsOf(a: Obj): string[] {
  const raw = json(a["promptlayer.tags"]);
  // A string that is not a JSON list is one tag.
  const list = Array.isArray(raw) ? raw : typeof a["promptlayer.tags"] === "string" ? [a["promptlayer.tags"]] : [];
  const tags = list.map(str).filter((t): t is string => t !== null && t.trim() !== "" && t.length <= SPAN_LOG_LIMITS.tag);
  return [...new Set(tags)];
}

function promptLinkOf(a: Obj) {
  const name = text(a["promptlayer.prompt.name"]);
  const id = count(a["promptlayer.prompt.id"]);
  const version = count(a["promptlayer.prompt.version"]);
  const label = text(a["promptlayer.prompt.label"]);
  const prompt_version_number = version !== null && version > 0 ? version : null;
  return {
    prompt_name: name !== null && name.length <= SPAN_LOG_LIMITS.promptName ? name : null,
    prompt_id: id !== null && id > 0 ? id : null,
    prompt_version_number,
    promptLabel: prompt_version_number === null && label !== null && label.length <= SPAN_LOG_LIMITS.promptLabel ? label : null,
  };
}

function errorOf(span: SpanInput, a: Obj) {
  const exception = [...eventsOf(span)].reverse().find((e) => e.name === "exception" && isObj(e.attributes));
  const type = text(a["error.type"]) ?? text(exception?.attributes["exception.type"]) ?? "UNKNOWN_ERROR";
  const msg = text(span.status?.message) ?? text(exception?.attributes["exception.message"]);
  return { error_type: type.slice(0, SPAN_LOG_LIMITS.errorType), error_message: msg === null ? null : msg.slice(0, SPAN_LOG_LIMITS.errorMessage) };
}

function timesOf(span: SpanInput) {
  const s = typeof span.startTimeMs === "number" && Number.isFinite(span.startTimeMs) ? span.startTimeMs : null;
  const e = typeof span.endTimeMs === "number" && Number.isFinite(span.endTimeMs) ? span.endTimeMs : null;
  const start = Math.max(0, Math.round(s ?? e ?? 0));
  const end = Math.max(start, Math.round(e ?? start));
  return { request_start_time: start, request_end_time: end };
}

// ---- the mapping -------------------------------------------------------------------------------

/** The kinds of GenAI event a span's messages may come from: the span's own events of a kind win over its log records of that kind. */
function eventKind(name: string): "input" | "output" | "details" | null {
  if (MESSAGE_EVENTS[name] !== undefined || name === "gen_ai.content.prompt") return "input";
  if (name === "gen_ai.choice" || name === "gen_ai.content.completion") return "output";
  return name === DETAILS_EVENT ? "details" : null;
}

/** The span with its log records' events after its own, save the kinds its own events already give. */
function withRecords(span: SpanInput, records: readonly SpanEvent[]): SpanInput {
  if (records.length === 0) return span;
  const own = new Set(eventsOf(span).map((e) => eventKind(e.name)));
  const taken = records.filter((r) => {
    const kind = eventKind(r.name);
    return kind !== null && !own.has(kind);
  });
  return taken.length ? { ...span, events: [...eventsOf(span), ...taken] } : span;
}

/**
 * The request log one LLM span stands for; null when the span is not an LLM call (decided by the span
 * alone). `records`: the span's OTLP log records as events (log-records.ts), oldest first; they fill
 * in the messages as the span's own message events would, the span's attributes winning.
 */
export function spanToLog(callSpan: SpanInput, records: readonly SpanEvent[] = []): SpanLog | null {
  if (!isLlmSpan(callSpan)) return null;
  const span = withRecords(callSpan, records);
  const a = merged(span);

  const invocationRaw = json(a["llm.invocation_parameters"]);
  const invocation = isObj(invocationRaw) ? invocationRaw : {};
  const model = text(a["gen_ai.request.model"]) ?? text(a["gen_ai.response.model"]) ?? text(a["llm.model_name"]) ?? text(a["ai.model.id"]) ?? text(invocation.model) ?? "unknown";
  const provider = providerOf(a, model);

  const inputMessages = firstOf(INPUT_READERS, a, span);
  const system = systemInstructions(a["gen_ai.system_instructions"] ?? detailsAttr(span, "gen_ai.system_instructions"));
  if (system) inputMessages.unshift(system);
  const input: Obj = { type: "chat", messages: inputMessages };
  const tools = toolsOf(a, invocation, span);
  if (tools.length) input.tools = tools;
  const output: Obj = { type: "chat", messages: firstOf(OUTPUT_READERS, a, span) };

  const input_tokens = firstCount(a, INPUT_TOKENS);
  const output_tokens = firstCount(a, OUTPUT_TOKENS);
  const failed = span.status?.code === 2;
  const cutShort = !failed && finishReasonsOf(a).some((r) => CUT_SHORT.has(r.toLowerCase()));
  const error = failed ? errorOf(span, a) : null;
  const { promptLabel, ...link } = promptLinkOf(a);

  return {
    log: {
      provider,
      model,
      api_type: null,
      input,
      output,
      parameters: parametersOf(a, invocation),
      tags: tagsOf(a),
      metadata: metadataOf(a),
      ...link,
      prompt_input_variables: {},
      input_tokens,
      output_tokens,
      price: priceOf(model, input_tokens, output_tokens),
      function_name: (str(span.name) ?? "").slice(0, SPAN_LOG_LIMITS.functionName),
      score: 0,
      score_name: null,
      status: failed ? "ERROR" : cutShort ? "WARNING" : "SUCCESS",
      error_type: error?.error_type ?? null,
      error_message: error ? error.error_message : cutShort ? "the reply was cut at max_tokens" : null,
      ...timesOf(span),
    },
    promptLabel,
  };
}
