// One `wrangler dev` shared by the node test files that only talk to it over HTTP (the official SDKs,
// the OpenTelemetry exporters, the MCP client, the Python SDK). Starting one
// costs tens of seconds of CPU (bundling the Worker, starting workerd), more than most of these files'
// tests: so it is started once for the node project, before its files, and stopped after them. Its
// own LLM calls (workflow and sheet LLM blocks) reach fake providers served here. Each file has its
// own workspaces, whose keys (and placements) are written here before the server opens the database:
// a write from another process while the server writes could break it. The keys CLI's test writes to
// the databases from another process while its server runs, and the early-refusal test is hard on
// its server on purpose: each starts a server of its own.
import type { TestProject } from "vitest/node";
// @ts-expect-error: a plain ES module of the repo's scripts
import { startLocalApi } from "../../scripts/lib/local-api.mjs";
// @ts-expect-error: a plain ES module of the repo's scripts
import { creating, runOn } from "../../scripts/lib/keys.mjs";
// @ts-expect-error: a plain ES module of the repo's scripts
import { openLocalD1 } from "../../scripts/lib/wrangler.mjs";
import { startFakeProviders } from "./helpers/fake-providers";
import type { SharedApiContext } from "./helpers/shared-api";

/** The shared server's workspaces: name → the e-mail of its key's user (dev@localhost unless a test needs another). */
export const SHARED_WORKSPACES: Record<string, string> = {
  "mcp-test": "dev@localhost",
  "mcp-other": "other@example.test",
  "otel-traces": "dev@localhost",
  "python-sdk": "dev@localhost",
  "python-sdk-ids": "dev@localhost",
  "python-sdk-other": "dev@localhost",
  "sdk-run-workflow": "dev@localhost",
  "sdk-templates": "dev@localhost",
  "sdk-tracking": "dev@localhost",
  "skills-sdk-test": "skills@example.test",
};

/**
 * Workspaces placed on a log database before their first request (as a placement writes it): the
 * Python SDK's ids test needs its two workspaces on different databases.
 */
const PLACEMENTS: Record<string, string> = { "python-sdk": "LOGS_0", "python-sdk-ids": "LOGS_1" };

export default async function setup(project: TestProject) {
  const fake = await startFakeProviders();
  const keys: Record<string, string> = {};
  const [first, ...rest] = Object.keys(SHARED_WORKSPACES);
  let api: Awaited<ReturnType<typeof startLocalApi>>;
  try {
    api = await startLocalApi({
      workspace: first,
      email: SHARED_WORKSPACES[first],
      vars: fake.env,
      // The other workspaces' keys and the placements, in one runtime (a wrangler run each would cost seconds).
      prepare: async (persistTo: string) => {
        const local = await openLocalD1({ persistTo });
        try {
          for (const workspace of rest) keys[workspace] = await runOn(local.env.DB, creating({ workspace, email: SHARED_WORKSPACES[workspace] }));
          for (const [workspace, shard] of Object.entries(PLACEMENTS)) {
            await local.env.DB.prepare("UPDATE workspaces SET log_shard = ?1, log_periods = json_array(?1) WHERE name = ?2").bind(shard, workspace).run();
          }
        } finally {
          await local.dispose();
        }
      },
      // A busy machine can take long to bundle and start the Worker.
      timeoutMs: 240_000,
    });
  } catch (err) {
    await fake.close();
    throw err;
  }
  keys[first] = api.key;
  const shared: SharedApiContext = { url: api.url, keys, fakeUrl: fake.url };
  project.provide("sharedApi", shared);
  return async () => {
    if (process.env.SHOW_API_LOGS) console.log(api.logs());
    await api.stop();
    await fake.close();
  };
}
