#!/usr/bin/env node
// npm run bench:cost: what a log costs on Cloudflare, and the month's bill for a team logging a million
// calls a day. A measured run, never a timed test.
//
//   npm run bench:cost [-- --logs 2000 --concurrency 8 --rate 0 --per-day 1000000 --json]
//   BENCH_TREE=<checkout> npm run bench:cost    # another checkout's Worker, same script and meter
//
// It sends bench:storage's realistic log (scripts/bench-storage.mjs: a few KB of messages, 3 tags,
// 4 metadata keys, 3 input variables, a tool on one log in four, a JSON answer on one in ten) through
// POST /log-request on the bench server, lets the index queue's consumer and one cron run index
// them, then moves them to R2 with the archive job (a one-day retention window). The Worker runs as
// it is, behind a meter (scripts/lib/cost-meter.mjs) that adds up D1's own metadata of every
// statement (meta.rows_written, meta.rows_read, meta.duration) by entry point: the request (the
// write), the index queue's consumer and the cron (indexing), a cron run 11 minutes on (the sweep of
// the write's body-retry rows), the cron again (archiving). Bytes at rest: D1's tables and indexes
// per log, read from the closed database file as bench:storage does; R2's, the archive files' size
// over their logs. CPU: the workerd process's, from the first log to
// the last one indexed (D1's SQLite runs in it too, so this bounds the Worker's own CPU from above).
// The month is priced from scripts/lib/cloudflare-prices.mjs (the one price table, with its sources
// and date). --rate sends at most that many logs a second (0: as fast as --concurrency allows), which
// sets how many logs each index batch holds: 12 a second is a million a day.
// Exit code: 0 when every log was stored, indexed and archived, 1 otherwise, 2 on a usage or startup error.
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { drive, load, machine, optionsOrExit, parseArgs, printResult, tree } from "./lib/bench.mjs";
import { cpuMs, startBenchApi, waitIndexed } from "./lib/bench-server.mjs";
import { meterEntry } from "./lib/cost-meter.mjs";
import { monthlyBill, PRICES } from "./lib/cloudflare-prices.mjs";
import { d1Files, delta, haveDbstat, realisticLog, snapshot } from "./bench-storage.mjs";

const USAGE = `usage: npm run bench:cost [-- --logs N] [--concurrency N] [--rate N] [--warmup N] [--per-day N] [--json]
  --logs         logs measured (default 2000; env BENCH_LOGS)
  --concurrency  requests in flight at once (default 8; env BENCH_CONCURRENCY)
  --rate         logs sent a second at most, 0 for no limit (default 0; env BENCH_RATE)
  --warmup       logs sent (and indexed) before the meter starts (default 20)
  --per-day      calls a day the bill is priced for (default 1000000)
  --json         print the results as one JSON object (env BENCH_JSON=1)`;

function parseOptions(argv, env) {
  return parseArgs(argv, env, {
    usage: USAGE,
    numbers: {
      logs: { env: "BENCH_LOGS", default: 2000 },
      concurrency: { env: "BENCH_CONCURRENCY", default: 8 },
      rate: { env: "BENCH_RATE", default: 0, min: 0 },
      warmup: { default: 20, min: 0 },
      "per-day": { default: 1_000_000 },
    },
    flags: { json: "BENCH_JSON" },
  });
}

const r2 = (x) => Math.round(x * 100) / 100;
const r3 = (x) => Math.round(x * 1000) / 1000;

/** The meter's statements summed: rows written and read, SQL ms, statements. */
function totals(statements) {
  const t = { rows_written: 0, rows_read: 0, duration_ms: 0, statements: 0 };
  for (const s of statements) {
    t.rows_written += s.rows_written;
    t.rows_read += s.rows_read;
    t.duration_ms += s.duration_ms;
    t.statements += s.n;
  }
  return t;
}

/** Per log: the totals divided by `n`, and the statements that wrote, most rows first. */
function perLog(statements, n) {
  const t = totals(statements);
  const top = statements
    .filter((s) => s.rows_written > 0)
    .sort((a, b) => b.rows_written - a.rows_written)
    .map((s) => ({ binding: s.binding, sql: s.sql, rows_written_per_log: r3(s.rows_written / n), statements_per_log: r3(s.n / n) }));
  return { rows_written: r3(t.rows_written / n), rows_read: r2(t.rows_read / n), sql_ms: r3(t.duration_ms / n), statements: r3(t.statements / n), writers: top };
}

