// The benchmarks' server: the Worker in workerd through Miniflare's own API, configured from
// wrangler.toml the way the test pool does (wrangler's unstable_getMiniflareWorkerOptions), with
// no inspector and no DevTools instrumentation. `wrangler dev` (npm run dev, the Node tests) turns
// on DevTools network events for the Worker and proxies every request through a second runtime, so
// each D1 call is mirrored to Node: that is tooling cost, not the Worker's. Here the client talks
// straight to the one workerd process that runs the Worker, its D1, R2, queues and objects.
//
// The state lives where `wrangler dev --persist-to X` keeps it (X/v3), so migrations and seeding
// go through the wrangler CLI exactly as before (scripts/lib/wrangler.mjs).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKey } from "./keys.mjs";
import { freePort } from "./local-api.mjs";
import { performance } from "node:perf_hooks";
import { logShardBindings, migratedState, OFFLINE_ENV, ROOT } from "./wrangler.mjs";

/**
 * Bundles src/ the way `wrangler deploy` would (offline, nothing uploaded); `entry`, another entry
 * module in place of wrangler.toml's `main` (bench:cost's meter, which wraps the Worker). Answers the
 * directory and the bundle's file name.
 */
function bundle(entry) {
  const outdir = mkdtempSync(join(tmpdir(), "promptedge-bundle-"));
  const r = spawnSync(join(ROOT, "node_modules", ".bin", "wrangler"), ["deploy", "--dry-run", "--outdir", outdir, ...(entry ? ["--config", join(ROOT, "wrangler.toml"), entry] : [])], {
    cwd: ROOT,
    env: { ...OFFLINE_ENV, CI: "true" },
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${r.stdout}\n${r.stderr}`);
  const script = entry ? readdirSync(outdir).find((f) => f.endsWith(".js")) : "index.js";
  if (!script) throw new Error(`wrangler deploy --dry-run wrote no script into ${outdir}`);
  return { outdir, script };
}

/** Pids of the workerd processes whose parent is this Node process (Miniflare spawns one). */
function workerdChildren() {
  const pids = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== process.pid) continue;
      if (!readlinkSync(`/proc/${name}/exe`).includes("workerd")) continue;
      pids.push(Number(name));
    } catch {
      // the process went away
    }
  }
  return pids;
}

/** utime + stime of a process, in ms (from /proc/<pid>/stat; clock ticks are 100 a second on Linux). */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resident set size of a process, in bytes. */
export function rssBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const m = status.match(/^VmRSS:\s+(\d+) kB/m);
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * Starts the Worker for a benchmark: fresh local state (migrations applied, one workspace and key),
 * `prepare(persistTo)` for seeding before the runtime opens the database, then Miniflare on a free
 * loopback port. `inspector: true` opens an inspector port (bench:import samples the isolate's heap
 * through it); the other benchmarks run without one. `entry`: an entry module to bundle in place of
 * wrangler.toml's main (bench:cost's meter). A prepared state (`persistTo` with its `key`,
 * e.g. from seeded-state.mjs) is used as it is, and removed on stop. halt() stops the runtime and
 * keeps the state (to read its database files), stop() also removes it.
 */
/** Whether the checkout benchmarked predates scoped keys (a before/after run): its keys table has no scopes. */
function beforeScopes() {
  const dir = join(ROOT, "migrations");
  return !readdirSync(dir).some((f) => f.endsWith(".sql") && readFileSync(join(dir, f), "utf8").includes("CREATE TABLE `audit_events`"));
}

export async function startBenchApi({ workspace = "bench", email = "dev@localhost", vars = {}, prepare, inspector = false, persistTo: given, key: givenKey, entry } = {}) {
  const { Miniflare } = await import("miniflare");
  const { unstable_getMiniflareWorkerOptions } = await import("wrangler");
  const persistTo = given ?? migratedState();
  let key = givenKey;
  if (!given) {
    key = createKey({ workspace, email, persistTo, legacy: beforeScopes() });
    if (prepare) await prepare(persistTo);
  }
  const { outdir, script } = bundle(entry);
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(ROOT, "wrangler.toml"));
  const port = await freePort();
  const inspectorPort = inspector ? await freePort() : undefined;
  const before = new Set(workerdChildren());
  let output = "";
  const mf = new Miniflare({
    host: "127.0.0.1",
    port,
    inspectorPort,
    defaultPersistRoot: join(persistTo, "v3"),
    // The Worker's per-request log lines are drained, not printed (the tail is kept for errors).
    handleRuntimeStdio(stdout, stderr) {
      for (const stream of [stdout, stderr]) stream.on("data", (d) => (output = (output + d).slice(-8000)));
    },
    workers: [
      {
        ...workerOptions,
        name: "promptedge",
        modules: true,
        modulesRoot: outdir,
        scriptPath: join(outdir, script),
        bindings: { ...(workerOptions.bindings ?? {}), ...vars },
      },
    ],
  });
  const url = (await mf.ready).toString().replace(/\/$/, "");
  const pids = workerdChildren().filter((p) => !before.has(p));
  if (pids.length !== 1) throw new Error(`expected one new workerd process, found ${pids.length}`);
  let halted = false;
  // Stops the runtime and closes its databases (their files are then whole: bench:storage reads
  // them), keeping the state until stop().
  const halt = async () => {
    if (halted) return;
    halted = true;
    await mf.dispose();
    rmSync(outdir, { recursive: true, force: true });
  };
  const stop = async () => {
    await halt();
    rmSync(persistTo, { recursive: true, force: true });
  };
  return { url, key, persistTo, pid: pids[0], inspectorPort, halt, stop, logs: () => output, mf };
}

/**
 * Logs still waiting for the indexer in every database of the bench server (`mf`: startBenchApi's):
 * the control database and each log database. Past the database's watermark (log_index_state), and
 * any listed in request_log_unindexed; a tree from before the watermark has only the list, a tree from
 * before deferred indexing neither: 0. `counted`: waiting for the daily totals too (counted_to).
 */
export async function unindexedLogs(mf, { counted = false } = {}) {
  let n = 0;
  for (const binding of ["DB", ...logShardBindings()]) {
    const d1 = await mf.getD1Database(binding);
    const has = async (table) => Boolean(await d1.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").bind(table).first());
    if (await has("log_index_state")) {
      n += (
        await d1
          .prepare(
            `SELECT (SELECT count(*) FROM request_logs WHERE id > (SELECT ${counted ? "counted_to" : "indexed_to"} FROM log_index_state WHERE id = 1))
                  + (SELECT count(*) FROM request_log_unindexed WHERE request_id <= (SELECT indexed_to FROM log_index_state WHERE id = 1)) AS n`,
          )
          .first()
      ).n;
    } else if (await has("request_log_unindexed")) n += (await d1.prepare("SELECT count(*) AS n FROM request_log_unindexed").first()).n;
  }
  return n;
}

/** Waits until every log is indexed (`counted`: and counted in the daily totals), polling every `everyMs`; throws after `timeoutMs`. Returns the wait in ms. */
export async function waitIndexed(mf, { timeoutMs = 120_000, everyMs = 50, counted = false } = {}) {
  const t0 = performance.now();
  while ((await unindexedLogs(mf, { counted })) > 0) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`logs still unindexed after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return performance.now() - t0;
}

/**
 * Samples the Worker isolate's V8 heap through the bench server's inspector (Runtime.getHeapUsage,
 * every `everyMs`): the isolate's own JavaScript heap, apart from the runtime's native memory (its
 * SQLite page caches, R2 and queue stores count in the process's RSS, not here). Needs a global
 * WebSocket (Node ≥ 22, or Node 20 with --experimental-websocket). Returns { stop(): Promise<stats> }.
 */
export async function sampleIsolateHeap(inspectorPort, { everyMs = 50, worker = "promptedge" } = {}) {
  if (typeof WebSocket !== "function") throw new Error("no global WebSocket: run node with --experimental-websocket");
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json();
  const target = targets.find((t) => String(t.id ?? t.url ?? "").includes(worker)) ?? targets[0];
  if (!target) throw new Error("the inspector lists no worker");
  const url = target.webSocketDebuggerUrl ?? `ws://127.0.0.1:${inspectorPort}/${target.id}`;
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error(`could not open ${url}`)), { once: true });
  });
  let id = 0;
  const pending = new Map();
  ws.addEventListener("message", (ev) => {
    const msg = JSON.parse(typeof ev.data === "string" ? ev.data : Buffer.from(ev.data).toString());
    pending.get(msg.id)?.(msg);
    pending.delete(msg.id);
  });
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      const n = ++id;
      pending.set(n, resolve);
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  const samples = [];
  let inFlight = false;
  const take = async () => {
    if (inFlight) return;
    inFlight = true;
    try {
      const msg = await call("Runtime.getHeapUsage");
      if (msg.result) samples.push({ t: Date.now(), used: msg.result.usedSize, total: msg.result.totalSize });
    } finally {
      inFlight = false;
    }
  };
  await take();
  const baseline = samples[0];
  const timer = setInterval(take, everyMs);
  return {
    baseline,
    samples,
    /** Peaks over the samples taken before `splitAt` (ms since the epoch) and after it, and in all. */
    async stop(splitAt = Number.POSITIVE_INFINITY) {
      clearInterval(timer);
      await take();
      ws.close();
      const peak = (list, key) => (list.length > 0 ? Math.max(...list.map((s) => s[key])) : null);
      const before = samples.filter((s) => s.t < splitAt);
      const after = samples.filter((s) => s.t >= splitAt);
      return {
        samples: samples.length,
        baseline_used: baseline?.used ?? null,
        peak_used: peak(samples, "used"),
        peak_total: peak(samples, "total"),
        peak_used_before: peak(before, "used"),
        peak_used_after: peak(after, "used"),
        samples_before: before.length,
      };
    },
  };
}
