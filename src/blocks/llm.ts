// The LLM provider interface of the blocks, with adapters for OpenAI-compatible chat completions and
// Anthropic messages. Providers are configured by Worker secrets/vars (base URL + key); a block whose
// provider is not configured fails with a message saying which variable to set.
import { anthropicFolder, foldEventStream, openAiFolder, type StreamFolder } from "./llm-stream";
import { BlockError, type LlmProvider, type LlmProviders, type LlmRequest, type LlmResponse, type LlmSettings } from "./types";

export type { LlmProvider, LlmProviders, LlmRequest, LlmResponse };

/** The Worker vars/secrets the providers read (all optional; docs/blocks.md). */
const DEFAULT_MODELS: Record<string, string> = { openai: "gpt-4o-mini", anthropic: "claude-3-5-haiku-latest" };
const OPENAI_ALIASES = new Set(["openai", "openai-compatible", "openai_compatible"]);
const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_ERROR_TEXT = 300;

/** The provider's answer, or a BlockError saying why there is none (unreachable, timed out, not 2xx). */
async function post(fetchImpl: typeof fetch, provider: string, url: string, headers: Record<string, string>, body: unknown, timeoutMs: number): Promise<Response> {
  let res: Response;
  try {
    res = await fetchImpl(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw transportError(provider, err, timeoutMs);
  }
  if (!res.ok) throw new ProviderCallError(`${provider} answered ${res.status}: ${(await res.text()).slice(0, MAX_ERROR_TEXT)}`, res.status);
  return res;
}

/**
 * A provider call that failed on the way: its status when the provider answered (null: no answer, a
 * timeout or no connection). `transient` says whether the same call may succeed later (429, 5xx, no
 * answer), for callers that retry (the Signals judge); blocks report it as any other BlockError.
 */
export class ProviderCallError extends BlockError {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }

  get transient(): boolean {
    return this.status === null || this.status === 429 || this.status >= 500;
  }
}

function transportError(provider: string, err: unknown, timeoutMs: number): BlockError {
  if (err instanceof BlockError) return err;
  const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
  return new ProviderCallError(timedOut ? `${provider} did not answer within ${timeoutMs} ms` : `${provider} could not be reached: ${(err as Error)?.message ?? err}`, null);
}

async function jsonOf(provider: string, res: Response): Promise<Record<string, any>> {
  const text = await res.text();
  try {
    return JSON.parse(text) as Record<string, any>;
  } catch {
    throw new BlockError(`${provider} answered with a body that is not JSON`);
  }
}

/**
 * One call with provider-ready arguments: the JSON answer, or with `onText` the streamed answer
 * folded into the same object (the text handed out as it arrives).
 */
async function send(
  o: { fetch: typeof fetch; provider: string; url: string; headers: Record<string, string>; timeoutMs: number; folder: () => StreamFolder; streamArgs: Record<string, unknown> },
  kwargs: Record<string, unknown>,
  onText?: (text: string) => void | Promise<void>,
): Promise<Record<string, any>> {
  // Whether the answer streams is this call's choice, never a stored parameter's.
  const { stream: _stream, stream_options: _options, ...args } = kwargs;
  if (!onText) return jsonOf(o.provider, await post(o.fetch, o.provider, o.url, o.headers, args, o.timeoutMs));
  const res = await post(o.fetch, o.provider, o.url, o.headers, { ...args, ...o.streamArgs }, o.timeoutMs);
  if (!res.body) throw new BlockError(`${o.provider} answered without a body`);
  try {
    return await foldEventStream(res.body, o.folder(), onText);
  } catch (err) {
    throw transportError(o.provider, err, o.timeoutMs);
  }
}

const trimSlash = (s: string) => s.replace(/\/+$/, "");

