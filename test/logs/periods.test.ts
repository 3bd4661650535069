// Issue 29's proof that no workspace stops at one database: with a tiny size cap, one workspace's
// logs span three databases (the control database it began on, then LOGS_0, then LOGS_1: three
// periods), nothing moved. Every read path then sees every log once: by id, search (pages, two
// orders, totals), suggestions, analytics and custom charts, traces (a trace begun before a period
// change goes on where it began), trace analytics, dataset fills and previews, the export, sheet
// imports, add-request-log and add-trace, the tracking calls; then the archive moves old logs of
// every period and the readers that reach the archive still see every log once. A neighbour sharing
// two of the databases is never seen.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { archiveOldLogs, type ArchiveSettings } from "../../src/logs/archive";
import { ID_RANGE_SIZE, idRangeFor, idRangeOf } from "../../src/logs/id-ranges";
import { logMark, logsInOrder, markFilter, matchingLogPages } from "../../src/logs/readers";
import { matchingLogIds } from "../../src/logs/datasets";
import { measureLogDatabases } from "../../src/logs/shards";
import { searchTraces } from "../../src/logs/trace-search";
import { addKey, call, createWorkspace, json, logsOf, placeOn, type TestKey } from "../helpers/api";
import { bulkSpan, logBody } from "../helpers/fixtures";
import { fuller, grow, shardOf, sizeOf } from "../helpers/log-databases";
import { analytics, createGroup, datasetPost, expectExactly, exportedBetween, exportedMatching, filledIds, getLog, importedIds, searchAll, snapshotById, sorted } from "../helpers/log-reads";
import { indexNow } from "../helpers/logs";

const NOW = Date.UTC(2024, 5, 10, 12);
const RANGE = { from: Date.UTC(2024, 3, 1), to: Date.UTC(2024, 6, 1) };
const at = (month: number, day: number, h = 0) => Date.UTC(2024, month - 1, day, h);
const SMALL: ArchiveSettings = { fileMaxLogs: 2, fileMaxBytes: 1_000_000, runMaxFiles: 1000 };
const d1Of = (shard: string): D1Database => (shard === "DB" ? env.DB : (env as unknown as Record<string, D1Database>)[shard]);
const nanos = (ms: number) => String(BigInt(ms) * 1_000_000n);
const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

let w: TestKey;
let neighbour: TestKey;
/** W's logs, by the period that wrote them. */
const ids: number[][] = [[], [], []];
const oldIds: number[] = [];
const groups: number[] = [];
const neighbourIds: number[] = [];
const traces = { t1: hex(0xa1, 32), t2: hex(0xa2, 32), t3: hex(0xa3, 32) };
/** The span a track-request log names in period 2, which arrives in period 3 (in another database). */
const LATE_SPAN = hex(0xbeef, 16);
let lateLog = 0;
let periods: string[] = [];
let snapshot = new Map<number, unknown>();
const all = () => ids.flat();

/** W with a fresh key: a key's verified context (and so its placement) is cached for a while. */
const asW = async (): Promise<TestKey> => ({ ...w, key: await addKey(w) });
const post = (ws: TestKey, path: string, body: unknown) => call(path, { method: "POST", key: ws.key, json: body });

/** The Idempotency-Key the first log of period 1 was sent with, and that log's body. */
const FIRST_KEY = "periods-first-log";
let firstBody: unknown = null;

async function logRequest(ws: TestKey, body: Record<string, unknown>, idempotencyKey?: string): Promise<number> {
  const sent = logBody(body);
  if (idempotencyKey) firstBody = sent;
  const res = await call("/log-request", { method: "POST", key: ws.key, json: sent, headers: idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {} });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await json(res)).id;
}

async function trackRequest(ws: TestKey, startMs: number, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await post(ws, "/track-request", {
    function_name: "openai.chat.completions.create",
    provider_type: "openai",
    kwargs: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
    request_response: { id: "x", object: "chat.completion", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "yo" }, finish_reason: "stop" }] },
    request_start_time: startMs / 1000,
    request_end_time: startMs / 1000 + 1,
    tags: ["all"],
    ...extra,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await json(res)).request_id;
}

/** spans-bulk: the ids of the logs the spans made (not those of earlier logs a span was linked to). */
async function spans(ws: TestKey, list: Record<string, unknown>[]): Promise<number[]> {
  const res = await post(ws, "/spans-bulk", { spans: list });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.request_logs.map((l: { id: number }) => l.id).filter((id: number) => !all().includes(id));
}

