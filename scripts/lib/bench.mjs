// Shared by the benchmarks: the machine line recorded with every figure, and percentiles.
import { cpus, loadavg, platform, release, totalmem } from "node:os";

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

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** A benchmark's options from argv and env, or its usage error on stderr and exit code 2. */
export function optionsOrExit(parseOptions) {
  try {
    return parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(err.message);
    process.exit(2);
  }
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
