#!/usr/bin/env node
// npm run bench:traces: OTLP/HTTP trace ingestion (POST /v1/traces, protobuf) against GET /health in
// the same run, on the bench server (workerd through Miniflare's API, no inspector:
// scripts/lib/bench-server.mjs) with a fresh local D1. Each export is one trace of 100 spans, as an
// instrumented service sends them: a root, nine children, and ten grandchildren under each of those;
// ten of the spans are GenAI LLM calls (gen_ai.* attributes: model, provider, usage, request
// parameters, input and output messages as JSON), each making a request log; the other 90 are plain
// spans with a few attributes. Every export has fresh ids. A measured run, never a timed test.
//
//   npm run bench:traces [-- --duration 20 | --count 400] [--concurrency 8 --warmup 20 --rounds 4 --json]
//
// Rounds alternate the exports with GET /health (each health round runs as long as the exports'
// round before it), so both see the same machine. After the run the bench checks what was stored: a
// sample of traces read back whole (every span, its parent, the ten logs), a search by trace id per
// sampled trace, and the total spans and logs in the database, so that it cannot time a broken path.
// Target (absolute, for a 2-core machine): at least 2,000 spans a second at concurrency 8.
// Exit code: 0 when every request succeeded and everything was stored (target met or not; it is
// reported), 1 otherwise, 2 on a usage or startup error.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { drive, load, machine, optionsOrExit, parseArgs, printResult, summarise } from "./lib/bench.mjs";
import { cpuMs, startBenchApi } from "./lib/bench-server.mjs";
import { d1Execute, logDatabaseOf } from "./lib/wrangler.mjs";

// The OpenTelemetry project's generated OTLP codec, the one the service decodes with (src/traces/otlp.ts).
const otlp = createRequire(import.meta.url)("@opentelemetry/otlp-transformer/build/src/generated/root");
const ExportTraceServiceRequest = otlp.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const SPANS = 100; // spans per export
const LLM_EVERY = 10; // span i is an LLM call when i % LLM_EVERY === LLM_AT: 10 of the 100
const LLM_AT = 5;
const LLM_SPANS = SPANS / LLM_EVERY;
const TARGET_SPANS_PER_S = 2000;
const TARGET_CONCURRENCY = 8;
const SAMPLE_TRACES = 5;

const USAGE = `usage: npm run bench:traces [-- --duration S | --count N] [--concurrency N] [--warmup N] [--rounds N] [--json]
  --duration     seconds of exports, split over the rounds (default 20; env BENCH_DURATION)
  --count        measured exports, instead of a duration (default 0: the duration; env BENCH_COUNT)
  --concurrency  requests in flight at once (default ${TARGET_CONCURRENCY}; env BENCH_CONCURRENCY)
  --warmup       unmeasured exports and health requests first (default 20; env BENCH_WARMUP)
  --rounds       alternating export / health rounds (default 4; env BENCH_ROUNDS)
  --json         print the results as one JSON object (env BENCH_JSON=1)`;

function parseOptions(argv, env) {
  const opts = parseArgs(argv, env, {
    usage: USAGE,
    numbers: {
      duration: { env: "BENCH_DURATION", default: 20 },
      count: { env: "BENCH_COUNT", default: 0, min: 0 },
      concurrency: { env: "BENCH_CONCURRENCY", default: TARGET_CONCURRENCY },
      warmup: { env: "BENCH_WARMUP", default: 20, min: 0 },
      rounds: { env: "BENCH_ROUNDS", default: 4 },
    },
    flags: { json: "BENCH_JSON" },
  });
  if (opts.count > 0) opts.rounds = Math.min(opts.rounds, opts.count);
  return opts;
}

// ---------------------------------------------------------------------------------------------
// Exports

const str = (key, v) => ({ key, value: { stringValue: v } });
const int = (key, v) => ({ key, value: { intValue: v } });
const dbl = (key, v) => ({ key, value: { doubleValue: v } });
const strs = (key, list) => ({ key, value: { arrayValue: { values: list.map((v) => ({ stringValue: v })) } } });
const hex = (b) => Buffer.from(b).toString("hex");

