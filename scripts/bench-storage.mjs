#!/usr/bin/env node
// npm run bench:storage: D1 bytes per request log, split into the request_logs row, its side rows
// (request_log_facets, request_log_daily, request_groups, with their indexes; request_log_values in
// trees before issue 37), the search index (request_log_search, or request_logs_fts before, and their
// shadow tables) and the indexes on request_logs; then bytes
// per span (the spans table and its indexes) for OTLP exports. A measured run, never a timed test.
//
//   npm run bench:storage [-- --logs 2000 --exports 20 --concurrency 8 --json]
//
// Each log is a realistic LLM call sent through POST /log-request: a system prompt with a retrieved
// context, two or three earlier user/assistant turns and the last question (a few KB of messages), the
// answer, parameters (some with a tool definition, some answers JSON), tags, metadata and input
// variables. The texts are drawn word by word from a vocabulary with a per-log random generator, so
// no two logs share their texts and compression is not flattered by repeated rows.
//
// How it measures: the bench server (workerd through Miniflare's API, scripts/lib/bench-server.mjs)
// keeps D1 in one SQLite file. Workerd's D1 refuses PRAGMA and has no dbstat table, so the file is
// read with the sqlite3 command-line shell once the runtime is stopped (the file then whole, its
// write-ahead log folded in): `SELECT name, sum(pgsize) FROM dbstat GROUP BY name`, the bytes of the
// pages of each table and index, before (migrated, one workspace and key) and after; the difference
// divided by the logs. Page bytes include each page's free space, as D1's size does (D1 counts the
// database file). Without a sqlite3 shell that has dbstat, the bench falls back to the file's size
// before and after (no split) and says so. In both cases the byte lengths of the row's columns are
// summed through the D1 binding as well (what the row holds before SQLite's overhead).
//
// After the logs, `--exports` OTLP exports of 100 spans each (10 of them LLM calls that make logs,
// scripts/bench-traces.mjs) measure bytes per span; the logs those spans make are reported apart.
// Bytes are taken once every log is indexed (its search rows are written after its answer). A sample
// of logs is read back (GET /api/public/v2/requests/{id}) and compared with what was sent, and a
// free-text search is checked, so the bench cannot measure a broken path.
// Exit code: 0 when everything was stored and read back, 1 otherwise, 2 on a usage or startup error.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { drive, load, machine, optionsOrExit, parseArgs, printResult } from "./lib/bench.mjs";
import { startBenchApi, waitIndexed } from "./lib/bench-server.mjs";
import { exportOf } from "./bench-traces.mjs";

const USAGE = `usage: npm run bench:storage [-- --logs N] [--exports N] [--concurrency N] [--json]
  --logs         request logs sent through POST /log-request (default 2000; env BENCH_LOGS)
  --exports      OTLP exports of 100 spans afterwards, 0 for none (default 20; env BENCH_EXPORTS)
  --concurrency  requests in flight at once (default 8; env BENCH_CONCURRENCY)
  --json         print the results as one JSON object (env BENCH_JSON=1)`;

function parseOptions(argv, env) {
  return parseArgs(argv, env, {
    usage: USAGE,
    numbers: {
      logs: { env: "BENCH_LOGS", default: 2000 },
      exports: { env: "BENCH_EXPORTS", default: 20, min: 0 },
      concurrency: { env: "BENCH_CONCURRENCY", default: 8 },
    },
    flags: { json: "BENCH_JSON" },
  });
}

// ---------------------------------------------------------------------------------------------
// Realistic logs

