#!/usr/bin/env node
// The Worker's size and start-up, the two limits Cloudflare sets on a deploy, and what a fresh
// isolate's first MCP request costs:
// - the bundle `wrangler deploy --dry-run` builds, in bytes and gzipped (the limit is on the gzip);
// - start-up: the CPU time of evaluating that bundle as a module (parsing it and running its top
//   level) in a fresh Node process (scripts/lib/startup-probe.mjs), `--runs` times, median and range;
// - on the bench server (scripts/lib/bench-server.mjs), a fresh isolate's first POST /mcp tools/list
//   (the MCP server's first use: the OpenAPI document the tools' schemas come from is built then)
//   and the warm ones after it, next to /health, wall time and workerd CPU.
// `--against <checkout>` measures another checkout in the same run (its start-ups alternate with
// this tree's), the baseline a change is compared with; a tree without /mcp answers its 404.
//
//   npm run bench:bundle -- --against ../main --runs 15
//   npm run bench:bundle -- --json
//
// Exit code 0, or 2 when a build or a measurement fails. `wrangler check startup` profiles the
// start-up (a flame graph) when one needs to know where it goes.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { cpuMs, startBenchApi } from "./lib/bench-server.mjs";
import { OFFLINE_ENV, ROOT } from "./lib/wrangler.mjs";

const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const runs = Number.isInteger(Number(option("--runs"))) && Number(option("--runs")) > 0 ? Number(option("--runs")) : 9;
const against = option("--against") ? resolve(option("--against")) : null;
const asJson = args.includes("--json");
const PROBE = fileURLToPath(new URL("./lib/startup-probe.mjs", import.meta.url));
const SELF = fileURLToPath(import.meta.url);

const fail = (message) => {
  console.error(message);
  process.exit(2);
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x) => Math.round(x * 10) / 10;

/** The tree's bundle, built into a temporary folder that Node reads as modules; its size. */
function build(tree) {
  const outdir = mkdtempSync(join(tmpdir(), "promptedge-bundle-"));
  const r = spawnSync(join(tree, "node_modules", ".bin", "wrangler"), ["deploy", "--dry-run", "--outdir", outdir], {
    cwd: tree,
    env: { ...OFFLINE_ENV, CI: "true" },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) fail(`wrangler deploy --dry-run failed in ${tree}:\n${r.stdout}\n${r.stderr}`);
  let bytes = 0;
  let gzip = 0;
  for (const file of readdirSync(outdir, { recursive: true, encoding: "utf8" })) {
    const path = join(outdir, file);
    if (!statSync(path).isFile() || file.endsWith(".map") || file === "README.md") continue;
    const content = readFileSync(path);
    bytes += content.length;
    gzip += gzipSync(content, { level: 9 }).length;
  }
  writeFileSync(join(outdir, "package.json"), '{"type":"module"}');
  return { tree, outdir, bytes, gzip, startups: [] };
}

function startupCpu(bundle) {
  const r = spawnSync(process.execPath, [PROBE, join(bundle.outdir, "index.js")], { encoding: "utf8" });
  if (r.status !== 0) fail(`evaluating the bundle of ${bundle.tree} failed:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()).cpu_ms;
}

/** One request's wall time (to the end of its body) and the workerd CPU it took, in ms. */
async function timed(server, path, init) {
  const cpu0 = cpuMs(server.pid);
  const t0 = performance.now();
  const res = await fetch(server.url + path, init);
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t0, cpuMs: cpuMs(server.pid) - cpu0 };
}

const TOOLS_LIST = {
  method: "POST",
  headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
};

/** This tree on a fresh bench server: its first tools/list, then `n` more of it and of /health, one at a time. */
async function firstMcpRequest(n = 20) {
  const server = await startBenchApi({ workspace: "bench-bundle" });
  try {
    await timed(server, "/health");
    const first = await timed(server, "/mcp", TOOLS_LIST);
    const warm = [];
    const health = [];
    for (let i = 0; i < n; i++) {
      health.push(await timed(server, "/health"));
      warm.push(await timed(server, "/mcp", TOOLS_LIST));
    }
    return {
      first_tools_list: { status: first.status, ms: round(first.ms), cpu_ms: first.cpuMs },
      warm_tools_list_ms_median: round(median(warm.map((w) => w.ms))),
      warm_tools_list_cpu_ms_per_request: round(warm.reduce((a, w) => a + w.cpuMs, 0) / n),
      warm_health_ms_median: round(median(health.map((h) => h.ms))),
    };
  } finally {
    await server.stop();
  }
}

/** Another checkout's first-request figures: this script run with BENCH_TREE (bench-server reads ROOT from it). */
function firstMcpRequestOf(tree) {
  const r = spawnSync(process.execPath, [SELF, "--first-request-only"], { env: { ...process.env, BENCH_TREE: tree }, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  if (r.status !== 0) fail(`the first-request phase failed in ${tree}:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

if (args.includes("--first-request-only")) {
  console.log(JSON.stringify(await firstMcpRequest()));
  process.exit(0);
}

const load = [loadavg()[0]];
const bundles = [build(ROOT), ...(against ? [build(against)] : [])];
try {
  // Alternating, so both trees see the same moments of the machine's load.
  for (let i = 0; i < runs; i++) for (const b of i % 2 ? [...bundles].reverse() : bundles) b.startups.push(startupCpu(b));
  const results = [];
  for (const b of bundles) {
    results.push({
      tree: b.tree,
      bundle_bytes: b.bytes,
      bundle_gzip_bytes: b.gzip,
      startup_cpu_ms_median: round(median(b.startups)),
      startup_cpu_ms_range: [round(Math.min(...b.startups)), round(Math.max(...b.startups))],
      runs,
      ...(b.tree === ROOT ? await firstMcpRequest() : firstMcpRequestOf(b.tree)),
    });
  }
  load.push(loadavg()[0]);
  if (asJson) console.log(JSON.stringify({ results, load: load.map(round) }));
  else {
    for (const r of results) {
      console.log(`tree ${r.tree}`);
      console.log(`  bundle: ${(r.bundle_bytes / 1024).toFixed(1)} KiB, gzip ${(r.bundle_gzip_bytes / 1024).toFixed(1)} KiB`);
      console.log(`  start-up CPU (module evaluation, ${runs} runs): median ${r.startup_cpu_ms_median} ms, range ${r.startup_cpu_ms_range.join("–")} ms`);
      console.log(
        `  first POST /mcp tools/list: ${r.first_tools_list.status}, ${r.first_tools_list.ms} ms, workerd CPU ${r.first_tools_list.cpu_ms} ms; ` +
          `then median ${r.warm_tools_list_ms_median} ms (${r.warm_tools_list_cpu_ms_per_request} ms CPU each), /health ${r.warm_health_ms_median} ms`,
      );
    }
    console.log(`load (1 min): ${load.map(round).join(" → ")}`);
  }
} finally {
  for (const b of bundles) rmSync(b.outdir, { recursive: true, force: true });
}