const MODELS = [
  ["openai", "gpt-4o-mini"],
  ["openai", "gpt-4o"],
  ["anthropic", "claude-3-5-sonnet-latest"],
];
const TOPICS = ["quarterly revenue", "the incident report", "a support ticket", "the release notes", "a contract clause"];
const PLAIN = [
  ["GET /api/orders", (i) => [str("http.request.method", "GET"), str("url.path", `/api/orders/${i}`), int("http.response.status_code", 200), str("server.address", "orders.internal")]],
  ["SELECT orders", (i) => [str("db.system.name", "postgresql"), str("db.operation.name", "SELECT"), str("db.query.text", `SELECT * FROM orders WHERE id = $1 /* ${i} */`), str("db.namespace", "shop")]],
  ["retrieve documents", (i) => [str("retrieval.index", "docs-v3"), int("retrieval.top_k", 8), dbl("retrieval.min_score", 0.42), str("code.function.name", `retrieve_${i % 7}`)]],
  ["render template", (i) => [str("template.name", `answer-${i % 5}`), int("template.bytes", 900 + i), str("code.file.path", "app/render.py")]],
];

/** Parent of span i: the root (0) for 1–9, span ⌊i/10⌋ for 10–99. */
const parentOf = (i) => (i === 0 ? null : i < 10 ? 0 : Math.floor(i / 10));
const isLlm = (i) => i % LLM_EVERY === LLM_AT;

/** The attributes of LLM span i of export n: current gen_ai.* semantic conventions. */
function llmAttributes(n, i) {
  const [provider, model] = MODELS[(n + i) % MODELS.length];
  const topic = TOPICS[(n + i) % TOPICS.length];
  const input = [
    { role: "system", parts: [{ type: "text", content: "You are a concise assistant. Cite the document when you can." }] },
    { role: "user", parts: [{ type: "text", content: `Summarise ${topic} #${n}.${i} in three bullet points for an executive audience, keeping numbers exact.` }] },
  ];
  const output = [
    {
      role: "assistant",
      finish_reason: "stop",
      parts: [{ type: "text", content: `- ${topic} #${n}.${i}: a ${(n + i) % 17} % increase over the previous period.\n- Risks: two open items, both owned.\n- Next step: review on Friday.` }],
    },
  ];
  return [
    str("gen_ai.operation.name", "chat"),
    str("gen_ai.provider.name", provider),
    str("gen_ai.request.model", model),
    str("gen_ai.response.model", `${model}-2024-07-18`),
    str("gen_ai.response.id", `chatcmpl-${n}-${i}`),
    dbl("gen_ai.request.temperature", ((n + i) % 10) / 10),
    int("gen_ai.request.max_tokens", 512),
    int("gen_ai.usage.input_tokens", 100 + ((n * 13 + i) % 400)),
    int("gen_ai.usage.output_tokens", 20 + ((n * 7 + i) % 200)),
    strs("gen_ai.response.finish_reasons", ["stop"]),
    str("gen_ai.input.messages", JSON.stringify(input)),
    str("gen_ai.output.messages", JSON.stringify(output)),
    str("gen_ai.conversation.id", `conv-${n % 50}`),
  ];
}

/**
 * Export n: one trace of SPANS spans with fresh random ids, as the protobuf body an exporter sends.
 * Returns the body and the ids, to check what was stored.
 */
