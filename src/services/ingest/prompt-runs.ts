// The playground's run: a prompt template's version (or an unsaved draft) filled with input variables,
// sent to the provider its model names with the key every LLM call takes (the workspace's environment
// variable first, then the Worker's secret: blocks/llm.ts providerSettings), the answer optionally streamed back, and the run logged as a request linked to the
// version. The provider call is the blocks' (blocks/llm.ts); the call's arguments and the log made
// from it are the converters' (converters/), through the one tracking path (/track-request's).
// Everything that can refuse a run (input, key, template) does so before the provider is called.
import { workspaceLlm } from "../../base-deps";
import { BlockError, missingProviderMessage, type BlockSettings, type LlmProvider } from "../../blocks";
import { convertProviderCall, llmKwargsFor } from "../../converters";
import type { Db } from "../../db/client";
import type { AuthContext } from "../../env";
import type { WorkspaceLogs } from "../../logs";
import { ApiError } from "../../lib/errors";
import { renderTemplate, requirePromptVersion, resolveSnippets, templateVariableNames } from "../../prompts";
import { getTemplateVersion } from "../registry";
import { trackRequest } from "./tracking-request";
import { isObj, type Obj } from "../../lib/obj";


export interface PromptRunInput {
  /** A stored template (id or name), at a version or label (latest by default). */
  prompt?: { identifier: string; version?: number | null; label?: string | null } | null;
  /** An unsaved draft: a blueprint and its metadata (metadata.model names the model). */
  prompt_version?: { prompt_template: Obj; metadata?: Obj | null } | null;
  input_variables: Record<string, unknown>;
  /** Overrides of the version's model: another provider, model or parameters (merged over its own). */
  model?: { provider?: string | null; name?: string | null; parameters?: Obj | null } | null;
  tags: string[];
  metadata: Record<string, string>;
}

/** The settings a run reads besides the workspace's variables: the Worker's provider secrets among them. */
export interface PromptRunSettings extends BlockSettings {
  ENV_VARS_KEY?: string;
}

/** A run that passed every check: what is sent, to whom, and what its log links to. */
export interface PreparedRun {
  provider: LlmProvider;
  kwargs: Obj;
  promptId: number | null;
  promptVersion: number | null;
  input: PromptRunInput;
}

export interface PromptRunResult {
  success: true;
  request_id: number;
  status: "SUCCESS" | "WARNING" | "ERROR";
  provider: string;
  model: string;
  /** The reply's text; its whole message (tool calls too) is `output`. */
  output_text: string;
  output: Obj;
  input_tokens: number;
  output_tokens: number;
  price: number;
  latency_ms: number;
  error_message: string | null;
  prompt_id: number | null;
  prompt_version_number: number | null;
}

type RunProvider = "openai" | "anthropic";
const PROVIDER_ALIASES: Record<string, RunProvider> = { openai: "openai", "openai-compatible": "openai", openai_compatible: "openai", anthropic: "anthropic" };

const bad = (message: string) => new ApiError("validation_error", message);

/** Which blueprint runs, with its snippets filled in, its metadata, and the version it is (when stored). */
async function blueprintOf(db: Db, ws: number, input: PromptRunInput) {
  if (input.prompt_version) {
    // A draft of a stored template (the version or label named checked as for a run) fills its
    // snippets as that template would (never itself): only the template's id and name are needed.
    const owner = input.prompt ? (await requirePromptVersion(db, ws, { identifier: input.prompt.identifier }, input.prompt)).template : null;
    const { template } = await resolveSnippets(db, ws, owner?.name ?? "", input.prompt_version.prompt_template);
    return { template, metadata: input.prompt_version.metadata ?? null, promptId: owner?.id ?? null, version: null };
  }
  // Fetched with its placeholders kept: the run fills them itself, refusing any without a value.
  const stored = await getTemplateVersion(db, ws, input.prompt!.identifier, { ...input.prompt, skip_input_variable_rendering: true });
  return { template: stored.prompt_template, metadata: stored.metadata, promptId: stored.id, version: stored.version };
}

/** The provider's name and model a run uses: the body's overrides over the version's metadata.model. */
function modelOf(metadata: Obj | null, override: PromptRunInput["model"]) {
  const stored = isObj(metadata?.model) ? (metadata!.model as Obj) : {};
  const provider = override?.provider ?? (typeof stored.provider === "string" ? stored.provider : null);
  const name = override?.name ?? (typeof stored.name === "string" ? stored.name : null);
  if (!provider) throw bad("model.provider: the version names no provider (metadata.model.provider): give one");
  if (!name) throw bad("model.name: the version names no model (metadata.model.name): give one");
  const which = PROVIDER_ALIASES[provider.toLowerCase()];
  if (!which) throw bad(`model.provider: runs go to openai (or an OpenAI-compatible server) or anthropic, not ${JSON.stringify(provider)}`);
  const parameters = { ...(isObj(stored.parameters) ? stored.parameters : {}), ...(override?.parameters ?? {}) };
  return { provider: which, name, parameters };
}

