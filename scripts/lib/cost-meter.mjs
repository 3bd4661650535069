// bench:cost's meter: an entry module bundled in place of wrangler.toml's `main` that hands the
// Worker (the tree's src/index.ts, unchanged) its bindings with every D1 database wrapped, so each
// statement's own metadata (meta.rows_written, rows_read, duration: what D1 bills and reports) is
// added up by entry point (fetch, queue, scheduled) and statement. Nothing of it is in src/: it only
// ever runs on the bench server (scripts/lib/bench-server.mjs).
//
//   GET  /__meter         the sums so far, as JSON
//   POST /__meter/reset   start again from zero
//
// A statement read through raw() carries no metadata: a writing one (INSERT, UPDATE, DELETE, REPLACE,
// WITH …) is run through all() instead, which does; a reading one goes through raw() as it was, and is
// counted in `unmetered` (its rows read are then missing from the sums).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./wrangler.mjs";

const METER = String.raw`
import { AsyncLocalStorage } from "node:async_hooks";
const phase = new AsyncLocalStorage();
let sums = fresh();
function fresh() {
  return { statements: {}, unmetered: {}, queue: { batches: 0, messages: 0, logs: 0, by_batch: [] } };
}
const WRITES = /^\s*(insert|update|delete|replace|with)\b/i;
const headOf = (sql) => sql.replace(/\s+/g, " ").trim().slice(0, 110);
function record(binding, sql, meta) {
  const p = phase.getStore() ?? "other";
  const key = p + "\u0000" + binding + "\u0000" + headOf(sql);
  const s = (sums.statements[key] ??= { phase: p, binding, sql: headOf(sql), n: 0, rows_written: 0, rows_read: 0, duration_ms: 0 });
  s.n += 1;
  s.rows_written += meta?.rows_written ?? 0;
  s.rows_read += meta?.rows_read ?? 0;
  s.duration_ms += meta?.duration ?? 0;
}
const real = new WeakMap();
function wrapStatement(stmt, sql, binding) {
  const w = {
    bind: (...values) => wrapStatement(stmt.bind(...values), sql, binding),
    run: async () => {
      const r = await stmt.run();
      record(binding, sql, r.meta);
      return r;
    },
    all: async () => {
      const r = await stmt.all();
      record(binding, sql, r.meta);
      return r;
    },
    first: async (column) => {
      const r = await stmt.all();
      record(binding, sql, r.meta);
      const row = r.results[0];
      if (row === undefined) return null;
      if (column === undefined) return row;
      if (!(column in row)) throw new Error("D1_COLUMN_NOTFOUND: " + column);
      return row[column];
    },
    raw: async (options) => {
      if (!WRITES.test(sql)) {
        const p = (phase.getStore() ?? "other") + " " + binding;
        sums.unmetered[p] = (sums.unmetered[p] ?? 0) + 1;
        return stmt.raw(options);
      }
      const r = await stmt.all();
      record(binding, sql, r.meta);
      const rows = r.results.map((row) => Object.values(row));
      return options?.columnNames ? [Object.keys(r.results[0] ?? {}), ...rows] : rows;
    },
  };
  real.set(w, stmt);
  w.__sql = sql;
  return w;
}
const wrapped = new WeakMap();
function wrapDatabase(db, binding) {
  if (wrapped.has(db)) return wrapped.get(db);
  const w = new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") return (sql) => wrapStatement(target.prepare(sql), sql, binding);
      if (prop === "batch")
        return async (statements) => {
          const results = await target.batch(statements.map((s) => real.get(s) ?? s));
          results.forEach((r, i) => record(binding, statements[i].__sql ?? "?", r.meta));
          return results;
        };
      if (prop === "withSession") return (...args) => wrapDatabase(target.withSession(...args), binding);
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  wrapped.set(db, w);
  return w;
}
const envs = new WeakMap();
function meteredEnv(env) {
  if (envs.has(env)) return envs.get(env);
  const out = { ...env };
  for (const [name, value] of Object.entries(env)) {
    if (value && typeof value.prepare === "function" && typeof value.batch === "function") out[name] = wrapDatabase(value, name);
  }
  envs.set(env, out);
  return out;
}
export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/__meter") return Response.json({ ...sums, statements: Object.values(sums.statements) });
    if (url.pathname === "/__meter/reset") {
      sums = fresh();
      return Response.json({ reset: true });
    }
    return phase.run("fetch", () => worker.fetch(request, meteredEnv(env), ctx));
  },
  async queue(batch, env, ctx) {
    let logs = 0;
    for (const m of batch.messages) logs += Array.isArray(m.body?.ids) ? m.body.ids.length : 0;
    if (batch.queue.includes("index")) {
      sums.queue.batches += 1;
      sums.queue.messages += batch.messages.length;
      sums.queue.logs += logs;
      sums.queue.by_batch.push(logs);
    }
    return phase.run("queue " + batch.queue, () => worker.queue(batch, meteredEnv(env), ctx));
  },
  async scheduled(controller, env, ctx) {
    return phase.run("scheduled", () => worker.scheduled(controller, meteredEnv(env), ctx));
  },
};
`;

/**
 * Writes the meter's entry module for the tree at ROOT (this one, or BENCH_TREE's) and answers its
 * path, for startBenchApi({ entry }).
 */
export function meterEntry() {
  const dir = mkdtempSync(join(tmpdir(), "promptedge-meter-"));
  const file = join(dir, "meter.js");
  const src = JSON.stringify(join(ROOT, "src", "index.ts"));
  writeFileSync(file, `import worker from ${src};\nexport * from ${src};\n${METER}`);
  return file;
}
