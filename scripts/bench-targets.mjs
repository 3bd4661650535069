#!/usr/bin/env node
// npm run bench:targets: the performance targets, as ratios to GET /health in one run, on a workspace
// of N seeded logs (default 1,000,000; the state is kept under .bench/ between runs). The Worker runs
// in workerd through Miniflare's API (scripts/lib/bench-server.mjs): no `wrangler dev`, no inspector.
// For every figure it reports the client's wall time and the CPU time the workerd process spent
// (utime + stime from /proc, per request), next to /health's, and the machine's load (`uptime`).
//
//   npm run bench:targets [-- --logs 1000000 --samples 40 --count 2000 --concurrency 16 --template-samples 600 --publish-every 200 --json]
//
// 1. Throughput, concurrency 16, rounds alternating GET /health and POST /log-request.
// 2. Latency, one request at a time, interleaved per sample: GET /health, GET /requests/{id},
//    suggestions (21 queries, rotating), the three searches of bench:search, and a cell edit.
// 3. Template fetches, one at a time, each sample a GET /health then one fetch, rotating: the SDK's
//    POST of the latest version with input variables (run()'s default), the same by label, and a GET
//    pinned to a version; the template uses a snippet. Every --publish-every fetches a new version of
//    the template or of its snippet is published (untimed), so the edge cache sees purges as it would
//    in use. Reports p50/p95/p99 beside /health's and the hit ratio (X-PromptEdge-Cache).
// 4. A/B releases: the SDK's POST by a label a running release overloads (metadata_filters naming a
//    unit) beside the same POST by a label no release overloads and GET /health, interleaved
//    (scripts/lib/bench-releases.mjs). `--releases-only` runs this phase alone (on any --logs).
// Targets: log-request ≥ 60 % of health's throughput; suggestions p95 ≤ 25 ms; search p95 ≤ 150 ms;
// cell edit p95 ≤ 2 × health's p95; template fetch p99 ≤ 1.5 × health's p99 (phase 3); a fetch through
// a release p99 ≤ 1.2 × the plain label fetch's p99 (phase 4). Exit 0 when
// every request succeeded (targets met or not), 1 otherwise, 2 on a usage or startup error. A
// measured run, never a timed test.
import { performance } from "node:perf_hooks";
import { cellId, drive, load, machine, optionsOrExit, parseArgs, percentile, summarise } from "./lib/bench.mjs";
import { cpuMs, startBenchApi } from "./lib/bench-server.mjs";
import { BENCH_KEYS, BENCH_WORKSPACE, seededState } from "./lib/seeded-state.mjs";
import { LOG_BODY, searchesFor, SUGGESTIONS } from "./lib/bench-requests.mjs";
import { releasePhase } from "./lib/bench-releases.mjs";

const USAGE = "usage: npm run bench:targets [-- --logs N --samples N --count N --concurrency N --rounds N --template-samples N --publish-every N --release-samples N --releases-only --json]";

function parseOptions(argv, env) {
  const o = parseArgs(argv, env, {
    usage: USAGE,
    numbers: {
      logs: { env: "BENCH_LOGS", default: 1_000_000 },
      samples: { env: "BENCH_SAMPLES", default: 40 },
      count: { env: "BENCH_COUNT", default: 2000 },
      concurrency: { env: "BENCH_CONCURRENCY", default: 16 },
      rounds: { default: 4 },
      "template-samples": { env: "BENCH_TEMPLATE_SAMPLES", default: 600 },
      "publish-every": { env: "BENCH_PUBLISH_EVERY", default: 200 },
      "release-samples": { env: "BENCH_RELEASE_SAMPLES", default: 600 },
    },
    flags: { json: "BENCH_JSON", "releases-only": "BENCH_RELEASES_ONLY" },
  });
  if (Math.ceil((SUGGESTIONS.length * (o.samples + 2)) / 10) > BENCH_KEYS) throw new Error(`--samples too large for the ${BENCH_KEYS} seeded keys`);
  return o;
}

const r2 = (x) => Math.round(x * 100) / 100;

