#!/usr/bin/env node
// npm run bench:log: throughput and latency of POST /log-request against GET /health (the runtime's
// ceiling), both measured in the same run on the same local server (fresh local D1): by default the
// bench server (workerd through Miniflare's API, no inspector: scripts/lib/bench-server.mjs), with
// BENCH_SERVER=wrangler the `wrangler dev` of before, to see what the dev tooling costs. Each
// endpoint's figures include the CPU time the Worker's process spent per request (/proc).
// A measured run, never a timed test: the figures depend on the machine; compare log-request with the
// health baseline of the same run, not with figures from another machine or another day.
//
// A log's search rows are written after its answer (src/logs/indexing.ts), so the bench also reports
// what that costs and how soon a log can be found:
// - after each log-request round it waits until every log is indexed, and counts the workerd CPU from
//   the round's start to that moment: the CPU per log including the deferred work (and the time the
//   indexing ran on after the last answer);
// - every 20th log of a round carries a tag of its own (a probe); while the round runs and until every
//   probe is found, a search for the outstanding probes' tags is sent every 100 ms. A probe's
//   freshness is the time from its answer to the first search answer that holds it (an upper bound,
//   to the poll's resolution), under the round's sustained load.
//
// With --redaction, each round also sends its log-requests with a redaction policy of every detector
// on (PUT before them, DELETE after: the same workspace, database and isolate), and the report
// compares the two log-request throughputs (issue 40: within 20 %). --pii puts an e-mail, a phone
// number and a card number in every log's message, so the detectors find something in each.
//
//
// With --signals N (N > 0) a second workspace has N enabled signals judging every log (sample rate 1),
// with a fake judge on this machine (scripts/lib/fake-provider.mjs): each round then also sends its
// log-requests as that workspace, and the report sets its throughput beside the plain workspace's of
// the same rounds (judging is off the request path: they should be alike; every other round runs the
// signals workspace first), and counts judgements per
// second through the signals queue (each round's judgements, from its first log-request until the
// last of them is stored).
//
// With --signal-delay S as well, the signals are made with delay_seconds S: each round's judging starts
// S seconds after its logs are indexed, so it does not run beside that round's log-requests on this
// machine's 2 cores (on Cloudflare the signals queue's consumer runs in invocations of its own), and
// judgements per second are counted from the first judgement due (the round's first log-request plus
// S) until the last is stored. The report says when a round's log-requests outlasted S.
//
// With --signals it also reports the workerd CPU a judgement costs: the signals rounds' CPU per log
// from their first request until their last judgement stored, less the plain rounds' (request and
// indexing), per judgement; with --signal-delay, also the judging alone (from the round's logs
// indexed until its last judgement stored, in rounds that did not outlast the delay).
//
//   npm run bench:log [-- --concurrency 16 --count 2000 --warmup 200 --rounds 4 --signals 3 --signal-delay 30 --json --redaction --pii]
//   env: BENCH_CONCURRENCY, BENCH_COUNT, BENCH_WARMUP, BENCH_ROUNDS, BENCH_SIGNALS, BENCH_SIGNAL_DELAY, BENCH_JSON=1, BENCH_REDACTION=1, BENCH_PII=1,
//        BENCH_SERVER=wrangler (measure under `wrangler dev` instead), BENCH_WRANGLER_ARGS (its extra flags),
//        BENCH_TREE=<checkout> (run that checkout's Worker with this script: before/after comparisons)
//
// The measured requests of each endpoint are split into rounds that alternate health / log-request, so
// that both see the same conditions (noise on a shared machine, a growing database, a warm JIT).
// Exit code: 0 when every request got its expected status and every probe was found (targets met or
// not; they are reported), 1 when any request failed or a probe was never found, 2 on a usage or
// startup error.
import { performance } from "node:perf_hooks";
import { readdirSync, readFileSync } from "node:fs";
import { drive, load, machine, optionsOrExit, parseArgs, percentile, summarise, tree } from "./lib/bench.mjs";
import { cpuMs, startBenchApi, waitIndexed } from "./lib/bench-server.mjs";
import { logShardBindings } from "./lib/wrangler.mjs";
import { logBody } from "./lib/bench-requests.mjs";
import { startLocalApi } from "./lib/local-api.mjs";
import { createKey } from "./lib/keys.mjs";
import { FAKE_PROVIDER_KEY, startFakeProvider } from "./lib/fake-provider.mjs";

