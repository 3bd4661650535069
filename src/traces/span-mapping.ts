// Pure: one OpenTelemetry span that records an LLM call → the request log it stands for, whatever
// GenAI dialect the instrumentation speaks (current gen_ai.* messages or events, OpenLLMetry's indexed
// gen_ai.prompt.N, OpenInference's llm.*, the Vercel AI SDK's ai.*). No bindings, no I/O. Attribute
// values of the wrong type never throw: they are ignored or stringified, and the fields keep within
// the limits POST /log-request and the tracking calls hold logged requests to (docs/traces.md).
// The messages are read by span-messages.ts; the rest of the log (model, provider, tools, parameters,
// usage, metadata, the prompt link, the status) here.
import { priceOf } from "../converters/pricing";
import type { AttrValue, RequestLogInput, SpanEvent, SpanInput } from "../logs";
import { detailsAttr, DETAILS_EVENT, eventsOf, inputMessagesOf, MESSAGE_EVENTS, outputMessagesOf, withRecords } from "./span-messages";
import { asText, count, indexed, json, record, str, text, under } from "./span-values";
import { isObj, type Obj } from "../lib/obj";

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

  const input: Obj = { type: "chat", messages: inputMessagesOf(a, span) };
  const tools = toolsOf(a, invocation, span);
  if (tools.length) input.tools = tools;
  const output: Obj = { type: "chat", messages: outputMessagesOf(a, span) };

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