const span = (traceId: string, spanId: number, startMs: number, over: Record<string, unknown> = {}) =>
  bulkSpan(traceId, hex(spanId, 16), { start_time: nanos(startMs), end_time: nanos(startMs + 1500), ...over });
const llm = (traceId: string, spanId: number, parent: number, startMs: number, k: number) =>
  span(traceId, spanId, startMs, {
    name: `llm-${k}`,
    parent_id: hex(parent, 16),
    log_request: { provider: "openai", model: "gpt-4o", input: { type: "chat", messages: [] }, output: { type: "chat", messages: [] }, tags: ["all", `p${k}`, "span"] },
  });

/** One period's logs: three logged (one of an old day), one tracked, the spans, a group; and one of the neighbour's. */
async function logPeriod(k: 1 | 2 | 3) {
  const ws = await asW();
  const mine = ids[k - 1];
  for (const [i, start] of [at(5, 1, k), at(6, k), at(6, 5, k)].entries()) {
    const id = await logRequest(ws, {
      model: i % 2 ? "claude-3" : "gpt-4o",
      provider: i % 2 ? "anthropic" : "openai",
      tags: ["all", `p${k}`],
      metadata: { period: String(k) },
      price: k / 10,
      request_start_time: new Date(start).toISOString(),
      request_end_time: new Date(start + 100 * (k + i)).toISOString(),
    }, k === 1 && i === 0 ? FIRST_KEY : undefined);
    mine.push(id);
    if (i === 0) oldIds.push(id);
  }
  if (k === 2) mine.push((lateLog = await trackRequest(ws, at(6, 7, k), { span_id: LATE_SPAN })));
  else mine.push(await trackRequest(ws, at(6, 7, k)));
  const t = at(6, 8, k);
  if (k === 1) mine.push(...(await spans(ws, [span(traces.t1, 0x11, t), llm(traces.t1, 0x12, 0x11, t + 10, k)])));
  // T1 began in period 1: its next span goes where T1 is. T2 begins here.
  if (k === 2) mine.push(...(await spans(ws, [llm(traces.t1, 0x13, 0x11, t, k), span(traces.t2, 0x21, t), llm(traces.t2, 0x22, 0x21, t + 10, k)])));
  // T2's last span goes to period 2's database; T3 begins here, with the span period 2's tracked log named.
  if (k === 3) {
    mine.push(...(await spans(ws, [llm(traces.t2, 0x23, 0x21, t, k), span(traces.t3, 0x31, t), llm(traces.t3, 0x32, 0x31, t + 10, k), span(traces.t3, 0xbeef, t + 20, { parent_id: hex(0x31, 16) })])));
  }
  const group = await post(ws, "/create-group", {});
  expect(group.status).toBe(200);
  groups.push((await json(group)).id);
  const start = new Date(at(6, 2, k)).toISOString();
  neighbourIds.push(await logRequest(neighbour, { tags: ["all", `p${k}`], metadata: { period: "neighbour" }, request_start_time: start, request_end_time: start }));
}

/** Measures the databases with a cap `current` is at (grown when short of it) and the ones in `open` are below. */
async function fillUp(current: string, open: string[]) {
  const cap = Math.max(...(await Promise.all(open.map((s) => sizeOf(d1Of(s)))))) + 1;
  const size = await sizeOf(d1Of(current));
  if (size < cap) await grow(d1Of(current), cap - size + 100_000);
  const measured = await measureLogDatabases(getDb(env.DB), { ...env, LOG_SHARD_MAX_BYTES: String(cap) });
  expect(Object.fromEntries(measured.map((m) => [m.binding, m.full]))).toMatchObject({ [current]: true, ...Object.fromEntries(open.map((s) => [s, false])) });
}

beforeAll(async () => {
  w = await createWorkspace();
  neighbour = await createWorkspace();
  await placeOn(w, "DB");
  await placeOn(neighbour, "LOGS_0");
  // LOGS_0 is the smaller: the first new period goes there, beside the neighbour.
  await fuller(env.LOGS_1, env.LOGS_0);

  await logPeriod(1);
  expect(await shardOf(w)).toBe("DB");
  await fillUp("DB", ["LOGS_0", "LOGS_1"]);
  await logPeriod(2);
  expect(await shardOf(w)).toBe("LOGS_0");
  await fillUp("LOGS_0", ["LOGS_1"]);
  await logPeriod(3);
  expect(await shardOf(w)).toBe("LOGS_1");
  // Search, suggestions, analytics and the archive see a log once it is indexed, in its own database.
  await indexNow();
  periods = JSON.parse((await env.DB.prepare("SELECT log_periods AS p FROM workspaces WHERE id = ?").bind(w.workspaceId).first<{ p: string }>())!.p);
  snapshot = await snapshotById(w, all());
}, 120_000);

