// Provider calls ↔ request logs: one converter per provider format (openai.ts, anthropic.ts,
// google.ts), chosen by the SDK's function_name and provider_type. Pure: no bindings, no I/O.
import { anthropicKwargs, fromAnthropicCompletion, fromAnthropicMessages } from "./anthropic";
import { bedrockKwargs, fromBedrockConverse, fromGemini, geminiKwargs } from "./google";
import { chatKwargs, completionKwargs, fromChatCompletion, fromCompletion, fromResponses, responsesKwargs } from "./openai";
import { priceOf } from "./pricing";
import { type Converted, type ConvertedCall, type ProviderCall } from "./types";
import { isObj, type Obj } from "../lib/obj";

export type { ConvertedCall, ProviderCall } from "./types";

type FromCall = (kwargs: Obj, response: unknown, provider: string) => ConvertedCall;

/**
 * The SDKs' provider calls by function_name: `<family>[.<client class>].<method>`. The JavaScript SDK
 * and run() name no client class (openai.chat.completions.create) unless the provider says Azure
 * (openai.AzureOpenAI.…); the Python SDK's wrappers (pl.openai.OpenAI(), pl.anthropic.AsyncAnthropic()
 * …) always name the class the user built, as it is spelled in the provider's module.
 */
const METHODS: Record<string, Record<string, FromCall>> = {
  openai: {
    "chat.completions.create": fromChatCompletion,
    "chat.completions.parse": fromChatCompletion,
    "beta.chat.completions.parse": fromChatCompletion,
    "completions.create": fromCompletion,
    "responses.create": fromResponses,
    "responses.parse": fromResponses,
  },
  anthropic: {
    "messages.create": fromAnthropicMessages,
    "beta.messages.create": fromAnthropicMessages,
    "completions.create": fromAnthropicCompletion,
  },
  mistral: { "client.chat": fromChatCompletion },
  google: { "model.generate_content": fromGemini, "convo.send_message": fromGemini },
  boto3: { "bedrock-runtime.converse": fromBedrockConverse },
};

/** The provider a family implies when provider_type does not say. */
const FAMILY_PROVIDER: Record<string, string> = { openai: "openai", anthropic: "anthropic", mistral: "mistral", google: "google", boto3: "amazon.bedrock" };

/**
 * Every client class the providers' Python modules export that the SDK's wrappers can build (sync and
 * async; Client/AsyncClient are the modules' aliases), with the provider a class implies over the
 * family's: the wrappers send provider_type "openai" or "anthropic" whatever the class.
 */
export const CLIENT_CLASSES: Record<string, Record<string, string | null>> = {
  openai: { OpenAI: null, AsyncOpenAI: null, Client: null, AsyncClient: null, AzureOpenAI: "openai.azure", AsyncAzureOpenAI: "openai.azure" },
  anthropic: {
    Anthropic: null,
    AsyncAnthropic: null,
    Client: null,
    AsyncClient: null,
    AnthropicBedrock: "anthropic.bedrock",
    AsyncAnthropicBedrock: "anthropic.bedrock",
    AnthropicVertex: "anthropic.vertex",
    AsyncAnthropicVertex: "anthropic.vertex",
    AnthropicFoundry: null,
    AsyncAnthropicFoundry: null,
  },
};

/** The converter and provider of a function_name, or null when it names no call this service reads. */
function routeOf(functionName: string, providerType: string | null | undefined): { convert: FromCall; provider: string } | null {
  const [family, ...rest] = functionName.split(".");
  const methods = Object.hasOwn(METHODS, family) ? METHODS[family] : undefined;
  if (!methods) return null;
  const classes = CLIENT_CLASSES[family] ?? {};
  const named = rest.length > 0 && Object.hasOwn(classes, rest[0]) ? rest[0] : null;
  const method = (named ? rest.slice(1) : rest).join(".");
  if (!Object.hasOwn(methods, method)) return null;
  // A class that names a cloud (Azure, Bedrock, Vertex) wins over the wrappers' generic provider_type.
  const classProvider = named ? classes[named] : null;
  const generic = !providerType || providerType === FAMILY_PROVIDER[family];
  return { convert: methods[method], provider: (generic && classProvider) || providerType || FAMILY_PROVIDER[family] };
}

const SUPPORTED = Object.entries(METHODS)
  .map(([family, methods]) => `${family}[.<client class>].{${Object.keys(methods).join(", ")}}`)
  .join("; ");

