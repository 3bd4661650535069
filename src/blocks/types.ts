// The contract every building block follows: a zod config schema, the names of the values it reads,
// and an evaluate() that turns (config, inputs, context) into a value. Effects (LLM calls, HTTP, the
// prompt registry) come in through the context, so blocks stay unit-testable without bindings.
import type { z } from "zod";

/** The Worker's settings the LLM providers read (src/blocks/llm.ts). */
export interface LlmSettings {
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  ANTHROPIC_API_KEY?: string;
  LLM_DEFAULT_PROVIDER?: string;
  LLM_DEFAULT_MODEL?: string;
  LLM_TIMEOUT_MS?: string;
}

/** The settings blocks read: the LLM providers' and the ENDPOINT block's. */
export interface BlockSettings extends LlmSettings {
  ENDPOINT_TIMEOUT_MS?: string;
  /** "true" lets ENDPOINT blocks call loopback/private addresses: local development only. */
  ENDPOINT_ALLOW_PRIVATE_ADDRESSES?: string;
}

/** The values a block can read, by name: a sheet row's cells by column name, or a node's dependencies. */
export type BlockInputs = Readonly<Record<string, unknown>>;

/** A chat message as the LLM blocks send it. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

// The LLM provider interface (adapters and settings in llm.ts).
export interface LlmRequest {
  model: string;
  messages: ChatMessage[];
  /** Model parameters (temperature, max_tokens…), passed to the provider as given. */
  parameters?: Record<string, unknown>;
}

export interface LlmResponse {
  text: string;
  raw: unknown;
}

export interface LlmProvider {
  readonly name: string;
  /** The converters' name for this provider's call (src/converters/), which reads its request and answer into a log. */
  readonly functionName: string;
  chat(req: LlmRequest): Promise<LlmResponse>;
  /**
   * Sends provider-ready arguments (the converters' llm_kwargs) as they are and answers the
   * provider's response object; with `onText` the answer streams, each piece of its text handed to
   * `onText` as it arrives, and the object is folded from the stream.
   */
  send(kwargs: Record<string, unknown>, onText?: (text: string) => void | Promise<void>): Promise<Record<string, unknown>>;
}

export interface LlmProviders {
  get(name: string): LlmProvider | undefined;
  /** Names of the configured providers, for error messages. */
  configured: string[];
  defaultProvider?: string;
  defaultModel(provider: string): string;
  /** Why a provider whose key is set cannot be used (a workspace base URL refused), if it cannot. */
  problem?(name: string): string | undefined;
}


/** A prompt version as the PROMPT_TEMPLATE block needs it (a blueprint plus its model metadata). */
export interface ResolvedPrompt {
  prompt_template: Record<string, unknown>;
  metadata?: Record<string, unknown> | null;
}

/** Which stored prompt a PROMPT_TEMPLATE block names. */
export interface PromptRef {
  name: string;
  version_number?: number | null;
  label?: string | null;
}

export interface EndpointPolicy {
  /** Milliseconds before an ENDPOINT call is abandoned. */
  timeoutMs: number;
  /** Local development only: let ENDPOINT reach loopback and private addresses. */
  allowPrivateAddresses: boolean;
  /** Largest response body read, in bytes. */
  maxResponseBytes: number;
}

export interface BlockContext {
  /** The fetch used for ENDPOINT and LLM calls (tests inject a fake one). */
  fetch?: typeof fetch;
  /**
   * LLM providers by name (openai, anthropic…; llm.ts createLlmProviders), or a loader of them called
   * on first use (the workspace's keys are read only by a context that calls an LLM).
   */
  llm?: LlmProviders | (() => Promise<LlmProviders>);
  /** Looks a stored prompt up; absent where there is no registry (the block then fails with a clear error). */
  resolvePrompt?: (ref: PromptRef) => Promise<ResolvedPrompt | null>;
  endpoint?: Partial<EndpointPolicy>;
}

export type BlockResult = { ok: true; value: unknown } | { ok: false; error: string };

export type ConfigCheck<C = unknown> =
  | { ok: true; config: C }
  | { ok: false; reason: "unknown_type" | "unsupported" | "invalid"; message: string; issues: { path: string; message: string }[] };

/** Thrown inside evaluate() for a failure that belongs to the data, not to the code (bad JSON, no match…). */
export class BlockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BlockError";
  }
}

export interface BlockDefinition<S extends z.ZodType = z.ZodType> {
  /** False for types this service stores but cannot run (HUMAN, CODE_EXECUTION…). */
  computes: boolean;
  configSchema: S;
  /** Names of the inputs the config reads (sources, value_source…), for dependency graphs. */
  sources: (config: z.output<S>) => string[];
  evaluate: (config: z.output<S>, inputs: BlockInputs, ctx: BlockContext) => unknown | Promise<unknown>;
  /**
   * What a result depends on besides its config and inputs (the stored prompt a name or label points
   * at), so a cached result is reused only while that is unchanged. Absent: config and inputs are all.
   */
  externalState?: (config: z.output<S>, ctx: BlockContext) => Promise<unknown>;
}

/** Keeps each definition's config type tied to its schema. */
export const defineBlock = <S extends z.ZodType>(def: BlockDefinition<S>): BlockDefinition => def as unknown as BlockDefinition;
