// Two projects: "workers" runs inside workerd with the real bindings (D1 with migrations applied, R2,
// Queues, Durable Objects, rate limiting); "node" drives a real `wrangler dev` from Node, for what
// only a Node client can do (the official promptlayer SDK).
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { fakeUpstream } from "./test/fake-upstream.mjs";
import { buildConsole, copyScalarBundle } from "./scripts/lib/assets.mjs";

// The static assets the Worker serves (/docs, /console) must exist before its configuration is read:
// the Scalar bundle is copied (cheap), the console built only when it never was (npm run build:assets
// rebuilds it).
copyScalarBundle();
if (!existsSync(fileURLToPath(new URL("./public/console/index.html", import.meta.url)))) await buildConsole({ quiet: true });

const migrationsDir = fileURLToPath(new URL("./migrations", import.meta.url));
const logMigrationsDir = fileURLToPath(new URL("./migrations-logs", import.meta.url));
// PromptLayer's operations (method, path, success codes), taken from its OpenAPI document into the
// repository (test/fixtures/promptlayer-operations.json), for the test that holds /openapi.json to them.
const referenceOperations = readFileSync(fileURLToPath(new URL("./test/fixtures/promptlayer-operations.json", import.meta.url)), "utf8");
// docs/mcp.md, whose tool list a test holds to the MCP server's (npm run docs:mcp writes it).
const mcpDoc = readFileSync(fileURLToPath(new URL("./docs/mcp.md", import.meta.url)), "utf8");

// Pure modules' tests: they read no binding, so they skip the per-file setup (loading the whole Worker
// to migrate its database: a few seconds of CPU a file, most of what a workers-project file costs).
// They also share one runtime per test worker (isolate: false) instead of starting one per file,
// which cost more than their tests: so they mock no module and leave no state behind.
const UNIT_TESTS = [
  "test/blocks/**/*.test.ts",
  "test/console/**/*.test.ts",
  "test/converters/**/*.test.ts",
  "test/filters/**/*.test.ts",
  "test/lib/**/*.test.ts",
  "test/redaction/**/*.test.ts",
  "test/db/{sessions,sql}.test.ts",
  "test/prompts/{cache,patch,snippets,ab-split}.test.ts",
  "test/analytics/ab-stats.test.ts",
  "test/services/releases/{guardrails,split-input}.test.ts",
  "test/traces/**/*.test.ts",
  "test/realtime/protocol.test.ts",
  "test/logs/index-rows.test.ts",
  "test/logs/merged-scan.test.ts",
  "test/logs/intent.test.ts",
  "test/logs/log-row.test.ts",
  "test/logs/row-codec.test.ts",
  "test/logs/workspace-logs.test.ts",
  "test/services/workspace/auth.test.ts",
  "test/services/datasets/file.test.ts",
  "test/services/evaluations/columns.test.ts",
  "test/services/registry/skill-manifest.test.ts",
  "test/services/workflows/graph.test.ts",
  "test/services/signals/{sampling,judge}.test.ts",
  "test/sheets/{cell-values,column-plan,recalculation,scorecard-steps,stale-graph,version-refs}.test.ts",
];

// Workers-project files that need databases no other file has written to: they read a whole
// database's state (query plans of ANALYZEd tables, file sizes, the least-full log database, the id
// ranges of a database from before ranges existed) or sweep every workspace's jobs and deliveries
// (the sweepers, the cron), which would also touch the files run after them. Each runs in a runtime
// of its own, as every file once did; the other workers files share one runtime per test worker.
const FRESH_DATABASE_TESTS = [
  "test/logs/ids.test.ts",
  "test/logs/search-plans.test.ts",
  "test/logs/shards.test.ts",
  "test/logs/span-plans.test.ts",
  "test/logs/two-tiers.test.ts",
  "test/queue/sweeper.test.ts",
  "test/routes/sheet-imports-into.test.ts",
  "test/routes/redaction-e2e.test.ts",
  "test/routes/webhook-secrets.test.ts",
  "test/routes/webhooks.test.ts",
];

/**
 * Every runtime dependency (package.json "dependencies") the code run in workerd imports, each entry
 * point as it is written (zod, drizzle-orm/sqlite-core …), read from the sources. They are pre-bundled
 * (deps.optimizer): each test file's runtime loads its modules one round trip at a time, and zod,
 * drizzle-orm and hono alone are some 240 modules, a second of every workers file's start-up. All
 * entry points of a package must be bundled together (one copy of its classes), hence all of them.
 */
/**
 * Dependencies that import Node's built-in modules (node:path …): the pre-bundler cannot load those, so
 * they are left to the runtime, which serves them under nodejs_compat as the deployed Worker does.
 */
const NOT_PREBUNDLED = new Set(["@secretlint/secretlint-rule-preset-recommend"]);

