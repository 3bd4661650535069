#!/usr/bin/env node
// npm run bench:import: a 100 MB CSV (about 1M rows) imported as a sheet import on the bench server
// (workerd through Miniflare's API, scripts/lib/bench-server.mjs), with an inspector port opened for
// this benchmark only: the time to `completed`, rows per second, the Worker isolate's own V8 heap
// (sampled through the inspector, Runtime.getHeapUsage, every 50 ms), and apart from it the workerd
// process's peak resident memory (which also holds the local D1, R2 and the sheet object's SQLite
// page caches) against its idle baseline. A measured run, never a timed test.
//
//   npm run bench:import [-- --mb 100 --json]     env: BENCH_IMPORT_MB, BENCH_JSON=1
//
// The CSV is generated while the request body is sent (the script never holds it either), base64-
// encoded in the JSON body the API expects. RSS is read from /proc (Linux) every 50 ms. Exit code 0 when the import
// completes with every row (targets met or not; they are printed), 1 otherwise, 2 on a usage error.
import { readdirSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { Readable } from "node:stream";
import { cpus, platform, release, totalmem } from "node:os";
import { performance } from "node:perf_hooks";
import { load } from "./lib/bench.mjs";
import { sampleIsolateHeap, startBenchApi } from "./lib/bench-server.mjs";

const TARGET_ROWS_PER_S = 20_000;
const TARGET_GROWTH_MB = 128;
/** The isolate's heap limit on Cloudflare: the target is a peak well under it. */
const TARGET_HEAP_MIB = 128;

function options(argv, env) {
  const o = { mb: Number(env.BENCH_IMPORT_MB ?? 100), json: /^(1|true|yes)$/i.test(env.BENCH_JSON ?? "") };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--json") o.json = true;
    else if (argv[i] === "--mb") o.mb = Number(argv[++i]);
    else if (argv[i].startsWith("--mb=")) o.mb = Number(argv[i].slice(5));
    else throw new Error(`unknown argument ${argv[i]} (usage: npm run bench:import [-- --mb 100 --json])`);
  }
  if (!(o.mb > 0 && o.mb <= 100)) throw new Error("--mb must be a number in (0, 100]");
  return o;
}

// ---------------------------------------------------------------------------------------------
// Memory of the workerd processes under a pid (Linux /proc)

function rssBytes(pids) {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // gone
    }
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// The file: rows generated as the body is read

const HEADER = "id,question,expected_answer,category,score\n";
function line(i) {
  // ~100 bytes a row, with a quoted field holding a comma.
  return `${i},"What is item ${i}, in words?",answer number ${i} is right,cat-${i % 17},${(i * 7919) % 100}${" ".repeat(20)}\n`;
}

