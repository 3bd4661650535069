// Seeded benchmark states: N request logs of one workspace (scripts/lib/seed-logs.mjs), their facet
// counts, ANALYZE and extra keys, kept under .bench/ between runs.
import { createHash, randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createKey } from "./keys.mjs";
import { CHUNK, dailySql, facetsSql, logsSql } from "./seed-logs.mjs";
import { workerModule } from "./worker-module.mjs";
import { applyMigrations, d1Execute, d1ExecuteFile, logDatabaseOf, ROOT } from "./wrangler.mjs";

// ---------------------------------------------------------------------------------------------
// A seeded state, whole: N logs of one workspace with their side rows, facet counts and ANALYZE,
// plus `keyCount` extra keys (suggestions are rate-limited per key). Seeding a million logs takes
// minutes, so the state is kept under .bench/ by (logs, keys, migrations, this file) and copied for
// each run (runs write to it).


function keysSql(ws, count) {
  const keys = Array.from({ length: count }, () => `pe_${randomBytes(24).toString("hex")}`);
  const rows = keys.map((k) => `(${ws}, (SELECT min(id) FROM users WHERE workspace_id = ${ws}), '${createHash("sha256").update(k).digest("hex")}', '${k.slice(0, 11)}')`);
  return { keys, sql: `INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix) VALUES ${rows.join(",\n")};` };
}

/** Seeds `logs` logs of workspace `workspace` (created with its first key) into the local D1 at persistTo. */
export async function seedLogs(persistTo, { workspace, logs, keyCount = 0, log = () => {} }) {
  const { bucketSql } = await workerModule("src/analytics/latency-buckets.ts");
  const key = createKey({ workspace, email: "bench@localhost", persistTo });
  const [[{ id: ws }]] = d1Execute(`SELECT id FROM workspaces WHERE name = '${workspace}'`, { persistTo });
  const binding = logDatabaseOf(ws, { persistTo });
  const dir = mkdtempSync(join(tmpdir(), "bench-seed-sql-"));
  try {
    const t0 = performance.now();
    for (let from = 1; from <= logs; from += CHUNK) {
      const to = Math.min(logs, from + CHUNK - 1);
      const file = join(dir, `logs-${from}.sql`);
      writeFileSync(file, logsSql(ws, from, to));
      d1ExecuteFile(file, { persistTo, binding });
      log(`  seeded ${to.toLocaleString("en-US")} logs (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
    const { keys, sql } = keysSql(ws, keyCount);
    const file = join(dir, "facets.sql");
    writeFileSync(file, `${dailySql(ws, bucketSql)}\n${facetsSql(ws)}`);
    d1ExecuteFile(file, { persistTo, binding });
    if (keyCount > 0) d1Execute(sql, { persistTo });
    log(`  daily totals, facets, keys and ANALYZE done (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    return { key, keys, workspaceId: ws };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function stateId(opts) {
  const h = createHash("sha256");
  h.update(JSON.stringify({ logs: opts.logs, keyCount: opts.keyCount, workspace: opts.workspace }));
  h.update(readFileSync(new URL(import.meta.url)));
  h.update(readFileSync(new URL("./seed-logs.mjs", import.meta.url)));
  h.update(readFileSync(join(ROOT, "src/analytics/latency-buckets.ts")));
  for (const dir of ["migrations", "migrations-logs"]) {
    const migrations = join(ROOT, dir);
    for (const f of readdirSync(migrations).filter((f) => f.endsWith(".sql")).sort()) h.update(f).update(readFileSync(join(migrations, f)));
  }
  return h.digest("hex").slice(0, 16);
}

/**
 * A fresh copy of the seeded state for these options (seeded once, then kept under .bench/; `fresh`
 * seeds again). Returns the copy's persist directory, the workspace's key and the extra keys.
 */
export async function seededState({ workspace, logs, keyCount = 0, log = () => {}, fresh = false }) {
  const cacheRoot = join(ROOT, ".bench");
  const cached = join(cacheRoot, `logs-${logs}-${stateId({ workspace, logs, keyCount })}`);
  if (fresh) rmSync(cached, { recursive: true, force: true });
  if (!existsSync(join(cached, "keys.json"))) {
    log(`seeding ${logs.toLocaleString("en-US")} request logs (kept in ${cached} for the next runs)…`);
    mkdirSync(cacheRoot, { recursive: true });
    const building = mkdtempSync(join(cacheRoot, "building-"));
    applyMigrations({ persistTo: building });
    const seeded = await seedLogs(building, { workspace, logs, keyCount, log });
    writeFileSync(join(building, "keys.json"), JSON.stringify(seeded));
    rmSync(cached, { recursive: true, force: true });
    renameSync(building, cached);
  } else log(`reusing the seeded state ${cached}`);
  const persistTo = mkdtempSync(join(tmpdir(), "promptedge-bench-"));
  cpSync(cached, persistTo, { recursive: true });
  const seeded = JSON.parse(readFileSync(join(persistTo, "keys.json"), "utf8"));
  return { persistTo, ...seeded };
}

/** The workspace and extra key count every benchmark over seeded logs uses, so they share one kept state. */
export const BENCH_WORKSPACE = "bench";
export const BENCH_KEYS = 200;