async function main() {
  const opts = optionsOrExit(parseOptions);
  const log = opts.json ? (...a) => console.error(...a) : (...a) => console.log(...a);
  const errors = [];
  let base = null;
  let method = "dbstat";
  const entry = meterEntry();
  let api;
  try {
    api = await startBenchApi({
      workspace: "bench-cost",
      email: "bench@localhost",
      entry,
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
  const headers = { "X-API-KEY": api.key, "Content-Type": "application/json" };
  const meter = async (path = "") => (await fetch(`${api.url}/__meter${path}`, path ? { method: "POST" } : {})).json();
  /** A cron run, as if `ahead` ms from now (the sweeper then takes whatever waits, the daily totals' counting included). */
  const cron = async (ahead = 0) => {
    const worker = await api.mf.getWorker();
    await worker.scheduled({ cron: "* * * * *", scheduledTime: new Date(Date.now() + ahead) });
  };
  /** Every log indexed (waitIndexed), then one cron run a minute ahead (the sweeper, and whatever an index batch leaves for later), then waited for again. */
  const settle = async () => {
    await waitIndexed(api.mf);
    await cron(60_000);
    await waitIndexed(api.mf, { counted: true });
  };
  const send = async (i, ids) => {
    const body = JSON.stringify(realisticLog(i));
    try {
      const res = await fetch(`${api.url}/log-request`, { method: "POST", headers, body });
      const got = await res.json();
      if (res.status !== 201) errors.push(`POST /log-request ${i}: ${res.status} ${JSON.stringify(got).slice(0, 200)}`);
      else ids?.push(got.id);
    } catch (err) {
      errors.push(`POST /log-request ${i}: ${err.cause?.message ?? err.message}`);
    }
  };
  try {
    log(`bench server ${api.url} (${tree()}), metered`);
    // Warm-up: the workspace is placed and its database moved into its id range by its first log.
    await drive({ concurrency: Math.min(4, opts.concurrency), count: opts.warmup, first: 1_000_000, send: (i) => send(i) });
    await settle();
    await meter("/reset");

    // ---- 1. write and index
    const ids = [];
    const loadBefore = load();
    const cpu0 = cpuMs(api.pid);
    const t0 = performance.now();
    const paced = opts.rate > 0;
    log(`Logging ${opts.logs} realistic requests (concurrency ${opts.concurrency}${paced ? `, at most ${opts.rate} a second` : ""})…`);
    const run = await drive({
      concurrency: opts.concurrency,
      count: opts.logs,
      send: async (i) => {
        if (paced) {
          const due = t0 + (i * 1000) / opts.rate;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        await send(i, ids);
      },
    });
    await settle();
    const cpuWriteAndIndex = cpuMs(api.pid) - cpu0;
    const written = await meter();
    const n = Math.max(1, ids.length);
    const write = perLog(written.statements.filter((s) => s.phase === "fetch"), n);
    const indexing = perLog(written.statements.filter((s) => s.phase !== "fetch"), n);
    const batches = written.queue.by_batch;
    log(`… ${ids.length} logs in ${(run.elapsedMs / 1000).toFixed(1)} s; index batches: ${batches.length} (${r2(written.queue.logs / Math.max(1, batches.length))} logs each on average)`);

    // A few reads, so the bench cannot measure a broken path: a log by id, a tag search, a metadata suggestion.
    const lastId = ids[ids.length - 1];
    const got = await (await fetch(`${api.url}/api/public/v2/requests/${lastId}`, { headers })).json();
    if (got.request_id !== lastId) errors.push(`GET /requests/${lastId}: ${JSON.stringify(got).slice(0, 200)}`);
    const tagged = await (await fetch(`${api.url}/api/public/v2/requests/search`, { method: "POST", headers, body: JSON.stringify({ filter_group: { filters: [{ field: "tags", operator: "contains", value: "escalated" }, { field: "metadata", operator: "key_equals", nested_key: "environment", value: "production" }] }, per_page: 1 }) })).json();
    if (!(tagged.total > 0)) errors.push(`search by tag and metadata found ${JSON.stringify(tagged).slice(0, 200)}`);
    const suggested = await (await fetch(`${api.url}/api/public/v2/requests/suggestions?field=input_variable_values&metadata_key=language&include_counts=true`, { headers })).json();
    const counted = Object.values(suggested.counts ?? {}).reduce((a, b) => a + b, 0);
    if (counted !== ids.length + opts.warmup) errors.push(`suggestions count ${counted} logs with a language, expected ${ids.length + opts.warmup}`);

    // ---- 1b. the cron's sweep of the write's retry rows (a body's row counts 10 minutes), 11 minutes on
    await meter("/reset");
    const retryRows = async () => {
      const control = await api.mf.getD1Database("DB");
      const shard = (await control.prepare("SELECT log_shard AS s FROM workspaces WHERE name = 'bench-cost'").first())?.s ?? "DB";
      return (await (await api.mf.getD1Database(shard)).prepare("SELECT count(*) AS n FROM idempotency_keys").first()).n;
    };
    await cron(11 * 60_000);
    for (let k = 0; k < 300 && (await retryRows()) > 0; k++) await new Promise((r) => setTimeout(r, 100));
    if ((await retryRows()) > 0) errors.push(`${await retryRows()} retry rows left after the sweep`);
    const sweep = perLog((await meter()).statements, n);

    // ---- 2. bytes at rest in D1 (the runtime stopped: the database file whole)
    await api.halt();
    const files = d1Files(api.persistTo);
    const bytes = delta(base, snapshot(files, method), Math.max(1, ids.length + opts.warmup));
    const again = await startBenchApi({ persistTo: api.persistTo, key: api.key, entry });
    api = { ...again };

    // ---- 3. archive every log to R2 (a one-day window: every realistic log is from 2025)
    const put = await fetch(`${api.url}/api/public/v2/workspace/log-retention`, { method: "PUT", headers, body: JSON.stringify({ days: 1 }) });
    if (put.status !== 200) errors.push(`PUT /workspace/log-retention: ${put.status} ${await put.text()}`);
    await meter("/reset");
    const control = await api.mf.getD1Database("DB");
    const shard = (await control.prepare("SELECT log_shard AS s FROM workspaces WHERE name = 'bench-cost'").first())?.s ?? "DB";
    const logsDb = await api.mf.getD1Database(shard);
    const left = async () => (await logsDb.prepare("SELECT count(*) AS n FROM request_logs").first()).n;
    const cpu1 = cpuMs(api.pid);
    for (let run = 0; run < 50 && (await left()) > 0; run++) {
      await cron();
      // The cron's work runs in waitUntil: wait for the manifest to stop growing.
      let before = -1;
      for (let k = 0; k < 200; k++) {
        const now = (await logsDb.prepare("SELECT coalesce(sum(log_count), 0) AS n FROM request_log_archives").first()).n;
        if (now === before) break;
        before = now;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const cpuArchive = cpuMs(api.pid) - cpu1;
    if ((await left()) > 0) errors.push(`${await left()} logs were not archived`);
    const manifest = await logsDb.prepare("SELECT count(*) AS files, coalesce(sum(log_count), 0) AS logs, coalesce(sum(bytes), 0) AS bytes FROM request_log_archives").first();
    const archivedMeter = await meter();
    const archived = Math.max(1, manifest.logs);
    const archive = perLog(archivedMeter.statements, archived);

    // ---- 4. the month's bill
    const measured = {
      rowsWritten: write.rows_written + indexing.rows_written + sweep.rows_written,
      rowsRead: write.rows_read + indexing.rows_read + sweep.rows_read,
      archiveRowsWritten: archive.rows_written,
      archiveRowsRead: archive.rows_read,
      d1Bytes: method === "dbstat" ? Object.values(bytes.by_category).reduce((a, b) => a + b, 0) : bytes.total,
      r2Bytes: manifest.bytes / archived,
      cpuMs: (cpuWriteAndIndex + cpuArchive) / n,
      queueMessages: written.queue.messages / n,
      consumerInvocations: batches.length / n,
      logsPerArchiveFile: manifest.logs / Math.max(1, manifest.files),
      // The archive keeps the last whole day past the window (and the day under way) in D1.
      liveDaysPastWindow: 1.5,
    };
    const upperBound = { ...measured, queueMessages: 1, consumerInvocations: 1 };
    const scenarios = [7, 30, 90, null].map((days) => ({
      retention_days: days,
      bill: monthlyBill({ perDay: opts["per-day"], retentionDays: days, day: 90 }, measured),
      bill_one_message_a_log: monthlyBill({ perDay: opts["per-day"], retentionDays: days, day: 90 }, upperBound),
    }));
    const result = {
      benchmark: "cost",
      date: new Date().toISOString(),
      tree: tree(),
      machine: machine(),
      load: [loadBefore, load()],
      options: { logs: opts.logs, concurrency: opts.concurrency, rate: opts.rate, warmup: opts.warmup, per_day: opts["per-day"] },
      logs: ids.length,
      seconds: r2(run.elapsedMs / 1000),
      index_batches: { count: batches.length, logs_each: r2(written.queue.logs / Math.max(1, batches.length)), messages_per_log: r3(written.queue.messages / n) },
      per_log: {
        rows_written: { write: write.rows_written, indexing: indexing.rows_written, sweep: sweep.rows_written, total: r3(write.rows_written + indexing.rows_written + sweep.rows_written), archive: archive.rows_written },
        rows_read: { write: write.rows_read, indexing: indexing.rows_read, sweep: sweep.rows_read, archive: archive.rows_read },
        sql_ms: { write: write.sql_ms, indexing: indexing.sql_ms, sweep: sweep.sql_ms, archive: archive.sql_ms },
        statements: { write: write.statements, indexing: indexing.statements, sweep: sweep.statements, archive: archive.statements },
        d1_bytes: { method, tables_and_indexes: measured.d1Bytes, file_growth: bytes.total, by_category: bytes.by_category, by_object: bytes.by_object },
        r2_bytes: Math.round(measured.r2Bytes),
        cpu_ms: r3(measured.cpuMs),
      },
      writers: { write: write.writers, indexing: indexing.writers, sweep: sweep.writers, archive: archive.writers },
      unmetered_reads: { ...written.unmetered, ...Object.fromEntries(Object.entries(archivedMeter.unmetered).map(([k, v]) => [`archive: ${k}`, v])) },
      archive: { files: manifest.files, logs: manifest.logs },
      prices: { read: PRICES.read, sources: PRICES.sources },
      month: scenarios,
      errors: { total: errors.length, samples: errors.slice(0, 5) },
    };
    return printResult(result, { json: opts.json, report, errors });
  } catch (err) {
    console.error(`bench failed: ${err.stack ?? err.message}\nlast server output:\n${api?.logs?.().slice(-3000) ?? ""}`);
    return 1;
  } finally {
    await api?.stop();
  }
}

const usd = (x) => `$${x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(2)}`;

function report(r) {
  const p = r.per_log;
  const lines = [
    "",
    `tree:    ${r.tree}`,
    `machine: ${r.machine.line}`,
    `date:    ${r.date}; load ${r.load.map((l) => l.join(" ")).join(" → ")}`,
    `run:     ${r.logs} logs in ${r.seconds} s (concurrency ${r.options.concurrency}${r.options.rate ? `, ≤ ${r.options.rate}/s` : ""}); ${r.index_batches.count} index batches of ${r.index_batches.logs_each} logs, ${r.index_batches.messages_per_log} queue messages a log`,
    "",
    "per log                 write   indexing   sweep   total   archive",
    `  D1 rows written    ${String(p.rows_written.write).padStart(8)} ${String(p.rows_written.indexing).padStart(10)} ${String(p.rows_written.sweep).padStart(7)} ${String(p.rows_written.total).padStart(7)} ${String(p.rows_written.archive).padStart(9)}`,
    `  D1 rows read       ${String(p.rows_read.write).padStart(8)} ${String(p.rows_read.indexing).padStart(10)} ${String(p.rows_read.sweep).padStart(7)} ${"".padStart(7)} ${String(p.rows_read.archive).padStart(9)}`,
    `  SQL ms (D1 meta)   ${String(p.sql_ms.write).padStart(8)} ${String(p.sql_ms.indexing).padStart(10)} ${String(p.sql_ms.sweep).padStart(7)} ${String(r3(p.sql_ms.write + p.sql_ms.indexing + p.sql_ms.sweep)).padStart(7)} ${String(p.sql_ms.archive).padStart(9)}`,
    `  statements         ${String(p.statements.write).padStart(8)} ${String(p.statements.indexing).padStart(10)} ${String(p.statements.sweep).padStart(7)} ${"".padStart(7)} ${String(p.statements.archive).padStart(9)}`,
    `  bytes in D1: ${p.d1_bytes.tables_and_indexes} B (${p.d1_bytes.method}; file growth ${p.d1_bytes.file_growth} B); in R2: ${p.r2_bytes} B; workerd CPU: ${p.cpu_ms} ms`,
  ];
  for (const [phase, list] of Object.entries(r.writers)) {
    lines.push(`  rows written in ${phase}, by statement:`);
    for (const w of list.slice(0, 12)) lines.push(`    ${String(w.rows_written_per_log).padStart(7)}  ${w.binding.padEnd(7)} ${w.sql}`);
  }
  lines.push("", `a month (days 61–90) at ${r.options.per_day.toLocaleString("en-US")} calls a day, list prices read ${r.prices.read}:`);
  const names = Object.keys(r.month[0].bill.lines);
  lines.push(`  ${"".padEnd(18)}${r.month.map((m) => (m.retention_days === null ? "all in D1" : `${m.retention_days}-day window`).padStart(16)).join("")}`);
  for (const k of names) lines.push(`  ${k.padEnd(18)}${r.month.map((m) => usd(m.bill.lines[k]).padStart(16)).join("")}`);
  lines.push(`  ${"total".padEnd(18)}${r.month.map((m) => usd(m.bill.total).padStart(16)).join("")}`);
  lines.push(`  ${"(1 message a log)".padEnd(18)}${r.month.map((m) => usd(m.bill_one_message_a_log.total).padStart(16)).join("")}`);
  lines.push(`  ${"D1 GB / R2 GB".padEnd(18)}${r.month.map((m) => `${Math.round(m.bill.d1_gb)} / ${Math.round(m.bill.r2_gb)}`.padStart(16)).join("")}`);
  return lines.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = await main();
