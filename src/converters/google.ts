// Google's Gemini (generateContent, chats, also through Vertex) and Amazon Bedrock's converse:
// provider call → request log, and blueprint → call arguments.
import { errorOf, num, parametersOf, text, type ConvertedCall } from "./types";
import { isObj, type Obj } from "../lib/obj";

function fromParts(parts: unknown) {
  const blocks: Obj[] = [];
  const calls: Obj[] = [];
  for (const p of (Array.isArray(parts) ? parts : []).filter(isObj)) {
    if (typeof p.text === "string") blocks.push(p.thought ? { type: "thinking", thinking: p.text } : text(p.text));
    else if (isObj(p.functionCall)) calls.push({ id: p.functionCall.id ?? null, type: "function", function: { name: String(p.functionCall.name ?? ""), arguments: JSON.stringify(p.functionCall.args ?? {}) } });
    else if (isObj(p.functionResponse)) blocks.push(text(JSON.stringify(p.functionResponse.response ?? {})));
  }
  return { blocks, calls };
}

const asContents = (v: unknown): Obj[] => (typeof v === "string" ? [{ role: "user", parts: [{ text: v }] }] : Array.isArray(v) ? v.filter(isObj) : isObj(v) ? [v] : []);

export function fromGemini(kwargs: Obj, response: unknown, provider: string): ConvertedCall {
  const r = isObj(response) ? response : {};
  const config = isObj(kwargs.config) ? kwargs.config : isObj(kwargs.generationConfig) ? kwargs.generationConfig : {};
  const messages: Obj[] = [];
  const sys = kwargs.systemInstruction ?? config.systemInstruction ?? kwargs.system_instruction;
  if (sys) messages.push({ role: "system", content: typeof sys === "string" ? [text(sys)] : fromParts(isObj(sys) ? sys.parts : sys).blocks });
  const history = [...asContents(kwargs.history), ...asContents(kwargs.contents ?? kwargs.message)];
  for (const c of history) {
    const { blocks, calls } = fromParts(c.parts ?? (typeof c.text === "string" ? [{ text: c.text }] : []));
    const msg: Obj = { role: c.role === "model" ? "assistant" : "user", content: blocks.length || !calls.length ? blocks : null };
    if (calls.length) msg.tool_calls = calls;
    messages.push(msg);
  }
  const candidate = Array.isArray(r.candidates) && isObj(r.candidates[0]) ? r.candidates[0] : {};
  const { blocks, calls } = fromParts(isObj(candidate.content) ? candidate.content.parts : []);
  const reply: Obj = { role: "assistant", content: blocks.length || !calls.length ? blocks : null };
  if (calls.length) reply.tool_calls = calls;
  const usage = isObj(r.usageMetadata) ? r.usageMetadata : {};
  const err = errorOf(response);
  return {
    provider,
    model: String(r.modelVersion ?? kwargs.model ?? ""),
    api_type: "generate-content",
    input: { type: "chat", messages },
    output: { type: "chat", messages: r.candidates ? [reply] : [] },
    parameters: parametersOf({ ...config }, ["systemInstruction", "tools"]),
    input_tokens: num(usage.promptTokenCount),
    output_tokens: num(usage.candidatesTokenCount) + num(usage.thoughtsTokenCount),
    price: 0,
    status: err ? "ERROR" : candidate.finishReason === "MAX_TOKENS" ? "WARNING" : "SUCCESS",
    error_type: err?.type ?? null,
    error_message: err?.message ?? null,
  };
}

