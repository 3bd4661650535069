// Node-side helpers around the wrangler CLI: run it offline, execute SQL on the local or deployed D1,
// apply migrations. Used by the keys CLI, `npm run dev`, the SDK test and the benchmarks.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The tree whose Worker, wrangler.toml and migrations the scripts use: this one, or the checkout named
 * by BENCH_TREE (with its own node_modules), so one benchmark script can measure the tree before a
 * change and the tree after it alike.
 */
export const ROOT = process.env.BENCH_TREE ? resolve(process.env.BENCH_TREE) : join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const WRANGLER = join(ROOT, "node_modules", ".bin", "wrangler");

/** Wrangler must work with no network: no metrics, no fetch of the `cf` object. */
export const OFFLINE_ENV = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};

function wranglerBin() {
  if (!existsSync(WRANGLER)) throw new Error("wrangler is not installed: run `npm ci` first");
  return WRANGLER;
}

/** Runs wrangler to completion; throws with its output when it fails. */
export function wrangler(args, { input } = {}) {
  const r = spawnSync(wranglerBin(), args, { cwd: ROOT, env: { ...OFFLINE_ENV, CI: "true" }, encoding: "utf8", input, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    const out = `${r.stdout ?? ""}\n${r.stderr ?? ""}`.trim();
    throw new Error(`wrangler ${args.slice(0, 3).join(" ")} failed:\n${out}`);
  }
  return r.stdout;
}

/** Starts a long-running wrangler (dev); the caller owns the child process. */
export function spawnWrangler(args, options = {}) {
  return spawn(wranglerBin(), args, { cwd: ROOT, env: OFFLINE_ENV, stdio: ["ignore", "pipe", "pipe"], ...options });
}

function target({ remote = false, persistTo } = {}) {
  if (remote) return ["--remote"];
  return persistTo ? ["--local", "--persist-to", persistTo] : ["--local"];
}

/** The log databases' bindings, as wrangler.toml's LOG_SHARDS lists them. */
export function logShardBindings() {
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  const listed = /^LOG_SHARDS\s*=\s*"([^"]*)"/m.exec(toml);
  return listed ? listed[1].split(",").map((s) => s.trim()).filter(Boolean) : [];
}

/** Applies the control database's migrations, then the log databases' to each shard. */
export function applyMigrations(opts = {}) {
  wrangler(["d1", "migrations", "apply", "DB", ...target(opts)]);
  for (const binding of logShardBindings()) wrangler(["d1", "migrations", "apply", binding, ...target(opts)]);
}

