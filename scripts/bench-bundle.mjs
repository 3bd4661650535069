#!/usr/bin/env node
// The Worker's size and start-up, the two limits Cloudflare sets on a deploy: the bundle
// `wrangler deploy --dry-run` builds, in bytes and gzipped (the plan limit is on the gzipped size),
// and the CPU of its start-up (parsing and running the module's top level before the first request)
// as `wrangler check startup` profiles it in a local workerd, `--runs` times (the median is given;
// the machine's noise is in the range). Then, on the bench server (scripts/lib/bench-server.mjs),
// what a fresh isolate's first MCP request costs (POST /mcp tools/list: the MCP SDK is loaded then,
// and the OpenAPI document the tools' schemas come from is built) next to the warm ones and to
// /health, wall time and workerd CPU. BENCH_TREE=<checkout> measures another checkout, so a change
// is compared with the tree before it in the same session (a tree without /mcp answers its 404).
//
//   npm run bench:bundle                         # 5 start-up profiles
//   npm run bench:bundle -- --runs 9 --json
//
// Exit code 0, or 2 when the build or a profile fails.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir, loadavg } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { OFFLINE_ENV, ROOT } from "./lib/wrangler.mjs";
import { cpuMs, startBenchApi } from "./lib/bench-server.mjs";

const args = process.argv.slice(2);
const runsArg = args.includes("--runs") ? Number(args[args.indexOf("--runs") + 1]) : 5;
const runs = Number.isInteger(runsArg) && runsArg > 0 ? runsArg : 5;
const asJson = args.includes("--json");
const wranglerBin = join(ROOT, "node_modules", ".bin", "wrangler");

function run(argv) {
  const r = spawnSync(wranglerBin, argv, { cwd: ROOT, env: { ...OFFLINE_ENV, CI: "true" }, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    console.error(`wrangler ${argv.join(" ")} failed:\n${r.stdout}\n${r.stderr}`);
    process.exit(2);
  }
}

/** Every file of the bundle (the entry and any modules beside it), their bytes and gzipped bytes. */
function bundleSize() {
  const outdir = mkdtempSync(join(tmpdir(), "promptedge-bundle-"));
  try {
    run(["deploy", "--dry-run", "--outdir", outdir]);
    let bytes = 0;
    let gzip = 0;
    for (const file of readdirSync(outdir, { recursive: true, encoding: "utf8" })) {
      const path = join(outdir, file);
      if (!statSync(path).isFile() || file.endsWith(".map") || file === "README.md") continue;
      const content = readFileSync(path);
      bytes += content.length;
      gzip += gzipSync(content, { level: 9 }).length;
    }
    return { bytes, gzip };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** One start-up profile: the CPU it sampled (idle left out) and its whole span, in ms. */
function startupProfile() {
  const dir = mkdtempSync(join(tmpdir(), "promptedge-startup-"));
  try {
    const out = join(dir, "startup.cpuprofile");
    run(["check", "startup", "--outfile", out]);
    const profile = JSON.parse(readFileSync(out, "utf8"));
    const fn = new Map(profile.nodes.map((n) => [n.id, n.callFrame.functionName]));
    let busy = 0;
    profile.samples.forEach((id, i) => {
      if (fn.get(id) !== "(idle)") busy += profile.timeDeltas[i];
    });
    return { cpuMs: busy / 1000, spanMs: (profile.endTime - profile.startTime) / 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x) => Math.round(x * 10) / 10;

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

/** A fresh isolate's first /health, first tools/list, then `n` more of each, one at a time. */
async function firstMcpRequest(n = 20) {
  const server = await startBenchApi({ workspace: "bench-bundle" });
  try {
    const health = await timed(server, "/health");
    const first = await timed(server, "/mcp", TOOLS_LIST);
    const warm = [];
    const warmHealth = [];
    for (let i = 0; i < n; i++) {
      warmHealth.push(await timed(server, "/health"));
      warm.push(await timed(server, "/mcp", TOOLS_LIST));
    }
    return {
      first_health_ms: round(health.ms),
      first_tools_list: { status: first.status, ms: round(first.ms), cpu_ms: first.cpuMs },
      warm_tools_list_ms_median: round(median(warm.map((w) => w.ms))),
      warm_tools_list_cpu_ms_per_request: round(warm.reduce((a, w) => a + w.cpuMs, 0) / n),
      warm_health_ms_median: round(median(warmHealth.map((w) => w.ms))),
    };
  } finally {
    await server.stop();
  }
}

const loadBefore = loadavg()[0];
const size = bundleSize();
const profiles = [];
for (let i = 0; i < runs; i++) profiles.push(startupProfile());
const cpu = profiles.map((p) => p.cpuMs);
const mcp = await firstMcpRequest();
const result = {
  tree: ROOT,
  bundle_bytes: size.bytes,
  bundle_gzip_bytes: size.gzip,
  startup_cpu_ms_median: round(median(cpu)),
  startup_cpu_ms_range: [round(Math.min(...cpu)), round(Math.max(...cpu))],
  runs,
  ...mcp,
  load: [round(loadBefore), round(loadavg()[0])],
};
if (asJson) console.log(JSON.stringify(result));
else {
  console.log(`tree ${result.tree}`);
  console.log(`bundle: ${(size.bytes / 1024).toFixed(1)} KiB, gzip ${(size.gzip / 1024).toFixed(1)} KiB`);
  console.log(`start-up CPU (wrangler check startup, ${runs} runs): median ${result.startup_cpu_ms_median} ms, range ${result.startup_cpu_ms_range.join("–")} ms`);
  console.log(
    `first POST /mcp tools/list: ${mcp.first_tools_list.status}, ${mcp.first_tools_list.ms} ms, workerd CPU ${mcp.first_tools_list.cpu_ms} ms; ` +
      `then median ${mcp.warm_tools_list_ms_median} ms (${mcp.warm_tools_list_cpu_ms_per_request} ms CPU) against /health's ${mcp.warm_health_ms_median} ms`,
  );
  console.log(`load (1 min): ${result.load.join(" → ")}`);
}
