// The Worker's static assets (wrangler.toml [assets], directory public/): the API reference's Scalar
// bundle, copied from its npm package, and the console, built from console/ by Vite. Both are build
// output (git-ignored); `npm run build:assets` makes them, `npm run dev` and `npm run deploy` run it first.
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeApiTypes } from "./api-types.mjs";
import { ROOT } from "./wrangler.mjs";

export const PUBLIC_DIR = join(ROOT, "public");
const SCALAR_SRC = join(ROOT, "node_modules", "@scalar", "api-reference", "dist", "browser", "standalone.js");
export const SCALAR_DEST = join(PUBLIC_DIR, "docs", "scalar.js");

/** Copies the standalone browser bundle of @scalar/api-reference to public/docs/scalar.js when it changed. */
export function copyScalarBundle() {
  if (!existsSync(SCALAR_SRC)) throw new Error("@scalar/api-reference is not installed: run `npm ci` first");
  mkdirSync(join(PUBLIC_DIR, "docs"), { recursive: true });
  const same =
    existsSync(SCALAR_DEST) &&
    statSync(SCALAR_DEST).size === statSync(SCALAR_SRC).size &&
    readFileSync(SCALAR_DEST).equals(readFileSync(SCALAR_SRC));
  if (!same) copyFileSync(SCALAR_SRC, SCALAR_DEST);
  return SCALAR_DEST;
}

/**
 * Builds console/ into public/console/ (Vite, production mode), after writing its answer types
 * (console/src/api.gen.ts) so an editor has them once `npm run dev` ran; the bundle does not need them.
 */
export async function buildConsole({ quiet = false } = {}) {
  await writeApiTypes();
  const { build } = await import("vite");
  await build({ configFile: join(ROOT, "console", "vite.config.mjs"), logLevel: quiet ? "warn" : "info" });
  return join(PUBLIC_DIR, "console");
}