/** wrangler.toml's D1 databases: binding, the id a local state keeps it under, migrations folder and table. */
export function d1Databases() {
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  return toml
    .split(/^(?=\[)/m)
    .filter((block) => block.startsWith("[[d1_databases]]"))
    .map((block) => {
      const field = (name) => new RegExp(`^${name}\\s*=\\s*"([^"]*)"`, "m").exec(block)?.[1];
      return {
        binding: field("binding"),
        id: field("preview_database_id") ?? field("database_id"),
        migrationsDir: field("migrations_dir") ?? "migrations",
        migrationsTable: field("migrations_table") ?? "d1_migrations",
      };
    });
}

/** Whether any database has a migration file its bookkeeping table does not list (or has no such table yet). */
async function migrationsPending(env, databases) {
  for (const d of databases) {
    const files = readdirSync(join(ROOT, d.migrationsDir)).filter((f) => f.endsWith(".sql"));
    const applied = await env[d.binding]
      .prepare(`SELECT name FROM ${d.migrationsTable}`)
      .all()
      .then((r) => new Set(r.results.map((row) => row.name)), () => new Set());
    if (files.some((f) => !applied.has(f))) return true;
  }
  return false;
}

/**
 * The local D1 databases, open in this process with every migration applied, for a command that runs
 * several batches: one runtime start-up (about a second) for all of them, where every `wrangler d1` run
 * starts its own (seconds each, three just to find the migrations applied). It opens the same files
 * `wrangler d1 execute --local` does (Miniflare, <state>/v3/d1, each database by its id); pending
 * migrations are still applied by `wrangler d1 migrations apply`, so their bookkeeping stays wrangler's.
 * @returns {Promise<{ env: Record<string, any>, dispose: () => Promise<void> }>}
 */
export async function openLocalD1({ persistTo } = {}) {
  const { Miniflare } = await import("miniflare");
  const databases = d1Databases();
  const d1Persist = join(resolve(ROOT, persistTo ?? join(".wrangler", "state")), "v3", "d1");
  const open = async () => {
    const mf = new Miniflare({ modules: true, script: "", d1Persist, d1Databases: Object.fromEntries(databases.map((d) => [d.binding, d.id])) });
    const env = Object.fromEntries(await Promise.all(databases.map(async (d) => [d.binding, await mf.getD1Database(d.binding)])));
    return { env, dispose: () => mf.dispose() };
  };
  let local = await open();
  if (await migrationsPending(local.env, databases)) {
    await local.dispose();
    applyMigrations({ persistTo });
    local = await open();
  }
  return local;
}

/**
 * A fresh local state with every migration applied, in a new temporary directory. Applying them takes
 * one wrangler run per database (tens of seconds on a busy machine), so the migrated state is made
 * once per set of migrations (kept under .bench/) and copied: each test server and benchmark then
 * starts from its own copy in a moment. Concurrent first callers may each build one; one is kept.
 */
export function migratedState() {
  const h = createHash("sha256");
  for (const dir of ["migrations", "migrations-logs"]) {
    for (const f of readdirSync(join(ROOT, dir)).filter((f) => f.endsWith(".sql")).sort()) h.update(f).update(readFileSync(join(ROOT, dir, f)));
  }
  h.update(logShardBindings().join(","));
  const cacheRoot = join(ROOT, ".bench");
  const cached = join(cacheRoot, `migrated-${h.digest("hex").slice(0, 16)}`);
  if (!existsSync(join(cached, "ready"))) {
    mkdirSync(cacheRoot, { recursive: true });
    const building = mkdtempSync(join(cacheRoot, "building-"));
    applyMigrations({ persistTo: building });
    writeFileSync(join(building, "ready"), "");
    try {
      renameSync(building, cached);
    } catch {
      // Another caller kept its copy first: the same migrations, so either will do.
      rmSync(building, { recursive: true, force: true });
    }
  }
  const persistTo = mkdtempSync(join(tmpdir(), "promptedge-"));
  cpSync(cached, persistTo, { recursive: true });
  return persistTo;
}

/** Executes SQL (one or more statements) on `binding` (the control database by default) and returns the rows of each statement. */
export function d1Execute(sqlText, opts = {}) {
  const out = wrangler(["d1", "execute", opts.binding ?? "DB", ...target(opts), "--json", "--command", sqlText]);
  const start = out.indexOf("[");
  const parsed = JSON.parse(out.slice(start));
  return parsed.map((r) => r.results ?? []);
}

/** Executes a SQL file against the local (or remote) D1; for seeding benchmarks. */
export function d1ExecuteFile(file, opts = {}) {
  return wrangler(["d1", "execute", opts.binding ?? "DB", ...target(opts), "--file", file, "--yes"]);
}

/** A SQL string literal. Keys CLI values come from the operator's own command line. */
export function lit(value) {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number") return String(value);
  const s = String(value);
  if (s.includes("\u0000")) throw new Error("values may not contain NUL characters");
  return `'${s.replace(/'/g, "''")}'`;
}

/**
 * The log database of workspace `ws` (its binding): where it is placed, or, when it is not yet, the
 * first log database, where it is placed now (seeders write its logs there directly).
 */
export function logDatabaseOf(ws, opts = {}) {
  const first = logShardBindings()[0] ?? "DB";
  const [, [row]] = d1Execute(`UPDATE workspaces SET log_shard = ${lit(first)} WHERE id = ${Number(ws)} AND log_shard IS NULL; SELECT log_shard FROM workspaces WHERE id = ${Number(ws)};`, opts);
  return row.log_shard;
}
