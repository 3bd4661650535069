// Provider calls ↔ request logs: one converter per provider format (openai.ts, anthropic.ts,
// google.ts), chosen by the SDK's function_name and provider_type. Pure: no bindings, no I/O.
import { anthropicKwargs, fromAnthropicCompletion, fromAnthropicMessages } from "./anthropic";
import { bedrockKwargs, fromBedrockConverse, fromGemini, geminiKwargs } from "./google";
import { chatKwargs, completionKwargs, fromChatCompletion, fromCompletion, fromResponses, responsesKwargs } from "./openai";
import { priceOf } from "./pricing";
import { isObj, type Converted, type ConvertedCall, type Obj, type ProviderCall } from "./types";

export type { ConvertedCall, ProviderCall } from "./types";

type FromCall = (kwargs: Obj, response: unknown, provider: string) => ConvertedCall;

/** function_name patterns, most specific first, with the converter and the provider they imply. */
const ROUTES: [RegExp, FromCall, string][] = [
  [/^openai(\.AzureOpenAI)?\.responses\.create$/, fromResponses, "openai"],
  [/^openai(\.AzureOpenAI)?\.chat\.completions\.create$/, fromChatCompletion, "openai"],
  [/^openai(\.AzureOpenAI)?\.completions\.create$/, fromCompletion, "openai"],
  [/^anthropic\.messages\.create$/, fromAnthropicMessages, "anthropic"],
  [/^anthropic\.completions\.create$/, fromAnthropicCompletion, "anthropic"],
  [/^mistral\.client\.chat$/, fromChatCompletion, "mistral"],
  [/^google\.(model\.generate_content|convo\.send_message)$/, fromGemini, "google"],
  [/^boto3\.bedrock-runtime\.converse$/, fromBedrockConverse, "amazon.bedrock"],
];

export const SUPPORTED_FUNCTIONS = [
  "openai.chat.completions.create",
  "openai.completions.create",
  "openai.responses.create",
  "openai.AzureOpenAI.chat.completions.create",
  "openai.AzureOpenAI.completions.create",
  "openai.AzureOpenAI.responses.create",
  "anthropic.messages.create",
  "anthropic.completions.create",
  "mistral.client.chat",
  "google.model.generate_content",
  "google.convo.send_message",
  "boto3.bedrock-runtime.converse",
];

/** The request-log fields of a provider call the SDK posts to /track-request. */
export function convertProviderCall(call: ProviderCall): Converted {
  const route = ROUTES.find(([re]) => re.test(call.function_name));
  if (!route) {
    return { ok: false, error: `function_name: ${JSON.stringify(call.function_name)} is not a provider call this service reads (it reads ${SUPPORTED_FUNCTIONS.join(", ")})` };
  }
  if (!isObj(call.kwargs)) return { ok: false, error: "kwargs: must be the provider call's arguments (an object)" };
  const [, convert, implied] = route;
  const provider = call.provider_type || (call.function_name.includes("AzureOpenAI") ? "openai.azure" : implied);
  const value = convert(call.kwargs, call.request_response, provider);
  if (!value.model) return { ok: false, error: "kwargs.model: the call names no model" };
  value.price = priceOf(value.model, value.input_tokens, value.output_tokens);
  return { ok: true, value };
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
