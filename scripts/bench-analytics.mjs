#!/usr/bin/env node
// npm run bench:analytics: request analytics over a large local D1, on the bench server (the Worker
// in workerd through Miniflare, no inspector). Uses the seeded state the other benchmarks share
// (N request logs, default 1,000,000, one every 30 s, so a 30-day window holds about 86,000; the
// daily-totals trigger counts them as POST /log-request would), then measures p50/p95 and the
// Worker process's CPU per request of POST /requests/analytics and /custom-analytics for 30-day
// windows, next to GET /health in the same run. A measured run, never a timed test.
//
//   npm run bench:analytics [-- --logs 1000000 --samples 30 --json]
//
// Exit code: 0 when every request got 200 (targets met or not; they are reported), 1 otherwise,
// 2 on a usage or startup error.
import { performance } from "node:perf_hooks";
import { load, machine, optionsOrExit, parseArgs, percentile } from "./lib/bench.mjs";
import { cpuMs, startBenchApi } from "./lib/bench-server.mjs";
import { START_MS } from "./lib/seed-logs.mjs";
import { BENCH_KEYS, BENCH_WORKSPACE, seededState } from "./lib/seeded-state.mjs";

const TARGET_P95_MS = 250;
const DAY = 86_400_000;

function parseOptions(argv, env) {
  return parseArgs(argv, env, {
    usage: "usage: npm run bench:analytics [-- --logs N --samples N --json]",
    numbers: { logs: { env: "BENCH_LOGS", default: 1_000_000 }, samples: { env: "BENCH_SAMPLES", default: 30 } },
    flags: { json: "BENCH_JSON" },
  });
}

/** A 30-day window ending at the newest seeded log, bounds not on hour boundaries (so the edges are read too). */
function window(logs) {
  const end = START_MS + logs * 30_000 - 17 * 60_000;
  const start = end - 30 * DAY;
  return { field: "request_start_time", operator: "between", value: [new Date(start).toISOString(), new Date(end).toISOString()] };
}

let workerdPid;

async function timed(fn, samples) {
  const latencies = [];
  let failures = 0;
  const cpu0 = cpuMs(workerdPid);
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const res = await fn();
    const body = await res.text();
    latencies.push(performance.now() - t0);
    if (res.status !== 200 && ++failures === 1) console.error(`  ${res.status}: ${body.slice(0, 300)}`);
  }
  latencies.sort((a, b) => a - b);
  const r2 = (x) => Math.round(x * 100) / 100;
  return { p50: r2(percentile(latencies, 50)), p95: r2(percentile(latencies, 95)), cpu_ms_per_request: r2((cpuMs(workerdPid) - cpu0) / samples), failures };
}

async function main() {
  const opts = optionsOrExit(parseOptions);
  const log = opts.json ? () => {} : (m) => console.log(m);
  const state = await seededState({ workspace: BENCH_WORKSPACE, logs: opts.logs, keyCount: BENCH_KEYS, log });
  const api = await startBenchApi({ persistTo: state.persistTo, key: state.key });
  workerdPid = api.pid;
  const loads = [load()];
  const range = window(opts.logs);
  const QUERIES = {
    "30-day daily series grouped by model (analytics)": ["/api/public/v2/requests/analytics", { filter_group: { logic: "AND", filters: [range] } }],
    "30 days, two engines (analytics, read from the logs; no target)": ["/api/public/v2/requests/analytics", { filter_group: { logic: "AND", filters: [range, { field: "engine", operator: "in", value: ["model-3", "model-17"] }] } }],
    "30 days, cost by model per day and p95 latency (custom; no target)": [
      "/api/public/v2/requests/analytics/custom-analytics",
      {
        filter_group: { logic: "AND", filters: [range] },
        customCharts: [
          { id: "cost", chartType: "line", metric: "sum", metricField: "cost", groupByField: "engine", timeSeries: true, limit: 10 },
          { id: "p95", chartType: "line", metric: "percentile", percentile: 95, metricField: "latency_ms", timeSeries: true },
        ],
      },
    ],
    "30 days with a tag filter (read from the logs; no target)": [
      "/api/public/v2/requests/analytics",
      { filter_group: { logic: "AND", filters: [range, { field: "tags", operator: "contains", value: "tag-42" }] } },
    ],
  };
  let failed = 0;
  try {
    const post = (path, body) => fetch(`${api.url}${path}`, { method: "POST", headers: { "X-API-KEY": api.key, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    for (let i = 0; i < 20; i++) await (await fetch(`${api.url}/health`)).text();
    for (const [path, body] of Object.values(QUERIES)) await (await post(path, body)).text();
    const health = await timed(() => fetch(`${api.url}/health`), opts.samples);
    const results = [];
    for (const [name, [path, body]] of Object.entries(QUERIES)) {
      const r = await timed(() => post(path, body), opts.samples);
      failed += r.failures;
      results.push({ name, ...r });
      log(`  ${name}: p50 ${r.p50} ms, p95 ${r.p95} ms, CPU ${r.cpu_ms_per_request} ms/req`);
    }
    // The target is the issue's: a 30-day daily series grouped by model.
    const targeted = results.slice(0, 1);
    const worst = Math.max(...targeted.map((r) => r.p95));
    loads.push(load());
    const summary = { machine: machine(), load: loads, logs: opts.logs, samples: opts.samples, health, results, target: { p95_ms: TARGET_P95_MS, worst, met: worst <= TARGET_P95_MS } };
    if (opts.json) console.log(JSON.stringify(summary, null, 2));
    else {
      log(`\nmachine: ${summary.machine.line}`);
      log(`load: ${loads.join(" → ")}`);
      log(`GET /health (floor): p50 ${health.p50} ms, p95 ${health.p95} ms, CPU ${health.cpu_ms_per_request} ms/req`);
      log(`analytics: worst p95 ${worst} ms for the 30-day daily series grouped by model (target ≤ ${TARGET_P95_MS} ms: ${summary.target.met ? "met" : "NOT met"})`);
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