/** The provider for `which`, its key taken as every LLM call takes it (the workspace's variable, then the Worker's secret). */
async function providerFor(db: Db, settings: PromptRunSettings, ws: number, which: RunProvider): Promise<LlmProvider> {
  const llm = await workspaceLlm(settings, db, ws);
  const provider = llm.get(which);
  if (!provider) throw new ApiError("provider_not_configured", missingProviderMessage(which, llm));
  return provider;
}

/** Checks everything a run needs; any refusal is a 4xx here, before anything is sent or stored. */
export async function prepareRun(db: Db, settings: PromptRunSettings, auth: AuthContext, input: PromptRunInput): Promise<PreparedRun> {
  const ws = auth.workspaceId;
  const { template, metadata, promptId, version } = await blueprintOf(db, ws, input);
  const missing = templateVariableNames(template).filter((v) => input.input_variables[v] === undefined || input.input_variables[v] === null);
  if (missing.length) throw bad(`input_variables: the template uses ${missing.map((v) => JSON.stringify(v)).join(", ")}, which ${missing.length === 1 ? "has" : "have"} no value`);
  const rendered = renderTemplate(template, input.input_variables);
  const model = modelOf(metadata, input.model);
  // A completion template runs as one user turn: both providers are called through their chat API.
  const chat = rendered.type === "chat" ? rendered : { type: "chat", messages: [{ role: "user", content: rendered.content }] };
  const kwargs = llmKwargsFor(chat, { model: { provider: model.provider, name: model.name, parameters: model.parameters } });
  if (!kwargs) throw bad("model: no call can be built for this model");
  const provider = await providerFor(db, settings, ws, model.provider);
  return { provider, kwargs, promptId, promptVersion: version, input };
}

const textOf = (output: Obj): string =>
  (Array.isArray(output.messages) ? output.messages : [])
    .filter(isObj)
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b): b is Obj => isObj(b) && b.type === "text")
    .map((b) => String(b.text ?? ""))
    .join("");

/**
 * Calls the provider (streaming the reply's text to `onText` when given) and logs the run; a
 * provider that fails still makes a log, with status ERROR and its message.
 */
export async function executeRun(db: Db, logs: WorkspaceLogs, auth: AuthContext, run: PreparedRun, onText?: (text: string) => void | Promise<void>): Promise<PromptRunResult> {
  const started = Date.now();
  let response: Obj = {};
  let failure: string | null = null;
  try {
    response = await run.provider.send(run.kwargs, onText);
  } catch (err) {
    if (!(err instanceof BlockError)) throw err;
    failure = err.message;
  }
  const ended = Date.now();
  const converted = convertProviderCall({ function_name: run.provider.functionName, provider_type: run.provider.name, kwargs: run.kwargs, request_response: response });
  const tracked = await trackRequest(
    db,
    logs,
    auth,
    {
      function_name: run.provider.functionName,
      provider_type: run.provider.name,
      kwargs: run.kwargs,
      request_response: response,
      request_start_time: started,
      request_end_time: ended,
      tags: run.input.tags,
      metadata: run.input.metadata,
      prompt_id: run.promptId,
      prompt_version: run.promptVersion,
      prompt_input_variables: run.input.input_variables,
      ...(failure ? { status: "ERROR" as const, error_type: "PROVIDER_ERROR", error_message: failure } : {}),
    },
    () => converted,
  );
  const call = converted.ok ? converted.value : null;
  const output = call?.output ?? { type: "chat", messages: [] };
  return {
    success: true,
    request_id: tracked.request_id,
    status: failure ? "ERROR" : (call?.status ?? "SUCCESS"),
    provider: run.provider.name,
    model: call?.model || String(run.kwargs.model ?? ""),
    output_text: textOf(output),
    output,
    input_tokens: call?.input_tokens ?? 0,
    output_tokens: call?.output_tokens ?? 0,
    price: call?.price ?? 0,
    latency_ms: ended - started,
    error_message: failure ?? call?.error_message ?? null,
    prompt_id: run.promptId,
    prompt_version_number: run.promptVersion,
  };
}