const TARGET_RATIO = 0.35; // log-request throughput >= 35 % of the health ceiling (issue 29)
const TARGET_FRESHNESS_P99_MS = 5_000; // a log found by search within 5 s of its answer, p99 (issue 29)
const TARGET_CONCURRENCY = 16; // the concurrency the targets are stated for
const PROBE_EVERY = 20; // every 20th log of a round is a probe
const POLL_MS = 100; // how often the outstanding probes are searched for
const PROBE_TIMEOUT_MS = 60_000; // a probe not found this long after the round is an error

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
      signals: { env: "BENCH_SIGNALS", default: 0, min: 0 },
      "signal-delay": { env: "BENCH_SIGNAL_DELAY", default: 0, min: 0 },
    },
    flags: { json: "BENCH_JSON", redaction: "BENCH_REDACTION", pii: "BENCH_PII" },
  });
  opts.rounds = Math.min(opts.rounds, opts.count);
  return opts;
}

const USAGE = `usage: npm run bench:log [-- --concurrency N] [--count N] [--warmup N] [--rounds N] [--json]
  --concurrency  requests in flight at once (default 16; env BENCH_CONCURRENCY)
  --count        measured requests per endpoint (default 2000; env BENCH_COUNT)
  --warmup       unmeasured requests per endpoint first (default 200; env BENCH_WARMUP)
  --rounds       alternating health/log-request rounds the count is split into (default 4; env BENCH_ROUNDS)
  --signals      also log as a workspace with this many enabled signals judging every log (default 0; env BENCH_SIGNALS)
  --signal-delay the signals' delay_seconds: judging starts that long after a round's logs (default 0; env BENCH_SIGNAL_DELAY)
  --json         print the results as one JSON object (env BENCH_JSON=1)
  --redaction    also measure log-request under a redaction policy of every detector (env BENCH_REDACTION=1)
  --pii          an e-mail, a phone number and a card number in every log's message (env BENCH_PII=1)`;

/** Every detector on: e-mail hashed, the rest masked (what --redaction measures). */
const EVERY_DETECTOR = {
  detectors: [
    { type: "email", action: "hash" },
    ...["phone", "payment_card", "iban", "ip_address", "national_id", "credential"].map((type) => ({ type, action: "mask" })),
  ],
};
/** Index offset of the redacted variant's bodies: never the same bytes as the plain one's (a retry would log nothing). */
const REDACTED_FROM = 10_000_000;

// ---------------------------------------------------------------------------------------------
// Requests

/** The tag that makes log i of this run a probe, or null. */
const probeTag = (run, i) => (i % PROBE_EVERY === 0 ? `probe-${run}-${i}` : null);

function endpoints(url, key, run, pii, signalsKey) {
  const eps = {
    health: {
      name: "GET /health",
      expect: 200,
      request: () => [`${url}/health`, { method: "GET" }],
    },
    log: {
      name: "POST /log-request",
      expect: 201,
      request: (i) => {
        const probe = probeTag(run, i);
        let body = logBody(i);
        if (probe || pii) {
          const b = JSON.parse(body);
          if (pii) b.input.messages[1].content[0].text += ` Reply to user${i}@example.com or +44 20 7946 0958; card 4111 1111 1111 1111.`;
          body = JSON.stringify({ ...b, tags: probe ? [...b.tags, probe] : b.tags });
        }
        return [`${url}/log-request`, { method: "POST", headers: { "X-API-KEY": key, "Content-Type": "application/json" }, body }];
      },
      probe: (i) => probeTag(run, i),
    },
  };
  if (signalsKey) {
    eps.signals = {
      ...eps.log,
      name: "POST /log-request (signals)",
      request: (i) => {
        const [target, init] = eps.log.request(i);
        return [target, { ...init, headers: { ...init.headers, "X-API-KEY": signalsKey } }];
      },
      // The plain log's tags, searched for with this workspace's key.
    };
  }
  return eps;
}