/** A small deterministic generator (mulberry32), one per log: the same i always gives the same log. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Words of business and support writing; drawn with a skew towards the first ones (as word
// frequencies are), with numbers, names and identifiers mixed in.
const WORDS = (
  "the of and to a in is that for it on with as was be by this are or at from have an not which but they " +
  "we you can your our all will one would there their what about if when more so out up use new time also " +
  "customer account order invoice payment refund policy contract clause renewal term notice period pricing plan " +
  "quarter revenue growth margin forecast budget cost spend vendor supplier shipment delivery warehouse region " +
  "incident outage latency error timeout retry deploy release version rollback database cache queue service " +
  "report summary analysis metric dashboard trend increase decrease risk owner action item deadline review " +
  "support ticket escalation priority severity response resolution feedback survey rating complaint request " +
  "product feature roadmap launch beta user team manager engineer analyst director legal finance sales marketing " +
  "please thanks could should might need want check confirm explain describe compare list include provide " +
  "document section page table figure appendix draft final approved pending open closed resolved blocked " +
  "monday tuesday wednesday thursday friday january february march april may june july august september " +
  "because however therefore although while since until unless whether either neither both each every " +
  "first second third last next previous current annual monthly weekly daily total average median percent " +
  "high low fast slow large small early late clear exact simple complex critical minor major important"
).split(" ");
const NAMES = ["Alice Chen", "Bruno Díaz", "Chloé Martin", "Dmitri Ivanov", "Emeka Okafor", "Fatima Zahra", "Greta Holm", "Hiro Tanaka", "Ines Silva", "Jonas Weber"];
const PROMPTS = ["support-answer", "contract-review", "incident-summary", "sales-email", "report-qa", "ticket-triage", "release-notes", "invoice-check"];
const MODELS = [
  ["openai", "gpt-4o"],
  ["openai", "gpt-4o-mini"],
  ["anthropic", "claude-3-5-sonnet-latest"],
  ["openai", "gpt-4.1"],
];

function writer(rand) {
  const word = () => {
    const r = rand();
    if (r < 0.04) return String(Math.floor(rand() * 100000) / (rand() < 0.5 ? 100 : 1));
    if (r < 0.06) return NAMES[Math.floor(rand() * NAMES.length)].split(" ")[0];
    if (r < 0.07) return `#${Math.floor(rand() * 90000) + 10000}`;
    // Skewed: index ~ n * u^2 favours the first (frequent) words.
    return WORDS[Math.floor(WORDS.length * rand() * rand())];
  };
  const sentence = () => {
    const n = 6 + Math.floor(rand() * 16);
    const w = Array.from({ length: n }, word);
    w[0] = w[0][0].toUpperCase() + w[0].slice(1);
    return `${w.join(" ")}${rand() < 0.1 ? "?" : "."}`;
  };
  /** About `chars` characters of sentences. */
  const text = (chars) => {
    const out = [];
    let len = 0;
    while (len < chars) {
      const s = sentence();
      out.push(s);
      len += s.length + 1;
    }
    return out.join(rand() < 0.2 ? "\n" : " ");
  };
  return { word, sentence, text };
}

const block = (text) => [{ type: "text", text }];