/** The request-log fields of a provider call the SDK posts to /track-request. */
export function convertProviderCall(call: ProviderCall): Converted {
  const route = routeOf(call.function_name, call.provider_type);
  if (!route) {
    return { ok: false, error: `function_name: ${JSON.stringify(call.function_name)} is not a provider call this service reads (it reads ${SUPPORTED})` };
  }
  if (!isObj(call.kwargs)) return { ok: false, error: "kwargs: must be the provider call's arguments (an object)" };
  const value = route.convert(call.kwargs, call.request_response, route.provider);
  if (!value.model) return { ok: false, error: "kwargs.model: the call names no model" };
  value.price = priceOf(value.model, value.input_tokens, value.output_tokens);
  return { ok: true, value };
}

/** The providers llmKwargsFor builds arguments for (what run() may name as a provider). */
export const KWARGS_PROVIDERS = ["openai", "openai.azure", "mistral", "anthropic", "anthropic.bedrock", "anthropic.vertex", "google", "vertexai", "amazon.bedrock"] as const;

/** Providers whose clients share an API shape, so a version's api_type still means something after a switch. */
const API_FAMILY: Record<string, string> = { openai: "openai", "openai.azure": "openai", mistral: "openai" };

export interface ModelOverrides {
  provider?: string | null;
  model?: string | null;
  /** Merged over the version's parameters; a key set to null removes that parameter. */
  model_parameter_overrides?: Obj | null;
}

/**
 * A version's metadata with run()'s overrides applied: the model's name and provider replaced, the
 * parameters merged. Switching provider keeps api_type only within one API family (OpenAI, Azure and
 * Mistral share the chat and responses shapes); otherwise the new provider's default API is used.
 * The metadata as stored when no override is given.
 */
export function withModelOverrides(metadata: Obj | null, o: ModelOverrides): Obj | null {
  if (o.provider == null && o.model == null && o.model_parameter_overrides == null) return metadata;
  const base: Obj = isObj(metadata?.model) ? { ...metadata!.model } : {};
  const model: Obj = { ...base };
  if (o.model != null) model.name = o.model;
  if (o.provider != null && o.provider !== base.provider) {
    model.provider = o.provider;
    const same = typeof base.provider === "string" && API_FAMILY[base.provider] !== undefined && API_FAMILY[base.provider] === API_FAMILY[o.provider];
    if (!same) delete model.api_type;
  }
  if (o.model_parameter_overrides != null) {
    const params: Obj = isObj(base.parameters) ? { ...base.parameters } : {};
    for (const [k, v] of Object.entries(o.model_parameter_overrides)) {
      if (v === null) delete params[k];
      else params[k] = v;
    }
    model.parameters = params;
  }
  return { ...(metadata ?? {}), model };
}

/**
 * The provider-ready arguments of a prompt version (`llm_kwargs`), for the provider and API its
 * metadata.model names: what the SDK's run() hands to the provider's client. Null when the version
 * names no model or a provider this service cannot build for.
 */
export function llmKwargsFor(blueprint: Obj, metadata: Obj | null): Obj | null {
  const model = isObj(metadata?.model) ? metadata!.model : null;
  if (!model || typeof model.name !== "string" || typeof model.provider !== "string") return null;
  const params = isObj(model.parameters) ? { ...model.parameters } : {};
  const name = model.name;
  const provider = model.provider;
  const chat = blueprint.type === "chat";
  switch (provider) {
    case "openai":
    case "openai.azure":
    case "mistral":
      if (model.api_type === "responses") return responsesKwargs(chat ? blueprint : { type: "chat", messages: [{ role: "user", content: blueprint.content }] }, name, params);
      return chat ? chatKwargs(blueprint, name, params) : completionKwargs(blueprint, name, params);
    case "anthropic":
    case "anthropic.bedrock":
    case "anthropic.vertex":
      return anthropicKwargs(chat ? blueprint : { type: "chat", messages: [{ role: "user", content: blueprint.content }] }, name, params);
    case "google":
    case "vertexai":
      return geminiKwargs(blueprint, name, params);
    case "amazon.bedrock":
      return bedrockKwargs(chat ? blueprint : { type: "chat", messages: [{ role: "user", content: blueprint.content }] }, name, params);
    default:
      return null;
  }
}
