// A provider's streamed answer (server-sent events) folded back into the response object the same call
// answers without streaming, so one converter (src/converters/) reads both. Pure: events in, object out;
// the text deltas are handed out as they arrive. OpenAI-compatible chat completions and Anthropic
// messages are the two stream formats the LLM providers speak (llm.ts).
import { createParser } from "eventsource-parser";
import { BlockError } from "./types";
import { isObj, type Obj } from "../lib/obj";


/** Folds one stream's events; `text` is the reply's text each event adds ("" when none). */
export interface StreamFolder {
  /** One event's data (already JSON-parsed) and its event name when the stream names events. */
  add(data: unknown, event?: string): string;
  /** The response object, as the provider answers the same call without streaming. */
  result(): Obj;
}

/** OpenAI's chat.completion.chunk events → a chat.completion (text, tool calls by index, usage). */
export function openAiFolder(): StreamFolder {
  let head: Obj = {};
  let content = "";
  let sawContent = false;
  let finish: unknown = null;
  let usage: unknown = undefined;
  const calls: { id?: unknown; type: string; function: { name: string; arguments: string } }[] = [];
  return {
    add(data) {
      if (!isObj(data)) return "";
      if (isObj(data.error)) throw new BlockError(`openai streamed an error: ${String(data.error.message ?? JSON.stringify(data.error)).slice(0, 300)}`);
      if (!head.id) head = { id: data.id, model: data.model, created: data.created };
      if (isObj(data.usage)) usage = data.usage;
      const choice = Array.isArray(data.choices) && isObj(data.choices[0]) ? data.choices[0] : null;
      if (!choice) return "";
      if (choice.finish_reason != null) finish = choice.finish_reason;
      const delta = isObj(choice.delta) ? choice.delta : {};
      for (const c of Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isObj) : []) {
        const i = typeof c.index === "number" ? c.index : calls.length;
        calls[i] ??= { type: "function", function: { name: "", arguments: "" } };
        const fn = isObj(c.function) ? c.function : {};
        if (c.id) calls[i].id = c.id;
        if (typeof fn.name === "string") calls[i].function.name += fn.name;
        if (typeof fn.arguments === "string") calls[i].function.arguments += fn.arguments;
      }
      if (typeof delta.content === "string") {
        sawContent = true;
        content += delta.content;
        return delta.content;
      }
      return "";
    },
    result() {
      const message: Obj = { role: "assistant", content: sawContent || calls.length === 0 ? content : null };
      const toolCalls = calls.filter(Boolean);
      if (toolCalls.length) message.tool_calls = toolCalls;
      return { ...head, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }], ...(usage ? { usage } : {}) };
    },
  };
}

/** Anthropic's message_start / content_block_* / message_delta events → a message (text, tool_use, usage). */
export function anthropicFolder(): StreamFolder {
  let message: Obj = {};
  const blocks: Obj[] = [];
  const partialJson: string[] = [];
  let usage: Obj = {};
  return {
    add(data, event) {
      if (!isObj(data)) return "";
      const type = event ?? data.type;
      if (type === "error") throw new BlockError(`anthropic streamed an error: ${String(isObj(data.error) ? data.error.message : JSON.stringify(data)).slice(0, 300)}`);
      if (type === "message_start" && isObj(data.message)) {
        message = { ...data.message };
        if (isObj(data.message.usage)) usage = { ...data.message.usage };
      } else if (type === "content_block_start" && typeof data.index === "number" && isObj(data.content_block)) {
        blocks[data.index] = { ...data.content_block };
        partialJson[data.index] = "";
      } else if (type === "content_block_delta" && typeof data.index === "number" && isObj(data.delta)) {
        const block = (blocks[data.index] ??= { type: "text", text: "" });
        const d = data.delta;
        if (d.type === "text_delta" && typeof d.text === "string") {
          block.text = String(block.text ?? "") + d.text;
          return d.text;
        }
        if (d.type === "input_json_delta" && typeof d.partial_json === "string") partialJson[data.index] = (partialJson[data.index] ?? "") + d.partial_json;
        if (d.type === "thinking_delta" && typeof d.thinking === "string") block.thinking = String(block.thinking ?? "") + d.thinking;
      } else if (type === "message_delta") {
        if (isObj(data.delta)) message = { ...message, ...data.delta };
        if (isObj(data.usage)) usage = { ...usage, ...data.usage };
      }
      return "";
    },
    result() {
      const content = blocks.filter(Boolean).map((b, i) => {
        if (b.type !== "tool_use" || !partialJson[i]) return b;
        try {
          return { ...b, input: JSON.parse(partialJson[i]) };
        } catch {
          return b;
        }
      });
      return { ...message, content, usage };
    },
  };
}

/**
 * Reads a server-sent-events body to its end through `folder`, handing each piece of the reply's
 * text to `onText` as it arrives; answers the folded response object.
 */
export async function foldEventStream(body: ReadableStream<Uint8Array>, folder: StreamFolder, onText: (text: string) => void | Promise<void>): Promise<Obj> {
  const pending: string[] = [];
  let failure: unknown = null;
  const parser = createParser({
    onEvent(ev) {
      if (failure || ev.data === "[DONE]") return;
      let data: unknown;
      try {
        data = JSON.parse(ev.data);
      } catch {
        failure = new BlockError("the provider streamed an event that is not JSON");
        return;
      }
      try {
        const text = folder.add(data, ev.event);
        if (text) pending.push(text);
      } catch (err) {
        failure = err;
      }
    },
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
    for (const t of pending.splice(0)) await onText(t);
    if (failure) {
      await reader.cancel().catch(() => {});
      throw failure;
    }
    if (done) break;
  }
  return folder.result();
}