export function exportOf(n) {
  const ids = randomBytes(16 + 8 * SPANS);
  const traceId = ids.subarray(0, 16);
  const spanIds = Array.from({ length: SPANS }, (_, i) => ids.subarray(16 + 8 * i, 24 + 8 * i));
  const startNs = BigInt(Date.now()) * 1_000_000n;
  const at = (ms) => String(startNs + BigInt(Math.round(ms * 1e6)));
  const spans = [];
  for (let i = 0; i < SPANS; i++) {
    const parent = parentOf(i);
    // The root spans 3 s; level 1 each 250 ms in turn; level 2 each 20 ms within its parent.
    const [start, dur] = i === 0 ? [0, 3000] : i < 10 ? [(i - 1) * 300, 250] : [(Math.floor(i / 10) - 1) * 300 + (i % 10) * 22, 20];
    const [name, attrs] = i === 0 ? ["POST /chat", () => [str("http.request.method", "POST"), str("url.path", "/chat"), int("http.response.status_code", 200)]] : PLAIN[i % PLAIN.length];
    const llm = isLlm(i);
    spans.push({
      traceId,
      spanId: spanIds[i],
      ...(parent === null ? {} : { parentSpanId: spanIds[parent] }),
      name: llm ? `chat ${MODELS[(n + i) % MODELS.length][1]}` : name,
      kind: i === 0 ? 2 : llm ? 3 : 1,
      startTimeUnixNano: at(start),
      endTimeUnixNano: at(start + dur),
      attributes: llm ? llmAttributes(n, i) : attrs(i),
      status: { code: i === 0 ? 1 : 0 },
    });
  }
  const request = {
    resourceSpans: [
      {
        resource: {
          attributes: [str("service.name", "bench-chat"), str("deployment.environment.name", "bench"), str("telemetry.sdk.name", "opentelemetry"), str("telemetry.sdk.language", "nodejs")],
        },
        scopeSpans: [{ scope: { name: "bench-traces", version: "1.0.0" }, spans }],
      },
    ],
  };
  const body = ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(request)).finish();
  return { body, traceId: hex(traceId), spanIds: spanIds.map(hex) };
}

// ---------------------------------------------------------------------------------------------
// Checks of what was stored

async function verify(api, sent, failures) {
  const headers = { "X-API-KEY": api.key, "Content-Type": "application/json" };
  const check = (ok, what) => {
    if (!ok) failures.push(what);
    return ok;
  };
  // A sample spread over the run: first, last, and evenly between.
  const picks = [...new Set(Array.from({ length: SAMPLE_TRACES }, (_, k) => Math.round((k * (sent.length - 1)) / Math.max(1, SAMPLE_TRACES - 1))))];
  const sampled = [];
  for (const at of picks) {
    const { n, traceId, spanIds } = sent[at];
    const res = await fetch(`${api.url}/api/public/v2/traces/${traceId}`, { headers });
    const got = await res.json();
    if (!check(res.status === 200, `GET trace ${traceId}: ${res.status} ${JSON.stringify(got).slice(0, 200)}`)) continue;
    const byId = new Map(got.spans.map((s) => [s.span_id, s]));
    check(got.spans.length === SPANS, `trace ${traceId}: ${got.spans.length} spans, expected ${SPANS}`);
    const parentsOk = spanIds.every((id, i) => byId.get(id)?.parent_id === (parentOf(i) === null ? null : spanIds[parentOf(i)]));
    check(parentsOk, `trace ${traceId}: a span is missing or has the wrong parent`);
    const logIds = spanIds.filter((_, i) => isLlm(i)).map((id) => byId.get(id)?.request_log_id);
    const plainWithLogs = spanIds.filter((id, i) => !isLlm(i) && byId.get(id)?.request_log_id != null).length;
    check(logIds.every((id) => Number.isInteger(id)) && plainWithLogs === 0, `trace ${traceId}: LLM spans with logs ${logIds.filter(Number.isInteger).length} of ${LLM_SPANS}, plain spans with logs ${plainWithLogs}`);
    const search = await fetch(`${api.url}/api/public/v2/requests/search`, {
      method: "POST",
      headers,
      body: JSON.stringify({ filter_group: { logic: "AND", filters: [{ field: "trace_id", operator: "is", value: traceId }] }, per_page: 25 }),
    });
    const found = await search.json();
    check(search.status === 200 && found.total === LLM_SPANS, `search trace_id ${traceId}: ${search.status} total ${found.total}, expected ${LLM_SPANS}`);
    // One log read back: what the LLM span said.
    const logRes = await fetch(`${api.url}/api/public/v2/requests/${logIds[0]}`, { headers });
    const log = await logRes.json();
    const first = spanIds.findIndex((_, i) => isLlm(i));
    const [provider, model] = MODELS[(n + first) % MODELS.length];
    const expected = { trace_id: traceId, span_id: spanIds[first], provider, model, input_tokens: 100 + ((n * 13 + first) % 400), output_tokens: 20 + ((n * 7 + first) % 200) };
    const same = Object.entries(expected).every(([k, v]) => log[k] === v);
    check(logRes.status === 200 && same, `log ${logIds[0]}: ${logRes.status}, expected ${JSON.stringify(expected)}, got ${JSON.stringify(log).slice(0, 300)}`);
    sampled.push(traceId);
  }
  const benchWorkspaceId = ({ persistTo }) => d1Execute("SELECT min(id) AS id FROM workspaces", { persistTo })[0][0].id;
  // Every export, counted in the database itself (no API count is exact past 10,000 logs).
  const [[{ spans }], [{ logs }], [{ linked }]] = d1Execute(
    "SELECT COUNT(*) AS spans FROM spans; SELECT COUNT(*) AS logs FROM request_logs; SELECT COUNT(*) AS linked FROM spans WHERE request_log_id IS NOT NULL;",
    { persistTo: api.persistTo, binding: logDatabaseOf(benchWorkspaceId(api), { persistTo: api.persistTo }) },
  );
  check(spans === sent.length * SPANS, `spans stored ${spans}, expected ${sent.length * SPANS}`);
  check(logs === sent.length * LLM_SPANS, `request logs stored ${logs}, expected ${sent.length * LLM_SPANS}`);
  check(linked === sent.length * LLM_SPANS, `spans linked to a log ${linked}, expected ${sent.length * LLM_SPANS}`);
  return { exports: sent.length, spans_stored: spans, logs_stored: logs, spans_linked: linked, traces_read_back: sampled.length };
}

