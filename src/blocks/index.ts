// The building blocks shared by workflow nodes and sheet/evaluation columns: one registry of block
// types, one way to validate a config and one way to evaluate it. Callers never reach into defs/.
import type { z } from "zod";
import { DATA_BLOCKS } from "./defs/data";
import { EFFECT_BLOCKS } from "./defs/effects";
import { UNSUPPORTED_BLOCKS, unsupportedReason } from "./defs/unsupported";
import { BlockError, type BlockContext, type BlockDefinition, type BlockInputs, type BlockResult, type ConfigCheck } from "./types";

export type { BlockContext, BlockDefinition, BlockSettings, BlockInputs, BlockResult, ChatMessage, ConfigCheck, EndpointPolicy, PromptRef, ResolvedPrompt } from "./types";
export { BlockError } from "./types";
export {
  createLlmProviders,
  openAiCompatible,
  anthropic,
  missingProviderMessage,
  providerSettings,
  PROVIDER_KEYS_PAGE,
  PROVIDER_VARIABLES,
  pickProvider,
  ProviderCallError,
  type KeyedProvider,
  type LlmProvider,
  type LlmProviders,
  type LlmRequest,
  type LlmResponse,
  type ProviderSources,
} from "./llm";
export type { LlmSettings } from "./types";
export { DEFAULT_ENDPOINT_POLICY } from "./endpoint";

/** Every block type this service knows, computing or not. */
export const BLOCKS: Readonly<Record<string, BlockDefinition>> = { ...DATA_BLOCKS, ...EFFECT_BLOCKS, ...UNSUPPORTED_BLOCKS };

export type BlockType = keyof typeof BLOCKS;

/** The types that compute here, sorted (docs/blocks.md lists the same). */
export const COMPUTING_BLOCK_TYPES: readonly string[] = Object.keys(BLOCKS).filter((t) => BLOCKS[t].computes).sort();

export function isBlockType(type: string): boolean {
  return Object.prototype.hasOwnProperty.call(BLOCKS, type);
}

function issuePath(path: PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}

/**
 * Checks a config against its block's schema. Unknown types and types that cannot run here are
 * refused (reason "unknown_type" / "unsupported"); a valid config comes back with defaults applied.
 */
export function validateBlockConfig(type: string, config: unknown): ConfigCheck<Record<string, unknown>> {
  if (!isBlockType(type)) {
    return { ok: false, reason: "unknown_type", message: `unknown block type "${type}"`, issues: [] };
  }
  const def = BLOCKS[type];
  if (!def.computes) {
    return { ok: false, reason: "unsupported", message: `${type} blocks cannot run here: ${unsupportedReason(type)}`, issues: [] };
  }
  const parsed = (def.configSchema as z.ZodType).safeParse(config ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: issuePath(i.path), message: i.message }));
    const message = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
    return { ok: false, reason: "invalid", message, issues };
  }
  return { ok: true, config: parsed.data as Record<string, unknown> };
}

/** Names of the inputs a valid config reads (sources, value_source, prompt_source, variable mappings…). */
export function blockSources(type: string, config: unknown): string[] {
  const check = validateBlockConfig(type, config);
  return check.ok ? BLOCKS[type].sources(check.config) : [];
}

/**
 * Evaluates one block. Never throws: bad configs and data problems come back as { ok: false, error },
 * with a message fit to show a user (it is stored as the node's or cell's error).
 */
export async function evaluateBlock(type: string, config: unknown, inputs: BlockInputs, ctx: BlockContext = {}): Promise<BlockResult> {
  const check = validateBlockConfig(type, config);
  if (!check.ok) return { ok: false, error: check.message };
  try {
    const value = await BLOCKS[type].evaluate(check.config, inputs, ctx);
    // Results are stored as JSON: undefined becomes null, and a value JSON cannot hold is refused here.
    return { ok: true, value: value === undefined ? null : jsonSafe(value) };
  } catch (err) {
    if (err instanceof BlockError) return { ok: false, error: err.message };
    console.error(JSON.stringify({ level: "error", msg: "block failed unexpectedly", type, error: err instanceof Error ? err.message : String(err) }));
    return { ok: false, error: `${type} failed unexpectedly` };
  }
}

/**
 * The state outside config and inputs that a block's result depends on (see BlockDefinition.externalState):
 * undefined when there is none. Never throws: a lookup that fails gives a value no cached result matches.
 */
export async function blockExternalState(type: string, config: unknown, ctx: BlockContext = {}): Promise<unknown> {
  const check = validateBlockConfig(type, config);
  const state = check.ok ? BLOCKS[type].externalState : undefined;
  if (!check.ok || !state) return undefined;
  try {
    return await state(check.config, ctx);
  } catch {
    return { unavailable: crypto.randomUUID() };
  }
}

function jsonSafe(v: unknown): unknown {
  if (typeof v === "number" && !Number.isFinite(v)) throw new BlockError(`the result is not a finite number (${v})`);
  return v;
}