/**
 * Judgements made so far (results counted in the signals' daily totals, and those the budget skipped),
 * read from the databases through Miniflare: a poll costs the Worker a few small queries, not an API
 * request (its CPU counts in the signals rounds' figures).
 */
async function judgementsMade(mf) {
  let n = 0;
  for (const binding of ["DB", ...logShardBindings()]) {
    const d1 = await mf.getD1Database(binding);
    n += (await d1.prepare("SELECT coalesce(sum(true_count + false_count + error_count), 0) AS n FROM signal_daily").first()).n;
  }
  return n + (await (await mf.getD1Database("DB")).prepare("SELECT coalesce(sum(skipped), 0) AS n FROM signal_spend").first()).n;
}

/** Waits until `expected` judgements are made; answers the ms it waited. */
async function waitJudged(mf, expected, timeoutMs = 300_000) {
  const t0 = performance.now();
  while ((await judgementsMade(mf)) < expected) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`judgements still owed after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return performance.now() - t0;
}

/**
 * Searches for the outstanding probes (tag → answer time) every POLL_MS until stop() and none is left;
 * a probe's freshness is its first search answer's arrival less its answer.
 */
function prober(url, key, errors) {
  const outstanding = new Map();
  const freshness = [];
  let stopping = false;
  let stopped;
  const done = new Promise((resolve) => (stopped = resolve));
  const poll = async () => {
    const tags = [...outstanding.keys()].slice(0, 100);
    if (tags.length > 0) {
      try {
        const res = await fetch(`${url}/api/public/v2/requests/search`, {
          method: "POST",
          headers: { "X-API-KEY": key, "Content-Type": "application/json" },
          body: JSON.stringify({ filter_group: { logic: "AND", filters: [{ field: "tags", operator: "in", value: tags }] }, per_page: 100 }),
        });
        const got = await res.json();
        const at = performance.now();
        if (res.status !== 200) errors.push({ endpoint: "search (probes)", status: res.status, body: JSON.stringify(got).slice(0, 300) });
        for (const item of got.items ?? []) {
          for (const tag of item.tags_array ?? []) {
            if (!outstanding.has(tag)) continue;
            freshness.push(at - outstanding.get(tag));
            outstanding.delete(tag);
          }
        }
      } catch (err) {
        errors.push({ endpoint: "search (probes)", status: 0, body: String(err?.message ?? err) });
      }
    }
    if (stopping && outstanding.size === 0) stopped();
    else setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, POLL_MS);
  return {
    answered: (tag) => outstanding.set(tag, performance.now()),
    freshness,
    /** Resolves once every probe answered so far is found (or the timeout has passed: then they are errors). */
    async stop() {
      stopping = true;
      const timeout = setTimeout(() => {
        for (const tag of outstanding.keys()) errors.push({ endpoint: "search (probes)", status: 0, body: `probe ${tag} not found ${PROBE_TIMEOUT_MS} ms after its round` });
        outstanding.clear();
      }, PROBE_TIMEOUT_MS);
      await done;
      clearTimeout(timeout);
    },
  };
}

let cpuPids = [];
const cpuNow = () => cpuPids.reduce((sum, pid) => sum + cpuMs(pid), 0);

/** Sends `count` requests with `concurrency` in flight; index i runs from `first`. Latency runs to the end of the body. */
function run(endpoint, { first, count, concurrency, probes }, errors) {
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
    else if (probes && endpoint.probe?.(i)) probes.answered(endpoint.probe(i));
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

const fmt = (x, digits = 0) => (x === null || x === undefined ? "–" : Number(x).toFixed(digits));

function report(result) {
  const { health, log, indexing, freshness, targets, signals } = result;
  const ok = (b) => (b ? "MET" : "NOT MET");
  const lines = [
    "",
    `machine: ${result.machine.line}`,
    `date:    ${result.date}`,
    `server:  ${result.server}; load ${result.load.map((l) => l.join(" ")).join(" → ")}`,
    `tree:    ${result.tree}`,
    `run:     ${result.options.count} measured + ${result.options.warmup} warm-up requests per endpoint, concurrency ${result.options.concurrency}, ${result.options.rounds} alternating rounds`,
    "",
    table([health, log, ...(signals ? [signals.log] : []), ...(result.redacted ? [result.redacted] : [])]),
    `req/s per round: health ${health.rounds_rps.join(" / ")}; log-request ${log.rounds_rps.join(" / ")}${signals ? `; with signals ${signals.log.rounds_rps.join(" / ")}` : ""}${result.redacted ? `; with every detector on ${result.redacted.rounds_rps.join(" / ")}` : ""}`,
    ...(result.redaction
      ? [
          `redaction (every detector on${result.options.pii ? ", personal data in every log" : ""}): ${result.redaction.throughput_pct_of_plain.toFixed(1)} % of log-request's throughput without a policy, ` +
            `+${result.redaction.cpu_ms_per_request_added.toFixed(2)} ms CPU per log; target >= ${result.redaction.target_pct} %: ${ok(result.redaction.met)}`,
        ]
      : []),
    "",
    `indexing: workerd CPU per log ${fmt(indexing.cpu_ms_per_log_with_indexing, 2)} ms including its deferred work (${fmt(log.cpu_ms_per_request, 2)} ms while the rounds ran); ` +
      `indexed ${indexing.drain_ms.map((x) => fmt(x)).join(" / ")} ms after each round's last answer; ${fmt(indexing.logs_per_s_with_indexing, 1)} logs/s counting that time`,
    `freshness (answer → first found by search; ${freshness.samples} probes, polled every ${POLL_MS} ms): p50 ${fmt(freshness.p50_ms)} ms, p95 ${fmt(freshness.p95_ms)} ms, p99 ${fmt(freshness.p99_ms)} ms, max ${fmt(freshness.max_ms)} ms`,
    "",
    `log-request / health throughput: ${targets.ratio_pct.toFixed(1)} %; health CPU / log-request CPU per request: ${targets.cpu_ratio_pct.toFixed(1)} %`,
    `target: log-request throughput >= ${TARGET_RATIO * 100} % of health: ${ok(targets.throughput_met)} (${targets.ratio_pct.toFixed(1)} %)`,
    `target: freshness p99 <= ${TARGET_FRESHNESS_P99_MS} ms: ${ok(targets.freshness_met)} (${fmt(freshness.p99_ms)} ms)`,
    `(the third target, CPU per log below the tree before, compares runs: BENCHMARKS.md)`,
  ];
  if (signals) {
    lines.push(
      "",
      `signals: ${signals.count} enabled, sample rate 1, delay ${signals.delay_s} s${signals.rounds_outlasting_delay.length > 0 ? ` (rounds ${signals.rounds_outlasting_delay.join(", ")} outlasted it)` : ""}, fake judge on this machine; log-request as that workspace ${signals.log.throughput_rps.toFixed(1)} req/s against ${log.throughput_rps.toFixed(1)} without (${signals.ratio_pct.toFixed(1)} %)`,
      `per round (signals / without): ${signals.round_ratios_pct.map((x) => `${x.toFixed(1)} %`).join(" / ")}, median ${signals.round_ratio_median_pct.toFixed(1)} % (even rounds ran the signals workspace first)`,
      `target: log-request with signals within 10 % of without: ${ok(signals.within_10_pct)}; its logs found by search within ${fmt(signals.freshness_p99_ms)} ms (p99)`,
      `workerd CPU per log with everything it caused: ${fmt(signals.cpu_ms_per_log_with_judging, 2)} ms with ${signals.count} signals (its judgements included) against ${fmt(indexing.cpu_ms_per_log_with_indexing, 2)} ms without: ${fmt(signals.cpu_ms_per_judgement, 2)} ms per judgement` +
        (signals.judging_cpu_ms_per_judgement !== null ? `; the judging alone (from the round's logs indexed): ${fmt(signals.judging_cpu_ms_per_judgement, 2)} ms per judgement` : ""),
      `CPU per log-request while the rounds ran: ${fmt(signals.log.cpu_ms_per_request, 2)} ms with signals, ${fmt(log.cpu_ms_per_request, 2)} ms without`,
      `judgements through the signals queue: ${signals.judgements} in all, ${fmt(signals.judgements_per_s, 1)} per second (each round from its first log-request${signals.delay_s > 0 ? " plus the delay" : ""} until its last judgement stored; rounds ${signals.rounds_per_s.map((x) => fmt(x, 1)).join(" / ")})`,
    );
  }
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
  // The judge of --signals: a fake provider on this machine, the Worker's OpenAI provider pointed at it.
  const judge = opts.signals > 0 ? await startFakeProvider() : null;
  let signalsKey = null;
  try {
    if (judge && underWrangler) throw new Error("--signals runs on the bench server only (not BENCH_SERVER=wrangler)");
    api = underWrangler
      ? await startLocalApi({ workspace: "bench", email: "bench@localhost", wranglerArgs: (process.env.BENCH_WRANGLER_ARGS ?? "").split(" ").filter(Boolean) })
      : await startBenchApi({
          workspace: "bench",
          email: "bench@localhost",
          vars: judge ? { OPENAI_API_KEY: FAKE_PROVIDER_KEY, OPENAI_BASE_URL: judge.baseUrl } : {},
          prepare: judge ? async (persistTo) => void (signalsKey = createKey({ workspace: "bench-signals", email: "bench@localhost", persistTo })) : undefined,
        });
  } catch (err) {
    console.error(`could not start the local API: ${err.message}`);
    await judge?.stop();
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
    const ep = endpoints(api.url, api.key, Date.now().toString(36), opts.pii, signalsKey);
    if (signalsKey) {
      for (let n = 0; n < opts.signals; n++) {
        const res = await fetch(`${api.url}/api/public/v2/signals`, {
          method: "POST",
          headers: { "X-API-KEY": signalsKey, "Content-Type": "application/json" },
          body: JSON.stringify({
            name: `bench signal ${n + 1}`,
            statement: `Does the answer mention refunds? (${n + 1})`,
            enabled: true,
            delay_seconds: opts["signal-delay"],
            hooks: [{ scope: "all", sample_rate: 1 }],
          }),
        });
        if (res.status !== 201) throw new Error(`could not create a signal: ${res.status} ${await res.text()}`);
      }
      log(`${opts.signals} signals enabled in the second workspace (sample rate 1, delay ${opts["signal-delay"]} s)`);
    }
    const policy = (method) =>
      fetch(`${api.url}/api/public/v2/redaction-policy`, {
        method,
        headers: { "X-API-KEY": api.key, "Content-Type": "application/json" },
        body: method === "PUT" ? JSON.stringify(EVERY_DETECTOR) : undefined,
      }).then(async (res) => {
        if (res.status !== 200) throw new Error(`${method} redaction-policy answered ${res.status}: ${await res.text()}`);
      });
    const redacted = { ...ep.log, name: "POST /log-request (every detector on)" };
    const errors = [];
    const { concurrency, count, warmup, rounds } = opts;
    // Under wrangler dev the bench cannot see the databases: no wait for indexing, no CPU figure with it.
    const indexed = underWrangler ? async () => null : () => waitIndexed(api.mf);

    if (warmup > 0) {
      log(`Warm-up: ${warmup} requests per endpoint…`);
      const warmErrors = [];
      await run(ep.health, { first: 0, count: warmup, concurrency }, warmErrors);
      await run(ep.log, { first: 0, count: warmup, concurrency }, warmErrors);
      if (ep.signals) await run(ep.signals, { first: 0, count: warmup, concurrency }, warmErrors);
      if (opts.redaction) {
        await policy("PUT");
        await run(redacted, { first: REDACTED_FROM, count: warmup, concurrency }, warmErrors);
        await policy("DELETE");
      }
      await indexed();
      if (ep.signals) await waitJudged(api.mf, warmup * opts.signals);
      if (warmErrors.length > 0) {
        errors.push(...warmErrors.map((e) => ({ ...e, endpoint: `${e.endpoint} (warm-up)` })));
        log(`warm-up: ${warmErrors.length} error(s), e.g. ${warmErrors[0].endpoint} status ${warmErrors[0].status} ${warmErrors[0].body}`);
      }
    }

    const parts = { health: [], log: [], signals: [], redacted: [] };
    const judgeRates = [];
    const delayMs = opts["signal-delay"] * 1000;
    const outlasted = [];
    const signalsFreshness = [];
    // workerd CPU of the signals rounds from their first request until their last judgement stored, and
    // (with a delay) of the judging alone: from the round's logs indexed until its last judgement stored.
    let cpuSignalsWithJudging = 0;
    const judgingCpuPerJudgement = [];
    const drains = [];
    const freshness = [];
    let cpuWithIndexing = 0;
    let first = warmup;
    for (let r = 0; r < rounds; r++) {
      const n = Math.floor(count / rounds) + (r < count % rounds ? 1 : 0);
      log(`Round ${r + 1}/${rounds}: ${n} × GET /health, then ${n} × POST /log-request, concurrency ${concurrency}…`);
      parts.health.push(await run(ep.health, { first, count: n, concurrency }, errors));
      const plainRound = async () => {
        const cpu0 = cpuNow();
        const probes = prober(api.url, api.key, errors);
        parts.log.push(await run(ep.log, { first, count: n, concurrency, probes }, errors));
        drains.push(await indexed());
        await probes.stop();
        cpuWithIndexing += cpuNow() - cpu0;
        freshness.push(...probes.freshness);
      };
      const signalsRound = async () => {
        log(`Round ${r + 1}/${rounds}: ${n} × POST /log-request as the workspace with ${opts.signals} signals…`);
        const t0 = performance.now();
        const cpu0 = cpuNow();
        // The same search probes as the plain round: both sides carry that load, and its freshness is reported.
        const probes = prober(api.url, signalsKey, errors);
        const part = await run(ep.signals, { first, count: n, concurrency, probes }, errors);
        parts.signals.push(part);
        const overlapped = delayMs > 0 && performance.now() - t0 > delayMs;
        if (overlapped) outlasted.push(r + 1);
        // With a delay, the judging has not started yet: its CPU is what the round costs from its logs indexed on.
        let judging0 = null;
        if (delayMs > 0 && !overlapped && (await indexed()) !== null && performance.now() - t0 < delayMs) judging0 = cpuNow();
        await waitJudged(api.mf, (first + n) * opts.signals, 300_000 + delayMs);
        judgeRates.push((n * opts.signals) / ((performance.now() - t0 - delayMs) / 1000));
        const cpu1 = cpuNow();
        cpuSignalsWithJudging += cpu1 - cpu0;
        if (judging0 !== null) judgingCpuPerJudgement.push((cpu1 - judging0) / (n * opts.signals));
        await probes.stop();
        signalsFreshness.push(...probes.freshness);
      };
      // With signals, every other round runs them first: neither side always follows the other's leftovers.
      if (ep.signals && r % 2 === 1) {
        await signalsRound();
        await plainRound();
      } else {
        await plainRound();
        if (ep.signals) await signalsRound();
      }
      if (opts.redaction) {
        log(`Round ${r + 1}/${rounds}: ${n} × POST /log-request with every redaction detector on…`);
        await policy("PUT");
        parts.redacted.push(await run(redacted, { first: REDACTED_FROM + first, count: n, concurrency }, errors));
        await policy("DELETE");
        await indexed();
      }
      first += n;
    }

    const health = summary(ep.health.name, concurrency, parts.health, errors);
    const logRes = summary(ep.log.name, concurrency, parts.log, errors);
    const ratio = logRes.throughput_rps / health.throughput_rps;
    const redactedRes = opts.redaction ? summary(redacted.name, concurrency, parts.redacted, errors) : null;
    const fresh = [...freshness].sort((a, b) => a - b);
    const ms = (x) => (Number.isFinite(x) ? Math.round(x) : null);
    const drained = drains.every((d) => d !== null);
    const indexing = {
      cpu_ms_per_log_with_indexing: drained ? Math.round((cpuWithIndexing / logRes.requests) * 100) / 100 : null,
      drain_ms: drains.map(ms),
      logs_per_s_with_indexing: drained ? Math.round((logRes.requests / ((logRes.elapsed_ms + drains.reduce((a, b) => a + b, 0)) / 1000)) * 10) / 10 : null,
    };
    const freshnessSummary = {
      samples: fresh.length,
      poll_ms: POLL_MS,
      p50_ms: ms(percentile(fresh, 50)),
      p95_ms: ms(percentile(fresh, 95)),
      p99_ms: ms(percentile(fresh, 99)),
      max_ms: ms(fresh[fresh.length - 1]),
    };
    const result = {
      benchmark: "log-request",
      date: new Date().toISOString(),
      machine: machine(),
      server: serverName,
      tree: tree(),
      load: [loadBefore, load()],
      options: { concurrency, count, warmup, rounds, signals: opts.signals, signal_delay_s: opts["signal-delay"], redaction: Boolean(opts.redaction), pii: Boolean(opts.pii) },
      health,
      log: logRes,
      ...(redactedRes
        ? {
            redacted: redactedRes,
            redaction: {
              throughput_pct_of_plain: Math.round((redactedRes.throughput_rps / logRes.throughput_rps) * 1000) / 10,
              cpu_ms_per_request_added: Math.round((redactedRes.cpu_ms_per_request - logRes.cpu_ms_per_request) * 100) / 100,
              target_pct: 80,
              met: redactedRes.throughput_rps >= 0.8 * logRes.throughput_rps,
            },
          }
        : {}),
      indexing,
      freshness: freshnessSummary,
      targets: {
        ratio_pct: Math.round(ratio * 1000) / 10,
        cpu_ratio_pct: Math.round((health.cpu_ms_per_request / logRes.cpu_ms_per_request) * 1000) / 10,
        throughput_target_pct: TARGET_RATIO * 100,
        throughput_met: ratio >= TARGET_RATIO,
        freshness_p99_target_ms: TARGET_FRESHNESS_P99_MS,
        freshness_met: freshnessSummary.p99_ms !== null && freshnessSummary.p99_ms <= TARGET_FRESHNESS_P99_MS,
        stated_for_concurrency: TARGET_CONCURRENCY,
      },
      errors: { total: errors.length, samples: errors.slice(0, 5) },
    };
    if (ep.signals) {
      const withSignals = summary(ep.signals.name, concurrency, parts.signals, errors);
      const judged = (count / rounds) * opts.signals;
      result.signals = {
        count: opts.signals,
        delay_s: opts["signal-delay"],
        // Rounds whose log-requests outlasted the delay: their judging overlapped their requests.
        rounds_outlasting_delay: outlasted,
        log: withSignals,
        ratio_pct: Math.round((withSignals.throughput_rps / logRes.throughput_rps) * 1000) / 10,
        // Per round (the two sides of a round ran back to back): less exposed to the machine's swings than the totals.
        round_ratios_pct: withSignals.rounds_rps.map((x, i) => Math.round((x / logRes.rounds_rps[i]) * 1000) / 10),
        round_ratio_median_pct: Math.round(percentile(withSignals.rounds_rps.map((x, i) => (x / logRes.rounds_rps[i]) * 100).sort((a, b) => a - b), 50) * 10) / 10,
        within_10_pct: withSignals.throughput_rps >= 0.9 * logRes.throughput_rps,
        judgements: count * opts.signals,
        judgements_per_s: Math.round((judgeRates.reduce((a, b) => a + b, 0) / judgeRates.length) * 10) / 10,
        rounds_per_s: judgeRates.map((x) => Math.round(x * 10) / 10),
        judged_per_round: judged,
        // workerd CPU per log of the signals rounds with everything they caused (the write, indexing and
        // matching, the judgements); beside the plain rounds' (indexing.cpu_ms_per_log_with_indexing), the
        // difference per judgement is what a judgement costs, matching included.
        cpu_ms_per_log_with_judging: Math.round((cpuSignalsWithJudging / withSignals.requests) * 100) / 100,
        cpu_ms_per_judgement: drained ? Math.round(((cpuSignalsWithJudging - cpuWithIndexing) / withSignals.requests / opts.signals) * 100) / 100 : null,
        // With a delay: the judging alone, measured from the round's logs indexed (rounds that did not outlast the delay).
        judging_cpu_ms_per_judgement: judgingCpuPerJudgement.length > 0 ? Math.round((judgingCpuPerJudgement.reduce((a, b) => a + b, 0) / judgingCpuPerJudgement.length) * 100) / 100 : null,
        freshness_p99_ms: Math.round(percentile([...signalsFreshness].sort((a, b) => a - b), 99)) || null,
      };
    }
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
    await judge?.stop();
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