function bodyStream(targetBytes) {
  const enc = new TextEncoder();
  let state = "head";
  let rows = 0;
  let bytes = 0;
  let carry = "";
  let finished = false;
  const stream = new ReadableStream({
    pull(ctl) {
      if (state === "head") {
        state = "rows";
        carry = HEADER;
        bytes = HEADER.length;
        ctl.enqueue(enc.encode('{"title": "bench", "source": {"type": "file", "file_name": "bench.csv", "file_content_base64": "'));
        return;
      }
      if (state === "done") return ctl.close();
      let chunk = carry;
      while (chunk.length < 3 * 64 * 1024 && !finished) {
        const l = line(rows);
        if (bytes + l.length > targetBytes) {
          finished = true;
          break;
        }
        chunk += l;
        bytes += l.length;
        rows++;
      }
      const last = finished;
      const usable = last ? chunk.length : chunk.length - (chunk.length % 3);
      carry = chunk.slice(usable);
      ctl.enqueue(enc.encode(Buffer.from(chunk.slice(0, usable), "latin1").toString("base64")));
      if (last) {
        ctl.enqueue(enc.encode('"}}'));
        state = "done";
      }
    },
  });
  return { stream, stats: () => ({ rows, bytes: bytes }) };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const opts = options(process.argv.slice(2), process.env);
  if (platform() !== "linux") throw new Error("bench:import reads memory from /proc: run it on Linux");
  const api = await startBenchApi({ workspace: "bench", email: "bench@localhost", inspector: true });
  const loadBefore = load();
  let sampler;
  let heap;
  try {
    const headers = { "X-API-KEY": api.key, "Content-Type": "application/json" };
    const tRes = await fetch(`${api.url}/api/public/v2/tables`, { method: "POST", headers, body: JSON.stringify({ title: "bench", create_default_sheet: false }) });
    const table = (await tRes.json()).table;

    await new Promise((r) => setTimeout(r, 2000));
    const pids = [api.pid];
    heap = await sampleIsolateHeap(api.inspectorPort);
    const baseline = rssBytes(pids);
    const perBase = pids.map((p) => rssBytes([p]));
    const perPeak = [...perBase];
    let peak = baseline;
    let peakAfterUpload = 0;
    let uploaded = false;
    sampler = setInterval(() => {
      const now = rssBytes(pids);
      peak = Math.max(peak, now);
      if (!uploaded) peakAfterUpload = Math.max(peakAfterUpload, now);
      pids.forEach((p, i) => (perPeak[i] = Math.max(perPeak[i], rssBytes([p]))));
    }, 50);

    const targetBytes = Math.floor(opts.mb * 1_000_000);
    const body = bodyStream(targetBytes);
    const t0 = performance.now();
    // node:http rather than fetch: after a streamed upload, undici's pooled connection stalled the polls.
    const res = await new Promise((resolve, reject) => {
      const req = request(`${api.url}/api/public/v2/tables/${table.id}/sheets`, { method: "POST", headers: { ...headers, Connection: "close" } }, (r) => {
        let text = "";
        r.setEncoding("utf8");
        r.on("data", (d) => (text += d));
        r.on("end", () => resolve({ status: r.statusCode, text }));
        r.on("error", reject);
      });
      req.on("error", reject);
      Readable.fromWeb(body.stream).pipe(req);
    });
    const accepted = JSON.parse(res.text);
    const tAccepted = performance.now();
    const acceptedAt = Date.now();
    uploaded = true;
    const log = (m) => opts.json || console.error(`[${((performance.now() - t0) / 1000).toFixed(1)} s] ${m}`);
    log(`POST answered ${res.status}`);
    if (process.env.BENCH_DEBUG) log(`${api.url} key ${api.key} table ${table.id} op ${accepted.operation_id}`);
    if (res.status !== 202) throw new Error(`import refused: ${res.status} ${JSON.stringify(accepted)}`);
    const { rows } = body.stats();

    let op;
    for (;;) {
      let r;
      try {
        r = await fetch(`${api.url}/api/public/v2/tables/${table.id}/sheets/operations/${accepted.operation_id}`, { headers, signal: AbortSignal.timeout(10_000) });
      } catch (err) {
        log(`poll failed (${err.message}); again`);
        continue;
      }
      op = (await r.json()).operation;
      if (op.status === "completed" || op.status === "failed") break;
      log(`${op.status} ${op.progress}% ${op.rows_added} rows`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const tDone = performance.now();
    clearInterval(sampler);
    peak = Math.max(peak, rssBytes(pids));
    const heapStats = await heap.stop(acceptedAt);
    heap = null;
    const mib = (b) => +(b / 2 ** 20).toFixed(1);

    const seconds = (tDone - t0) / 1000;
    const result = {
      machine: { cpu: cpus()[0]?.model.replace(/\s+/g, " ").trim(), cpus: cpus().length, memory_gib: +(totalmem() / 1024 ** 3).toFixed(1), node: process.version, os: `${platform()} ${release()}` },
      file_bytes: body.stats().bytes,
      rows,
      status: op.status,
      error_message: op.error_message,
      rows_added: op.rows_added,
      upload_seconds: +((tAccepted - t0) / 1000).toFixed(2),
      import_seconds: +((tDone - tAccepted) / 1000).toFixed(2),
      total_seconds: +seconds.toFixed(2),
      rows_per_second: Math.round(rows / seconds),
      workerd_processes: pids.length,
      rss_baseline_mib: +(baseline / 2 ** 20).toFixed(1),
      rss_peak_mib: +(peak / 2 ** 20).toFixed(1),
      rss_growth_mib: +((peak - baseline) / 2 ** 20).toFixed(1),
      rss_growth_during_upload_mib: +((peakAfterUpload - baseline) / 2 ** 20).toFixed(1),
      isolate_heap: {
        samples: heapStats.samples,
        baseline_used_mib: mib(heapStats.baseline_used),
        peak_used_mib: mib(heapStats.peak_used),
        peak_total_mib: mib(heapStats.peak_total),
        peak_used_while_uploading_mib: mib(heapStats.peak_used_before ?? 0),
        peak_used_while_importing_mib: mib(heapStats.peak_used_after ?? 0),
        samples_while_uploading: heapStats.samples_before,
      },
      load: [loadBefore, load()],
    };
    result.targets = {
      completes: op.status === "completed" && op.rows_added === rows,
      growth_under_128_mib: result.rss_growth_mib < TARGET_GROWTH_MB,
      isolate_heap_under_128_mib: result.isolate_heap.peak_total_mib < TARGET_HEAP_MIB,
      rows_per_second_at_least_20000: result.rows_per_second >= TARGET_ROWS_PER_S,
    };
    if (opts.json) console.log(JSON.stringify(result));
    else {
      console.log(`file: ${(result.file_bytes / 1e6).toFixed(1)} MB, ${rows} rows`);
      console.log(`upload (POST → 202): ${result.upload_seconds} s; import (202 → completed): ${result.import_seconds} s; total ${result.total_seconds} s`);
      console.log(`rows/s (total): ${result.rows_per_second}  [target ≥ ${TARGET_ROWS_PER_S}: ${result.targets.rows_per_second_at_least_20000 ? "met" : "not met"}]`);
      console.log(`workerd RSS: baseline ${result.rss_baseline_mib} MiB, peak ${result.rss_peak_mib} MiB, growth ${result.rss_growth_mib} MiB  [target < ${TARGET_GROWTH_MB}: ${result.targets.growth_under_128_mib ? "met" : "not met"}]`);
      console.log(`  growth while uploading (POST → 202): ${result.rss_growth_during_upload_mib} MiB (the process also holds D1, R2 and the sheet's SQLite page caches)`);
      console.log(`Worker isolate V8 heap (inspector, ${result.isolate_heap.samples} samples): baseline used ${result.isolate_heap.baseline_used_mib} MiB, peak used ${result.isolate_heap.peak_used_mib} MiB, peak allocated ${result.isolate_heap.peak_total_mib} MiB  [target < ${TARGET_HEAP_MIB}: ${result.targets.isolate_heap_under_128_mib ? "met" : "not met"}]`);
      console.log(`  peak used while uploading (POST → 202, ${result.isolate_heap.samples_while_uploading} samples): ${result.isolate_heap.peak_used_while_uploading_mib} MiB; while importing: ${result.isolate_heap.peak_used_while_importing_mib} MiB`);
      console.log(`load: ${result.load.map((l) => l.join(" ")).join(" → ")}`);
      console.log(`operation: ${op.status}, rows_added ${op.rows_added}${op.error_message ? `, error: ${op.error_message}` : ""}`);
    }
    process.exitCode = result.targets.completes ? 0 : 1;
  } finally {
    clearInterval(sampler);
    if (heap) await heap.stop().catch(() => {});
    await api.stop();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 2;
});
