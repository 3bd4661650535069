// The layout migration of issue 37 (migrations-logs/0010, migrations/0034) on a database holding logs
// from before it: some indexed (side rows, facet counts, daily totals, full-text entries, as the indexer
// before wrote them), some still waiting (their marks in request_log_unindexed). After it every log is
// there, the indexed ones are found by every filter at once and counted as before, and the waiting
// ones are indexed once, counted once. Each database kind starts empty here and is migrated step by step.
import { applyD1Migrations, type D1Migration } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { runBatch } from "../../src/db/batch";
import { getDb } from "../../src/db/client";
import { parseFilterGroup, type FilterGroup } from "../../src/filters";
import { indexPending, searchRequestLogs, suggestRequestValues, WorkspaceLogs } from "../../src/logs";
import { facetRowsOf, indexRowsOf, searchColumnsOf, toolsOf } from "../../src/logs/index-rows";
import { dailyTotals } from "../../src/logs/indexing";
import { text } from "../helpers/fixtures";

/** The legacy logs: A and B indexed before the migration, C and D still waiting for the indexer then. */
const LOGS = {
  A: {
    tags: ["prod", "eu", "prod"],
    metadata: { env: "prod", note: "n".repeat(600), long: "y".repeat(1100) },
    prompt_input_variables: { topic: "dogs", n: 2 },
    input: { type: "chat", messages: [{ role: "user", content: text("tell me about dogs") }], tools: [{ type: "function", function: { name: "fetch_page" } }] },
    output: { type: "chat", messages: [{ role: "assistant", content: text('{"label": "positive"}') }] },
  },
  B: {
    tags: ["prod"],
    metadata: { env: "staging" },
    prompt_input_variables: { topic: "cats" },
    input: { type: "chat", messages: [{ role: "user", content: text("tell me about cats") }] },
    output: { type: "chat", messages: [{ role: "assistant", content: text("cats purr") }] },
  },
  C: {
    tags: ["eu"],
    metadata: { env: "prod" },
    prompt_input_variables: {},
    input: { type: "chat", messages: [{ role: "user", content: text("look up my order") }], tools: [{ type: "function", function: { name: "lookup" } }] },
    output: { type: "chat", messages: [{ role: "assistant", content: text("it ships monday") }] },
  },
  D: {
    tags: ["prod"],
    metadata: {},
    prompt_input_variables: {},
    input: { type: "chat", messages: [{ role: "user", content: text("rate this") }] },
    output: { type: "chat", messages: [{ role: "assistant", content: text('{"label": "negative"}') }] },
  },
} as const;
type Name = keyof typeof LOGS;
const INDEXED: Name[] = ["A", "B"];

/** Migrations up to (not including) the layout migration (found by name: its number depends on what landed before it). */
const before = (list: D1Migration[]) => list.slice(0, list.findIndex((m) => m.name.includes("_search_index_layout")));

/** Writes the legacy logs into a database migrated up to the layout before, as that version's writer and indexer did. */
async function legacyLogs(d1: D1Database, ws: number): Promise<Record<Name, number>> {
  const db = getDb(d1);
  const ids = {} as Record<Name, number>;
  let at = Date.UTC(2024, 2, 1, 10);
  for (const [name, log] of Object.entries(LOGS) as [Name, (typeof LOGS)[Name]][]) {
    const s = searchColumnsOf(log as never);
    at += 3_600_000;
    // The insert trigger of that version marks every new log unindexed; its writer added the tool names.
    const row = await d1
      .prepare(
        `INSERT INTO request_logs (workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_input_variables, input_tokens, output_tokens, price,
           request_start_time, request_end_time, input_text, output_text, output_format) VALUES (?1, 'openai', 'gpt-4o', ?2, ?3, '{}', ?4, ?5, ?6, 10, 5, 0.5, ?7, ?8, ?9, ?10, ?11) RETURNING id`,
      )
      .bind(ws, JSON.stringify(log.input), JSON.stringify(log.output), JSON.stringify(log.tags), JSON.stringify(log.metadata), JSON.stringify(log.prompt_input_variables), at, at + 1500, s.inputText, s.outputText, s.outputFormat)
      .first<{ id: number }>();
    ids[name] = row!.id;
    await d1.prepare("UPDATE request_log_unindexed SET tools = ? WHERE request_id = ?").bind(JSON.stringify(toolsOf(log as never)), row!.id).run();
  }
  for (const name of INDEXED) {
    const log = LOGS[name] as never;
    const id = ids[name];
    const values = indexRowsOf({ ...(log as object), tools: toolsOf(log), outputText: searchColumnsOf(log).outputText } as never);
    const facets = facetRowsOf({ model: "gpt-4o", provider: "openai", status: "SUCCESS", promptId: null, promptName: null }, values);
    await runBatch(db, [
      ...values.map((v) => sql`INSERT INTO request_log_values (workspace_id, request_id, kind, key, value) VALUES (${ws}, ${id}, ${v[0]}, ${v[1]}, ${v[2]})`),
      // That version kept every value's fold, equal or not.
      ...facets.map(
        ([field, key, value]) =>
          sql`INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count) VALUES (${ws}, ${field}, ${key}, ${value}, ${value.toLowerCase()}, 1)
              ON CONFLICT (workspace_id, field, key, value) DO UPDATE SET count = count + 1`,
      ),
      sql`INSERT INTO request_logs_fts (rowid, input_text, output_text) SELECT id, input_text, output_text FROM request_logs WHERE id = ${id}`,
      dailyTotals(sql`request_logs AS r`, ["all", "model", "provider", "prompt", "status"], 1, sql`r.id = ${id}`),
      sql`DELETE FROM request_log_unindexed WHERE request_id = ${id}`,
    ]);
  }
  return ids;
}

