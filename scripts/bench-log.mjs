#!/usr/bin/env node
// npm run bench:log: throughput and latency of POST /log-request against GET /health (the runtime's
// ceiling), both measured in the same run on the same local server (fresh local D1): by default the
// bench server (workerd through Miniflare's API, no inspector: scripts/lib/bench-server.mjs), with
// BENCH_SERVER=wrangler the `wrangler dev` of before, to see what the dev tooling costs. Each
// endpoint's figures include the CPU time the Worker's process spent per request (/proc).
// A measured run, never a timed test: the figures depend on the machine; compare log-request with the
// health baseline of the same run, not with figures from another machine or another day.
//
//   npm run bench:log [-- --concurrency 16 --count 2000 --warmup 200 --rounds 4 --json]
//   env: BENCH_CONCURRENCY, BENCH_COUNT, BENCH_WARMUP, BENCH_ROUNDS, BENCH_JSON=1,
//        BENCH_SERVER=wrangler (measure under `wrangler dev` instead), BENCH_WRANGLER_ARGS (its extra flags)
//
// The measured requests of each endpoint are split into rounds that alternate health / log-request, so
// that both see the same conditions (noise on a shared machine, a growing database, a warm JIT).
// Exit code: 0 when every request got its expected status (targets met or not; they are reported),
// 1 when any request failed, 2 on a usage or startup error.
import { performance } from "node:perf_hooks";
import { readdirSync, readFileSync } from "node:fs";
import { drive, load, machine, optionsOrExit, parseArgs, summarise } from "./lib/bench.mjs";
import { cpuMs, startBenchApi } from "./lib/bench-server.mjs";
import { logBody } from "./lib/bench-requests.mjs";
import { startLocalApi } from "./lib/local-api.mjs";

const TARGET_RATIO = 0.6; // log-request throughput >= 60 % of the health ceiling
const TARGET_P99_MS = 25; // log-request p99 <= 25 ms
const TARGET_CONCURRENCY = 16; // the concurrency the targets are stated for

// ---------------------------------------------------------------------------------------------
// Options

function parseOptions(argv, env) {
  const opts = parseArgs(argv, env, {
    usage: USAGE,
    numbers: {
      concurrency: { env: "BENCH_CONCURRENCY", default: 16 },
      count: { env: "BENCH_COUNT", default: 2000 },
      warmup: { env: "BENCH_WARMUP", default: 200, min: 0 },
      rounds: { env: "BENCH_ROUNDS", default: 4 },
    },
    flags: { json: "BENCH_JSON" },
  });
  opts.rounds = Math.min(opts.rounds, opts.count);
  return opts;
}

const USAGE = `usage: npm run bench:log [-- --concurrency N] [--count N] [--warmup N] [--rounds N] [--json]
  --concurrency  requests in flight at once (default 16; env BENCH_CONCURRENCY)
  --count        measured requests per endpoint (default 2000; env BENCH_COUNT)
  --warmup       unmeasured requests per endpoint first (default 200; env BENCH_WARMUP)
  --rounds       alternating health/log-request rounds the count is split into (default 4; env BENCH_ROUNDS)
  --json         print the results as one JSON object (env BENCH_JSON=1)`;

// ---------------------------------------------------------------------------------------------
// Requests

function endpoints(url, key) {
  return {
    health: {
      name: "GET /health",
      expect: 200,
      request: () => [`${url}/health`, { method: "GET" }],
    },
    log: {
      name: "POST /log-request",
      expect: 201,
      request: (i) => [
        `${url}/log-request`,
        { method: "POST", headers: { "X-API-KEY": key, "Content-Type": "application/json" }, body: logBody(i) },
      ],
    },
  };
}

let cpuPids = [];
const cpuNow = () => cpuPids.reduce((sum, pid) => sum + cpuMs(pid), 0);

