import type { D1Migration } from "cloudflare:test";
import type { Env as WorkerEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
      TEST_LOG_MIGRATIONS: D1Migration[];
      /** The log databases wrangler.toml binds (LOG_SHARDS). */
      LOGS_0: D1Database;
      LOGS_1: D1Database;
      /** Empty databases the migration tests migrate themselves (vitest.config.ts). */
      MIGRATE_LOGS: D1Database;
      MIGRATE_CONTROL: D1Database;
      MIGRATE_LOGS_ROWS: D1Database;
      MIGRATE_LOGS_SIGNALS: D1Database;
      /** PromptLayer's operations: JSON of {method, path, success}[] (vitest.config.ts). */
      REFERENCE_OPERATIONS: string;
      /** docs/mcp.md as the repository has it (vitest.config.ts). */
      MCP_DOC: string;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
    }
  }
}
