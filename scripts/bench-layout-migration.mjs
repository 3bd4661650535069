#!/usr/bin/env node
// npm run bench:layout-migration: times each statement of the search index layout migration
// (migrations-logs/0010) on a local D1 (workerd's SQLite through Miniflare) holding N logs in the layout
// before it, 99 % of them indexed as that version's indexer left them (ten side rows a log, facet
// counts, full-text entries). D1 stops a statement after 30 s, so no statement may grow with the logs.
// A measured run, never a timed test.
//
//   npm run bench:layout-migration [-- N [file]]    # N logs (default 100000); file: another version of 0010 to time
import { Miniflare } from "miniflare";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
const N = Number(process.argv[2] ?? 100000);
const dir = fileURLToPath(new URL("../migrations-logs", import.meta.url));
const file = process.argv[3] ?? `${dir}/0010_search_index_layout.sql`;
const persist = mkdtempSync(join(tmpdir(), "bench-layout-migration-"));
const mf = new Miniflare({ modules: true, script: "export default { fetch() { return new Response('') } }", d1Databases: { X: "x" }, d1Persist: persist });
const d1 = await mf.getD1Database("X");
const stmts = (file) => readFileSync(file, "utf8").split("--> statement-breakpoint").map((s) => s.trim()).filter((s) => s.replace(/--.*$/gm, "").trim());
const files = readdirSync(dir).filter((f) => f.endsWith(".sql")).sort();
for (const f of files.filter((f) => f < "0010")) for (const s of stmts(`${dir}/${f}`)) await d1.prepare(s).run();
const t = async (label, q) => { const t0 = performance.now(); await d1.prepare(q).run(); const ms = performance.now() - t0; console.log(`${(ms / 1000).toFixed(2).padStart(7)} s  ${label}`); return ms; };
const text = (n) => `'${"lorem ipsum dolor sit amet ".repeat(Math.ceil(n / 27)).slice(0, n)}'`;
await t("seed logs", `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N})
  INSERT INTO request_logs (workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_input_variables, input_tokens, output_tokens, price, request_start_time, request_end_time, input_text, output_text, output_format, body)
  SELECT 1, 'openai', 'gpt-4o-' || (i % 40), '', '', '', json_array('t' || (i % 7), 'prod', 'escalated'),
    json_object('environment', 'production', 'region', 'eu-' || (i % 5), 'user', 'u' || (i % 1000), 'session', 's' || i),
    json_object('language', 'en', 'topic', 'x' || (i % 50), 'question', 'q' || i || hex(randomblob(150))), 10, 5, 0.001,
    1700000000000 + i * 30000, 1700000000800 + i * 30000, ${text(2600)} || i, ${text(1300)} || i, 'text', randomblob(1500) FROM n`);
const indexed = Math.floor(N * 0.99);
await t("the indexed ones' marks go", `DELETE FROM request_log_unindexed WHERE request_id <= ${indexed}`);
await t("side rows", `INSERT INTO request_log_values (workspace_id, request_id, kind, key, value)
  SELECT 1, r.id, 'tag', '', j.value FROM request_logs r, json_each(r.tags) j WHERE r.id <= ${indexed}
  UNION ALL SELECT 1, r.id, 'metadata', j.key, j.value FROM request_logs r, json_each(r.metadata) j WHERE r.id <= ${indexed}
  UNION ALL SELECT 1, r.id, 'input_variable', j.key, j.value FROM request_logs r, json_each(r.prompt_input_variables) j WHERE r.id <= ${indexed}`);
await t("facets", `INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count)
  SELECT 1, f, k, v, lower(v), count(*) FROM (
    SELECT CASE kind WHEN 'tag' THEN 'tags' ELSE kind || '_values' END AS f, key AS k, value AS v FROM request_log_values
    UNION ALL SELECT kind || '_keys', '', key FROM request_log_values WHERE kind <> 'tag') GROUP BY f, k, v`);
await t("full text", `INSERT INTO request_logs_fts (rowid, input_text, output_text) SELECT id, input_text, output_text FROM request_logs WHERE id <= ${indexed}`);
console.log(`${N} logs, ${(await d1.prepare("SELECT count(*) AS n FROM request_log_values").first()).n} side rows, ${(await d1.prepare("SELECT count(*) AS n FROM request_log_facets").first()).n} facet rows`);
console.log(`load ${(await import("node:os")).loadavg().map((l) => l.toFixed(1)).join(" ")}; timing ${file}`);
let total = 0;
for (const s of stmts(file)) total += await t(s.replace(/--.*$/gm, "").trim().split("\n")[0].slice(0, 90), s);
console.log(`${(total / 1000).toFixed(2).padStart(7)} s  the migration`);
await mf.dispose();
rmSync(persist, { recursive: true, force: true });
