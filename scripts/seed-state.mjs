#!/usr/bin/env node
// Seeds (or finds) the kept benchmark state of N logs under .bench/, for bench:search and bench:targets.
//   node scripts/seed-state.mjs 1000000
import { rmSync } from "node:fs";
import { BENCH_KEYS, BENCH_WORKSPACE, seededState } from "./lib/seeded-state.mjs";

const logs = Number(process.argv[2] ?? 1_000_000);
const s = await seededState({ workspace: BENCH_WORKSPACE, logs, keyCount: BENCH_KEYS, log: console.log });
rmSync(s.persistTo, { recursive: true, force: true });
