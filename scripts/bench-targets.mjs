#!/usr/bin/env node
// npm run bench:targets: the performance targets, as ratios to GET /health in one run, on a workspace
// of N seeded logs (default 1,000,000; the state is kept under .bench/ between runs). The Worker runs
// in workerd through Miniflare's API (scripts/lib/bench-server.mjs): no `wrangler dev`, no inspector.
// For every figure it reports the client's wall time and the CPU time the workerd process spent
// (utime + stime from /proc, per request), next to /health's, and the machine's load (`uptime`).
//
//   npm run bench:targets [-- --logs 1000000 --samples 40 --count 2000 --concurrency 16 --json]
//
// 1. Throughput, concurrency 16, rounds alternating GET /health and POST /log-request.
// 2. Latency, one request at a time, interleaved per sample: GET /health, GET /requests/{id},
//    suggestions (21 queries, rotating), the three searches of bench:search, and a cell edit.
// Targets: log-request ≥ 60 % of health's throughput; suggestions p95 ≤ 25 ms; search p95 ≤ 150 ms;
// cell edit p95 ≤ 2 × health's p95. Exit 0 when every request succeeded (targets met or not), 1
// otherwise, 2 on a usage or startup error. A measured run, never a timed test.
import { performance } from "node:perf_hooks";
import { cellId, drive, load, machine, optionsOrExit, parseArgs, percentile, summarise } from "./lib/bench.mjs";
import { cpuMs, startBenchApi } from "./lib/bench-server.mjs";
import { BENCH_KEYS, BENCH_WORKSPACE, seededState } from "./lib/seeded-state.mjs";
import { LOG_BODY, searchesFor, SUGGESTIONS } from "./lib/bench-requests.mjs";

const USAGE = "usage: npm run bench:targets [-- --logs N --samples N --count N --concurrency N --rounds N --json]";

function parseOptions(argv, env) {
  const o = parseArgs(argv, env, {
    usage: USAGE,
    numbers: {
      logs: { env: "BENCH_LOGS", default: 1_000_000 },
      samples: { env: "BENCH_SAMPLES", default: 40 },
      count: { env: "BENCH_COUNT", default: 2000 },
      concurrency: { env: "BENCH_CONCURRENCY", default: 16 },
      rounds: { default: 4 },
    },
    flags: { json: "BENCH_JSON" },
  });
  if (Math.ceil((SUGGESTIONS.length * (o.samples + 2)) / 10) > BENCH_KEYS) throw new Error(`--samples too large for the ${BENCH_KEYS} seeded keys`);
  return o;
}

const r2 = (x) => Math.round(x * 100) / 100;

function stats(wall, cpu) {
  const s = [...wall].sort((a, b) => a - b);
  return { n: s.length, p50_ms: r2(percentile(s, 50)), p95_ms: r2(percentile(s, 95)), cpu_ms_per_request: r2(cpu / s.length) };
}

