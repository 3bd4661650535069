// The LLM provider interface of the blocks, with adapters for OpenAI-compatible chat completions and
// Anthropic messages. A provider is configured by a key and an optional base URL, taken in one order
// by every LLM call (blocks of table columns, evaluations and workflows, the playground, any judge):
// the workspace's environment variables first, then the Worker's secrets (providerSettings). A call
// whose provider is not configured fails with a message naming the variable and where to set it.
import { endpointUrlProblem } from "./endpoint";
import { anthropicFolder, foldEventStream, openAiFolder, type StreamFolder } from "./llm-stream";
import { BlockError, type BlockContext, type LlmProvider, type LlmProviders, type LlmRequest, type LlmResponse, type LlmSettings } from "./types";

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

/** The providers a key can configure, with the variables (workspace or Worker) that hold their key and base URL. */
export const PROVIDER_VARIABLES = {
  openai: { key: "OPENAI_API_KEY", baseUrl: "OPENAI_BASE_URL" },
  anthropic: { key: "ANTHROPIC_API_KEY", baseUrl: "ANTHROPIC_BASE_URL" },
} as const;
export type KeyedProvider = keyof typeof PROVIDER_VARIABLES;
const KEYED = Object.keys(PROVIDER_VARIABLES) as KeyedProvider[];

/** Where a person sets a workspace's provider keys: every "no provider" message names it. */
export const PROVIDER_KEYS_PAGE = "the console's Settings page (/console#/settings)";

/** Where each provider's key came from, or why a provider is unusable although a key is set. */
export interface ProviderSources {
  sources: Record<KeyedProvider, "workspace" | "worker" | null>;
  problems: Partial<Record<KeyedProvider, string>>;
}

/**
 * The one order every LLM call takes its provider keys in: the workspace's environment variables
 * first, then the Worker's secrets. A provider's key and base URL come as a pair: a workspace key
 * goes to the workspace's base URL (checked like an ENDPOINT URL) or else the Worker's; the Worker's
 * key goes only to the Worker's base URL, never to one a workspace chose.
 */
export function providerSettings(workspace: Readonly<Record<string, string>>, worker: LlmSettings, allowPrivateAddresses: boolean): { settings: LlmSettings } & ProviderSources {
  const settings: LlmSettings = { LLM_DEFAULT_PROVIDER: worker.LLM_DEFAULT_PROVIDER, LLM_DEFAULT_MODEL: worker.LLM_DEFAULT_MODEL, LLM_TIMEOUT_MS: worker.LLM_TIMEOUT_MS };
  const sources = {} as ProviderSources["sources"];
  const problems: ProviderSources["problems"] = {};
  for (const p of KEYED) {
    const names = PROVIDER_VARIABLES[p];
    const ownKey = workspace[names.key]?.trim();
    const ownBase = workspace[names.baseUrl]?.trim();
    sources[p] = ownKey ? "workspace" : worker[names.key] ? "worker" : null;
    if (ownKey) {
      const problem = ownBase ? endpointUrlProblem(ownBase, allowPrivateAddresses) : null;
      if (problem) problems[p] = `the workspace variable ${names.baseUrl} ${problem}: change it on ${PROVIDER_KEYS_PAGE}`;
      else Object.assign(settings, { [names.key]: ownKey, [names.baseUrl]: ownBase || worker[names.baseUrl] });
    } else if (worker[names.key]) {
      Object.assign(settings, { [names.key]: worker[names.key], [names.baseUrl]: worker[names.baseUrl] });
    }
  }
  return { settings, sources, problems };
}

/** The message of a call whose provider `name` has no usable key (or of a call that names none, with no provider at all). */
export function missingProviderMessage(name: string | undefined, llm?: LlmProviders): string {
  const problem = name ? llm?.problem?.(name) : undefined;
  if (problem) return `LLM provider "${name}" cannot be used: ${problem}`;
  if (!name) return `no LLM provider is configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY on ${PROVIDER_KEYS_PAGE}, or as a secret of the Worker`;
  const n = normalize(name);
  const vars = PROVIDER_VARIABLES[n as KeyedProvider];
  if (!vars) return `LLM provider "${name}" is not supported here: the providers are openai (and OpenAI-compatible servers) and anthropic`;
  return `no ${vars.key} is set for this workspace: set it on ${PROVIDER_KEYS_PAGE} (a workspace environment variable), or as a secret of the Worker, to call ${n} models`;
}

/**
 * The providers configured by `settings` (what providerSettings made, or the Worker's own in tests);
 * `problems` says why a provider with a key cannot be used.
 */
export function createLlmProviders(settings: LlmSettings, fetchImpl?: typeof fetch, problems: Partial<Record<string, string>> = {}): LlmProviders {
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
    problem: (name) => problems[normalize(name)],
  };
}

function normalize(name: string): string {
  const n = name.toLowerCase();
  return OPENAI_ALIASES.has(n) ? "openai" : n;
}

/** The context's providers, loaded on first use when the context reads them lazily (a workspace's variables). */
export async function llmOf(ctx: BlockContext): Promise<LlmProviders | undefined> {
  return typeof ctx.llm === "function" ? ctx.llm() : ctx.llm;
}

/** The provider a block should call, or a BlockError that says how to configure it. */
export function pickProvider(llm: LlmProviders | undefined, requested?: string | null): LlmProvider {
  const name = requested ? normalize(requested) : llm?.defaultProvider;
  const p = name ? llm?.get(name) : undefined;
  if (!p) throw new BlockError(missingProviderMessage(name, llm));
  return p;
}
