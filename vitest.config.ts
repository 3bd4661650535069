// Two projects: "workers" runs inside workerd with the real bindings (D1 with migrations applied, R2,
// Queues, Durable Objects, rate limiting); "node" drives a real `wrangler dev` from Node, for what
// only a Node client can do (the official promptlayer SDK).
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { fakeUpstream } from "./test/fake-upstream.mjs";

const migrationsDir = fileURLToPath(new URL("./migrations", import.meta.url));

export default defineConfig({
  test: {
    // The app logs one JSON line per request; show logs only for tests that fail.
    silent: "passed-only",
    reporters: ["default", "./scripts/vitest-summary.mjs"],
    projects: [
      {
        plugins: [
          cloudflareTest(async () => ({
            main: "./src/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                TEST_MIGRATIONS: await readD1Migrations(migrationsDir),
                OPENAI_API_KEY: "test-key",
                OPENAI_BASE_URL: "http://fake-llm.test/v1",
                // Webhook retries 1 s, 2 s, 4 s … so the retry tests run in seconds, not minutes.
                WEBHOOK_RETRY_BASE_SECONDS: "1",
                TOOL_EXECUTION_TIMEOUT_MS: "2000",
                ENV_VARS_KEY: "test-env-vars-key-0123456789abcdef0123456789",
              },
              // The Worker's own fetch() (LLM providers, ENDPOINT blocks) lands here, never on the internet.
              outboundService: fakeUpstream,
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/**/*.test.ts"],
          exclude: ["test/node/**"],
          setupFiles: ["./test/setup.ts"],
        },
      },
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