function runtimeDependencyImports(): string[] {
  const dependencies = Object.keys(JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")).dependencies).filter((d) => !NOT_PREBUNDLED.has(d));
  const packageOf = (spec: string) => spec.split("/").slice(0, spec.startsWith("@") ? 2 : 1).join("/");
  const found = new Set<string>();
  for (const dir of ["src", "test"]) {
    const root = fileURLToPath(new URL(`./${dir}/`, import.meta.url));
    for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
      if (!/\.(ts|mjs|js)$/.test(file) || file.startsWith("node/") || file.startsWith("node\\")) continue;
      for (const [, spec] of readFileSync(root + file, "utf8").matchAll(/(?:from|import\()\s*"([^".][^"]*)"/g)) {
        if (dependencies.includes(packageOf(spec))) found.add(spec);
      }
    }
  }
  return [...found].sort();
}
const optimizeDeps = { optimizer: { ssr: { enabled: true, include: runtimeDependencyImports() } } };

/** The Worker in workerd with its real bindings, for the workers and unit projects. */
const workerdPool = () =>
  cloudflareTest(async () => ({
    main: "./src/index.ts",
    wrangler: { configPath: "./wrangler.toml" },
    miniflare: {
      bindings: {
        TEST_MIGRATIONS: await readD1Migrations(migrationsDir),
        TEST_LOG_MIGRATIONS: await readD1Migrations(logMigrationsDir),
        REFERENCE_OPERATIONS: referenceOperations,
        MCP_DOC: mcpDoc,
        OPENAI_API_KEY: "test-key",
        OPENAI_BASE_URL: "http://fake-llm.test/v1",
        // Webhook retries 1 s, 2 s, 4 s … so the retry tests run in seconds, not minutes.
        WEBHOOK_RETRY_BASE_SECONDS: "1",
        // A judge call the provider refused for now is retried at once, so the retry tests take no waiting.
        SIGNAL_RETRY_BASE_SECONDS: "0",
        TOOL_EXECUTION_TIMEOUT_MS: "2000",
        ENV_VARS_KEY: "test-env-vars-key-0123456789abcdef0123456789",
        // Verified keys are trusted for 0.2 s instead of 5 s, so the revocation tests wait that long.
        AUTH_KEY_CACHE_MS: "200",
      },
      // Empty databases for the migration tests (test/logs/migration.test.ts): migrated there, step by step.
      d1Databases: ["MIGRATE_LOGS", "MIGRATE_CONTROL", "MIGRATE_LOGS_ROWS", "MIGRATE_LOGS_SIGNALS"],
      // The Worker's own fetch() (LLM providers, ENDPOINT blocks) lands here, never on the internet.
      outboundService: fakeUpstream,
      // The consumers of wrangler.toml, but a batch is delivered at once instead of after up to
      // a second: queue-driven tests (imports, fills, runs, webhooks) wait on every hop.
      queueConsumers: {
        "promptedge-jobs": { maxBatchSize: 10, maxBatchTimeout: 0, maxRetries: 5, deadLetterQueue: "promptedge-jobs-dlq" },
        "promptedge-jobs-dlq": { maxBatchSize: 10, maxBatchTimeout: 0 },
        "promptedge-index": { maxBatchSize: 100, maxBatchTimeout: 0, maxRetries: 3 },
        "promptedge-signals": { maxBatchSize: 10, maxBatchTimeout: 0, maxRetries: 10 },
      },
    },
  }));

export default defineConfig({
  test: {
    // The app logs one JSON line per request; show logs only for tests that fail.
    silent: "passed-only",
    // Two test files at a time (the machines have 2 cores): the node project's files mostly wait on
    // a `wrangler dev`, so they run beside the workerd projects' files.
    maxWorkers: 2,
    reporters: ["default", "./scripts/vitest-summary.mjs"],
    projects: [
      {
        plugins: [workerdPool()],
        test: { name: "unit", include: UNIT_TESTS, testTimeout: 60_000, isolate: false, deps: optimizeDeps },
      },
      {
        plugins: [workerdPool()],
        test: {
          name: "workers",
          include: ["test/**/*.test.ts"],
          exclude: ["test/node/**", ...UNIT_TESTS, ...FRESH_DATABASE_TESTS],
          setupFiles: ["./test/setup.ts"],
          // One runtime per test worker for all these files, as in the unit project: starting
          // workerd, loading the Worker's modules and migrating its databases for each file cost
          // more than most files' tests. The files share the databases (each test makes its own
          // workspace) and the modules' state (caches keyed by workspace or key).
          isolate: false,
          deps: optimizeDeps,
          // A shared 2-core machine can be slow for a while: room for any test, so load never fails
          // one (the heaviest say their own, longer, limit).
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        plugins: [workerdPool()],
        test: {
          name: "workers-fresh",
          include: FRESH_DATABASE_TESTS,
          setupFiles: ["./test/setup.ts"],
          deps: optimizeDeps,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
          // One `wrangler dev` for the files that only call it over HTTP (test/node/global-setup.ts).
          globalSetup: ["./test/node/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
