// POST /api/public/v2/traces/search: traces seeded through POST /v1/traces, listed newest first with their
// summaries, filtered by the trace filter group (AND / OR across spans, SPAN_AND / SPAN_OR within one span),
// paged by number and by cursor; the request's bound (windows of spans) never loses or repeats a trace;
// bad bodies and cursors are 400s; another workspace's traces never show.
import { beforeAll, describe, expect, it } from "vitest";
import { priceOf } from "../../src/converters/pricing";
import { parseTraceFilterGroup } from "../../src/filters/traces";
import { searchTraces, type TraceSearchInput } from "../../src/logs";
import { windowRowsQuery, windowSpansQuery } from "../../src/logs/trace-search";
import { call, createWorkspace, json, logsDb, logsOf, shareLogsDb, type TestKey } from "../helpers/api";
import { hexOf, llm, sendSpans, str } from "../helpers/otlp";

const PATH = "/api/public/v2/traces/search";
const T0 = Date.UTC(2026, 5, 1);
const H = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

let ws: TestKey;
let other: TestKey;
const ids = { A: "", B: "", C: "", D: "", X: "" };

/**
 * A "agent-turn" (T0+1h, 10 s): LLM gpt-4o; tool "search" (env=prod) calling LLM claude.
 * B "agent-turn" (T0+2h, 5 s, error): failing tool "calculator", LLM gpt-4o.
 * C "batch-job" (T0+3h, 1 s): one span.
 * D "late-root" (T0+4h): a child sent first, then the root that starts 2 s before it.
 * X: another workspace's trace on the same log database (T0+5h).
 */
beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
  await shareLogsDb(other, ws);
  for (const k of Object.keys(ids) as (keyof typeof ids)[]) ids[k] = hexOf(32);
  const [rA, tA] = [hexOf(16), hexOf(16)];
  await sendSpans(ws, ids.A, T0 + H, [
    { id: rA, name: "agent-turn", kind: 2, start: 0, end: 10_000, status: 1 },
    { id: hexOf(16), parent: rA, name: "chat gpt-4o", kind: 3, start: 1000, end: 3000, attrs: llm("gpt-4o", "openai", 100, 50) },
    { id: tA, parent: rA, name: "execute_tool search", start: 3000, end: 7000, attrs: [str("gen_ai.tool.name", "search"), str("env", "prod")] },
    { id: hexOf(16), parent: tA, name: "chat claude", kind: 3, start: 4000, end: 5000, attrs: llm("claude-3-5-sonnet-20241022", "anthropic", 200, 20) },
  ]);
  const rB = hexOf(16);
  await sendSpans(ws, ids.B, T0 + 2 * H, [
    { id: rB, name: "agent-turn", kind: 2, start: 0, end: 5000 },
    { id: hexOf(16), parent: rB, name: "calculator", start: 1000, end: 1500, status: 2, attrs: [str("gen_ai.tool.name", "calculator")] },
    { id: hexOf(16), parent: rB, name: "chat gpt-4o", kind: 3, start: 2000, end: 4000, attrs: llm("gpt-4o", "openai", 10, 10) },
  ]);
  await sendSpans(ws, ids.C, T0 + 3 * H, [{ id: hexOf(16), name: "batch-job", start: 0, end: 1000 }]);
  const rD = hexOf(16);
  await sendSpans(ws, ids.D, T0 + 4 * H, [{ id: hexOf(16), parent: rD, name: "step", start: 2000, end: 3000 }]);
  await sendSpans(ws, ids.D, T0 + 4 * H, [{ id: rD, name: "late-root", start: 0, end: 4000 }]);
  await sendSpans(other, ids.X, T0 + 5 * H, [{ id: hexOf(16), name: "theirs", start: 0, end: 100 }]);
});