/** Sends `count` requests with `concurrency` in flight; index i runs from `first`. Latency runs to the end of the body. */
function run(endpoint, { first, count, concurrency }, errors) {
  const send = async (i) => {
    const [target, init] = endpoint.request(i);
    let status = 0;
    let text = "";
    try {
      const res = await fetch(target, init);
      status = res.status;
      text = await res.text();
    } catch (err) {
      text = err?.cause?.message ?? err?.message ?? String(err);
    }
    if (status !== endpoint.expect) errors.push({ endpoint: endpoint.name, status, body: text.slice(0, 300) });
  };
  return drive({ send, first, count, concurrency, cpu: cpuNow });
}

function summary(name, concurrency, parts, errors) {
  const s = summarise(parts);
  return {
    endpoint: name,
    requests: s.requests,
    concurrency,
    elapsed_ms: s.elapsed_ms,
    throughput_rps: s.rps,
    cpu_ms_per_request: s.cpu_ms_per_request,
    latency_ms: { p50: s.p50_ms, p95: s.p95_ms, p99: s.p99_ms, max: s.max_ms },
    errors: errors.filter((e) => e.endpoint === name).length,
    rounds_rps: s.rounds_rps,
  };
}

// ---------------------------------------------------------------------------------------------
// Output

function table(results) {
  const head = ["endpoint", "requests", "conc.", "req/s", "CPU ms/req", "p50 ms", "p95 ms", "p99 ms", "max ms", "errors"];
  const rows = results.map((r) => [
    r.endpoint,
    String(r.requests),
    String(r.concurrency),
    r.throughput_rps.toFixed(1),
    r.cpu_ms_per_request.toFixed(2),
    r.latency_ms.p50.toFixed(2),
    r.latency_ms.p95.toFixed(2),
    r.latency_ms.p99.toFixed(2),
    r.latency_ms.max.toFixed(2),
    String(r.errors),
  ]);
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ");
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

function report(result) {
  const { health, log, targets } = result;
  const ok = (b) => (b ? "MET" : "NOT MET");
  const lines = [
    "",
    `machine: ${result.machine.line}`,
    `date:    ${result.date}`,
    `server:  ${result.server}; load ${result.load.map((l) => l.join(" ")).join(" → ")}`,
    `run:     ${result.options.count} measured + ${result.options.warmup} warm-up requests per endpoint, concurrency ${result.options.concurrency}, ${result.options.rounds} alternating rounds`,
    "",
    table([health, log]),
    `req/s per round: health ${health.rounds_rps.join(" / ")}; log-request ${log.rounds_rps.join(" / ")}`,
    "",
    `log-request / health throughput: ${targets.ratio_pct.toFixed(1)} %; health CPU / log-request CPU per request: ${targets.cpu_ratio_pct.toFixed(1)} %`,
    `target: log-request throughput >= ${TARGET_RATIO * 100} % of health: ${ok(targets.throughput_met)} (${targets.ratio_pct.toFixed(1)} %)`,
    `target: log-request p99 <= ${TARGET_P99_MS} ms: ${ok(targets.p99_met)} (${log.latency_ms.p99.toFixed(2)} ms)`,
  ];
  if (result.options.concurrency !== TARGET_CONCURRENCY) {
    lines.push(`note: the targets are stated for concurrency ${TARGET_CONCURRENCY}; this run used ${result.options.concurrency}`);
  }
  if (result.errors.total > 0) {
    lines.push("", `ERRORS: ${result.errors.total} request(s) did not get the expected status`);
    for (const s of result.errors.samples) lines.push(`  ${s.endpoint}: status ${s.status} ${s.body}`);
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Main

async function main() {
  const opts = optionsOrExit(parseOptions);
  const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a);

  const underWrangler = process.env.BENCH_SERVER === "wrangler";
  const serverName = underWrangler ? "wrangler dev" : "bench server (Miniflare API, no inspector)";
  log(`Starting the local API (${serverName}, fresh local state)…`);
  const startedAt = performance.now();
  let api;
  try {
    api = underWrangler
      ? await startLocalApi({ workspace: "bench", email: "bench@localhost", wranglerArgs: (process.env.BENCH_WRANGLER_ARGS ?? "").split(" ").filter(Boolean) })
      : await startBenchApi({ workspace: "bench", email: "bench@localhost" });
  } catch (err) {
    console.error(`could not start the local API: ${err.message}`);
    return 2;
  }
  // The Worker's process: the one workerd of the bench server; under wrangler dev, every workerd it runs.
  cpuPids = underWrangler ? descendants(api.pid).filter((p) => exeOf(p).includes("workerd")) : [api.pid];
  const loadBefore = load();
  let stopping = null;
  const stop = () => (stopping ??= api.stop());
  const onSignal = (sig) => {
    console.error(`\n${sig}: stopping wrangler dev`);
    stop().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    log(`API up at ${api.url} (pid ${api.pid}; CPU of ${cpuPids.join(", ")}) in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
    const ep = endpoints(api.url, api.key);
    const errors = [];
    const { concurrency, count, warmup, rounds } = opts;

    if (warmup > 0) {
      log(`Warm-up: ${warmup} requests per endpoint…`);
      const warmErrors = [];
      await run(ep.health, { first: 0, count: warmup, concurrency }, warmErrors);
      await run(ep.log, { first: 0, count: warmup, concurrency }, warmErrors);
      if (warmErrors.length > 0) {
        errors.push(...warmErrors.map((e) => ({ ...e, endpoint: `${e.endpoint} (warm-up)` })));
        log(`warm-up: ${warmErrors.length} error(s), e.g. ${warmErrors[0].endpoint} status ${warmErrors[0].status} ${warmErrors[0].body}`);
      }
    }

    const parts = { health: [], log: [] };
    let first = warmup;
    for (let r = 0; r < rounds; r++) {
      const n = Math.floor(count / rounds) + (r < count % rounds ? 1 : 0);
      log(`Round ${r + 1}/${rounds}: ${n} × GET /health, then ${n} × POST /log-request, concurrency ${concurrency}…`);
      parts.health.push(await run(ep.health, { first, count: n, concurrency }, errors));
      parts.log.push(await run(ep.log, { first, count: n, concurrency }, errors));
      first += n;
    }

    const health = summary(ep.health.name, concurrency, parts.health, errors);
    const logRes = summary(ep.log.name, concurrency, parts.log, errors);
    const ratio = logRes.throughput_rps / health.throughput_rps;
    const result = {
      benchmark: "log-request",
      date: new Date().toISOString(),
      machine: machine(),
      server: serverName,
      load: [loadBefore, load()],
      options: { concurrency, count, warmup, rounds },
      health,
      log: logRes,
      targets: {
        ratio_pct: Math.round(ratio * 1000) / 10,
        cpu_ratio_pct: Math.round((health.cpu_ms_per_request / logRes.cpu_ms_per_request) * 1000) / 10,
        throughput_target_pct: TARGET_RATIO * 100,
        throughput_met: ratio >= TARGET_RATIO,
        p99_target_ms: TARGET_P99_MS,
        p99_met: logRes.latency_ms.p99 <= TARGET_P99_MS,
        stated_for_concurrency: TARGET_CONCURRENCY,
      },
      errors: { total: errors.length, samples: errors.slice(0, 5) },
    };
    if (opts.json) console.log(JSON.stringify(result));
    else console.log(report(result));
    if (opts.json && errors.length > 0) {
      console.error(`ERRORS: ${errors.length} request(s) did not get the expected status`);
      for (const s of result.errors.samples) console.error(`  ${s.endpoint}: status ${s.status} ${s.body}`);
    }
    return errors.length > 0 ? 1 : 0;
  } catch (err) {
    console.error(`benchmark failed: ${err.stack ?? err.message}`);
    console.error(`last server output:\n${api.logs().slice(-3000)}`);
    return 1;
  } finally {
    await stop();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

function exeOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/** Every process below pid (from /proc's parent links). */
function descendants(pid) {
  const parents = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone
    }
  }
  const out = [];
  const walk = (p) => {
    for (const [child, parent] of parents) if (parent === p) {
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

process.exitCode = await main();
