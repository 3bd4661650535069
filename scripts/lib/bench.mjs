// Shared by the benchmarks: the machine line recorded with every figure, and percentiles.
import { cpus, platform, release, totalmem } from "node:os";

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