async function search(body: unknown, key = ws.key) {
  const res = await call(PATH, { method: "POST", key, json: body });
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(200);
  return b;
}
const traceIds = (b: { items: { trace_id: string }[] }) => b.items.map((t) => t.trace_id);
const found = async (filter_group: unknown) => traceIds(await search({ filter_group }));
const f = (field: string, operator: string, value?: unknown, nested_key?: string) => ({ field, operator, ...(value === undefined ? {} : { value }), ...(nested_key ? { nested_key } : {}) });

async function expect400(body: unknown, message: RegExp) {
  const res = await call(PATH, { method: "POST", key: ws.key, json: body });
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(400);
  expect(b).toMatchObject({ success: false, error: "validation_error" });
  expect(b.message).toMatch(message);
}

describe("POST /api/public/v2/traces/search: the list", () => {
  it("lists the workspace's traces newest first, each with its summary", async () => {
    const b = await search({});
    expect(traceIds(b)).toEqual([ids.D, ids.C, ids.B, ids.A]);
    const [d, c, bt, a] = b.items;
    expect(a).toEqual({
      trace_id: ids.A,
      trace_name: "agent-turn",
      trace_start: iso(T0 + H),
      trace_end: iso(T0 + H + 10_000),
      trace_duration_ms: 10_000,
      trace_status: "ok",
      trace_span_count: 4,
      trace_llm_calls: 2,
      trace_error_spans: 0,
      trace_input_tokens: 300,
      trace_output_tokens: 70,
      trace_total_tokens: 370,
      trace_total_cost_usd: expect.closeTo(priceOf("gpt-4o", 100, 50) + priceOf("claude-3-5-sonnet-20241022", 200, 20), 12),
      trace_models_used: ["claude-3-5-sonnet-20241022", "gpt-4o"],
    });
    expect(bt).toMatchObject({ trace_name: "agent-turn", trace_status: "error", trace_error_spans: 1, trace_llm_calls: 1, trace_span_count: 3, trace_models_used: ["gpt-4o"] });
    expect(c).toMatchObject({ trace_name: "batch-job", trace_llm_calls: 0, trace_total_cost_usd: 0, trace_total_tokens: 0, trace_models_used: [], trace_duration_ms: 1000 });
    // A trace starts with its earliest span, whichever arrived first.
    expect(d).toMatchObject({ trace_name: "late-root", trace_start: iso(T0 + 4 * H), trace_duration_ms: 4000, trace_span_count: 2 });
    expect(b).toMatchObject({ page: 1, per_page: 20, pages: 1, total: 4, total_is_estimate: false, has_next: false, has_prev: false, next_num: null, prev_num: null, next_cursor: null });
  });

  it("lists oldest first with sort_order asc", async () => {
    expect(traceIds(await search({ sort_order: "asc" }))).toEqual([ids.A, ids.B, ids.C, ids.D]);
  });

  it("never shows another workspace's traces, and shows that workspace only its own", async () => {
    expect(traceIds(await search({}))).not.toContain(ids.X);
    expect(traceIds(await search({}, other.key))).toEqual([ids.X]);
    expect(traceIds(await search({ filter_group: { logic: "AND", filters: [f("trace_id", "is", ids.A)] } }, other.key))).toEqual([]);
  });

  it("needs a key", async () => {
    expect((await call(PATH, { method: "POST", json: {} })).status).toBe(401);
  });
});

