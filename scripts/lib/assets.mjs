// The Worker's static assets (wrangler.toml [assets], directory public/): the API reference's Scalar
// bundle, copied from its npm package, and the console, built from console/ by Vite. Both are build
// output (git-ignored); `npm run build:assets` makes them, `npm run dev` and `npm run deploy` run it first.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeApiTypes } from "./api-types.mjs";
import { ROOT } from "./wrangler.mjs";

export const PUBLIC_DIR = join(ROOT, "public");
const SCALAR_SRC = join(ROOT, "node_modules", "@scalar", "api-reference", "dist", "browser", "standalone.js");
export const SCALAR_DEST = join(PUBLIC_DIR, "docs", "scalar.js");

// Scalar fills an empty API key box with a placeholder that reads like a real key (base64 of a joke);
// a newcomer takes it for a sample key. The copy says what goes there instead (the test checks it).
const SAMPLE_KEY_PLACEHOLDER = "placeholder:`QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT`";
export const KEY_PLACEHOLDER = "Your API key";

/**
 * Copies the standalone browser bundle of @scalar/api-reference to public/docs/scalar.js when it
 * changed, with the key box's placeholder replaced (SAMPLE_KEY_PLACEHOLDER).
 */
export function copyScalarBundle() {
  if (!existsSync(SCALAR_SRC)) throw new Error("@scalar/api-reference is not installed: run `npm ci` first");
  mkdirSync(join(PUBLIC_DIR, "docs"), { recursive: true });
  const source = readFileSync(SCALAR_SRC, "utf8");
  if (!source.includes(SAMPLE_KEY_PLACEHOLDER)) throw new Error("@scalar/api-reference changed its API key placeholder: update SAMPLE_KEY_PLACEHOLDER in scripts/lib/assets.mjs");
  const bundle = source.replaceAll(SAMPLE_KEY_PLACEHOLDER, `placeholder:\`${KEY_PLACEHOLDER}\``);
  const same = existsSync(SCALAR_DEST) && readFileSync(SCALAR_DEST, "utf8") === bundle;
  if (!same) writeFileSync(SCALAR_DEST, bundle);
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
