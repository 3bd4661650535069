// The context blocks run with inside the Worker: providers from secrets, the ENDPOINT policy from vars,
// and the workspace's prompt registry. Workflow runs use it; sheet recalculation can use the same.
import { createLlmProviders, DEFAULT_ENDPOINT_POLICY, type BlockContext } from "../blocks";
import type { Db } from "../db/client";
import type { Env } from "../env";
import { resolvePromptForBlocks } from "./prompt-resolver";

export function blockContextFor(env: Env, db: Db, workspaceId: number): BlockContext {
  const timeout = Number(env.ENDPOINT_TIMEOUT_MS);
  return {
    fetch: (input, init) => fetch(input, init),
    llm: createLlmProviders(env),
    endpoint: {
      timeoutMs: timeout > 0 ? timeout : DEFAULT_ENDPOINT_POLICY.timeoutMs,
      allowPrivateAddresses: env.ENDPOINT_ALLOW_PRIVATE_ADDRESSES === "true",
    },
    resolvePrompt: (ref) => resolvePromptForBlocks(db, workspaceId, ref),
  };
}