describe("the filter group", () => {
  it("filters on trace-level values", async () => {
    expect(await found({ logic: "AND", filters: [f("trace_name", "is", "agent-turn")] })).toEqual([ids.B, ids.A]);
    expect(await found({ logic: "AND", filters: [f("trace_status", "is", "error")] })).toEqual([ids.B]);
    expect(await found({ logic: "AND", filters: [f("trace_duration_ms", "gte", 5000)] })).toEqual([ids.B, ids.A]);
    expect(await found({ logic: "AND", filters: [f("trace_models_used", "contains", "gpt-4o")] })).toEqual([ids.B, ids.A]);
    expect(await found({ logic: "AND", filters: [f("trace_start", "between", [iso(T0 + 1.5 * H), iso(T0 + 3.5 * H)])] })).toEqual([ids.C, ids.B]);
  });

  it("holds AND across a trace's spans, SPAN_AND within one span", async () => {
    const parts = [f("span_model", "is", "gpt-4o"), f("span_tool_name", "is", "search")];
    expect(await found({ logic: "AND", filters: parts })).toEqual([ids.A]);
    expect(await found({ logic: "SPAN_AND", filters: parts })).toEqual([]);
    expect(await found({ logic: "SPAN_AND", filters: [f("span_tool_name", "is", "search"), f("span_attributes", "key_equals", "prod", "env")] })).toEqual([ids.A]);
  });

  it("holds OR and SPAN_OR, nested under AND", async () => {
    expect(await found({ logic: "OR", filters: [f("trace_name", "is", "batch-job"), f("trace_status", "is", "error")] })).toEqual([ids.C, ids.B]);
    expect(
      await found({ logic: "AND", filters: [f("trace_name", "is", "agent-turn"), { logic: "SPAN_OR", filters: [f("span_tool_name", "is", "calculator"), f("span_model", "is", "claude-3-5-sonnet-20241022")] }] }),
    ).toEqual([ids.B, ids.A]);
    expect(await found({ logic: "AND", filters: [{ logic: "SPAN_OR", filters: [f("span_status", "is", "error")] }] })).toEqual([ids.B]);
  });

  it("refuses a trace-level field in a SPAN_AND group, an unknown field and a bad operator with 400", async () => {
    await expect400({ filter_group: { logic: "SPAN_AND", filters: [f("trace_name", "is", "x")] } }, /trace-level field/);
    await expect400({ filter_group: { logic: "AND", filters: [f("nope", "is", "x")] } }, /field/);
    await expect400({ filter_group: { logic: "AND", filters: [f("trace_duration_ms", "contains", "x")] } }, /operator/);
    await expect400({ filter_group: { logic: "XOR", filters: [] } }, /logic/);
  });
});

describe("paging", () => {
  it("pages by number: total, pages, has_next, next_num, and a page past the end is empty", async () => {
    const p1 = await search({ per_page: 3 });
    expect(traceIds(p1)).toEqual([ids.D, ids.C, ids.B]);
    expect(p1).toMatchObject({ page: 1, per_page: 3, pages: 2, total: 4, total_is_estimate: false, has_next: true, has_prev: false, next_num: 2, prev_num: null });
    expect(p1.next_cursor).toEqual(expect.any(String));
    const p2 = await search({ page: 2, per_page: 3 });
    expect(traceIds(p2)).toEqual([ids.A]);
    expect(p2).toMatchObject({ page: 2, pages: 2, total: 4, has_next: false, has_prev: true, next_num: null, prev_num: 1, next_cursor: null });
    const p9 = await search({ page: 9, per_page: 3 });
    expect(p9).toMatchObject({ items: [], total: 4, has_next: false });
  });

  it("pages by cursor: each trace once, in order, then has_more false", async () => {
    const seen: string[] = [];
    let b = await search({ limit: 1 });
    expect(Object.keys(b).sort()).toEqual(["has_more", "items", "limit", "next_cursor", "success"]);
    for (;;) {
      seen.push(...traceIds(b));
      if (!b.has_more) break;
      b = await search({ limit: 1, cursor: b.next_cursor });
    }
    expect(seen).toEqual([ids.D, ids.C, ids.B, ids.A]);
    expect(b.next_cursor).toBeNull();
  });

  it("continues a numbered page by its next_cursor, with the same filters, in either order", async () => {
    const filter_group = { logic: "AND", filters: [f("trace_name", "is_not", "batch-job")] };
    const p1 = await search({ filter_group, per_page: 1, sort_order: "asc" });
    expect(traceIds(p1)).toEqual([ids.A]);
    expect(traceIds(await search({ filter_group, sort_order: "asc", cursor: p1.next_cursor, limit: 5 }))).toEqual([ids.B, ids.D]);
  });

  it("refuses a cursor used with other filters or another order, a forged cursor, and page with cursor", async () => {
    const { next_cursor } = await search({ limit: 1 });
    await expect400({ limit: 1, cursor: next_cursor, filter_group: { logic: "AND", filters: [f("trace_status", "is", "ok")] } }, /other filters/);
    await expect400({ limit: 1, cursor: next_cursor, sort_order: "asc" }, /order/);
    await expect400({ cursor: "bm90LWEtY3Vyc29y" }, /cursor/);
    await expect400({ cursor: "!!" }, /cursor/);
    const forged = btoa(JSON.stringify({ o: "desc", k: 1, f: JSON.parse(atob(next_cursor.replace(/-/g, "+").replace(/_/g, "/"))).f }));
    await expect400({ cursor: forged.replace(/=+$/, "") }, /cursor/);
    await expect400({ page: 2, cursor: next_cursor }, /cursor: cannot be combined/);
    await expect400({ per_page: 2, limit: 2 }, /limit: cannot be combined/);
  });

  it.each([
    [{ per_page: 0 }, /per_page/],
    [{ per_page: 101 }, /per_page/],
    [{ limit: 0 }, /limit/],
    [{ limit: 101 }, /limit/],
    [{ page: 0 }, /page/],
    [{ page: 1.5 }, /page/],
    [{ sort_order: "up" }, /sort_order/],
    [{ filter_group: "AND" }, /filter_group/],
  ])("refuses %j with 400", async (body, message) => {
    await expect400(body, message);
  });

  it("documents the operation in /openapi.json", async () => {
    const op = (await json(await call("/openapi.json"))).paths[PATH]?.post;
    expect(op).toBeDefined();
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "400", "401"]));
    expect(op.description).toMatch(/SPAN_AND/);
  });
});

