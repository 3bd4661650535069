// PLACEHOLDER until the full mapping lands: gen_ai.* attributes only.
import { priceOf } from "../converters/pricing";
import type { RequestLogInput } from "../logs/write";
import type { SpanInput } from "./span-input";
export type { AttrValue, SpanInput } from "./span-input";

export interface SpanLog {
  log: Omit<RequestLogInput, "group_id">;
  promptLabel: string | null;
}

const str = (v: unknown) => (typeof v === "string" ? v : null);
const num = (v: unknown) => (typeof v === "number" ? v : 0);

export function isLlmSpan(span: SpanInput): boolean {
  return typeof span.attributes["gen_ai.request.model"] === "string" || typeof span.attributes["gen_ai.response.model"] === "string";
}

export function spanToLog(span: SpanInput): SpanLog | null {
  if (!isLlmSpan(span)) return null;
  const a = span.attributes;
  const model = str(a["gen_ai.request.model"]) ?? str(a["gen_ai.response.model"]) ?? "";
  const provider = str(a["gen_ai.provider.name"]) ?? str(a["gen_ai.system"]) ?? "unknown";
  const input_tokens = num(a["gen_ai.usage.input_tokens"]);
  const output_tokens = num(a["gen_ai.usage.output_tokens"]);
  return {
    log: {
      provider,
      model,
      input: { type: "chat", messages: [] },
      output: { type: "chat", messages: [] },
      parameters: {},
      tags: [],
      metadata: {},
      prompt_input_variables: {},
      input_tokens,
      output_tokens,
      price: priceOf(model, input_tokens, output_tokens),
      function_name: span.name,
      score: 0,
      status: span.status.code === 2 ? "ERROR" : "SUCCESS",
      error_type: span.status.code === 2 ? "span_error" : null,
      error_message: span.status.message,
      request_start_time: span.startTimeMs,
      request_end_time: span.endTimeMs,
    },
    promptLabel: null,
  };
}