export function fromBedrockConverse(kwargs: Obj, response: unknown, provider: string): ConvertedCall {
  const r = isObj(response) ? response : {};
  const convert = (content: unknown) => {
    const blocks: Obj[] = [];
    const calls: Obj[] = [];
    for (const b of (Array.isArray(content) ? content : []).filter(isObj)) {
      if (typeof b.text === "string") blocks.push(text(b.text));
      else if (isObj(b.toolUse)) calls.push({ id: b.toolUse.toolUseId ?? null, type: "function", function: { name: String(b.toolUse.name ?? ""), arguments: JSON.stringify(b.toolUse.input ?? {}) } });
      else if (isObj(b.toolResult)) blocks.push(text(JSON.stringify(b.toolResult.content ?? [])));
    }
    return { blocks, calls };
  };
  const messages: Obj[] = [];
  const system = (Array.isArray(kwargs.system) ? kwargs.system : []).filter(isObj).map((s) => s.text).filter((t): t is string => typeof t === "string");
  if (system.length) messages.push({ role: "system", content: system.map(text) });
  for (const m of (Array.isArray(kwargs.messages) ? kwargs.messages : []).filter(isObj)) {
    const { blocks, calls } = convert(m.content);
    const msg: Obj = { role: m.role === "assistant" ? "assistant" : "user", content: blocks.length || !calls.length ? blocks : null };
    if (calls.length) msg.tool_calls = calls;
    messages.push(msg);
  }
  const out = isObj(r.output) && isObj(r.output.message) ? convert(r.output.message.content) : null;
  const reply: Obj | null = out ? { role: "assistant", content: out.blocks.length || !out.calls.length ? out.blocks : null } : null;
  if (reply && out!.calls.length) reply.tool_calls = out!.calls;
  const usage = isObj(r.usage) ? r.usage : {};
  const err = errorOf(response);
  return {
    provider,
    model: String(kwargs.modelId ?? kwargs.model ?? ""),
    api_type: "converse",
    input: { type: "chat", messages },
    output: { type: "chat", messages: reply ? [reply] : [] },
    parameters: parametersOf({ ...(isObj(kwargs.inferenceConfig) ? kwargs.inferenceConfig : {}) }, []),
    input_tokens: num(usage.inputTokens),
    output_tokens: num(usage.outputTokens),
    price: 0,
    status: err ? "ERROR" : r.stopReason === "max_tokens" ? "WARNING" : "SUCCESS",
    error_type: err?.type ?? null,
    error_message: err?.message ?? null,
  };
}

// ---- blueprint → call arguments ----------------------------------------------------------------

const textBlocks = (content: unknown) =>
  (Array.isArray(content) ? content : [])
    .filter((b): b is Obj => isObj(b) && b.type === "text")
    .map((b) => String(b.text));

export function geminiKwargs(blueprint: Obj, model: string, params: Obj): Obj {
  const messages = (Array.isArray(blueprint.messages) ? blueprint.messages : []).filter(isObj);
  const system = messages.filter((m) => m.role === "system").flatMap((m) => textBlocks(m.content));
  const contents = blueprint.type === "completion"
    ? [{ role: "user", parts: textBlocks(blueprint.content).map((t) => ({ text: t })) }]
    : messages.filter((m) => m.role !== "system" && m.role !== "placeholder").map((m) => ({ role: m.role === "assistant" ? "model" : "user", parts: textBlocks(m.content).map((t) => ({ text: t })) }));
  const config: Obj = { ...params };
  if (system.length) config.systemInstruction = system.join("\n\n");
  if (Array.isArray(blueprint.tools) && blueprint.tools.length) {
    config.tools = [{ functionDeclarations: blueprint.tools.filter(isObj).map((t) => (isObj(t.function) ? t.function : t)) }];
  }
  return { model, contents, config };
}

export function bedrockKwargs(blueprint: Obj, model: string, params: Obj): Obj {
  const messages = (Array.isArray(blueprint.messages) ? blueprint.messages : []).filter(isObj);
  const system = messages.filter((m) => m.role === "system").flatMap((m) => textBlocks(m.content)).map((t) => ({ text: t }));
  const turns = messages.filter((m) => m.role === "user" || m.role === "assistant").map((m) => ({ role: m.role, content: textBlocks(m.content).map((t) => ({ text: t })) }));
  const inference: Obj = {};
  const rest: Obj = {};
  for (const [k, v] of Object.entries(params)) {
    if (k === "max_tokens" || k === "maxTokens") inference.maxTokens = v;
    else if (k === "temperature" || k === "topP" || k === "stopSequences") inference[k] = v;
    else if (k === "top_p") inference.topP = v;
    else rest[k] = v;
  }
  return { modelId: model, messages: turns, ...(system.length ? { system } : {}), ...(Object.keys(inference).length ? { inferenceConfig: inference } : {}), ...rest };
}
