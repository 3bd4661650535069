#!/usr/bin/env node
// npm run bench:cells: the sheet engine on the bench server (workerd through Miniflare, no inspector). A sheet of 10,000 rows (two TEXT
// columns, `input` and `note`, imported from a CSV) with a chain of 10 computed columns (PARSE_VALUE,
// each reading the one before, the first reading `input`). Measured, next to GET /health in the same
// run as the runtime's floor:
//   - recalculating the last column of the chain from all-STALE (pulls in the whole chain: 100,000 cells);
//   - p50/p95 of a cell edit that marks its 10 downstream cells STALE (PATCH on `input`), and of an edit
//     with nothing downstream (PATCH on `note`); their difference is the cost of the stale propagation;
//   - recalculating one whole column whose inputs changed (10,000 cells, after reconfiguring it).
// GET of a cell (the key's D1 lookup plus a read from the object) is measured too, as the floor of
// any authenticated sheet request; each edit's answer carries Server-Timing with the object's share.
// A measured run, never a timed test: the figures depend on the machine.
//
//   npm run bench:cells [-- --rows 10000 --samples 200 --json]    env: BENCH_ROWS, BENCH_SAMPLES, BENCH_JSON=1
//
// Requests run one at a time (latency, not throughput), the three kinds interleaved so they share the
// machine's noise. Exit code 0 when every request succeeded (targets met or not; they are printed),
// 1 otherwise, 2 on a usage or startup error.
import { performance } from "node:perf_hooks";
import { cellId, machine, optionsOrExit, parseArgs, percentile } from "./lib/bench.mjs";
import { startBenchApi } from "./lib/bench-server.mjs";

const TARGET_EDIT_P95_MS = 15;
const CHAIN = 10;

function parseOptions(argv, env) {
  const o = parseArgs(argv, env, {
    usage: "usage: npm run bench:cells [-- --rows 10000 --samples 200 --json]",
    numbers: { rows: { env: "BENCH_ROWS", default: 10_000 }, samples: { env: "BENCH_SAMPLES", default: 200 } },
    flags: { json: "BENCH_JSON" },
  });
  if (o.samples > o.rows) throw new Error("--samples must be at most --rows (each chain edit uses a fresh row)");
  return o;
}

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const r = (v) => Math.round(v * 100) / 100;
  return { n: s.length, p50_ms: r(percentile(s, 50)), p95_ms: r(percentile(s, 95)), max_ms: r(s[s.length - 1]) };
}

