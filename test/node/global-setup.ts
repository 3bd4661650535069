// One `wrangler dev` shared by the node test files that only talk to it over HTTP (the official SDKs,
// the OpenTelemetry exporters, the MCP client, the early-refusal checks). Starting one costs tens of
// seconds of CPU (bundling the Worker, starting workerd), more than most of these files' tests: so it
// is started once for the node project, before its files, and stopped after them. Each file has its
// own workspace, whose key is made here before the server opens the database (a key written from
// another process while the server writes could break the write). Files that write to the server's
// databases themselves while it runs (the keys CLI, the Python SDK's test) start their own server.
import type { TestProject } from "vitest/node";
// @ts-expect-error: a plain ES module of the repo's scripts
import { startLocalApi } from "../../scripts/lib/local-api.mjs";
// @ts-expect-error: a plain ES module of the repo's scripts
import { creating, runOn } from "../../scripts/lib/keys.mjs";
// @ts-expect-error: a plain ES module of the repo's scripts
import { openLocalD1 } from "../../scripts/lib/wrangler.mjs";
import type { SharedApiContext } from "./helpers/shared-api";

/** The shared server's workspaces: name → the e-mail of its key's user (dev@localhost unless a test needs another). */
export const SHARED_WORKSPACES: Record<string, string> = {
  "early-refusal": "dev@localhost",
  "mcp-test": "dev@localhost",
  "mcp-other": "other@example.test",
  "otel-traces": "dev@localhost",
  "sdk-run-workflow": "dev@localhost",
  "sdk-templates": "dev@localhost",
  "sdk-tracking": "dev@localhost",
  "skills-sdk-test": "skills@example.test",
};

export default async function setup(project: TestProject) {
  const keys: Record<string, string> = {};
  const [first, ...rest] = Object.keys(SHARED_WORKSPACES);
  const api = await startLocalApi({
    workspace: first,
    email: SHARED_WORKSPACES[first],
    // The other workspaces' keys, in one runtime (a wrangler run per key would cost seconds each).
    prepare: async (persistTo: string) => {
      const local = await openLocalD1({ persistTo });
      try {
        for (const workspace of rest) keys[workspace] = await runOn(local.env.DB, creating({ workspace, email: SHARED_WORKSPACES[workspace] }));
      } finally {
        await local.dispose();
      }
    },
    // A busy machine can take long to bundle and start the Worker.
    timeoutMs: 240_000,
  });
  keys[first] = api.key;
  const shared: SharedApiContext = { url: api.url, keys };
  project.provide("sharedApi", shared);
  return async () => {
    if (process.env.SHOW_API_LOGS) console.log(api.logs());
    await api.stop();
  };
}