export function openAiCompatible(opts: { baseUrl?: string; apiKey: string; fetch?: typeof fetch; timeoutMs?: number }): LlmProvider {
  const base = trimSlash(opts.baseUrl || "https://api.openai.com/v1");
  const call = {
    fetch: opts.fetch ?? fetch,
    provider: "openai",
    url: `${base}/chat/completions`,
    headers: { authorization: `Bearer ${opts.apiKey}` },
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    folder: openAiFolder,
    // Usage arrives in a last chunk only when asked for.
    streamArgs: { stream: true, stream_options: { include_usage: true } },
  };
  return {
    name: "openai",
    functionName: "openai.chat.completions.create",
    send: (kwargs, onText) => send(call, kwargs, onText),
    async chat(req) {
      const raw = await send(call, { ...req.parameters, model: req.model, messages: req.messages });
      const content = raw?.choices?.[0]?.message?.content;
      if (typeof content !== "string") throw new BlockError("openai answered without choices[0].message.content");
      return { text: content, raw };
    },
  };
}

export function anthropic(opts: { baseUrl?: string; apiKey: string; fetch?: typeof fetch; timeoutMs?: number }): LlmProvider {
  const base = trimSlash(opts.baseUrl || "https://api.anthropic.com");
  const call = {
    fetch: opts.fetch ?? fetch,
    provider: "anthropic",
    url: `${base}/v1/messages`,
    headers: { "x-api-key": opts.apiKey, "anthropic-version": "2023-06-01" },
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    folder: anthropicFolder,
    streamArgs: { stream: true },
  };
  return {
    name: "anthropic",
    functionName: "anthropic.messages.create",
    send: (kwargs, onText) => send(call, kwargs, onText),
    async chat(req) {
      // Anthropic takes the system prompt apart from the turns, and requires max_tokens.
      const system = req.messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
      const messages = req.messages.filter((m) => m.role !== "system").map((m) => ({ role: m.role, content: m.content }));
      const raw = await send(call, { max_tokens: 1024, ...req.parameters, model: req.model, messages, ...(system ? { system } : {}) });
      const blocks = Array.isArray(raw?.content) ? raw.content : null;
      if (!blocks) throw new BlockError("anthropic answered without content");
      return { text: blocks.filter((b: any) => b?.type === "text").map((b: any) => String(b.text ?? "")).join(""), raw };
    },
  };
}

/** The providers configured by the Worker's vars and secrets. */
export function createLlmProviders(settings: LlmSettings, fetchImpl?: typeof fetch): LlmProviders {
  const timeoutMs = Number(settings.LLM_TIMEOUT_MS) > 0 ? Number(settings.LLM_TIMEOUT_MS) : DEFAULT_TIMEOUT_MS;
  const byName = new Map<string, LlmProvider>();
  if (settings.OPENAI_API_KEY) {
    byName.set("openai", openAiCompatible({ baseUrl: settings.OPENAI_BASE_URL, apiKey: settings.OPENAI_API_KEY, fetch: fetchImpl, timeoutMs }));
  }
  if (settings.ANTHROPIC_API_KEY) {
    byName.set("anthropic", anthropic({ baseUrl: settings.ANTHROPIC_BASE_URL, apiKey: settings.ANTHROPIC_API_KEY, fetch: fetchImpl, timeoutMs }));
  }
  const configured = [...byName.keys()];
  const wanted = settings.LLM_DEFAULT_PROVIDER?.toLowerCase();
  return {
    configured,
    defaultProvider: wanted && byName.has(normalize(wanted)) ? normalize(wanted) : configured[0],
    get: (name) => byName.get(normalize(name)),
    defaultModel: (provider) => settings.LLM_DEFAULT_MODEL || DEFAULT_MODELS[normalize(provider)] || "",
  };
}

function normalize(name: string): string {
  const n = name.toLowerCase();
  return OPENAI_ALIASES.has(n) ? "openai" : n;
}

const KEY_VAR: Record<string, string> = { openai: "OPENAI_API_KEY", anthropic: "ANTHROPIC_API_KEY" };

/** The provider a block should call, or a BlockError that says how to configure it. */
export function pickProvider(llm: LlmProviders | undefined, requested?: string | null): LlmProvider {
  const name = requested ? normalize(requested) : llm?.defaultProvider;
  if (!name) throw new BlockError("no LLM provider is configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY (and optionally their *_BASE_URL)");
  const p = llm?.get(name);
  if (!p) {
    const hint = KEY_VAR[name] ? `set ${KEY_VAR[name]}` : "supported providers are openai (and OpenAI-compatible) and anthropic";
    throw new BlockError(`LLM provider "${name}" is not configured here: ${hint}`);
  }
  return p;
}
