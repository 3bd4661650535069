// OpenAI's chat completions (also Azure OpenAI and Mistral, which take the same shape), legacy
// completions and the Responses API: provider call → request log, and blueprint → call arguments.
import { blocksOf, errorOf, num, parametersOf, text, type ConvertedCall } from "./types";
import { isObj, type Obj } from "../lib/obj";

function toolCallsOf(calls: unknown): Obj[] | undefined {
  if (!Array.isArray(calls) || calls.length === 0) return undefined;
  return calls.filter(isObj).map((c) => {
    const fn = isObj(c.function) ? c.function : {};
    return { id: c.id ?? null, type: "function", function: { name: String(fn.name ?? ""), arguments: typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {}) } };
  });
}

/** One OpenAI-format chat message as a blueprint message. */
export function messageFromOpenAI(m: Obj): Obj {
  const role = m.role === "developer" ? "developer" : String(m.role ?? "user");
  const out: Obj = { role, content: blocksOf(m.content) };
  const calls = toolCallsOf(m.tool_calls);
  if (calls) out.tool_calls = calls;
  if (isObj(m.function_call)) out.function_call = m.function_call;
  if (typeof m.tool_call_id === "string") out.tool_call_id = m.tool_call_id;
  if (typeof m.name === "string") out.name = m.name;
  if ((role === "assistant" || role === "function") && (out.content as Obj[]).length === 0) out.content = calls || out.function_call ? null : [];
  return out;
}

export function fromChatCompletion(kwargs: Obj, response: unknown, provider: string): ConvertedCall {
  const r = isObj(response) ? response : {};
  const messages = Array.isArray(kwargs.messages) ? kwargs.messages.filter(isObj).map(messageFromOpenAI) : [];
  const choice = Array.isArray(r.choices) && isObj(r.choices[0]) ? r.choices[0] : {};
  // A stream's chunk carries `delta` where a completion carries `message`: the Python SDK's wrappers
  // post the chunk that ended an OpenAI stream (its last delta, not the text streamed before it).
  const said = isObj(choice.message) ? choice.message : isObj(choice.delta) ? choice.delta : null;
  const reply = said ? messageFromOpenAI({ ...said, role: "assistant" }) : null;
  const usage = isObj(r.usage) ? r.usage : {};
  const err = errorOf(response);
  const input: Obj = { type: "chat", messages };
  if (Array.isArray(kwargs.tools)) input.tools = kwargs.tools;
  if (Array.isArray(kwargs.functions)) input.functions = kwargs.functions;
  return {
    provider,
    model: String(r.model ?? kwargs.model ?? ""),
    api_type: "chat-completions",
    input,
    output: { type: "chat", messages: reply ? [reply] : [] },
    parameters: parametersOf(kwargs, ["messages", "tools", "functions"]),
    input_tokens: num(usage.prompt_tokens),
    output_tokens: num(usage.completion_tokens),
    price: 0,
    status: err ? "ERROR" : choice.finish_reason === "length" ? "WARNING" : "SUCCESS",
    error_type: err?.type ?? null,
    error_message: err?.message ?? (choice.finish_reason === "length" ? "the reply was cut at max_tokens" : null),
  };
}

export function fromCompletion(kwargs: Obj, response: unknown, provider: string): ConvertedCall {
  const r = isObj(response) ? response : {};
  const prompt = Array.isArray(kwargs.prompt) ? kwargs.prompt.join("\n") : String(kwargs.prompt ?? "");
  const choice = Array.isArray(r.choices) && isObj(r.choices[0]) ? r.choices[0] : {};
  const completion = typeof choice.text === "string" ? choice.text : typeof r.completion === "string" ? r.completion : "";
  const usage = isObj(r.usage) ? r.usage : {};
  const err = errorOf(response);
  return {
    provider,
    model: String(r.model ?? kwargs.model ?? ""),
    api_type: "completions",
    input: { type: "completion", content: [text(prompt)] },
    output: { type: "completion", content: [text(completion)] },
    parameters: parametersOf(kwargs, ["prompt"]),
    input_tokens: num(usage.prompt_tokens ?? usage.input_tokens),
    output_tokens: num(usage.completion_tokens ?? usage.output_tokens),
    price: 0,
    status: err ? "ERROR" : "SUCCESS",
    error_type: err?.type ?? null,
    error_message: err?.message ?? null,
  };
}