// ---------------------------------------------------------------------------------------------
// Main

async function main() {
  const opts = optionsOrExit(parseOptions);
  const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a);
  log("Starting the bench server (fresh local state)…");
  let api;
  try {
    api = await startBenchApi({ workspace: "bench-traces", email: "bench@localhost" });
  } catch (err) {
    console.error(`could not start the bench server: ${err.stack ?? err.message}`);
    return 2;
  }
  const errors = [];
  const sent = [];
  let encodeMs = 0;
  let bodyBytes = 0;
  const cpu = () => cpuMs(api.pid);
  const health = async () => {
    try {
      const res = await fetch(`${api.url}/health`);
      const text = await res.text();
      if (res.status !== 200) errors.push(`GET /health: ${res.status} ${text.slice(0, 200)}`);
    } catch (err) {
      errors.push(`GET /health: ${err.cause?.message ?? err.message}`);
    }
  };
  const post = async (n) => {
    const t0 = performance.now();
    const exp = exportOf(n);
    encodeMs += performance.now() - t0;
    bodyBytes += exp.body.length;
    let res;
    let answer;
    try {
      res = await fetch(`${api.url}/v1/traces`, { method: "POST", headers: { "X-API-KEY": api.key, "Content-Type": "application/x-protobuf" }, body: exp.body });
      answer = new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      errors.push(`POST /v1/traces: ${err.cause?.message ?? err.message}`);
      return;
    }
    // An empty ExportTraceServiceResponse: every span taken (partialSuccess would say otherwise).
    if (res.status !== 200 || answer.length !== 0) errors.push(`POST /v1/traces: ${res.status} ${Buffer.from(answer).toString("utf8").slice(0, 300)}`);
    else sent.push({ n, traceId: exp.traceId, spanIds: exp.spanIds });
  };
  try {
    log(`bench server ${api.url} (workerd pid ${api.pid})`);
    const { concurrency, warmup, rounds } = opts;
    if (warmup > 0) {
      log(`Warm-up: ${warmup} exports and ${warmup * 10} health requests…`);
      await drive({ send: health, concurrency, count: warmup * 10 });
      await drive({ send: post, concurrency, count: warmup });
    }
    const warmupExports = sent.length;
    encodeMs = 0;
    bodyBytes = 0;
    const loadBefore = load();
    const parts = { traces: [], health: [] };
    let first = warmup;
    for (let r = 0; r < rounds; r++) {
      const n = opts.count > 0 ? Math.floor(opts.count / rounds) + (r < opts.count % rounds ? 1 : 0) : undefined;
      const round = n !== undefined ? { count: n } : { durationMs: (opts.duration * 1000) / rounds };
      const t = await drive({ send: post, concurrency, first, cpu, ...round });
      first += t.latencies.length;
      const h = await drive({ send: health, concurrency, cpu, durationMs: t.elapsedMs });
      parts.traces.push(t);
      parts.health.push(h);
      log(
        `Round ${r + 1}/${rounds}: ${t.latencies.length} exports in ${(t.elapsedMs / 1000).toFixed(1)} s (${Math.round((t.latencies.length * SPANS * 1000) / t.elapsedMs)} spans/s, ` +
          `${(t.cpuMs / t.latencies.length).toFixed(1)} ms CPU/export); health ${Math.round((h.latencies.length * 1000) / h.elapsedMs)} req/s; load ${load()[0]}`,
      );
    }
    const loadAfter = load();
    const traces = summarise(parts.traces);
    const healthSum = summarise(parts.health);
    const measured = traces.requests;
    const spansPerS = Math.round(traces.rps * SPANS * 10) / 10;
    log("Checking what was stored…");
    const stored = await verify(api, sent, errors);
    const result = {
      benchmark: "traces",
      date: new Date().toISOString(),
      machine: machine(),
      load: [loadBefore, loadAfter],
      options: { concurrency, rounds, warmup, ...(opts.count > 0 ? { count: opts.count } : { duration_s: opts.duration }) },
      export: { spans: SPANS, llm_spans: LLM_SPANS, mean_body_bytes: Math.round(bodyBytes / Math.max(1, measured)), client_encode_ms: Math.round((encodeMs / Math.max(1, measured)) * 100) / 100 },
      traces: { ...traces, spans_per_s: spansPerS, cpu_ms_per_span: Math.round((traces.cpu_ms_per_request / SPANS) * 1000) / 1000 },
      health: healthSum,
      ratio_pct: Math.round((traces.rps / healthSum.rps) * 1000) / 10,
      target: { spans_per_s: TARGET_SPANS_PER_S, concurrency: TARGET_CONCURRENCY, met: spansPerS >= TARGET_SPANS_PER_S && concurrency === TARGET_CONCURRENCY },
      stored: { ...stored, warmup_exports: warmupExports },
      errors: { total: errors.length, samples: errors.slice(0, 5) },
    };
    return printResult(result, { json: opts.json, report, errors });
  } catch (err) {
    console.error(`bench failed: ${err.stack ?? err.message}\nlast server output:\n${api.logs().slice(-3000)}`);
    return 1;
  } finally {
    await api.stop();
  }
}

