import type { D1Migration } from "cloudflare:test";
import type { Env as WorkerEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
      /** PromptLayer's operations: JSON of {method, path, success}[] (vitest.config.ts). */
      REFERENCE_OPERATIONS: string;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
    }
  }
}
