// The layout migration of issue 37 (migrations-logs/0010, migrations/0034) on a database holding logs
// from before it: some indexed (side rows, facet counts, daily totals, full-text entries, as the indexer
// before wrote them), some still waiting (their marks in request_log_unindexed). After it every log is
// there and counted as before; the background move (src/logs/layout-move.ts), stopped and resumed,
// gives the indexed ones their search entries once, and they are found by every filter; the waiting
// ones are indexed once, counted once. Each database kind starts empty here and is migrated step by step.
import { applyD1Migrations, type D1Migration } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { runBatch } from "../../src/db/batch";
import { getDb } from "../../src/db/client";
import { parseFilterGroup, type FilterGroup } from "../../src/filters";
import { indexPending, moveToLayout, rollupAbLogs, searchRequestLogs, suggestRequestValues, WorkspaceLogs } from "../../src/logs";
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
      const search = (filters: unknown[], q?: string, on = logs, w = ws) => searchRequestLogs(db, on, w, { filter_group: group({ logic: "AND", filters }), q, page: 1, per_page: 100 });
      const find = async (filters: unknown[], q?: string) => (await search(filters, q)).items.map((i) => i.id).sort((a, b) => a - b);
      // Whether a search says logs still waiting for the move are left out (index_incomplete).
      const incomplete = async (filters: unknown[], q?: string) => (await search(filters, q)).index_incomplete;
      const idsOf = (...names: Name[]) => names.map((n) => ids[n]).sort((a, b) => a - b);
      const facetCounts = async () => (await d1.prepare("SELECT field, key, value, count FROM request_log_facets WHERE workspace_id = ? ORDER BY field, key, value").bind(ws).all()).results;

      // Nothing lost; the watermarks at the newest log, the waiting logs still listed; the move's cursor at the newest log.
      expect(await d1.prepare("SELECT count(*) AS n FROM request_logs").first("n")).toBe(4);
      expect(await d1.prepare("SELECT indexed_to, counted_to, moved_to FROM log_index_state").first()).toEqual({ indexed_to: ids.D, counted_to: ids.D, moved_to: ids.D });
      expect((await d1.prepare("SELECT request_id FROM request_log_unindexed ORDER BY request_id").all()).results.map((r) => r.request_id)).toEqual([ids.C, ids.D]);
      expect(await d1.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'request_log_layout_move'").first("n")).toBe(0);

      // The migration wrote nothing per log: the indexed logs wait for the move, counted already, found by id and scalar filters only.
      expect(await d1.prepare("SELECT count(*) AS n FROM request_logs WHERE extra_values IS NOT NULL").first("n")).toBe(0);
      expect(await find([{ field: "tags", operator: "contains", value: "prod" }])).toEqual([]);
      expect(await find([{ field: "engine", operator: "is", value: "gpt-4o" }])).toEqual(idsOf("A", "B", "C", "D"));
      expect((await facetCounts()).map((f) => f.count)).toEqual(facetsBefore.map((f) => f.count));
      // … and a search that reads the index says it is incomplete meanwhile; one on the logs' own fields is complete.
      expect(await incomplete([{ field: "tags", operator: "contains", value: "prod" }])).toBe(true);
      expect(await incomplete([{ field: "metadata", operator: "key_equals", nested_key: "env", value: "prod" }])).toBe(true);
      expect(await incomplete([{ field: "tags", operator: "not_contains", value: "prod" }])).toBe(true);
      expect(await incomplete([{ field: "engine", operator: "is", value: "gpt-4o" }, { logic: "OR", filters: [{ field: "tool_names", operator: "is_empty" }] }])).toBe(true);
      expect(await incomplete([], "dogs")).toBe(true);
      expect(await incomplete([{ field: "engine", operator: "is", value: "gpt-4o" }])).toBe(false);
      expect(await incomplete([], "  ")).toBe(false);
      const filtered = (field: string) => suggestRequestValues(logs, ws, { field: field as never, filter_group: group({ logic: "AND", filters: [{ field: "engine", operator: "is", value: "gpt-4o" }] }), limit: 10 });
      expect((await filtered("tool_names")).index_incomplete).toBe(true);
      expect((await filtered("engine")).index_incomplete).toBe(false);
      expect((await suggestRequestValues(logs, ws, { field: "tags", limit: 10 })).index_incomplete).toBe(false);
      // A workspace with no log from before the upgrade on the same database: complete.
      const other =
        binding === "MIGRATE_CONTROL" ? (await d1.prepare("INSERT INTO workspaces (name) VALUES ('after the upgrade') RETURNING id").first<{ id: number }>())!.id : ws + 1000;
      await d1.prepare("INSERT INTO request_logs (workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_input_variables, request_start_time, request_end_time, extra_values) VALUES (?, 'openai', 'gpt-4o', '{}', '{}', '{}', '[\"x\"]', '{}', '{}', 1, 2, '[]')").bind(other).run();
      expect((await search([{ field: "tags", operator: "contains", value: "x" }], undefined, WorkspaceLogs.single(other, db), other)).index_incomplete).toBe(false);
      await d1.prepare("DELETE FROM request_logs WHERE workspace_id = ?").bind(other).run();
      // The move, newest first, a bounded batch at a time; it stops after B (a crash, or its budget) and
      // the next run resumes below it. D and C are the indexer's (listed): passed over, not moved.
      expect(await moveToLayout(db, 3)).toBe(3);
      expect(await d1.prepare("SELECT moved_to FROM log_index_state").first("moved_to")).toBe(ids.B - 1);
      expect(await find([{ field: "tags", operator: "contains", value: "prod" }])).toEqual(idsOf("B"));
      expect(await incomplete([{ field: "tags", operator: "contains", value: "prod" }])).toBe(true);
      expect(await d1.prepare("SELECT count(*) AS n FROM request_logs WHERE extra_values IS NOT NULL").first("n")).toBe(1);
      // Two runs at once (the cron and a snapshot): one moves A, the other's batch finds the cursor moved and writes nothing.
      expect((await Promise.all([moveToLayout(db), moveToLayout(db)])).sort()).toEqual([0, 1]);
      expect(await d1.prepare("SELECT moved_to FROM log_index_state").first("moved_to")).toBe(0);
      expect(await moveToLayout(db)).toBe(0);
      expect(await d1.prepare("SELECT count(*) AS n FROM request_log_search").first("n")).toBe(2);
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
      // The move over, no search says it is incomplete.
      expect(await incomplete([{ field: "tags", operator: "contains", value: "prod" }], "tell")).toBe(false);
      expect((await suggestRequestValues(logs, ws, { field: "tool_names", filter_group: group({ logic: "AND", filters: [{ field: "tags", operator: "contains", value: "prod" }] }), limit: 10 })).index_incomplete).toBe(false);

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

describe("the fewer-rows migration (idempotency keys by period, the A/B watermark), log database", { timeout: 60_000 }, () => {
  it("keeps the keys still in their window (in their period), and counts the A/B logs not yet counted once", async () => {
    const d1 = env.MIGRATE_LOGS_ROWS;
    const all = env.TEST_LOG_MIGRATIONS;
    await applyD1Migrations(d1, all.slice(0, all.findIndex((m) => m.name.includes("_fewer_rows_per_log"))));
    const ws = 7;
    const insert = (ab: boolean) =>
      d1
        .prepare(
          `INSERT INTO request_logs (workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_input_variables, price, request_start_time, request_end_time, extra_values, ab_test_id, ab_variant)
           VALUES (?1, 'openai', 'gpt-4o', '{}', '{}', '{}', '[]', '{}', '{}', 0.5, ?2, ?2 + 100, '[]', ?3, ?4) RETURNING id`,
        )
        .bind(ws, Date.UTC(2026, 0, 5), ab ? 3 : null, ab ? "b" : null)
        .first<number>("id");
    // That version's insert trigger marks each A/B log; its rollup step deleted the first's mark when it counted it.
    const [counted, plain, pendingA, pendingB] = [await insert(true), await insert(false), await insert(true), await insert(true)];
    expect((await d1.prepare("SELECT request_id FROM ab_rollup_pending ORDER BY 1").all()).results.map((r) => r.request_id)).toEqual([counted, pendingA, pendingB]);
    await d1.prepare("DELETE FROM ab_rollup_pending WHERE request_id = ?").bind(counted).run();
    const now = Date.now();
    const key = (k: string, age: number) =>
      d1.prepare("INSERT INTO idempotency_keys (workspace_id, key, fingerprint, request_log_id, status, answer, created_at) VALUES (?, ?, 'f', ?, 201, '{}', ?)").bind(ws, k, plain, now - age).run();
    await key("live-key", 3_600_000);
    await key("old-key", 25 * 3_600_000);
    await key("body live", 60_000);
    await key("body old", 11 * 60_000);

    await applyD1Migrations(d1, all);

    expect(await d1.prepare("SELECT ab_rolled_to FROM log_index_state").first("ab_rolled_to")).toBe(pendingA! - 1);
    expect(await d1.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name IN ('ab_rollup_pending', 'request_logs_ab_pending')").first("n")).toBe(0);
    expect((await d1.prepare("SELECT key, window_ms, bucket, created_at FROM idempotency_keys ORDER BY key").all()).results).toEqual([
      { key: "body live", window_ms: 600_000, bucket: Math.floor((now - 60_000) / 600_000), created_at: now - 60_000 },
      { key: "live-key", window_ms: 86_400_000, bucket: Math.floor((now - 3_600_000) / 86_400_000), created_at: now - 3_600_000 },
    ]);
    // The rollup step counts the two logs still waiting, once; the one counted before stays as it was.
    const db = getDb(d1);
    const keys = async () => new Map<number, string | null>();
    expect(await rollupAbLogs(db, keys)).toBe(2);
    expect(await rollupAbLogs(db, keys)).toBe(0);
    expect(await d1.prepare("SELECT sum(requests) AS n FROM ab_variant_daily WHERE ab_test_id = 3").first("n")).toBe(2);
    expect(await d1.prepare("SELECT ab_rolled_to FROM log_index_state").first("ab_rolled_to")).toBe(pendingB);
    // A new A/B log past the watermark is counted by the next run, once.
    await insert(true);
    expect(await rollupAbLogs(db, keys)).toBe(1);
    expect(await d1.prepare("SELECT sum(requests) AS n FROM ab_variant_daily WHERE ab_test_id = 3").first("n")).toBe(3);
  });

  it("is the same SQL for the control database's log tables", () => {
    const sqlOf = (list: D1Migration[]) => list.find((m) => m.name.includes("_fewer_rows_per_log"))!.queries;
    expect(sqlOf(env.TEST_MIGRATIONS)).toEqual(sqlOf(env.TEST_LOG_MIGRATIONS));
  });
});

describe("the signal-results-by-id migration (results without a name, A/B signal rows by signal id), log database", { timeout: 60_000 }, () => {
  it("keeps every result, and moves each signal's A/B rows from its name to its id, adding up what one id gets", async () => {
    const d1 = env.MIGRATE_LOGS_SIGNALS;
    const all = env.TEST_LOG_MIGRATIONS;
    await applyD1Migrations(d1, all.slice(0, all.findIndex((m) => m.name.includes("_signal_results_by_id"))));
    const ws = 7;
    const day = Date.UTC(2026, 0, 5);
    const result = (requestId: number, signalId: number, name: string, result: number) =>
      d1
        .prepare("INSERT INTO signal_results (request_id, signal_id, workspace_id, signal_name, revision, result, status, day) VALUES (?, ?, ?, ?, 1, ?, 'ok', ?)")
        .bind(requestId, signalId, ws, name, result, day)
        .run();
    // "Polite" is signal 5; "Refund" was signal 6, deleted, and is signal 9 now (its newest id); "Old name" has no result left here.
    await result(1, 5, "Polite", 1);
    await result(1, 6, "Refund", 0);
    await result(2, 9, "Refund", 1);
    const metric = (variant: string, kind: string, name: string, n: number, sum: number, d = day) =>
      d1.prepare("INSERT INTO ab_variant_metrics (workspace_id, ab_test_id, variant, day, kind, name, n, sum, sum_sq) VALUES (?, 3, ?, ?, ?, ?, ?, ?, ?)").bind(ws, variant, d, kind, name, n, sum, sum).run();
    await metric("base", "signal", "Polite", 4, 3);
    await metric("base", "signal", "Refund", 2, 1);
    await metric("base", "signal", "Old name", 5, 5);
    await metric("base", "score", "quality", 2, 150);
    // Two days of one signal stay two rows; two variants too.
    await metric("base", "signal", "Refund", 1, 0, day + 86_400_000);
    await metric("challenger", "signal", "Refund", 3, 3);

    await applyD1Migrations(d1, all);

    expect((await d1.prepare("SELECT request_id, signal_id, result FROM signal_results ORDER BY 1, 2").all()).results).toEqual([
      { request_id: 1, signal_id: 5, result: 1 },
      { request_id: 1, signal_id: 6, result: 0 },
      { request_id: 2, signal_id: 9, result: 1 },
    ]);
    expect((await d1.prepare("SELECT name FROM pragma_table_info('signal_results') WHERE name = 'signal_name'").all()).results).toEqual([]);
    expect(await d1.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'signal_results_signal'").first("n")).toBe(1);
    expect((await d1.prepare("SELECT variant, day, kind, name, n, sum FROM ab_variant_metrics ORDER BY kind, name, variant, day").all()).results.map((r) => ({ ...r, day: (r.day as number) - day }))).toEqual([
      { variant: "base", day: 0, kind: "score", name: "quality", n: 2, sum: 150 },
      { variant: "base", day: 0, kind: "signal", name: "5", n: 4, sum: 3 },
      { variant: "base", day: 0, kind: "signal", name: "9", n: 2, sum: 1 },
      { variant: "base", day: 86_400_000, kind: "signal", name: "9", n: 1, sum: 0 },
      { variant: "challenger", day: 0, kind: "signal", name: "9", n: 3, sum: 3 },
      // Kept as it was, under a kind nothing reads: no result tells which signal it was.
      { variant: "base", day: 0, kind: "signal_name", name: "Old name", n: 5, sum: 5 },
    ]);
  });

  it("is the same SQL for the control database's log tables", () => {
    const sqlOf = (list: D1Migration[]) => list.find((m) => m.name.includes("_signal_results_by_id"))!.queries;
    expect(sqlOf(env.TEST_MIGRATIONS)).toEqual(sqlOf(env.TEST_LOG_MIGRATIONS));
  });
});