describe("one workspace over three databases", { timeout: 120_000 }, () => {
  it("wrote each period's logs to its own database, nothing moved, and numbered them in its range", async () => {
    expect(periods).toEqual(["DB", "LOGS_0", "LOGS_1"]);
    const ranges = await Promise.all(periods.map((s) => idRangeFor(env.DB, s)));
    const where = async (shard: string) =>
      (await d1Of(shard).prepare("SELECT id FROM request_logs WHERE workspace_id = ? ORDER BY id").bind(w.workspaceId).all<{ id: number }>()).results.map((r) => r.id);
    // T1's second log went to period 1's database, T2's last to period 2's: a trace stays where it began.
    const [t1Second, t2Last] = [ids[1][4], ids[2][4]];
    expect(idRangeOf(t1Second)).toBe(ranges[0]);
    expect(idRangeOf(t2Last)).toBe(ranges[1]);
    expect(await where("DB")).toEqual(sorted([...ids[0], t1Second]));
    expect(await where("LOGS_0")).toEqual(sorted([...ids[1].filter((id) => id !== t1Second), t2Last]));
    expect(await where("LOGS_1")).toEqual(sorted(ids[2].filter((id) => id !== t2Last)));
    expect(new Set(all()).size).toBe(all().length);
    expect(groups.map(idRangeOf)).toEqual(ranges);
    // Every log by id, once each, as its owner sees it; the neighbour's are not W's.
    for (const id of all()) expect(((await getLog(w, id)).body as { request_id: number }).request_id).toBe(id);
    for (const id of neighbourIds) expect((await getLog(w, id)).status).toBe(404);
  });

  it("search: every page newest first and by cost, totals across periods, filters, never the neighbour's", async () => {
    const views = [...snapshot.values()] as { request_id: number; request_start_time: string; price: number }[];
    const newestFirst = [...views].sort((a, b) => Date.parse(b.request_start_time) - Date.parse(a.request_start_time) || b.request_id - a.request_id);
    expect((await searchAll(w, {}, 4)).map((i) => i.id)).toEqual(newestFirst.map((v) => v.request_id));
    const cheapest = [...views].sort((a, b) => a.price - b.price || a.request_id - b.request_id);
    expect((await searchAll(w, { sort_by: "cost", sort_order: "asc" }, 3)).map((i) => i.id)).toEqual(cheapest.map((v) => v.request_id));
    const tagged = await searchAll(w, { filter_group: { logic: "AND", filters: [{ field: "tags", operator: "in", value: ["all"] }] } }, 5);
    expect(sorted(tagged.map((i) => i.id))).toEqual(sorted(all()));
    // Two side-row filters under AND: each database's facet counts (its estimates) choose its plan.
    const filters = [
      { field: "tags", operator: "in", value: ["all"] },
      { field: "metadata", operator: "key_equals", nested_key: "period", value: "2" },
    ];
    const second = (views as unknown as { request_id: number; metadata: Record<string, string> }[]).filter((v) => v.metadata.period === "2").map((v) => v.request_id);
    expect(second.length).toBeGreaterThan(0);
    expect(sorted((await searchAll(w, { filter_group: { logic: "AND", filters } }, 2)).map((i) => i.id))).toEqual(sorted(second));
    const page2 = await json(await post(w, "/api/public/v2/requests/search", { page: 2, per_page: 7 }));
    expect(page2).toMatchObject({ total: all().length, pages: Math.ceil(all().length / 7), has_next: true, has_prev: true });
    expect(page2.items.map((i: { id: number }) => i.id)).toEqual(newestFirst.slice(7, 14).map((v) => v.request_id));
  });

  it("suggestions count every period's logs, with and without a filter", async () => {
    const counts = async (params: Record<string, string>) =>
      (await json(await call(`/api/public/v2/requests/suggestions?${new URLSearchParams({ ...params, include_counts: "true" })}`, { key: (await asW()).key }))).counts;
    const expected = { all: all().length, span: 5, p1: 4, p2: 5, p3: 5 };
    expect(await counts({ field: "tags" })).toMatchObject(expected);
    expect(await counts({ field: "tags", filter_group: JSON.stringify({ logic: "AND", filters: [{ field: "status", operator: "is", value: "SUCCESS" }] }) })).toMatchObject(expected);
    expect(await counts({ field: "metadata_values", metadata_key: "period" })).toEqual({ "1": 3, "2": 3, "3": 3 });
  });

  it("analytics and custom charts add up every period", async () => {
    const whole = await analytics(w, {});
    expect(whole.totalRequests).toBe(all().length);
    const views = [...snapshot.values()] as { price: number; model: string }[];
    expect(whole.totalCost).toBeCloseTo(views.reduce((a, v) => a + v.price, 0), 6);
    const filtered = await analytics(w, { filter_group: { logic: "AND", filters: [{ field: "status", operator: "is", value: "SUCCESS" }] } });
    expect(filtered.totalRequests).toBe(all().length);
    const byModel = new Map<string, number>();
    for (const v of views) byModel.set(v.model, (byModel.get(v.model) ?? 0) + 1);
    expect(Object.fromEntries(whole.mostUsedModels)).toEqual(Object.fromEntries(byModel));
    const res = await post(w, "/api/public/v2/requests/analytics/custom-analytics", { customCharts: [{ id: "m", chartType: "bar", metric: "count", groupByField: "engine" }] });
    expect(res.status).toBe(200);
    const chart = (await json(res)).customCharts[0];
    expect(Object.fromEntries(chart.data.map((d: { label: string; value: number }) => [d.label, d.value]))).toEqual(Object.fromEntries(byModel));
  });

  it("analytics' series by model add up every period: each busiest model's days sum to its total, with its latencies", async () => {
    const whole = await analytics(w, {});
    const top = (whole.mostUsedModels as [string, number][]).slice(0, 10);
    const series = whole.modelRequestsByDay as Record<string, [string, number][]>;
    expect(Object.fromEntries(Object.entries(series).map(([m, days]) => [m, days.reduce((a, [, n]) => a + n, 0)]))).toEqual(Object.fromEntries(top));
    const latency = whole.latencyByModelByDay as Record<string, { p50_latency: [string, number | null][] }>;
    for (const [m] of top) expect(latency[m].p50_latency.map(([day]) => day)).toEqual(series[m].map(([day]) => day));
  });

  it("traces: each read whole, a late span's earlier log linked across databases, trace analytics over all", async () => {
    const trace = async (t: string) => (await json(await call(`/api/public/v2/traces/${t}`, { key: w.key }))).spans as { span_id: string; request_log_id: number | null }[];
    expect((await trace(traces.t1)).map((s) => s.span_id)).toEqual(["11", "12", "13"].map((s) => hex(Number(`0x${s}`), 16)));
    expect((await trace(traces.t2)).length).toBe(3);
    const t3 = await trace(traces.t3);
    expect(t3.find((s) => s.span_id === LATE_SPAN)!.request_log_id).toBe(lateLog);
    expect(((await getLog(w, lateLog)).body as { trace_id: string }).trace_id).toBe(traces.t3);
    const spanRows = async (shard: string, t: string) => (await d1Of(shard).prepare("SELECT count(*) AS n FROM spans WHERE trace_id = ?").bind(t).first<{ n: number }>())!.n;
    expect([await spanRows("DB", traces.t1), await spanRows("LOGS_0", traces.t2), await spanRows("LOGS_1", traces.t3)]).toEqual([3, 3, 3]);

    const charts = await json(
      await post(w, "/api/public/v2/traces/analytics/custom-analytics", {
        customCharts: [
          { id: "traces", chartType: "bar", metric: "count" },
          { id: "spans", chartType: "bar", metric: "sum", metricField: "trace_span_count" },
          { id: "durations", chartType: "histogram", histogramField: "span_duration_ms" },
        ],
      }),
    );
    expect(charts.scanned).toMatchObject({ traces: 3, spans: 9, capped: false });
    expect(charts.customCharts[0].data[0].value).toBe(3);
    expect(charts.customCharts[1].data[0].value).toBe(9);
    expect(charts.customCharts[2].data.reduce((n: number, d: { value: number }) => n + d.value, 0)).toBe(9);

    const group = await createGroup(w);
    const added = await json(await post(w, "/api/public/v2/dataset-versions/add-trace", { dataset_group_id: group.dataset_group.id, trace_id: traces.t1 }));
    expect(sorted(added.request_log_ids)).toEqual(sorted([ids[0][4], ids[1][4]]));
  });

  it("an Idempotency-Key recorded in an earlier period still replays its answer: no second log", async () => {
    const res = await call("/log-request", { method: "POST", key: w.key, json: firstBody, headers: { "Idempotency-Key": FIRST_KEY } });
    expect(res.status).toBe(201);
    expect(res.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await json(res)).id).toBe(ids[0][0]);
    const other = await call("/log-request", { method: "POST", key: w.key, json: { ...(firstBody as object), tags: ["other"] }, headers: { "Idempotency-Key": FIRST_KEY } });
    expect(other.status).toBe(409);
    expect(await searchAll(w, {})).toHaveLength(all().length);
  });

  it("trace search lists each trace once, merged across databases in order, by page and by cursor", async () => {
    const page = async (body: Record<string, unknown>) => json(await post(w, "/api/public/v2/traces/search", body));
    const listed = await page({});
    expect(listed.items.map((t: { trace_id: string }) => t.trace_id)).toEqual([traces.t3, traces.t2, traces.t1]);
    expect(listed.items.map((t: { trace_span_count: number }) => t.trace_span_count)).toEqual([3, 3, 3]);
    expect(listed).toMatchObject({ total: 3, total_is_estimate: false });
    expect((await page({ sort_order: "asc" })).items.map((t: { trace_id: string }) => t.trace_id)).toEqual([traces.t1, traces.t2, traces.t3]);

    // A bound of a span or two per database stops each scan early: the merge hands out only what
    // precedes every stopped scan's frontier, and cursors from there walk every trace once, in order.
    for (const order of ["desc", "asc"] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 30; i++) {
        const got = await searchTraces(await logsOf(w), w.workspaceId, { sort_order: order, mode: "cursor", cursor, limit: 1 }, { windowSpans: 1, maxScanSpans: 3 });
        seen.push(...got.items.map((t) => t.trace_id));
        if (!got.has_more) break;
        cursor = got.next_cursor!;
      }
      expect(seen).toEqual(order === "desc" ? [traces.t3, traces.t2, traces.t1] : [traces.t1, traces.t2, traces.t3]);
    }
  });

  it("datasets, sheet imports and the export read every period once", async () => {
    expect(sorted(await filledIds(w, {}))).toEqual(sorted(all()));
    expect(sorted(await filledIds(w, { request_log_ids: [...all(), ...neighbourIds] }))).toEqual(sorted(all()));
    const group = await createGroup(w);
    const preview = await json(await datasetPost(w, "from-filter-params/preview", { dataset_group_id: group.dataset_group.id, preview_rows: 100, variables_to_parse: ["request_log_id"] }));
    expect(preview.total_matching).toBe(all().length);
    expect(sorted(preview.rows.map((r: { value: number }[]) => r[0].value))).toEqual(sorted(all()));
    for (const list of ids) expect((await datasetPost(w, "add-request-log", { dataset_group_id: group.dataset_group.id, request_log_id: list[0] })).status).toBe(201);
    expect(sorted(await importedIds(w, {}))).toEqual(sorted(all()));
    expect(sorted(await importedIds(w, { request_log_ids: [...all(), ...neighbourIds] }))).toEqual(sorted(all()));
    expectExactly(await exportedBetween(w, RANGE.from, RANGE.to), snapshot, all());
    // The export through a filter: every period's matching logs once, never the neighbour's.
    // Tagged "all": logs of each of the three periods (and the neighbour's, which stay out).
    const tagged = all().filter((id) => (snapshot.get(id) as { tags: string[] }).tags.includes("all"));
    expect(ids.every((list) => list.some((id) => tagged.includes(id)))).toBe(true);
    expectExactly(await exportedMatching(w, { filter_group: { logic: "AND", filters: [{ field: "tags", operator: "contains", value: "all" }] } }), snapshot, tagged);
    expectExactly(await exportedMatching(w, { from: RANGE.from, to: RANGE.to }), snapshot, all());
  });

  it("tracking calls reach a log in any period, a group of another period included", async () => {
    const ws = await asW();
    const [first, second, third] = [ids[0][1], ids[1][1], ids[2][1]];
    expect((await post(ws, "/rest/track-score", { request_id: first, score: 42 })).status).toBe(200);
    expect((await post(ws, "/rest/track-metadata", { request_id: second, metadata: { tracked: "yes" } })).status).toBe(200);
    expect((await post(ws, "/rest/track-group", { request_id: third, group_id: groups[0] })).status).toBe(200);
    expect((await post(ws, "/rest/track-group", { request_id: first, group_id: groups[2] })).status).toBe(200);
    expect(((await getLog(w, first)).body as { score: number; group_id: number }).score).toBe(42);
    expect(((await getLog(w, first)).body as { group_id: number }).group_id).toBe(groups[2]);
    expect(((await getLog(w, second)).body as { metadata: Record<string, string> }).metadata.tracked).toBe("yes");
    expect(((await getLog(w, third)).body as { group_id: number }).group_id).toBe(groups[0]);
    const inGroup = await searchAll(w, { filter_group: { logic: "AND", filters: [{ field: "group_id", operator: "is", value: groups[0] }] } });
    expect(inGroup.map((i) => i.id)).toEqual([third]);
    // The neighbour's log and a group id no period of W's range holds are 404s.
    expect((await post(ws, "/rest/track-score", { request_id: neighbourIds[1], score: 1 })).status).toBe(404);
    expect((await post(ws, "/rest/track-group", { request_id: first, group_id: 100 * ID_RANGE_SIZE + 1 })).status).toBe(404);
    for (const id of [first, second, third]) snapshot.set(id, (await getLog(w, id)).body);
  });

  it("the archive moves old logs of every period; by id and the export still see each log once", async () => {
    expect((await call("/api/public/v2/workspace/log-retention", { method: "PUT", key: w.key, json: { days: 30 } })).status).toBe(200);
    let moved = 0;
    for (;;) {
      const run = await archiveOldLogs(getDb(env.DB), logsOf, env.BLOBS, SMALL, NOW);
      moved += run.logs;
      if (run.files === 0) break;
    }
    expect(moved).toBe(oldIds.length);
    for (const shard of periods) {
      const manifest = await d1Of(shard).prepare("SELECT count(*) AS n FROM request_log_archives WHERE workspace_id = ?").bind(w.workspaceId).first<{ n: number }>();
      expect(manifest!.n).toBe(1);
    }
    for (const id of all()) expect(await getLog(w, id)).toEqual({ status: 200, body: snapshot.get(id) });
    expectExactly(await exportedBetween(w, RANGE.from, RANGE.to), snapshot, all());
    const live = all().filter((id) => !oldIds.includes(id));
    expect(sorted((await searchAll(w)).map((i) => i.id))).toEqual(sorted(live));
    expect((await analytics(w, {})).totalRequests).toBe(all().length);
  });

  it("a mark fixes the logs that exist: later ones, in the current period or a straggler in an older one, stay out", async () => {
    const logs = await logsOf(w);
    const mark = await logMark(logs, w.workspaceId);
    const live = all().filter((id) => !oldIds.includes(id));
    const later = await logRequest(await asW(), { tags: ["later"] });
    const straggler = (await env.LOGS_0.prepare(
      `INSERT INTO request_logs (workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_input_variables, request_start_time, request_end_time)
       VALUES (?, 'openai', 'gpt-4o', '{}', '{}', '{}', '[]', '{}', '{}', ?, ?) RETURNING id`,
    )
      .bind(w.workspaceId, at(6, 9), at(6, 9) + 1)
      .first<{ id: number }>())!.id;
    const paged: number[] = [];
    const pages = matchingLogPages<{ id: number }>(logs, w.workspaceId, { logic: "AND", filters: [markFilter(mark)] }, 4);
    expect(await pages.count()).toBe(live.length);
    for await (const page of pages.pages()) paged.push(...page.map((r) => r.id));
    expect(sorted(paged)).toEqual(sorted(live));
    const inOrder: number[] = [];
    for await (const page of logsInOrder<{ id: number }>(logs, w.workspaceId, [later, ...live, straggler], mark, 5)) inOrder.push(...page.map((r) => r.id));
    expect(inOrder).toEqual(live);
    expect(sorted(await matchingLogIds(logs, w.workspaceId, { max_log_id: mark }))).toEqual(sorted(live));
    expect(sorted(await matchingLogIds(logs, w.workspaceId, {}))).toEqual(sorted([...live, later, straggler]));
  });
});
