#!/usr/bin/env node
// npm run bench:search: request-log search and suggestions over a large local D1, on the bench server
// (workerd through Miniflare's API, no inspector: scripts/lib/bench-server.mjs).
// Seeds N request logs (default 1,000,000) with realistic cardinalities straight into the local D1
// (SQL generated in the database: a few hundred tags and metadata keys, thousands of values, 500
// prompts, 40 engines; kept under .bench/ for the next run), then measures p50/p95 of GET /suggestions for every field (with and without
// a prefix) and of POST /search for three representative filter groups, next to GET /health measured
// in the same run as the runtime's floor, each with the workerd process's CPU time per request.
// A measured run, never a timed test.
//
//   npm run bench:search [-- --logs 1000000 --samples 40 --searches-only --json]
//   env: BENCH_LOGS, BENCH_SAMPLES, BENCH_SEARCHES_ONLY=1, BENCH_JSON=1
//
// A fourth search, the nested OR with values no log carries, measures what a selective filter costs
// (the page plan a search uses depends on its matches). --searches-only skips the suggestions.
//
// Requests run one at a time (latency, not throughput). Suggestions are limited to 10 a minute per
// key, so the seed adds enough keys to the workspace for every measured call to use a fresh budget.
// Exit code: 0 when every request got 200 (targets met or not; they are reported), 1 otherwise,
// 2 on a usage or startup error.
import { performance } from "node:perf_hooks";
import { load, machine, optionsOrExit, parseArgs, percentile } from "./lib/bench.mjs";
import { cpuMs, startBenchApi } from "./lib/bench-server.mjs";
import { MATCHING_NOTHING, searchesFor, SUGGESTIONS } from "./lib/bench-requests.mjs";
import { BENCH_KEYS, BENCH_WORKSPACE, seededState } from "./lib/seeded-state.mjs";

const TARGET_SUGGEST_P95_MS = 25;
const TARGET_SEARCH_P95_MS = 150;

function parseOptions(argv, env) {
  return parseArgs(argv, env, {
    usage: "usage: npm run bench:search [-- --logs N --samples N --searches-only --json]",
    numbers: { logs: { env: "BENCH_LOGS", default: 1_000_000 }, samples: { env: "BENCH_SAMPLES", default: 40 } },
    flags: { json: "BENCH_JSON", "searches-only": "BENCH_SEARCHES_ONLY" },
  });
}

// ---------------------------------------------------------------------------------------------
// Measurements

let workerdPid;

async function timed(fn, samples) {
  const latencies = [];
  let failures = 0;
  let cpu = 0;
  for (let i = 0; i < samples; i++) {
    const c0 = cpuMs(workerdPid);
    const t0 = performance.now();
    const res = await fn(i);
    const body = await res.text();
    latencies.push(performance.now() - t0);
    cpu += cpuMs(workerdPid) - c0;
    if (res.status !== 200) {
      failures++;
      if (failures === 1) console.error(`  ${res.status}: ${body.slice(0, 300)}`);
    }
  }
  latencies.sort((a, b) => a - b);
  const r2 = (x) => Math.round(x * 100) / 100;
  return { p50: r2(percentile(latencies, 50)), p95: r2(percentile(latencies, 95)), cpu_ms_per_request: r2(cpu / samples), failures };
}

