// Shared by the benchmarks: the machine line recorded with every figure, options, the concurrent
// request loop and its summary, percentiles.
import { spawnSync } from "node:child_process";
import { cpus, loadavg, platform, release, totalmem } from "node:os";
import { performance } from "node:perf_hooks";
import { ROOT } from "./wrangler.mjs";

export function machine() {
  const list = cpus();
  const model = (list[0]?.model ?? "unknown CPU").replace(/\s+/g, " ").trim();
  const gib = (totalmem() / 1024 ** 3).toFixed(1);
  return {
    cpu: model,
    cpus: list.length,
    memory_gib: Number(gib),
    node: process.version,
    os: `${platform()} ${release()}`,
    line: `${model} × ${list.length}, ${gib} GiB RAM, Node ${process.version}, ${platform()} ${release()}`,
  };
}

/** The tree the benchmark runs (its directory and commit, "+" when it has uncommitted changes): this one, or BENCH_TREE's. */
export function tree() {
  const git = (...args) => spawnSync("git", ["-C", ROOT, ...args], { encoding: "utf8" }).stdout?.trim() ?? "";
  return `${ROOT} at ${git("rev-parse", "--short", "HEAD") || "?"}${git("status", "--porcelain", "--untracked-files=no") ? "+" : ""}`;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/**
 * A benchmark's options: `--name value` (or `--name=value`) over its environment variable over the
 * default. `numbers`: name → { env, default, min = 1 }, whole numbers; `flags`: name → environment
 * variable (1, true or yes), set by `--name` alone. `--help` or `-h` sets `help`. Anything else
 * throws, with `usage` in the message.
 */
export function parseArgs(argv, env, { usage, numbers = {}, flags = {} }) {
  // help and usage are not listed (a benchmark's JSON output carries its options).
  const opts = Object.defineProperties({}, { help: { value: false, writable: true }, usage: { value: usage } });
  const raw = {};
  for (const [name, spec] of Object.entries(numbers)) raw[name] = (spec.env && env[spec.env]) ?? spec.default;
  for (const [name, variable] of Object.entries(flags)) opts[name] = /^(1|true|yes)$/i.test((variable && env[variable]) ?? "");
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") {
      opts.help = true;
      continue;
    }
    const m = /^--([a-z][a-z-]*)(?:=(.*))?$/.exec(arg);
    if (m && m[1] in flags && m[2] === undefined) {
      opts[m[1]] = true;
      continue;
    }
    if (!m || !(m[1] in numbers)) throw new Error(`unknown argument ${JSON.stringify(arg)}\n${usage}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`--${m[1]} needs a value\n${usage}`);
    raw[m[1]] = value;
  }
  for (const [name, spec] of Object.entries(numbers)) {
    const n = Number(raw[name]);
    const min = spec.min ?? 1;
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number >= ${min}, got ${JSON.stringify(String(raw[name]))}\n${usage}`);
    opts[name] = n;
  }
  return opts;
}

/**
 * A benchmark's options from argv and env (parseOptions(argv, env), usually through parseArgs): on a
 * usage error, the message on stderr and exit code 2; with --help, the usage on stdout and exit 0.
 */
export function optionsOrExit(parseOptions) {
  let opts;
  try {
    opts = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(err.message);
    process.exit(2);
  }
  if (opts.help) {
    console.log(opts.usage);
    process.exit(0);
  }
  return opts;
}

/**
 * Calls `send(i)` for i = first, first + 1, … with `concurrency` calls in flight, `count` calls in all,
 * or, with `durationMs`, until that much wall time has passed (calls started before then finish).
 * Each call's latency runs from the call until its promise settles (make it settle once the response
 * body is read). `cpu()` is read before and after (the server process's CPU ms, bench-server.mjs).
 */
export async function drive({ send, concurrency, count = Number.POSITIVE_INFINITY, durationMs = Number.POSITIVE_INFINITY, first = 0, cpu = () => 0 }) {
  if (!Number.isFinite(count) && !Number.isFinite(durationMs)) throw new Error("drive: give a count or a duration");
  const latencies = [];
  let next = 0;
  const cpu0 = cpu();
  const t0 = performance.now();
  const deadline = t0 + durationMs;
  const worker = async () => {
    while (next < count && performance.now() < deadline) {
      const i = first + next++;
      const s = performance.now();
      await send(i);
      latencies.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { latencies, elapsedMs: performance.now() - t0, cpuMs: cpu() - cpu0 };
}

const r2 = (x) => Math.round(x * 100) / 100;

/**
 * Rounds of drive() taken together: calls, calls a second over the rounds' wall time, latency
 * percentiles (ms), CPU ms per call, and each round's calls a second.
 */
export function summarise(parts) {
  const lat = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const ms = parts.reduce((s, p) => s + p.elapsedMs, 0);
  const cpu = parts.reduce((s, p) => s + p.cpuMs, 0);
  return {
    requests: lat.length,
    elapsed_ms: r2(ms),
    rps: r2((lat.length / ms) * 1000),
    p50_ms: r2(percentile(lat, 50)),
    p95_ms: r2(percentile(lat, 95)),
    p99_ms: r2(percentile(lat, 99)),
    max_ms: r2(lat[lat.length - 1] ?? NaN),
    cpu_ms_per_request: r2(cpu / lat.length),
    rounds_rps: parts.map((p) => Math.round((p.latencies.length / p.elapsedMs) * 1000)),
  };
}

/** The machine's load averages (1, 5, 15 min), as `uptime` prints them: recorded with every figure. */
export function load() {
  return loadavg().map((x) => Math.round(x * 100) / 100);
}

/** The cell id of (column, row), as src/sheets/cell-id.ts derives it. */
export function cellId(columnId, rowIndex) {
  const LOW = 2 ** 24;
  const tail = columnId.slice(24);
  const mask = rowIndex + 1;
  const hex6 = (n) => n.toString(16).padStart(6, "0");
  const hi = parseInt(tail.slice(0, 6), 16) ^ Math.floor(mask / LOW);
  const lo = parseInt(tail.slice(6), 16) ^ mask % LOW;
  return `${columnId.slice(0, 23)}-${hex6(hi)}${hex6(lo)}`;
}

/**
 * Prints a benchmark's result (one JSON object with `json`, else its report) and the first failed
 * requests; returns the exit code: 1 when any request failed, 0 otherwise.
 */
export function printResult(result, { json, report, errors }) {
  if (json) console.log(JSON.stringify(result));
  else console.log(report(result));
  if (errors.length > 0) {
    console.error(`ERRORS: ${errors.length}`);
    for (const e of errors.slice(0, 5)) console.error(`  ${e}`);
  }
  return errors.length > 0 ? 1 : 0;
}
