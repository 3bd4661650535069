// Starts the Worker with `wrangler dev` on a free loopback port against its own local state
// (migrations applied, one workspace and key created), for the SDK test and the benchmarks.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { createKey } from "./keys.mjs";
import { migratedState, spawnWrangler } from "./wrangler.mjs";

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the API did not answer /health within ${timeoutMs} ms`);
}

/** @returns {Promise<{url: string, key: string, persistTo: string, logs: () => string, stop: () => Promise<void>}>} */
export async function startLocalApi({ workspace = "local-test", email = "dev@localhost", vars = {}, wranglerArgs = [], timeoutMs = 90_000, prepare } = {}) {
  const persistTo = migratedState();
  const key = createKey({ workspace, email, persistTo });
  // Seeding (benchmarks) happens before the Worker opens the database.
  if (prepare) await prepare(persistTo);
  // A throwaway secret per server, so environment variables can be stored.
  const allVars = { ENV_VARS_KEY: randomBytes(32).toString("hex"), ...vars };
  const varArgs = Object.entries(allVars).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  // A free port can be taken by another process between freePort() and wrangler's bind (the machines
  // run several servers at once): a start that fails on a port in use tries new ports.
  let child, output, url;
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    child = spawnWrangler([
      "dev",
      "--ip", "127.0.0.1",
      "--port", String(port),
      "--persist-to", persistTo,
      "--show-interactive-dev-session=false",
      "--inspector-port", String(await freePort()),
      ...varArgs,
      ...wranglerArgs,
    ]);
    output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    url = `http://127.0.0.1:${port}`;
    try {
      await waitForHealth(url, child, timeoutMs);
      break;
    } catch (err) {
      child.kill("SIGKILL");
      if (attempt < 3 && /Address already in use/.test(output)) continue;
      throw new Error(`${err.message}\n${output.slice(-4000)}`);
    }
  }
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(persistTo, { recursive: true, force: true });
  };
  return { url, key, persistTo, logs: () => output, stop, pid: child.pid };
}