async function main() {
  const opts = optionsOrExit(parseOptions);
  const SEARCHES = { ...searchesFor(opts.logs), "nested OR matching nothing": MATCHING_NOTHING };
  const log = opts.json ? () => {} : (m) => console.log(m);
  if (Math.ceil((SUGGESTIONS.length * (opts.samples + 2)) / 10) > BENCH_KEYS) throw new Error(`--samples too large for the ${BENCH_KEYS} seeded keys`);
  const state = await seededState({ workspace: BENCH_WORKSPACE, logs: opts.logs, keyCount: BENCH_KEYS, log });
  const keys = state.keys;
  const api = await startBenchApi({ persistTo: state.persistTo, key: state.key });
  workerdPid = api.pid;
  const loads = [load()];
  let failed = 0;
  try {
    let keyIndex = 0;
    let keyUses = 0;
    // A fresh key every 10 calls: the rate limit is what it is; the benchmark measures the work.
    const nextKey = () => {
      if (keyUses++ === 10) {
        keyIndex++;
        keyUses = 1;
      }
      return keys[keyIndex];
    };
    const get = (path) => fetch(`${api.url}${path}`, { headers: { "X-API-KEY": nextKey() } });
    const post = (path, body) =>
      fetch(`${api.url}${path}`, { method: "POST", headers: { "X-API-KEY": api.key, "Content-Type": "application/json" }, body: JSON.stringify(body) });

    const results = { health: null, suggestions: [], search: [] };
    // Warm-up: the first requests compile the Worker and fill SQLite's page cache.
    for (let i = 0; i < 20; i++) await (await fetch(`${api.url}/health`)).text();
    const suggestions = opts["searches-only"] ? [] : SUGGESTIONS;
    for (const s of suggestions) await (await get(`/api/public/v2/requests/suggestions?${new URLSearchParams(s)}`)).text();
    for (const body of Object.values(SEARCHES)) await (await post("/api/public/v2/requests/search", body)).text();

    results.health = await timed(() => fetch(`${api.url}/health`), opts.samples);
    for (const s of suggestions) {
      const r = await timed(() => get(`/api/public/v2/requests/suggestions?${new URLSearchParams(s)}`), opts.samples);
      results.suggestions.push({ query: s, ...r });
      failed += r.failures;
      log(`  suggestions ${new URLSearchParams(s)}: p50 ${r.p50} ms, p95 ${r.p95} ms, CPU ${r.cpu_ms_per_request} ms/req`);
    }
    for (const [name, body] of Object.entries(SEARCHES)) {
      const r = await timed(() => post("/api/public/v2/requests/search", body), opts.samples);
      const total = (await (await post("/api/public/v2/requests/search", body)).json()).total;
      results.search.push({ name, total, ...r });
      failed += r.failures;
      log(`  search ${name} (${total} matches): p50 ${r.p50} ms, p95 ${r.p95} ms, CPU ${r.cpu_ms_per_request} ms/req`);
    }

    const worstSuggest = results.suggestions.length > 0 ? Math.max(...results.suggestions.map((s) => s.p95)) : null;
    const worstSearch = Math.max(...results.search.map((s) => s.p95));
    const summary = {
      machine: machine(),
      logs: opts.logs,
      samples: opts.samples,
      load: [...loads, load()],
      health: results.health,
      suggestions: results.suggestions,
      search: results.search,
      targets: {
        suggestions_p95_ms: { target: TARGET_SUGGEST_P95_MS, worst: worstSuggest, met: worstSuggest === null ? null : worstSuggest <= TARGET_SUGGEST_P95_MS },
        search_p95_ms: { target: TARGET_SEARCH_P95_MS, worst: worstSearch, met: worstSearch <= TARGET_SEARCH_P95_MS },
      },
    };
    if (opts.json) console.log(JSON.stringify(summary, null, 2));
    else {
      log(`\nmachine: ${summary.machine.line}`);
      log(`GET /health (floor): p50 ${results.health.p50} ms, p95 ${results.health.p95} ms, CPU ${results.health.cpu_ms_per_request} ms/req; load ${summary.load.map((l) => l.join(" ")).join(" → ")}`);
      log(`suggestions: worst p95 ${worstSuggest} ms (target ≤ ${TARGET_SUGGEST_P95_MS} ms: ${summary.targets.suggestions_p95_ms.met ? "met" : "NOT met"})`);
      log(`search: worst p95 ${worstSearch} ms (target ≤ ${TARGET_SEARCH_P95_MS} ms: ${summary.targets.search_p95_ms.met ? "met" : "NOT met"})`);
    }
  } finally {
    await api.stop();
  }
  process.exit(failed > 0 ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