/** Log i: a few KB of messages, different texts for every i. Returns the body as an object. */
export function realisticLog(i) {
  const rand = rng(0x9e3779b9 ^ (i * 2654435761));
  const w = writer(rand);
  const [provider, model] = MODELS[i % MODELS.length];
  const prompt = PROMPTS[i % PROMPTS.length];
  const customer = NAMES[Math.floor(rand() * NAMES.length)];
  const question = w.text(120 + Math.floor(rand() * 200));
  const system =
    `You are the ${prompt.replace("-", " ")} assistant of Acme Corp. Answer in the customer's language, be concise, ` +
    `and cite the section of the document you rely on. Never invent numbers.\n\nContext:\n${w.text(600 + Math.floor(rand() * 600))}`;
  const messages = [{ role: "system", content: block(system) }];
  const turns = 2 + Math.floor(rand() * 2);
  for (let t = 0; t < turns; t++) {
    messages.push({ role: "user", content: block(w.text(80 + Math.floor(rand() * 250))) });
    messages.push({ role: "assistant", content: block(w.text(200 + Math.floor(rand() * 500))) });
  }
  messages.push({ role: "user", content: block(`${customer} asks: ${question}`) });
  const tools = i % 4 === 0;
  const json = i % 10 === 3;
  const answer = json
    ? JSON.stringify({ category: w.word(), priority: ["low", "medium", "high"][i % 3], summary: w.text(200), follow_up: rand() < 0.5 })
    : w.text(400 + Math.floor(rand() * 800));
  const input = { type: "chat", messages };
  if (tools) {
    input.tools = [
      {
        type: "function",
        function: {
          name: "lookup_order",
          description: "Looks up an order by its number and returns its status, items and shipping dates.",
          parameters: { type: "object", properties: { order_id: { type: "string", description: "The order number, e.g. #12345" }, include_items: { type: "boolean" } }, required: ["order_id"] },
        },
      },
    ];
  }
  const start = Date.UTC(2025, 5, 1) + i * 37_000;
  const durationMs = 600 + Math.floor(rand() * 4000);
  const inputTokens = 600 + Math.floor(rand() * 1500);
  const outputTokens = 80 + Math.floor(rand() * 400);
  return {
    provider,
    model,
    input,
    output: { type: "chat", messages: [{ role: "assistant", content: block(answer) }] },
    parameters: { temperature: Math.round(rand() * 10) / 10, max_tokens: 1024, top_p: 1, ...(json ? { response_format: { type: "json_object" } } : {}), ...(tools ? { tool_choice: "auto" } : {}) },
    tags: ["production", prompt, ...(rand() < 0.3 ? ["escalated"] : [])],
    metadata: { user_id: `user-${Math.floor(rand() * 5000)}`, session_id: `sess-${i >> 3}`, environment: "production", app_version: `2.${i % 7}.${Math.floor(rand() * 20)}` },
    prompt_name: prompt,
    prompt_input_variables: { customer_name: customer, question, language: rand() < 0.8 ? "en" : "de" },
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    price: Math.round((inputTokens * 2.5e-6 + outputTokens * 1e-5) * 1e6) / 1e6,
    request_start_time: new Date(start).toISOString(),
    request_end_time: new Date(start + durationMs).toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring

const CATEGORIES = ["row", "side rows", "fts", "indexes", "spans", "other"];

/** The category of a table or index (by the table it belongs to). */
function categoryOf(name, table) {
  // The full-text index: request_logs_fts before issue 37, request_log_search (texts and keys) since.
  if (name.startsWith("request_logs_fts") || name.startsWith("request_log_search")) return "fts";
  if (table === "request_logs") return name === "request_logs" ? "row" : "indexes";
  if (["request_log_values", "request_log_facets", "request_log_daily", "request_groups"].includes(table)) return "side rows";
  if (["spans", "trace_closures"].includes(table)) return "spans";
  return "other";
}

/** Every local D1 database file: the control database and the log databases (a log lands in one of them). */
export function d1Files(persistTo) {
  const dir = join(persistTo, "v3", "d1", "miniflare-D1DatabaseObject");
  const files = readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  if (files.length === 0) throw new Error(`no D1 database file in ${dir}`);
  return files.map((f) => join(dir, f));
}

function sqlite3(file, sqlText) {
  const r = spawnSync("sqlite3", ["-readonly", "-json", file, sqlText], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.error || r.status !== 0) throw new Error(r.error?.message ?? r.stderr);
  return r.stdout.trim() ? JSON.parse(r.stdout) : [];
}

/** Whether a sqlite3 shell with the dbstat table is on this machine. */
export function haveDbstat(file) {
  try {
    sqlite3(file, "SELECT count(*) AS n FROM dbstat");
    return true;
  } catch {
    return false;
  }
}

/** Bytes per table or index ({ name → bytes }) and the files' bytes, summed over closed database files. */
export function snapshot(files, method) {
  const sum = { fileBytes: 0, freeBytes: 0, objects: {} };
  for (const file of files) {
    const one = snapshotOf(file, method);
    sum.fileBytes += one.fileBytes;
    sum.freeBytes += one.freeBytes ?? 0;
    for (const [name, o] of Object.entries(one.objects)) {
      const had = sum.objects[name];
      sum.objects[name] = { bytes: (had?.bytes ?? 0) + o.bytes, table: o.table };
    }
  }
  return sum;
}

function snapshotOf(file, method) {
  if (method !== "dbstat") {
    // The database file and its write-ahead log, whatever part of it is not folded in yet.
    const wal = `${file}-wal`;
    return { fileBytes: statSync(file).size + (existsSync(wal) ? statSync(wal).size : 0), objects: {} };
  }
  const tables = new Map(sqlite3(file, "SELECT name, tbl_name FROM sqlite_master").map((r) => [r.name, r.tbl_name]));
  const objects = {};
  for (const { name, bytes } of sqlite3(file, "SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name")) objects[name] = { bytes, table: tables.get(name) ?? name };
  const [{ pages, size, free }] = sqlite3(
    file,
    "SELECT (SELECT page_count FROM pragma_page_count) AS pages, (SELECT page_size FROM pragma_page_size) AS size, (SELECT freelist_count FROM pragma_freelist_count) AS free",
  );
  return { fileBytes: pages * size, freeBytes: free * size, objects };
}

/** Bytes added between two snapshots, per category and per object, divided by `per`. */
export function delta(before, after, per) {
  const byCategory = Object.fromEntries(CATEGORIES.map((c) => [c, 0]));
  const byObject = {};
  for (const [name, o] of Object.entries(after.objects)) {
    const added = o.bytes - (before.objects[name]?.bytes ?? 0);
    if (added === 0) continue;
    byCategory[categoryOf(name, o.table)] += added;
    byObject[name] = Math.round(added / per);
  }
  const rounded = Object.fromEntries(Object.entries(byCategory).map(([c, b]) => [c, Math.round(b / per)]));
  // Pages the file holds but no table or index uses (freed by deletes, kept for the next writes).
  const free = Math.round(((after.freeBytes ?? 0) - (before.freeBytes ?? 0)) / per);
  return { total: Math.round((after.fileBytes - before.fileBytes) / per), by_category: rounded, free_pages: free, by_object: byObject };
}

/** Summed byte lengths of request_logs' columns (through the D1 binding), per log, for ids in (lo, hi]. */
export async function columnBytes(d1, lo, hi) {
  const { results } = await d1.prepare("SELECT name FROM pragma_table_info('request_logs')").all().catch(() => ({ results: [] }));
  const names = results.length > 0 ? results.map((r) => r.name) : null;
  if (!names) return null;
  const sums = names.map((n) => `sum(coalesce(length(CAST("${n}" AS BLOB)), 0)) AS "${n}"`).join(", ");
  const row = await d1.prepare(`SELECT count(*) AS logs, ${sums} FROM request_logs WHERE id > ?1 AND id <= ?2`).bind(lo, hi).first();
  const logs = row.logs || 1;
  const out = {};
  for (const n of names) if (row[n] > 0) out[n] = Math.round(row[n] / logs);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Main

async function main() {
  const opts = optionsOrExit(parseOptions);
  const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a);
  log("Starting the bench server (fresh local state)…");
  let base = null;
  let method = "dbstat";
  let api;
  try {
    api = await startBenchApi({
      workspace: "bench-storage",
      email: "bench@localhost",
      // The migrated database with its one workspace and key, before the runtime opens it.
      prepare: (persistTo) => {
        const files = d1Files(persistTo);
        if (!haveDbstat(files[0])) method = "file size";
        base = snapshot(files, method);
      },
    });
  } catch (err) {
    console.error(`could not start the bench server: ${err.stack ?? err.message}`);
    return 2;
  }
  const errors = [];
  const headers = { "X-API-KEY": api.key, "Content-Type": "application/json" };
  const file = d1Files(api.persistTo);
  try {
    log(`bench server ${api.url}; measuring by ${method === "dbstat" ? "dbstat (pages per table and index)" : "the file's size (no sqlite3 shell with dbstat)"}`);
    const ids = new Array(opts.logs);
    let bodyBytes = 0;
    const loadBefore = load();
    const sendLog = async (i) => {
      const body = JSON.stringify(realisticLog(i));
      bodyBytes += Buffer.byteLength(body);
      try {
        const res = await fetch(`${api.url}/log-request`, { method: "POST", headers, body });
        const got = await res.json();
        if (res.status !== 201) errors.push(`POST /log-request ${i}: ${res.status} ${JSON.stringify(got).slice(0, 200)}`);
        else ids[i] = got.id;
      } catch (err) {
        errors.push(`POST /log-request ${i}: ${err.cause?.message ?? err.message}`);
      }
    };
    log(`Logging ${opts.logs} requests…`);
    const run = await drive({ send: sendLog, concurrency: opts.concurrency, count: opts.logs });
    log(`… in ${(run.elapsedMs / 1000).toFixed(1)} s`);
    // Indexed (search rows, full text, facets, daily totals), as every log is within seconds.
    log(`… indexed ${(await waitIndexed(api.mf)).toFixed(0)} ms later`);

    // Read back: every field sent comes back as sent; a search for a word of a log finds it.
    const sample = [...new Set(Array.from({ length: 20 }, (_, k) => Math.floor((k * (opts.logs - 1)) / 19)))];
    for (const i of sample) {
      if (ids[i] === undefined) continue;
      const sent = realisticLog(i);
      const res = await fetch(`${api.url}/api/public/v2/requests/${ids[i]}`, { headers });
      const got = await res.json();
      for (const k of ["input", "output", "parameters", "tags", "metadata", "prompt_input_variables"]) {
        if (!isDeepStrictEqual(got[k], sent[k])) errors.push(`log ${ids[i]}: ${k} read back differs from what was sent`);
      }
    }
    const probe = realisticLog(sample[sample.length - 1]).prompt_input_variables.question.match(/[a-z]{6,}/g)?.slice(0, 3).join(" ") ?? "customer";
    const search = await fetch(`${api.url}/api/public/v2/requests/search`, { method: "POST", headers, body: JSON.stringify({ q: probe, per_page: 100 }) });
    const found = await search.json();
    if (search.status !== 200 || !found.items?.some((r) => r.request_id === ids[sample[sample.length - 1]] || r.id === ids[sample[sample.length - 1]])) {
      errors.push(`search q=${JSON.stringify(probe)}: ${search.status}, the log it was taken from is not among ${found.total ?? "?"} results`);
    }
    // The workspace's log database (it was placed by its first log).
    const control = await api.mf.getD1Database("DB");
    const shard = (await control.prepare("SELECT log_shard AS s FROM workspaces WHERE log_shard IS NOT NULL").first())?.s ?? "DB";
    const d1 = await api.mf.getD1Database(shard);
    const maxLogId = Math.max(0, ...ids.filter((x) => x !== undefined));
    const columns = await columnBytes(d1, 0, maxLogId);

    let spans = null;
    let afterLogs;
    if (opts.exports > 0) {
      // Bytes per log are taken first, with the runtime stopped; spans then go to a restarted one.
      await api.halt();
      afterLogs = snapshot(file, method);
      const again = await startBenchApi({ persistTo: api.persistTo, key: api.key });
      api = { ...again, stop: again.stop };
      log(`Sending ${opts.exports} OTLP exports of 100 spans…`);
      let stored = 0;
      await drive({
        concurrency: Math.min(4, opts.concurrency),
        count: opts.exports,
        send: async (n) => {
          const exp = exportOf(n);
          const res = await fetch(`${api.url}/v1/traces`, { method: "POST", headers: { "X-API-KEY": api.key, "Content-Type": "application/x-protobuf" }, body: exp.body });
          const answer = new Uint8Array(await res.arrayBuffer());
          if (res.status !== 200 || answer.length !== 0) errors.push(`POST /v1/traces: ${res.status}`);
          else stored += 1;
        },
      });
      await waitIndexed(api.mf);
      const d1b = await api.mf.getD1Database(shard);
      const counts = await d1b.prepare("SELECT (SELECT count(*) FROM spans) AS spans, (SELECT count(*) FROM request_logs WHERE id > ?1) AS logs").bind(maxLogId).first();
      if (counts.spans !== stored * 100) errors.push(`spans stored ${counts.spans}, expected ${stored * 100}`);
      const spanLogColumns = await columnBytes(d1b, maxLogId, Number.MAX_SAFE_INTEGER);
      await api.halt();
      const afterSpans = snapshot(file, method);
      const d = delta(afterLogs, afterSpans, 1);
      // Pages of tables and indexes: the file's growth also counts free pages, which the spans' own
      // writes may take back from the logs' phase (the two phases share one file).
      const spanBytes = d.by_category.spans;
      const logBytes = Object.entries(d.by_category).reduce((sum, [c, b]) => (c === "spans" ? sum : sum + b), 0);
      spans = {
        exports: stored,
        spans: counts.spans,
        logs_from_spans: counts.logs,
        bytes_per_span: method === "dbstat" ? Math.round(spanBytes / Math.max(1, counts.spans)) : null,
        bytes_per_log_from_spans: method === "dbstat" ? Math.round(logBytes / Math.max(1, counts.logs)) : null,
        total_bytes_per_span: Math.round(d.total / Math.max(1, counts.spans)),
        by_object_per_span: Object.fromEntries(Object.entries(d.by_object).map(([k, v]) => [k, Math.round(v / Math.max(1, counts.spans))])),
        log_columns: spanLogColumns,
      };
    } else {
      await api.halt();
      afterLogs = snapshot(file, method);
    }
    const logged = ids.filter((x) => x !== undefined).length;
    const perLog = delta(base, afterLogs, Math.max(1, logged));
    const result = {
      benchmark: "storage",
      date: new Date().toISOString(),
      machine: machine(),
      load: [loadBefore, load()],
      method: method === "dbstat" ? "dbstat: bytes of the pages of each table and index (sqlite3 shell on the closed D1 file)" : "file size before and after (no sqlite3 shell with dbstat); no split by category",
      options: { logs: opts.logs, exports: opts.exports, concurrency: opts.concurrency },
      logs: { logged, mean_body_bytes: Math.round(bodyBytes / Math.max(1, opts.logs)), seconds: Math.round(run.elapsedMs / 100) / 10 },
      per_log: { ...perLog, columns },
      spans,
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
  const p = r.per_log;
  const kb = (b) => `${b} B`;
  const lines = [
    "",
    `machine: ${r.machine.line}`,
    `date:    ${r.date}; load ${r.load.map((l) => l.join(" ")).join(" → ")}`,
    `method:  ${r.method}`,
    `run:     ${r.logs.logged} logs through POST /log-request (mean body ${r.logs.mean_body_bytes} B) in ${r.logs.seconds} s`,
    "",
    `D1 bytes per log: ${kb(p.total)} (the file's growth / logs)`,
  ];
  for (const c of CATEGORIES) if (p.by_category[c]) lines.push(`  ${c.padEnd(10)} ${String(p.by_category[c]).padStart(7)} B`);
  if (p.free_pages) lines.push(`  ${"free pages".padEnd(10)} ${String(p.free_pages).padStart(7)} B (in the file, used by no table or index yet)`);
  lines.push("  by table or index:");
  for (const [name, b] of Object.entries(p.by_object).sort((a, b) => b[1] - a[1])) lines.push(`    ${name.padEnd(44)} ${String(b).padStart(7)} B`);
  if (p.columns) lines.push(`  request_logs columns (mean bytes): ${Object.entries(p.columns).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  if (r.spans) {
    const s = r.spans;
    lines.push("", `spans: ${s.spans} spans from ${s.exports} OTLP exports, ${s.logs_from_spans} logs made from them`);
    lines.push(`  D1 bytes per span: ${s.bytes_per_span ?? "?"} B (spans table and indexes); per log made from a span: ${s.bytes_per_log_from_spans ?? "?"} B; file growth per span ${s.total_bytes_per_span} B`);
    for (const [name, b] of Object.entries(s.by_object_per_span).sort((a, b) => b[1] - a[1])) if (b > 0) lines.push(`    ${name.padEnd(44)} ${String(b).padStart(7)} B/span`);
  }
  return lines.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = await main();
