// Anthropic's messages API (also through Bedrock and Vertex): provider call → request log, and
// blueprint → call arguments. Tool use becomes the blueprint's tool calls, tool results tool messages.
import { errorOf, num, parametersOf, text, type ConvertedCall } from "./types";
import { isObj, type Obj } from "../lib/obj";

/** Anthropic content (a string or blocks) as blueprint content, with its tool uses and results apart. */
function split(content: unknown) {
  const blocks: Obj[] = [];
  const calls: Obj[] = [];
  const results: Obj[] = [];
  const list = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
  for (const b of list.filter(isObj)) {
    if (b.type === "text" && typeof b.text === "string") blocks.push(text(b.text));
    else if (b.type === "thinking" && typeof b.thinking === "string") blocks.push({ type: "thinking", thinking: b.thinking, ...(b.signature ? { signature: b.signature } : {}) });
    else if (b.type === "image" && isObj(b.source)) {
      const s = b.source;
      const url = s.type === "base64" ? `data:${s.media_type};base64,${s.data}` : String(s.url ?? "");
      blocks.push({ type: "image_url", image_url: { url } });
    } else if (b.type === "tool_use") calls.push({ id: b.id ?? null, type: "function", function: { name: String(b.name ?? ""), arguments: JSON.stringify(b.input ?? {}) } });
    else if (b.type === "tool_result") {
      const inner = split(b.content).blocks;
      results.push({ role: "tool", tool_call_id: b.tool_use_id ?? null, content: inner.length ? inner : [text("")] });
    }
  }
  return { blocks, calls, results };
}

function messagesOf(kwargs: Obj): Obj[] {
  const out: Obj[] = [];
  const system = split(kwargs.system).blocks;
  if (system.length) out.push({ role: "system", content: system });
  for (const m of (Array.isArray(kwargs.messages) ? kwargs.messages : []).filter(isObj)) {
    const { blocks, calls, results } = split(m.content);
    out.push(...results);
    if (blocks.length || calls.length || !results.length) {
      const msg: Obj = { role: m.role === "assistant" ? "assistant" : "user", content: blocks.length || !calls.length ? blocks : null };
      if (calls.length) msg.tool_calls = calls;
      out.push(msg);
    }
  }
  return out;
}

/** Anthropic tools ({name, description, input_schema}) in the blueprint's OpenAI form. */
function toolsOf(tools: unknown): Obj[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  return tools.filter(isObj).map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.input_schema ?? {} } }));
}

export function fromAnthropicMessages(kwargs: Obj, response: unknown, provider: string): ConvertedCall {
  const r = isObj(response) ? response : {};
  const { blocks, calls } = split(r.content);
  const reply: Obj = { role: "assistant", content: blocks.length || !calls.length ? blocks : null };
  if (calls.length) reply.tool_calls = calls;
  const usage = isObj(r.usage) ? r.usage : {};
  const err = errorOf(response);
  const input: Obj = { type: "chat", messages: messagesOf(kwargs) };
  const tools = toolsOf(kwargs.tools);
  if (tools) input.tools = tools;
  return {
    provider,
    model: String(r.model ?? kwargs.model ?? ""),
    api_type: "messages",
    input,
    output: { type: "chat", messages: err || !r.content ? [] : [reply] },
    parameters: parametersOf(kwargs, ["messages", "system", "tools"]),
    input_tokens: num(usage.input_tokens) + num(usage.cache_read_input_tokens) + num(usage.cache_creation_input_tokens),
    output_tokens: num(usage.output_tokens),
    price: 0,
    status: err ? "ERROR" : r.stop_reason === "max_tokens" ? "WARNING" : "SUCCESS",
    error_type: err?.type ?? null,
    error_message: err?.message ?? (r.stop_reason === "max_tokens" ? "the reply was cut at max_tokens" : null),
  };
}

/** Anthropic's legacy text completions: `prompt` in, `completion` out. */
export function fromAnthropicCompletion(kwargs: Obj, response: unknown, provider: string): ConvertedCall {
  const r = isObj(response) ? response : {};
  const err = errorOf(response);
  return {
    provider,
    model: String(r.model ?? kwargs.model ?? ""),
    api_type: "completions",
    input: { type: "completion", content: [text(String(kwargs.prompt ?? ""))] },
    output: { type: "completion", content: [text(typeof r.completion === "string" ? r.completion : "")] },
    parameters: parametersOf(kwargs, ["prompt"]),
    input_tokens: 0,
    output_tokens: 0,
    price: 0,
    status: err ? "ERROR" : "SUCCESS",
    error_type: err?.type ?? null,
    error_message: err?.message ?? null,
  };
}

// ---- blueprint → call arguments ----------------------------------------------------------------

function anthropicBlocks(content: unknown): Obj[] {
  return (Array.isArray(content) ? content : []).filter(isObj).flatMap((b): Obj[] => {
    if (b.type === "text") return [{ type: "text", text: b.text }];
    if (b.type === "image_url" && isObj(b.image_url)) {
      const url = String(b.image_url.url ?? "");
      const data = /^data:([^;]+);base64,(.*)$/s.exec(url);
      return [{ type: "image", source: data ? { type: "base64", media_type: data[1], data: data[2] } : { type: "url", url } }];
    }
    return [];
  });
}

export function anthropicKwargs(blueprint: Obj, model: string, params: Obj): Obj {
  const system: string[] = [];
  const messages: Obj[] = [];
  const push = (role: "user" | "assistant", blocks: Obj[]) => {
    const last = messages[messages.length - 1];
    // Anthropic wants user and assistant turns to alternate: consecutive ones are merged.
    if (last && last.role === role) (last.content as Obj[]).push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const m of (Array.isArray(blueprint.messages) ? blueprint.messages : []).filter(isObj)) {
    if (m.role === "system" || m.role === "developer") {
      system.push(anthropicBlocks(m.content).map((b) => b.text ?? "").join(""));
    } else if (m.role === "assistant") {
      const blocks = anthropicBlocks(m.content);
      for (const c of (Array.isArray(m.tool_calls) ? m.tool_calls : []).filter(isObj)) {
        const fn = isObj(c.function) ? c.function : {};
        let input: unknown = {};
        try {
          input = JSON.parse(String(fn.arguments ?? "{}"));
        } catch {
          input = {};
        }
        blocks.push({ type: "tool_use", id: c.id, name: fn.name, input });
      }
      push("assistant", blocks);
    } else if (m.role === "tool") {
      push("user", [{ type: "tool_result", tool_use_id: m.tool_call_id, content: anthropicBlocks(m.content) }]);
    } else if (m.role !== "placeholder") {
      push("user", anthropicBlocks(m.content));
    }
  }
  const kwargs: Obj = { model, messages, max_tokens: 1024, ...params };
  if (system.length) kwargs.system = system.join("\n\n");
  if (Array.isArray(blueprint.tools) && blueprint.tools.length) {
    kwargs.tools = blueprint.tools.filter(isObj).map((t) => {
      const fn = isObj(t.function) ? t.function : t;
      return { name: fn.name, description: fn.description, input_schema: fn.parameters ?? { type: "object", properties: {} } };
    });
  }
  return kwargs;
}
