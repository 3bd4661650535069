// The shapes every provider converter shares: the SDK's provider call (what `run()` and the
// wrappers post to /track-request) and the parts of a request log it yields.
import { isObj, type Obj } from "../lib/obj";

export interface ProviderCall {
  function_name: string;
  provider_type?: string | null;
  args?: unknown[];
  kwargs: Obj;
  request_response: unknown;
}

/** The fields of a request log that come from the provider call (RequestLogInput's). */
export interface ConvertedCall {
  provider: string;
  model: string;
  api_type: string | null;
  input: Obj;
  output: Obj;
  parameters: Obj;
  input_tokens: number;
  output_tokens: number;
  price: number;
  status: "SUCCESS" | "WARNING" | "ERROR";
  error_type: string | null;
  error_message: string | null;
}

export type Converted = { ok: true; value: ConvertedCall } | { ok: false; error: string };

export const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
export const text = (t: string) => ({ type: "text", text: t });

/** Content in a provider's "string or parts" form as PromptLayer content blocks. */
export function blocksOf(content: unknown): Obj[] {
  if (content == null) return [];
  if (typeof content === "string") return [text(content)];
  if (!Array.isArray(content)) return [];
  return content.flatMap((p): Obj[] => {
    if (typeof p === "string") return [text(p)];
    if (!isObj(p)) return [];
    if ((p.type === "text" || p.type === "input_text" || p.type === "output_text") && typeof p.text === "string") return [text(p.text)];
    if (p.type === "image_url") return [{ type: "image_url", image_url: isObj(p.image_url) ? p.image_url : { url: p.image_url } }];
    if (p.type === "thinking" && typeof p.thinking === "string") return [{ type: "thinking", thinking: p.thinking, ...(p.signature ? { signature: p.signature } : {}) }];
    return [];
  });
}

/** The parameters of a call: its arguments less the ones the blueprint or the transport carries. */
export function parametersOf(kwargs: Obj, drop: string[]): Obj {
  const skip = new Set(["model", "stream", "stream_options", "api_key", "base_url", "baseURL", "apiKey", ...drop]);
  return Object.fromEntries(Object.entries(kwargs).filter(([k, v]) => !skip.has(k) && v !== undefined));
}

/** A provider error the SDK logged in place of a response ({error: {...}} or {type: "error"}). */
export function errorOf(response: unknown): { type: string; message: string } | null {
  if (!isObj(response)) return null;
  const e = isObj(response.error) ? response.error : response.type === "error" && isObj(response.error) ? response.error : null;
  if (!e) return null;
  const message = typeof e.message === "string" ? e.message : JSON.stringify(e);
  return { type: "PROVIDER_ERROR", message };
}