async function main() {
  const opts = optionsOrExit(parseOptions);
  const SEARCHES = searchesFor(opts.logs);
  const log = (...a) => (opts.json ? console.error(...a) : console.log(...a));
  const state = await seededState({ workspace: BENCH_WORKSPACE, logs: opts.logs, keyCount: BENCH_KEYS, log });
  let api;
  try {
    api = await startBenchApi({ persistTo: state.persistTo, key: state.key });
  } catch (err) {
    console.error(`could not start the bench server: ${err.stack ?? err.message}`);
    process.exit(2);
  }
  log(`bench server ${api.url} (workerd pid ${api.pid}), ${opts.logs.toLocaleString("en-US")} logs`);
  let failures = 0;
  const fail = (what, status, text) => {
    if (failures++ < 5) console.error(`  ${what}: ${status} ${String(text).slice(0, 300)}`);
  };
  const headers = { "X-API-KEY": api.key, "Content-Type": "application/json" };
  const req = async (method, path, body, key = api.key) => {
    const res = await fetch(`${api.url}${path}`, { method, headers: { ...headers, "X-API-KEY": key }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) fail(`${method} ${path}`, res.status, text);
    return text ? JSON.parse(text) : null;
  };
  try {
    // ---- warm-up and the sheet for the cell edits (a 200-row CSV import)
    for (let i = 0; i < 30; i++) await (await fetch(`${api.url}/health`)).text();
    const table = (await req("POST", "/api/public/v2/tables", { title: "bench-targets", create_default_sheet: false })).table;
    let csv = "input,note\n";
    for (let i = 0; i < 200; i++) csv += `value ${i},note ${i}\n`;
    const imp = await req("POST", `/api/public/v2/tables/${table.id}/sheets`, { source: { type: "file", file_name: "b.csv", file_content_base64: Buffer.from(csv).toString("base64") } });
    for (;;) {
      const op = (await req("GET", `/api/public/v2/tables/${table.id}/sheets/operations/${imp.operation_id}`)).operation;
      if (op.status === "completed") break;
      if (op.status === "failed") throw new Error(`import failed: ${op.error_message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const base = `/api/public/v2/tables/${table.id}/sheets/${imp.sheet.id}`;
    const note = (await req("GET", `${base}/columns`)).data.find((c) => c.title === "note").id;

    // ---- 1. throughput at concurrency 16, alternating rounds, with workerd's CPU per request
    const cpuNow = () => cpuMs(api.pid);
    const run = (count, first, request, expect) =>
      drive({
        count,
        first,
        concurrency: opts.concurrency,
        cpu: cpuNow,
        send: async (i) => {
          const [url, init] = request(i);
          const res = await fetch(url, init);
          const text = await res.text();
          if (res.status !== expect) fail(url, res.status, text);
        },
      });
    const healthReq = () => [`${api.url}/health`, {}];
    const logReq = (i) => [`${api.url}/log-request`, { method: "POST", headers, body: LOG_BODY(i) }];
    await run(200, 0, healthReq, 200);
    await run(200, 0, logReq, 201);
    const load0 = load();
    const tp = { health: [], log: [] };
    let first = 200;
    for (let r = 0; r < opts.rounds; r++) {
      const n = Math.floor(opts.count / opts.rounds);
      tp.health.push(await run(n, first, healthReq, 200));
      tp.log.push(await run(n, first, logReq, 201));
      first += n;
    }
    const throughput = { health: summarise(tp.health), log_request: summarise(tp.log), load: [load0, load()] };
    throughput.ratio_pct = r2((throughput.log_request.rps / throughput.health.rps) * 100);
    throughput.cpu_ratio_pct = r2((throughput.health.cpu_ms_per_request / throughput.log_request.cpu_ms_per_request) * 100);
    log(`throughput (c=${opts.concurrency}): health ${throughput.health.rps} req/s (${throughput.health.cpu_ms_per_request} ms CPU/req), log-request ${throughput.log_request.rps} req/s (${throughput.log_request.cpu_ms_per_request} ms CPU/req): ${throughput.ratio_pct} % (CPU ${throughput.cpu_ratio_pct} %), load ${throughput.load.map((l) => l.join(" ")).join(" → ")}`);

    // ---- 2. latency, one at a time, interleaved per sample
    let keyIndex = 0;
    let keyUses = 0;
    const nextKey = () => {
      if (keyUses++ === 10) {
        keyIndex++;
        keyUses = 1;
      }
      return state.keys[keyIndex];
    };
    const someId = state.workspaceId ? Math.max(1, Math.floor(opts.logs / 2)) : 1;
    const kinds = {
      health: () => fetch(`${api.url}/health`),
      get_request: () => fetch(`${api.url}/api/public/v2/requests/${someId}`, { headers: { "X-API-KEY": api.key } }),
      suggestions: (i) => fetch(`${api.url}/api/public/v2/requests/suggestions?${new URLSearchParams(SUGGESTIONS[i % SUGGESTIONS.length])}`, { headers: { "X-API-KEY": nextKey() } }),
      ...Object.fromEntries(
        Object.entries(SEARCHES).map(([name, body], k) => [`search_${k + 1}`, () => fetch(`${api.url}/api/public/v2/requests/search`, { method: "POST", headers, body: JSON.stringify(body) })]),
      ),
      cell_edit: (i) => fetch(`${api.url}${base}/cells/${cellId(note, i % 200)}`, { method: "PATCH", headers, body: JSON.stringify({ display_value: `edited ${i}` }) }),
    };
    const wall = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
    const cpu = Object.fromEntries(Object.keys(kinds).map((k) => [k, 0]));
    // Suggestions rotate over 21 queries: their sample count is per query, so 21 × samples calls.
    const rounds = { suggestions: SUGGESTIONS.length };
    for (const k of Object.keys(kinds)) await (await kinds[k](0)).text(); // warm
    const load1 = load();
    for (let i = 0; i < opts.samples; i++) {
      for (const [k, fn] of Object.entries(kinds)) {
        for (let j = 0; j < (rounds[k] ?? 1); j++) {
          const n = i * (rounds[k] ?? 1) + j;
          const c0 = cpuMs(api.pid);
          const t0 = performance.now();
          const res = await fn(n);
          const text = await res.text();
          wall[k].push(performance.now() - t0);
          cpu[k] += cpuMs(api.pid) - c0;
          if (res.status !== 200) fail(k, res.status, text);
        }
      }
    }
    const latency = Object.fromEntries(Object.keys(kinds).map((k) => [k, stats(wall[k], cpu[k])]));
    latency.load = [load1, load()];
    for (const [k, s] of Object.entries(latency)) if (k !== "load") log(`  ${k.padEnd(12)} p50 ${s.p50_ms} ms, p95 ${s.p95_ms} ms, CPU ${s.cpu_ms_per_request} ms/req`);
    const totals = {};
    for (const [k, body] of Object.entries(SEARCHES).map(([n, b], i) => [`search_${i + 1}`, b])) {
      const r = await req("POST", "/api/public/v2/requests/search", body);
      totals[k] = { total: r.total, total_is_estimate: r.total_is_estimate };
    }
    const worstSearch = Math.max(latency.search_1.p95_ms, latency.search_2.p95_ms, latency.search_3.p95_ms);
    const targets = {
      log_request_throughput: { target: "≥ 60 % of health", value_pct: throughput.ratio_pct, met: throughput.ratio_pct >= 60 },
      suggestions_p95: { target: "≤ 25 ms", value_ms: latency.suggestions.p95_ms, met: latency.suggestions.p95_ms <= 25 },
      search_p95: { target: "≤ 150 ms", value_ms: worstSearch, met: worstSearch <= 150 },
      cell_edit_p95: { target: "≤ 2 × health p95", value_ms: latency.cell_edit.p95_ms, health_p95_ms: latency.health.p95_ms, met: latency.cell_edit.p95_ms <= 2 * latency.health.p95_ms },
    };
    const result = { date: new Date().toISOString(), machine: machine(), logs: opts.logs, options: opts, throughput, latency, search_totals: totals, targets, failures };
    if (opts.json) console.log(JSON.stringify(result, null, 2));
    else {
      for (const [k, t] of Object.entries(targets)) log(`target ${k} ${t.target}: ${t.met ? "met" : "NOT met"} (${t.value_pct ?? t.value_ms})`);
      log(`machine: ${result.machine.line}`);
    }
  } catch (err) {
    console.error(`bench failed: ${err.stack ?? err.message}\n${api.logs().slice(-2000)}`);
    failures++;
  } finally {
    await api.stop();
  }
  process.exit(failures > 0 ? 1 : 0);
}

main();
