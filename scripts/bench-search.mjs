#!/usr/bin/env node
// npm run bench:search: request-log search and suggestions over a large local D1, through `wrangler dev`.
// Seeds N request logs (default 1,000,000) with realistic cardinalities straight into the local D1
// (SQL generated in the database: a few hundred tags and metadata keys, thousands of values, 500
// prompts, 40 engines), then measures p50/p95 of GET /suggestions for every field (with and without
// a prefix) and of POST /search for three representative filter groups, next to GET /health measured
// in the same run as the runtime's floor. A measured run, never a timed test.
//
//   npm run bench:search [-- --logs 1000000 --samples 40 --json]
//   env: BENCH_LOGS, BENCH_SAMPLES, BENCH_JSON=1
//
// Requests run one at a time (latency, not throughput). Suggestions are limited to 10 a minute per
// key, so the seed adds enough keys to the workspace for every measured call to use a fresh budget.
// Exit code: 0 when every request got 200 (targets met or not; they are reported), 1 otherwise,
// 2 on a usage or startup error.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { machine, optionsOrExit, percentile } from "./lib/bench.mjs";
import { startLocalApi } from "./lib/local-api.mjs";
import { d1Execute, d1ExecuteFile } from "./lib/wrangler.mjs";
import { CHUNK, logsSql, START_MS } from "./lib/seed-logs.mjs";

const TARGET_SUGGEST_P95_MS = 25;
const TARGET_SEARCH_P95_MS = 150;
const WORKSPACE = "bench-search";

function parseOptions(argv, env) {
  const opts = { logs: Number(env.BENCH_LOGS ?? 1_000_000), samples: Number(env.BENCH_SAMPLES ?? 40), json: /^(1|true)$/i.test(env.BENCH_JSON ?? "") };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--json") opts.json = true;
    else if (a === "--logs" || a === "--samples") opts[a.slice(2)] = Number(argv[++i]);
    else throw new Error(`unknown argument ${JSON.stringify(a)}; usage: npm run bench:search [-- --logs N --samples N --json]`);
  }
  for (const k of ["logs", "samples"]) if (!Number.isInteger(opts[k]) || opts[k] < 1) throw new Error(`--${k} must be a whole number >= 1`);
  return opts;
}

// ---------------------------------------------------------------------------------------------
// Seeding: generated inside SQLite (recursive CTEs), in chunks so each statement stays modest.

/** The facet counts, as POST /log-request would have kept them. */
function facetsSql(ws) {
  const scalar = (field, expr, key = "''") =>
    `INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count)
     SELECT ${ws}, '${field}', ${key}, ${expr}, lower(${expr}), count(*) FROM request_logs WHERE workspace_id = ${ws} AND ${expr} IS NOT NULL GROUP BY ${key}, ${expr};`;
  const side = (kind, keysField, valuesField) =>
    `INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count)
     SELECT ${ws}, '${keysField}', '', key, lower(key), count(DISTINCT request_id) FROM request_log_values WHERE workspace_id = ${ws} AND kind = '${kind}' GROUP BY key;
     INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count)
     SELECT ${ws}, '${valuesField}', key, value, lower(value), count(*) FROM request_log_values WHERE workspace_id = ${ws} AND kind = '${kind}' GROUP BY key, value;`;
  const list = (kind, field) =>
    `INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count)
     SELECT ${ws}, '${field}', '', value, lower(value), count(*) FROM request_log_values WHERE workspace_id = ${ws} AND kind = '${kind}' GROUP BY value;`;
  return [
    scalar("engine", "model"),
    scalar("provider_type", "provider"),
    scalar("status", "status"),
    scalar("prompt_id", "CAST(prompt_id AS TEXT)"),
    scalar("prompt", "prompt_name", "CAST(prompt_id AS TEXT)"),
    list("tag", "tags"),
    list("tool", "tool_names"),
    side("metadata", "metadata_keys", "metadata_values"),
    side("output", "output_keys", "output_values"),
    side("input_variable", "input_variable_keys", "input_variable_values"),
    "ANALYZE;",
  ].join("\n");
}

function keysSql(ws, count) {
  const keys = Array.from({ length: count }, () => `pe_${randomBytes(24).toString("hex")}`);
  const rows = keys.map((k) => `(${ws}, (SELECT min(id) FROM users WHERE workspace_id = ${ws}), '${createHash("sha256").update(k).digest("hex")}', '${k.slice(0, 11)}')`);
  return { keys, sql: `INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix) VALUES ${rows.join(",\n")};` };
}