/** The Responses API: `instructions` and `input` (a string or items) in, `output` items out. */
export function fromResponses(kwargs: Obj, response: unknown, provider: string): ConvertedCall {
  const r = isObj(response) ? response : {};
  const messages: Obj[] = [];
  if (typeof kwargs.instructions === "string") messages.push({ role: "system", content: [text(kwargs.instructions)] });
  const items = typeof kwargs.input === "string" ? [{ role: "user", content: kwargs.input }] : Array.isArray(kwargs.input) ? kwargs.input : [];
  for (const item of items.filter(isObj)) {
    if (item.type === "function_call") messages.push({ role: "assistant", content: null, tool_calls: toolCallsOf([{ id: item.call_id, function: { name: item.name, arguments: item.arguments } }]) });
    else if (item.type === "function_call_output") messages.push({ role: "tool", tool_call_id: item.call_id, content: blocksOf(typeof item.output === "string" ? item.output : JSON.stringify(item.output)) });
    else messages.push(messageFromOpenAI(item));
  }
  const content: Obj[] = [];
  const calls: unknown[] = [];
  for (const item of (Array.isArray(r.output) ? r.output : []).filter(isObj)) {
    if (item.type === "message") content.push(...blocksOf(item.content));
    else if (item.type === "function_call") calls.push({ id: item.call_id, function: { name: item.name, arguments: item.arguments } });
    else if (item.type === "reasoning" && Array.isArray(item.summary)) {
      for (const s of item.summary.filter(isObj)) if (typeof s.text === "string") content.push({ type: "thinking", thinking: s.text });
    }
  }
  const reply: Obj = { role: "assistant", content: content.length || !calls.length ? content : null };
  const toolCalls = toolCallsOf(calls);
  if (toolCalls) reply.tool_calls = toolCalls;
  const usage = isObj(r.usage) ? r.usage : {};
  const err = errorOf(response) ?? (isObj(r.error) ? { type: "PROVIDER_ERROR", message: String(r.error.message ?? "error") } : null);
  const input: Obj = { type: "chat", messages };
  if (Array.isArray(kwargs.tools)) input.tools = kwargs.tools;
  return {
    provider,
    model: String(r.model ?? kwargs.model ?? ""),
    api_type: "responses",
    input,
    output: { type: "chat", messages: r.output ? [reply] : [] },
    parameters: parametersOf(kwargs, ["input", "instructions", "tools"]),
    input_tokens: num(usage.input_tokens),
    output_tokens: num(usage.output_tokens),
    price: 0,
    status: err ? "ERROR" : r.status === "incomplete" ? "WARNING" : "SUCCESS",
    error_type: err?.type ?? null,
    error_message: err?.message ?? null,
  };
}

// ---- blueprint → call arguments ----------------------------------------------------------------

const textOf = (content: unknown) =>
  (Array.isArray(content) ? content : [])
    .filter((b): b is Obj => isObj(b) && b.type === "text")
    .map((b) => b.text as string)
    .join("");

/** Blueprint content as OpenAI content: a plain string when it is only text, else parts. */
function openAIContent(content: unknown): unknown {
  const blocks = Array.isArray(content) ? content.filter(isObj) : [];
  if (blocks.every((b) => b.type === "text")) return textOf(blocks);
  return blocks.flatMap((b): Obj[] => (b.type === "text" ? [{ type: "text", text: b.text }] : b.type === "image_url" ? [{ type: "image_url", image_url: b.image_url }] : []));
}

export function chatKwargs(blueprint: Obj, model: string, params: Obj): Obj {
  const messages = (Array.isArray(blueprint.messages) ? blueprint.messages : []).filter(isObj).filter((m) => m.role !== "placeholder").map((m) => {
    const out: Obj = { role: m.role, content: m.content == null ? null : openAIContent(m.content) };
    if (Array.isArray(m.tool_calls) && m.tool_calls.length) out.tool_calls = m.tool_calls;
    if (m.function_call) out.function_call = m.function_call;
    if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
    if (m.name) out.name = m.name;
    return out;
  });
  const kwargs: Obj = { model, messages, ...params };
  if (Array.isArray(blueprint.tools) && blueprint.tools.length) kwargs.tools = blueprint.tools;
  if (Array.isArray(blueprint.functions) && blueprint.functions.length) kwargs.functions = blueprint.functions;
  if (blueprint.tool_choice != null && kwargs.tools) kwargs.tool_choice = blueprint.tool_choice;
  return kwargs;
}

export function completionKwargs(blueprint: Obj, model: string, params: Obj): Obj {
  return { model, prompt: textOf(blueprint.content), ...params };
}

export function responsesKwargs(blueprint: Obj, model: string, params: Obj): Obj {
  const chat = chatKwargs(blueprint, model, params);
  const messages = chat.messages as Obj[];
  const system = messages.filter((m) => m.role === "system" || m.role === "developer").map((m) => (typeof m.content === "string" ? m.content : ""));
  const input = messages.filter((m) => m.role !== "system" && m.role !== "developer").map((m) => ({ role: m.role, content: m.content }));
  const kwargs: Obj = { model, input, ...params };
  if (system.length) kwargs.instructions = system.join("\n\n");
  if (Array.isArray(blueprint.tools) && blueprint.tools.length) {
    kwargs.tools = blueprint.tools.filter(isObj).map((t) => (isObj(t.function) ? { type: "function", ...t.function } : t));
  }
  return kwargs;
}
