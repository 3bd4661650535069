// The `wrangler dev` the node project shares (test/node/global-setup.ts), as a test file sees it:
// its URL and the key of the file's own workspace.
import { inject } from "vitest";
import { fakeCallsAt, fakeProviderEnv } from "./fake-providers";

export interface SharedApiContext {
  url: string;
  /** Workspace name → its admin key. */
  keys: Record<string, string>;
  /** The fake LLM providers the server's own calls reach (test/node/helpers/fake-providers.ts). */
  fakeUrl: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    sharedApi: SharedApiContext;
  }
}

export interface SharedApi {
  url: string;
  key: string;
}

/** The shared server and the admin key of `workspace` (one of test/node/global-setup.ts's SHARED_WORKSPACES). */
export function sharedApi(workspace: string): SharedApi {
  const { url, keys } = inject("sharedApi");
  const key = keys[workspace];
  if (!key) throw new Error(`no key for workspace ${workspace}: add it to SHARED_WORKSPACES in test/node/global-setup.ts`);
  return { url, key };
}

/** The admin key of another shared workspace, for isolation tests. */
export function sharedKey(workspace: string): string {
  return sharedApi(workspace).key;
}

/** The fake LLM providers the shared server calls: their URL, the environment that reaches them, and every call they were sent. */
export function sharedFakeProviders() {
  const { fakeUrl } = inject("sharedApi");
  return { url: fakeUrl, env: fakeProviderEnv(fakeUrl), calls: () => fakeCallsAt(fakeUrl) };
}