async function main() {
  const opts = optionsOrExit(parseOptions);
  const log = (...a) => (opts.json ? console.error(...a) : console.log(...a));
  log(`bench:cells: ${opts.rows} rows, chain of ${CHAIN} computed columns, ${opts.samples} samples; starting the bench server…`);
  let api;
  try {
    api = await startBenchApi({ workspace: "bench-cells", email: "bench@localhost" });
  } catch (err) {
    console.error(`could not start the local API: ${err.message}`);
    process.exit(2);
  }
  let failures = 0;
  try {
    const headers = { "X-API-KEY": api.key, "Content-Type": "application/json" };
    let lastObjectMs = null;
    const req = async (method, path, body, expect = [200, 201, 202]) => {
      const res = await fetch(`${api.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const timing = /sheet;dur=(\d+(?:\.\d+)?)/.exec(res.headers.get("server-timing") ?? "");
      lastObjectMs = timing ? Number(timing[1]) : null;
      const text = await res.text();
      if (!expect.includes(res.status)) {
        failures++;
        throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
      }
      return text ? JSON.parse(text) : null;
    };

    // The sheet: a CSV import of `rows` rows.
    const table = (await req("POST", "/api/public/v2/tables", { title: "bench-cells", create_default_sheet: false })).table;
    let csv = "input,note\n";
    for (let i = 0; i < opts.rows; i++) csv += `value ${i},note ${i}\n`;
    const imp = await req("POST", `/api/public/v2/tables/${table.id}/sheets`, {
      source: { type: "file", file_name: "bench.csv", file_content_base64: Buffer.from(csv).toString("base64") },
    });
    for (;;) {
      const op = (await req("GET", `/api/public/v2/tables/${table.id}/sheets/operations/${imp.operation_id}`)).operation;
      if (op.status === "completed") break;
      if (op.status === "failed") throw new Error(`import failed: ${op.error_message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const base = `/api/public/v2/tables/${table.id}/sheets/${imp.sheet.id}`;
    const textCols = (await req("GET", `${base}/columns`)).data;
    const input = textCols.find((c) => c.title === "input").id;
    const note = textCols.find((c) => c.title === "note").id;
    const chain = [];
    for (let k = 1; k <= CHAIN; k++) {
      const col = await req("POST", `${base}/columns`, { title: `c${k}`, type: "PARSE_VALUE", config: { source: k === 1 ? "input" : `c${k - 1}`, type: "string" } });
      chain.push(col.column.id);
    }
    log(`sheet ready: ${opts.rows} rows × ${2 + CHAIN} columns`);

    const untilDone = async (opId) => {
      for (;;) {
        const op = (await req("GET", `${base}/operations/${opId}`)).operation;
        if (op.pending_count === 0) return op;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const timeRecalc = async (body) => {
      const t0 = performance.now();
      const started = await req("POST", `${base}/operations`, body);
      const op = await untilDone(started.operation_id);
      const ms = performance.now() - t0;
      return { cells: op.cell_count, completed: op.completed_count, failed: op.failed_count, reused: op.reused_count, seconds: Math.round(ms) / 1000, cells_per_s: Math.round((op.cell_count / ms) * 1000) };
    };

    // 1. The whole chain from all-STALE, by recalculating its last column.
    const fullChain = await timeRecalc({ column_ids: [chain[CHAIN - 1]] });
    log(`recalculate c${CHAIN} (whole chain): ${fullChain.cells} cells in ${fullChain.seconds} s (${fullChain.cells_per_s}/s)`);

    // 2. Edits, interleaved with /health. Each chain edit uses a fresh row, so it marks all 10 cells.
    const health = [], readCell = [], chainEdit = [], plainEdit = [], chainObject = [], plainObject = [];
    let staleMarked = 0;
    const rowsOrder = Array.from({ length: opts.rows }, (_, i) => i).sort(() => Math.random() - 0.5);
    const time = async (fn) => {
      const t0 = performance.now();
      const out = await fn();
      return [performance.now() - t0, out];
    };
    for (let i = 0; i < 20; i++) await req("GET", "/health"); // warm-up
    for (let i = 0; i < opts.samples; i++) {
      const row = rowsOrder[i];
      health.push((await time(() => req("GET", "/health")))[0]);
      // The authenticated floor: the key's D1 lookup and a read from the sheet object, no write.
      readCell.push((await time(() => req("GET", `${base}/cells/${cellId(note, row)}`)))[0]);
      const [ms, out] = await time(() => req("PATCH", `${base}/cells/${cellId(input, row)}`, { display_value: `edited ${i}` }));
      chainEdit.push(ms);
      chainObject.push(lastObjectMs);
      staleMarked += out.stale_count;
      plainEdit.push((await time(() => req("PATCH", `${base}/cells/${cellId(note, row)}`, { display_value: `note edited ${i}` })))[0]);
      plainObject.push(lastObjectMs);
    }
    const edit = stats(chainEdit), plain = stats(plainEdit), floor = stats(health);
    const propagation = { p50_ms: Math.round((edit.p50_ms - plain.p50_ms) * 100) / 100, p95_ms: Math.round((edit.p95_ms - plain.p95_ms) * 100) / 100 };
    const read = stats(readCell);
    log(`GET /health:                        p50 ${floor.p50_ms} ms, p95 ${floor.p95_ms} ms`);
    log(`GET a cell (key lookup + object read): p50 ${read.p50_ms} ms, p95 ${read.p95_ms} ms`);
    log(`edit + stale propagation (10 cells): p50 ${edit.p50_ms} ms, p95 ${edit.p95_ms} ms (target p95 ≤ ${TARGET_EDIT_P95_MS} ms) — ${staleMarked} cells marked over ${opts.samples} edits`);
    log(`edit, nothing downstream:           p50 ${plain.p50_ms} ms, p95 ${plain.p95_ms} ms`);
    log(`stale propagation alone (difference): p50 ${propagation.p50_ms} ms, p95 ${propagation.p95_ms} ms`);
    const objChain = stats(chainObject), objPlain = stats(plainObject);
    log(`inside the Worker, the sheet object's share (Server-Timing, ms resolution): with propagation p50 ${objChain.p50_ms} / p95 ${objChain.p95_ms} ms; without p50 ${objPlain.p50_ms} / p95 ${objPlain.p95_ms} ms`);

    // 3. One whole column whose inputs changed: reconfigure c1 (its cells and all downstream go STALE),
    //    then recalculate c1 alone.
    await req("PATCH", `${base}/columns/${chain[0]}`, { config: { source: "input", type: "string", note: "reconfigured" } });
    const oneColumn = await timeRecalc({ column_ids: [chain[0]] });
    log(`recalculate one column (c1):         ${oneColumn.cells} cells in ${oneColumn.seconds} s (${oneColumn.cells_per_s}/s)`);

    const m = machine();
    const result = {
      machine: m,
      rows: opts.rows,
      chain_columns: CHAIN,
      samples: opts.samples,
      health: floor,
      get_cell: read,
      edit_with_propagation: { ...edit, target_p95_ms: TARGET_EDIT_P95_MS, met: edit.p95_ms <= TARGET_EDIT_P95_MS, stale_marked: staleMarked },
      edit_without_downstream: plain,
      propagation_alone: propagation,
      object_share_with_propagation: objChain,
      object_share_without_downstream: objPlain,
      recalculate_whole_chain: fullChain,
      recalculate_one_column: oneColumn,
    };
    if (opts.json) console.log(JSON.stringify(result, null, 2));
    else log(`machine: ${m.line}`);
    if (fullChain.failed + oneColumn.failed > 0) failures++;
  } catch (err) {
    console.error(`bench failed: ${err.message}`);
    failures++;
  } finally {
    await api.stop();
  }
  process.exit(failures > 0 ? 1 : 0);
}

main();