function report(r) {
  const t = r.traces;
  const h = r.health;
  return [
    "",
    `machine: ${r.machine.line}`,
    `date:    ${r.date}; load ${r.load.map((l) => l.join(" ")).join(" → ")}`,
    `run:     ${t.requests} exports of ${r.export.spans} spans (${r.export.llm_spans} LLM), ${r.export.mean_body_bytes} bytes each (client encode ${r.export.client_encode_ms} ms), concurrency ${r.options.concurrency}, ${r.options.rounds} rounds alternating with GET /health`,
    "",
    `POST /v1/traces  ${t.spans_per_s} spans/s, ${t.rps} exports/s; per export p50 ${t.p50_ms} ms, p95 ${t.p95_ms} ms, p99 ${t.p99_ms} ms; workerd CPU ${t.cpu_ms_per_request} ms/export (${t.cpu_ms_per_span} ms/span)`,
    `GET /health      ${h.rps} req/s; p50 ${h.p50_ms} ms, p95 ${h.p95_ms} ms; workerd CPU ${h.cpu_ms_per_request} ms/req`,
    `per round:       exports/s ${t.rounds_rps.join(" / ")}; health req/s ${h.rounds_rps.join(" / ")}`,
    `exports/s ÷ health req/s: ${r.ratio_pct} %`,
    `stored:          ${r.stored.spans_stored} spans, ${r.stored.logs_stored} logs (${r.stored.exports} exports with the warm-up); ${r.stored.traces_read_back} sampled traces read back whole and searched`,
    `target: ≥ ${r.target.spans_per_s} spans/s at concurrency ${r.target.concurrency}: ${r.target.met ? "MET" : "NOT MET"} (${t.spans_per_s})`,
  ].join("\n");
}

// Run as a script (npm run bench:traces); imported, it only lends its exports (exportOf).
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = await main();