describe("the request's bound (windows of spans)", () => {
  let w: TestKey;
  const t: Record<string, string> = {};
  let all: string[];
  const base = T0 + 10 * H;

  /**
   * T1 spans at 0, 10, 20, 30 s (its spans fill several windows); T2 at 5 and 6 s; T3 at 10 s (the same
   * start as one of T1's spans); T4 and T5 both start at 40 s (a tie, ordered by id).
   */
  beforeAll(async () => {
    w = await createWorkspace();
    for (const k of ["T1", "T2", "T3", "T4", "T5"]) t[k] = hexOf(32);
    const r1 = hexOf(16);
    await sendSpans(w, t.T1, base, [
      { id: r1, name: "long", start: 0, end: 35_000 },
      ...[10_000, 20_000, 30_000].map((s) => ({ id: hexOf(16), parent: r1, name: "tick", start: s, end: s + 100 })),
    ]);
    await sendSpans(w, t.T2, base, [
      { id: hexOf(16), name: "two", start: 5000, end: 5500 },
      { id: hexOf(16), name: "two-b", start: 6000, end: 6500 },
    ]);
    await sendSpans(w, t.T3, base, [{ id: hexOf(16), name: "three", start: 10_000, end: 10_100 }]);
    await sendSpans(w, t.T4, base, [{ id: hexOf(16), name: "tie", start: 40_000, end: 40_100 }]);
    await sendSpans(w, t.T5, base, [{ id: hexOf(16), name: "tie", start: 40_000, end: 40_100 }]);
    const ties = [t.T4, t.T5].sort().reverse();
    all = [...ties, t.T3, t.T2, t.T1];
  });

  const run = async (input: Partial<TraceSearchInput>, limits: { windowSpans: number; maxScanSpans: number }) =>
    searchTraces(await logsOf(w), w.workspaceId, { sort_order: "desc", mode: "cursor", limit: 20, ...input } as TraceSearchInput, limits);

  it("finds every trace once, in order, whatever the window size", async () => {
    for (const windowSpans of [1, 2, 3, 5, 100]) {
      const b = await run({}, { windowSpans, maxScanSpans: 1000 });
      expect(b.items.map((i) => i.trace_id), `window ${windowSpans}`).toEqual(all);
      expect(b.has_more).toBe(false);
      const asc = await run({ sort_order: "asc" }, { windowSpans, maxScanSpans: 1000 });
      expect(asc.items.map((i) => i.trace_id), `asc window ${windowSpans}`).toEqual([...all].reverse());
    }
    // A long trace's summary is its whole, even when the window that keeps it holds one of its spans.
    const one = await run({}, { windowSpans: 1, maxScanSpans: 1000 });
    expect(one.items.find((i) => i.trace_id === t.T1)).toMatchObject({ trace_span_count: 4, trace_duration_ms: 35_000 });
  });

  it("stops at the bound with has_more, and the cursors then visit every trace exactly once", async () => {
    for (const sort_order of ["desc", "asc"] as const) {
      const seen: string[] = [];
      let b = await run({ sort_order, limit: 3 }, { windowSpans: 2, maxScanSpans: 3 });
      let pages = 1;
      for (;;) {
        seen.push(...b.items.map((i) => i.trace_id));
        if (!b.has_more) break;
        expect(b.next_cursor).toEqual(expect.any(String));
        b = await run({ sort_order, limit: 3, cursor: b.next_cursor! }, { windowSpans: 2, maxScanSpans: 3 });
        pages++;
      }
      expect(seen, sort_order).toEqual(sort_order === "desc" ? all : [...all].reverse());
      // Nine spans read three at a time: more requests than full pages.
      expect(pages).toBeGreaterThan(2);
    }
  });

  it("flags a numbered page's total as a lower bound when the bound stopped the count", async () => {
    const capped = await searchTraces(await logsOf(w), w.workspaceId, { sort_order: "desc", mode: "page", page: 1, per_page: 2 }, { windowSpans: 2, maxScanSpans: 4 });
    expect(capped.items.map((i) => i.trace_id)).toEqual(all.slice(0, 2));
    expect(capped).toMatchObject({ total_is_estimate: true, has_next: true });
    expect(capped.total).toBeLessThan(5);
    const whole = await searchTraces(await logsOf(w), w.workspaceId, { sort_order: "desc", mode: "page", page: 1, per_page: 2 }, { windowSpans: 2, maxScanSpans: 100 });
    expect(whole).toMatchObject({ total: 5, total_is_estimate: false, pages: 3, has_next: true });
  });
});

