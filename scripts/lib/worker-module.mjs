// A pure module of the Worker's source (no imports of its own), loaded in Node: TypeScript stripped by
// esbuild, the bundler wrangler itself builds the Worker with. For scripts that must write SQL exactly
// as the Worker does (the seeder's daily totals use the Worker's latency buckets).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./wrangler.mjs";

/** The module at `path` (relative to the repository root), e.g. "src/analytics/latency-buckets.ts". */
export async function workerModule(path) {
  const { transformSync } = await import("esbuild");
  const { code } = transformSync(readFileSync(join(ROOT, path), "utf8"), { loader: "ts", format: "esm" });
  return import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
}