function seed(persistTo, opts, keyCount, log) {
  const [[{ id: ws }]] = d1Execute(`SELECT id FROM workspaces WHERE name = '${WORKSPACE}'`, { persistTo });
  const dir = mkdtempSync(join(tmpdir(), "bench-search-sql-"));
  try {
    const t0 = performance.now();
    for (let from = 1; from <= opts.logs; from += CHUNK) {
      const to = Math.min(opts.logs, from + CHUNK - 1);
      const file = join(dir, `logs-${from}.sql`);
      writeFileSync(file, logsSql(ws, from, to));
      d1ExecuteFile(file, { persistTo });
      log(`  seeded ${to.toLocaleString("en-US")} logs (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
    const { keys, sql } = keysSql(ws, keyCount);
    const file = join(dir, "facets.sql");
    writeFileSync(file, `${facetsSql(ws)}\n${sql}`);
    d1ExecuteFile(file, { persistTo });
    log(`  facets, keys and ANALYZE done (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    return keys;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Measurements

const SUGGESTIONS = [
  { field: "engine" },
  { field: "engine", prefix: "MODEL-1" },
  { field: "provider_type" },
  { field: "prompt_id" },
  { field: "prompt" },
  { field: "prompt", prompt_id: "42" },
  { field: "prompt", prefix: "prompt-4" },
  { field: "tags" },
  { field: "tags", prefix: "tag-2" },
  { field: "metadata_keys" },
  { field: "metadata_keys", prefix: "key-1" },
  { field: "status" },
  { field: "tool_names" },
  { field: "output_keys" },
  { field: "input_variable_keys" },
  { field: "metadata_values", metadata_key: "key-7" },
  { field: "metadata_values", metadata_key: "env", prefix: "pr" },
  { field: "output_values", metadata_key: "answer" },
  { field: "output_values", metadata_key: "answer", prefix: "answer-1" },
  { field: "input_variable_values", metadata_key: "topic" },
  { field: "input_variable_values", metadata_key: "var-3", prefix: "v1" },
];

const SEARCHES = {
  "expensive and recent, by cost desc": {
    filter_group: {
      logic: "AND",
      filters: [
        { field: "cost", operator: "gte", value: 0.9 },
        { field: "request_start_time", operator: "after", value: new Date(START_MS + 200 * 86_400_000).toISOString() },
      ],
    },
    sort_by: "cost",
    sort_order: "desc",
    per_page: 25,
  },
  "metadata key and tag, newest first": {
    filter_group: {
      logic: "AND",
      filters: [
        { field: "metadata", operator: "key_equals", nested_key: "env", value: "prod" },
        { field: "tags", operator: "contains", value: "tag-42" },
      ],
    },
    per_page: 25,
  },
  "nested OR of engines, errors and latency, page 3": {
    filter_group: {
      logic: "OR",
      filters: [
        { logic: "AND", filters: [{ field: "engine", operator: "in", value: ["model-3", "model-17"] }, { field: "status", operator: "is", value: "ERROR" }] },
        { logic: "AND", filters: [{ field: "provider_type", operator: "is", value: "google" }, { field: "latency_ms", operator: "gt", value: 5000 }] },
      ],
    },
    page: 3,
    per_page: 25,
  },
};

async function timed(fn, samples) {
  const latencies = [];
  let failures = 0;
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const res = await fn(i);
    const body = await res.text();
    latencies.push(performance.now() - t0);
    if (res.status !== 200) {
      failures++;
      if (failures === 1) console.error(`  ${res.status}: ${body.slice(0, 300)}`);
    }
  }
  latencies.sort((a, b) => a - b);
  const r2 = (x) => Math.round(x * 100) / 100;
  return { p50: r2(percentile(latencies, 50)), p95: r2(percentile(latencies, 95)), failures };
}

async function main() {
  const opts = optionsOrExit(parseOptions);
  const log = opts.json ? () => {} : (m) => console.log(m);
  const keyCount = Math.ceil((SUGGESTIONS.length * (opts.samples + 2)) / 10) + 5;
  log(`seeding ${opts.logs.toLocaleString("en-US")} request logs into a fresh local D1…`);
  let keys;
  const api = await startLocalApi({ workspace: WORKSPACE, prepare: (persistTo) => (keys = seed(persistTo, opts, keyCount, log)) });
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
    for (const s of SUGGESTIONS) await (await get(`/api/public/v2/requests/suggestions?${new URLSearchParams(s)}`)).text();
    for (const body of Object.values(SEARCHES)) await (await post("/api/public/v2/requests/search", body)).text();

    results.health = await timed(() => fetch(`${api.url}/health`), opts.samples);
    for (const s of SUGGESTIONS) {
      const r = await timed(() => get(`/api/public/v2/requests/suggestions?${new URLSearchParams(s)}`), opts.samples);
      results.suggestions.push({ query: s, ...r });
      failed += r.failures;
      log(`  suggestions ${new URLSearchParams(s)}: p50 ${r.p50} ms, p95 ${r.p95} ms`);
    }
    for (const [name, body] of Object.entries(SEARCHES)) {
      const r = await timed(() => post("/api/public/v2/requests/search", body), opts.samples);
      const total = (await (await post("/api/public/v2/requests/search", body)).json()).total;
      results.search.push({ name, total, ...r });
      failed += r.failures;
      log(`  search ${name} (${total} matches): p50 ${r.p50} ms, p95 ${r.p95} ms`);
    }

    const worstSuggest = Math.max(...results.suggestions.map((s) => s.p95));
    const worstSearch = Math.max(...results.search.map((s) => s.p95));
    const summary = {
      machine: machine(),
      logs: opts.logs,
      samples: opts.samples,
      health: results.health,
      suggestions: results.suggestions,
      search: results.search,
      targets: {
        suggestions_p95_ms: { target: TARGET_SUGGEST_P95_MS, worst: worstSuggest, met: worstSuggest <= TARGET_SUGGEST_P95_MS },
        search_p95_ms: { target: TARGET_SEARCH_P95_MS, worst: worstSearch, met: worstSearch <= TARGET_SEARCH_P95_MS },
      },
    };
    if (opts.json) console.log(JSON.stringify(summary, null, 2));
    else {
      log(`\nmachine: ${summary.machine.line}`);
      log(`GET /health (floor): p50 ${results.health.p50} ms, p95 ${results.health.p95} ms`);
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
