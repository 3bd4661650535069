// The context blocks run with inside the Worker: providers from secrets, the ENDPOINT policy from vars,
// and the workspace's prompt registry. Workflow runs, evaluation batches and sheet recalculation
// chunks each make one; within it a stored prompt is looked up once, however many cells or rows name it.
import { createLlmProviders, DEFAULT_ENDPOINT_POLICY, type BlockContext, type PromptRef, type ResolvedPrompt } from "../blocks";
import type { Db } from "../db/client";
import type { LlmSettings } from "../blocks/llm";
import { resolvePromptForBlocks } from "./prompt-resolver";
import { promisesByKey } from "../lib/collections";

/** The settings blocks read: the LLM providers' and the ENDPOINT block's. */
export interface BlockSettings extends LlmSettings {
  ENDPOINT_TIMEOUT_MS?: string;
  /** "true" lets ENDPOINT blocks call loopback/private addresses: local development only. */
  ENDPOINT_ALLOW_PRIVATE_ADDRESSES?: string;
}

export function blockContextFor(env: BlockSettings, db: Db, workspaceId: number): BlockContext {
  const timeout = Number(env.ENDPOINT_TIMEOUT_MS);
  return {
    fetch: (input, init) => fetch(input, init),
    llm: createLlmProviders(env),
    endpoint: {
      timeoutMs: timeout > 0 ? timeout : DEFAULT_ENDPOINT_POLICY.timeoutMs,
      allowPrivateAddresses: env.ENDPOINT_ALLOW_PRIVATE_ADDRESSES === "true",
    },
    resolvePrompt: oncePerRef((ref) => resolvePromptForBlocks(db, workspaceId, ref)),
  };
}

/** Memoizes a prompt lookup by (name, version, label); a failed lookup is not kept, so the next call tries again. */
function oncePerRef(resolve: (ref: PromptRef) => Promise<ResolvedPrompt | null>): (ref: PromptRef) => Promise<ResolvedPrompt | null> {
  const seen = promisesByKey<string, ResolvedPrompt | null>();
  return (ref) => seen(JSON.stringify([ref.name, ref.version_number ?? null, ref.label ?? null]), () => resolve(ref));
}