describe("query plans", () => {
  const explain = async (q: { sql: string; params: (string | number)[] }) =>
    ((await (await logsDb(ws)).prepare(`EXPLAIN QUERY PLAN ${q.sql}`).bind(...q.params).all()).results as { detail: string }[]).map((r) => r.detail);

  it("reads a window as a range of the start-time index, and the window's traces by seeks", async () => {
    for (const order of ["desc", "asc"] as const) {
      const plan = await explain(windowSpansQuery(ws.workspaceId, order, { start: T0 + H, id: ids.A }, { from: T0, to: null }, 10));
      expect(plan.filter((d) => /spans/.test(d))[0], order).toMatch(/^SEARCH spans USING INDEX spans_workspace_start \(workspace_id=\? AND start_time[<>]\?/);
      expect(plan.some((d) => /^SCAN spans/.test(d)), order).toBe(false);
    }
    const parsed = parseTraceFilterGroup({ logic: "AND", filters: [{ field: "span_attributes", operator: "key_equals", nested_key: "env", value: "prod" }] });
    if (!parsed.ok) throw new Error("filter");
    const rows = await explain(windowRowsQuery(ws.workspaceId, parsed.group, "desc", [ids.A, ids.B], { start: T0 + 9 * H, id: ids.D }, null));
    expect(rows.filter((d) => /\b(SCAN|SEARCH) (sx|spans)\b/.test(d))).toEqual(["SEARCH sx USING INDEX spans_workspace_parent (workspace_id=? AND trace_id=?)"]);
  });
});