const group = (raw: unknown): FilterGroup => {
  const parsed = parseFilterGroup(raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.group;
};

for (const [kind, binding, migrations] of [
  ["log database", "MIGRATE_LOGS", () => env.TEST_LOG_MIGRATIONS],
  ["control database", "MIGRATE_CONTROL", () => env.TEST_MIGRATIONS],
] as const) {
  describe(`the search index layout migration, ${kind}`, { timeout: 60_000 }, () => {
    it("keeps every log, finds the indexed ones by every filter as before, and indexes and counts the waiting ones once", async () => {
      const d1 = (env as unknown as Record<string, D1Database>)[binding];
      await applyD1Migrations(d1, before(migrations()));
      let ws = 1;
      if (binding === "MIGRATE_CONTROL") ws = (await d1.prepare("INSERT INTO workspaces (name) VALUES ('migrated') RETURNING id").first<{ id: number }>())!.id;
      const ids = await legacyLogs(d1, ws);
      const facetsBefore = (await d1.prepare("SELECT field, key, value, count FROM request_log_facets WHERE workspace_id = ? ORDER BY field, key, value").bind(ws).all()).results;
      const dailyBefore = (await d1.prepare("SELECT dim, day, key, bucket, requests, cost FROM request_log_daily ORDER BY dim, key, day, bucket").all()).results;

      await applyD1Migrations(d1, migrations());

      const db = getDb(d1);
      const logs = WorkspaceLogs.single(ws, db);
      const find = async (filters: unknown[], q?: string) =>
        (await searchRequestLogs(db, logs, ws, { filter_group: group({ logic: "AND", filters }), q, page: 1, per_page: 100 })).items.map((i) => i.id).sort((a, b) => a - b);
      const idsOf = (...names: Name[]) => names.map((n) => ids[n]).sort((a, b) => a - b);
      const facetCounts = async () => (await d1.prepare("SELECT field, key, value, count FROM request_log_facets WHERE workspace_id = ? ORDER BY field, key, value").bind(ws).all()).results;

      // Nothing lost; the watermarks at the newest log, the waiting logs still listed.
      expect(await d1.prepare("SELECT count(*) AS n FROM request_logs").first("n")).toBe(4);
      expect(await d1.prepare("SELECT indexed_to, counted_to FROM log_index_state").first()).toEqual({ indexed_to: ids.D, counted_to: ids.D });
      expect((await d1.prepare("SELECT request_id FROM request_log_unindexed ORDER BY request_id").all()).results.map((r) => r.request_id)).toEqual([ids.C, ids.D]);
      // The indexed logs keep their values (the long and the over-long metadata in extra_values, as indexed), counts and totals.
      const extra = JSON.parse((await d1.prepare("SELECT extra_values FROM request_logs WHERE id = ?").bind(ids.A).first<string>("extra_values"))!);
      expect(extra).toEqual([
        ["metadata", "note", "n".repeat(600)],
        ["metadata", "long", `${"y".repeat(1024)}\u2026`],
        ["tool", "", "fetch_page"],
        ["input_variable", "topic", "dogs"],
        ["input_variable", "n", "2"],
        ["output", "label", "positive"],
      ]);
      expect(await d1.prepare("SELECT extra_values FROM request_logs WHERE id = ?").bind(ids.B).first("extra_values")).toBe('[["input_variable","topic","cats"]]');
      expect(await d1.prepare("SELECT count(*) AS n FROM request_logs WHERE id IN (?, ?) AND extra_values IS NULL").bind(ids.C, ids.D).first("n")).toBe(2);
      expect((await facetCounts()).map((f) => f.count)).toEqual(facetsBefore.map((f) => f.count));
      expect((await d1.prepare("SELECT dim, day, key, bucket, requests, cost FROM request_log_daily ORDER BY dim, key, day, bucket").all()).results).toEqual(dailyBefore);
      // … and every filter on them finds them at once; the waiting ones not yet.
      expect(await find([{ field: "tags", operator: "contains", value: "eu" }])).toEqual(idsOf("A"));
      expect(await find([{ field: "tags", operator: "contains", value: "prod" }])).toEqual(idsOf("A", "B"));
      expect(await find([{ field: "metadata", operator: "key_equals", nested_key: "env", value: "prod" }])).toEqual(idsOf("A"));
      expect(await find([{ field: "metadata", operator: "key_equals", nested_key: "note", value: "n".repeat(600) }])).toEqual(idsOf("A"));
      expect(await find([{ field: "metadata", operator: "key_equals", nested_key: "long", value: "y".repeat(1100) }])).toEqual(idsOf("A"));
      expect(await find([{ field: "input_variables", operator: "key_equals", nested_key: "n", value: "2" }])).toEqual(idsOf("A"));
      expect(await find([{ field: "tool_names", operator: "contains", value: "fetch_page" }])).toEqual(idsOf("A"));
      expect(await find([{ field: "output", operator: "key_equals", nested_key: "label", value: "positive" }])).toEqual(idsOf("A"));
      expect(await find([{ field: "metadata_keys", operator: "is_not_empty" }])).toEqual(idsOf("A", "B"));
      expect(await find([], "dogs")).toEqual(idsOf("A"));
      expect(await find([], "tell")).toEqual(idsOf("A", "B"));

      // The indexer takes the waiting logs, once; a second run finds nothing.
      expect(await indexPending(db, { now: Date.now() + 3_600_000 })).toBe(2);
      expect(await indexPending(db, { now: Date.now() + 3_600_000 })).toBe(0);
      expect(await d1.prepare("SELECT count(*) AS n FROM request_log_unindexed").first("n")).toBe(0);
      expect(await find([{ field: "tags", operator: "contains", value: "eu" }])).toEqual(idsOf("A", "C"));
      expect(await find([{ field: "tags", operator: "contains", value: "prod" }])).toEqual(idsOf("A", "B", "D"));
      expect(await find([{ field: "tool_names", operator: "contains", value: "lookup" }])).toEqual(idsOf("C"));
      expect(await find([{ field: "output", operator: "key_equals", nested_key: "label", value: "negative" }])).toEqual(idsOf("D"));
      expect(await find([], "monday")).toEqual(idsOf("C"));
      // Each log counted once in the facets and the daily totals: prod is A's (once, though listed twice), B's and D's.
      const tags = await suggestRequestValues(logs, ws, { field: "tags", limit: 10 });
      expect(tags.counts).toEqual({ prod: 3, eu: 2 });
      expect((await suggestRequestValues(logs, ws, { field: "metadata_values", metadata_key: "env", limit: 10 })).counts).toEqual({ prod: 2, staging: 1 });
      expect((await suggestRequestValues(logs, ws, { field: "tool_names", limit: 10 })).counts).toEqual({ fetch_page: 1, lookup: 1 });
      expect((await suggestRequestValues(logs, ws, { field: "engine", limit: 10 })).counts).toEqual({ "gpt-4o": 4 });
      expect(await d1.prepare("SELECT sum(requests) AS n, sum(cost) AS c FROM request_log_daily WHERE dim = 'all'").first()).toEqual({ n: 4, c: 2 });
      // A log deleted (the archive job's delete) takes its search entry with it, and the index stays whole.
      await d1.prepare("DELETE FROM request_logs WHERE id = ?").bind(ids.A).run();
      expect(await find([{ field: "tags", operator: "contains", value: "eu" }])).toEqual(idsOf("C"));
      await d1.prepare("INSERT INTO request_log_search (request_log_search) VALUES ('integrity-check')").run();
    });
  });
}