function stats(wall, cpu) {
  const s = [...wall].sort((a, b) => a - b);
  return { n: s.length, p50_ms: r2(percentile(s, 50)), p95_ms: r2(percentile(s, 95)), p99_ms: r2(percentile(s, 99)), cpu_ms_per_request: r2(cpu / s.length) };
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
    if (opts["releases-only"]) {
      const releases = await releasePhase(api, opts["release-samples"], req, fail);
      const target = releaseTarget(releases);
      const result = { date: new Date().toISOString(), machine: machine(), logs: opts.logs, options: opts, releases, targets: { release_fetch_p99: target }, failures };
      if (opts.json) console.log(JSON.stringify(result, null, 2));
      else reportReleases(log, opts, releases, target, result.machine);
      // The server stops in `finally`; the process then ends with this code.
      process.exitCode = failures > 0 ? 1 : 0;
      return;
    }
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
    // ---- 3. template fetches beside /health, with publishes between them
    const templates = await templatePhase(api, opts, req, fail);
    log(`templates (${opts["template-samples"]} samples, a publish every ${opts["publish-every"]} fetches), load ${templates.load.map((l) => l.join(" ")).join(" → ")}:`);
    for (const [k, st] of Object.entries(templates.latency)) log(`  ${k.padEnd(12)} p50 ${st.p50_ms} ms, p95 ${st.p95_ms} ms, p99 ${st.p99_ms} ms, CPU ${st.cpu_ms_per_request} ms/req`);
    log(`  answered: ${JSON.stringify(templates.states)}, hit ratio ${templates.hit_ratio_pct ?? "n/a"} %`);

    // ---- 4. a fetch through an A/B release beside a plain label fetch
    const releases = await releasePhase(api, opts["release-samples"], req, fail);
    reportReleases(log, opts, releases, null, null);

    const worstSearch = Math.max(latency.search_1.p95_ms, latency.search_2.p95_ms, latency.search_3.p95_ms);
    const targets = {
      log_request_throughput: { target: "≥ 60 % of health", value_pct: throughput.ratio_pct, met: throughput.ratio_pct >= 60 },
      suggestions_p95: { target: "≤ 25 ms", value_ms: latency.suggestions.p95_ms, met: latency.suggestions.p95_ms <= 25 },
      search_p95: { target: "≤ 150 ms", value_ms: worstSearch, met: worstSearch <= 150 },
      cell_edit_p95: { target: "≤ 2 × health p95", value_ms: latency.cell_edit.p95_ms, health_p95_ms: latency.health.p95_ms, met: latency.cell_edit.p95_ms <= 2 * latency.health.p95_ms },
      template_fetch_p99: {
        target: "≤ 1.5 × health p99",
        value_ms: templates.latency.fetch.p99_ms,
        health_p99_ms: templates.latency.health.p99_ms,
        met: templates.latency.fetch.p99_ms <= 1.5 * templates.latency.health.p99_ms,
      },
      release_fetch_p99: releaseTarget(releases),
    };
    const result = { date: new Date().toISOString(), machine: machine(), logs: opts.logs, options: opts, throughput, latency, templates, releases, search_totals: totals, targets, failures };
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

/** Phase 4's target: the release fetch's p99 within 1.2 × the plain label fetch's. */
function releaseTarget(releases) {
  const { release, plain_label: plain } = releases.latency;
  return { target: "≤ 1.2 × plain label fetch p99", value_ms: release.p99_ms, plain_label_p99_ms: plain.p99_ms, ratio: r2(release.p99_ms / plain.p99_ms), met: release.p99_ms <= 1.2 * plain.p99_ms };
}

function reportReleases(log, opts, releases, target, machineLine) {
  log(`releases (${opts["release-samples"]} samples each, variants served ${JSON.stringify(releases.variants)}), load ${releases.load.map((l) => l.join(" ")).join(" → ")}:`);
  for (const [k, st] of Object.entries(releases.latency)) log(`  ${k.padEnd(12)} p50 ${st.p50_ms} ms, p95 ${st.p95_ms} ms, p99 ${st.p99_ms} ms, CPU ${st.cpu_ms_per_request} ms/req`);
  if (target) log(`target release_fetch_p99 ${target.target}: ${target.met ? "met" : "NOT met"} (${target.value_ms} ms, ${target.ratio} ×)`);
  if (machineLine) log(`machine: ${machineLine.line}`);
}

/**
 * Phase 3: a template with a snippet and a release label, fetched one request at a time after a
 * GET /health each sample, rotating over the SDK's latest and label fetches and a pinned GET; a new
 * version of the template or of its snippet is published every `publish-every` fetches (untimed).
 */
async function templatePhase(api, opts, req, fail) {
  const chat = (text) => ({ type: "chat", messages: [{ role: "system", content: [{ type: "text", text }] }, { role: "user", content: [{ type: "text", text: "{question}" }] }] });
  const metadata = { model: { provider: "openai", name: "gpt-4o", parameters: { temperature: 0.2 } } };
  const name = `bench-support-${Date.now()}`;
  const snippet = `bench-policy-${Date.now()}`;
  let published = 0;
  const publish = async () => {
    const which = published++ % 2 === 0 ? name : snippet;
    const text = which === name ? `You answer support questions. @@@${snippet}@@@ (revision ${published})` : `Be brief and kind (revision ${published}).`;
    await req("POST", "/rest/prompt-templates", { prompt_template: { prompt_name: which }, prompt_version: { prompt_template: chat(text), metadata }, release_labels: ["prod"] });
  };
  await req("POST", "/rest/prompt-templates", { prompt_template: { prompt_name: snippet }, prompt_version: { prompt_template: chat("Be brief."), metadata } });
  await req("POST", "/rest/prompt-templates", { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat(`You answer support questions. @@@${snippet}@@@`), metadata }, release_labels: ["prod"] });
  const post = (body) => fetch(`${api.url}/prompt-templates/${name}`, { method: "POST", headers: { "X-API-KEY": api.key, "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const kinds = {
    sdk_latest: () => post({ input_variables: { question: "Where is my order?" } }),
    sdk_label: () => post({ label: "prod", input_variables: { question: "Can I get a refund?" } }),
    get_pinned: () => fetch(`${api.url}/prompt-templates/${name}?version=1`, { headers: { "X-API-KEY": api.key } }),
  };
  const names = Object.keys(kinds);
  for (let i = 0; i < 30; i++) {
    await (await fetch(`${api.url}/health`)).text();
    await (await kinds[names[i % names.length]]()).text();
  }
  // fetch: every fetch; hit: the fetches the edge cache answered (none before the cache existed).
  const wall = { health: [], fetch: [], hit: [], ...Object.fromEntries(names.map((k) => [k, []])) };
  const cpu = Object.fromEntries(Object.keys(wall).map((k) => [k, 0]));
  const states = {};
  const byKind = Object.fromEntries(names.map((k) => [k, { hit: 0, n: 0 }]));
  const count = (key, ms, used) => {
    wall[key].push(ms);
    cpu[key] += used;
  };
  const measure = async (k, fn) => {
    const c0 = cpuMs(api.pid);
    const t0 = performance.now();
    const res = await fn();
    const text = await res.text();
    const ms = performance.now() - t0;
    const used = cpuMs(api.pid) - c0;
    if (res.status !== 200) fail(`templates ${k}`, res.status, text);
    return { res, ms, used };
  };
  const load0 = load();
  for (let i = 0; i < opts["template-samples"]; i++) {
    if (i > 0 && i % opts["publish-every"] === 0) await publish();
    const health = await measure("health", () => fetch(`${api.url}/health`));
    count("health", health.ms, health.used);
    const k = names[i % names.length];
    const { res, ms, used } = await measure(k, kinds[k]);
    const state = res.headers.get("X-PromptEdge-Cache") ?? "none";
    for (const key of [k, "fetch", state === "hit" ? "hit" : null]) if (key) count(key, ms, used);
    states[state] = (states[state] ?? 0) + 1;
    byKind[k].n++;
    if (state === "hit") byKind[k].hit++;
  }
  const fetches = opts["template-samples"];
  const pct = (hit, n) => (states.none === fetches ? null : r2((hit / n) * 100));
  return {
    latency: Object.fromEntries(Object.keys(wall).filter((k) => wall[k].length > 0).map((k) => [k, stats(wall[k], cpu[k])])),
    states,
    hit_ratio_pct: pct(states.hit ?? 0, fetches),
    hit_ratio_by_kind_pct: Object.fromEntries(names.map((k) => [k, pct(byKind[k].hit, byKind[k].n)])),
    publishes: published,
    load: [load0, load()],
  };
}

main();
