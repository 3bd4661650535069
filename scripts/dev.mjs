#!/usr/bin/env node
// npm run dev: the local API on http://127.0.0.1:8787 with local D1, R2, Queues and Durable Objects.
// Builds the static assets (the API reference's bundle, the console), applies the local migrations,
// makes sure a local workspace and API key exist, prints the key, runs `wrangler dev` offline, and
// triggers the Worker's scheduled handler every minute as the cron trigger does once deployed
// (scripts/lib/dev-cron.mjs). The key is kept in .dev-api-key (git-ignored) so it survives restarts.
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createKey, isActiveKey } from "./lib/keys.mjs";
import { applyMigrations, OFFLINE_ENV, ROOT } from "./lib/wrangler.mjs";
import { spawn } from "node:child_process";
import { portAndRest } from "./lib/dev-args.mjs";
import { buildConsole, copyScalarBundle } from "./lib/assets.mjs";
import { startDevCron } from "./lib/dev-cron.mjs";

const DEV_VARS = join(ROOT, ".dev.vars");
let PORT, PASSED_ON, PERSIST_TO;
try {
  ({ port: PORT, rest: PASSED_ON, persistTo: PERSIST_TO } = portAndRest(process.argv.slice(2), process.env.PORT));
} catch (err) {
  console.error(`npm run dev: ${err.message}`);
  process.exit(2);
}
// With --persist-to, the local state (and so its key) is that directory's, not the default one.
const TARGET = PERSIST_TO ? { persistTo: PERSIST_TO } : {};
const KEY_FILE = PERSIST_TO ? join(PERSIST_TO, ".dev-api-key") : join(ROOT, ".dev-api-key");

function ensureKey() {
  if (existsSync(KEY_FILE)) {
    const saved = readFileSync(KEY_FILE, "utf8").trim();
    if (saved && isActiveKey(saved, TARGET)) return saved;
  }
  const key = createKey({ workspace: "local", email: "dev@localhost", ...TARGET });
  writeFileSync(KEY_FILE, `${key}\n`, { mode: 0o600 });
  return key;
}

/** Local secrets live in .dev.vars (git-ignored; wrangler dev reads it): made once, kept across restarts. */
function ensureDevSecret(name) {
  const current = existsSync(DEV_VARS) ? readFileSync(DEV_VARS, "utf8") : "";
  if (new RegExp(`^${name}=`, "m").test(current)) return;
  const sep = current && !current.endsWith("\n") ? "\n" : "";
  appendFileSync(DEV_VARS, `${sep}${name}=${randomBytes(32).toString("hex")}\n`, { mode: 0o600 });
}

function banner(key) {
  return [
    "",
    "  PromptEdge API (local)",
    `  URL:      http://127.0.0.1:${PORT}   (docs: /docs, console: /console, OpenAPI: /openapi.json)`,
    `  API key:  ${key}`,
    `  Try:      curl -s http://127.0.0.1:${PORT}/health`,
    "",
  ].join("\n");
}

console.log("Building the static assets (API reference, console)…");
copyScalarBundle();
await buildConsole({ quiet: true });
console.log("Applying local D1 migrations…");
applyMigrations(TARGET);
const key = ensureKey();
ensureDevSecret("ENV_VARS_KEY");
console.log(banner(key));

const child = spawn(
  join(ROOT, "node_modules", ".bin", "wrangler"),
  // --test-scheduled: the path the dev cron calls (scripts/lib/dev-cron.mjs).
  ["dev", "--ip", "127.0.0.1", "--port", PORT, "--test-scheduled", ...PASSED_ON],
  { cwd: ROOT, env: OFFLINE_ENV, stdio: ["inherit", "pipe", "inherit"] },
);
let announced = false;
let stopCron = () => {};
child.stdout.on("data", (chunk) => {
  process.stdout.write(chunk);
  if (!announced && /Ready on/i.test(String(chunk))) {
    announced = true;
    console.log(banner(key));
    console.log("  Cron:     the scheduled handler (sweeps, archiving, retention) is triggered every minute, as when deployed\n");
    stopCron = startDevCron({ base: `http://127.0.0.1:${PORT}` });
  }
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => {
  stopCron();
  process.exit(code ?? 0);
});
