// Trace analytics over HTTP: traces seeded through POST /v1/traces (OTLP JSON), then custom charts of
// trace-level and span-level values: every chart type and metric, the groupings, the filter group (AND /
// OR across spans, SPAN_AND / SPAN_OR within one span), the bounded window, bad specs, isolation.
import { beforeAll, describe, expect, it } from "vitest";
import { priceOf } from "../../src/converters/pricing";
import { parseTraceFilterGroup } from "../../src/filters/traces";
import { chartQuery, traceCustomAnalytics, windowQuery } from "../../src/logs/trace-analytics";
import { call, createWorkspace, json, logsDb, logsOf, shareLogsDb, type TestKey } from "../helpers/api";
import { hexOf, llm, sendSpans as send, str } from "../helpers/otlp";

const PATH = "/api/public/v2/traces/analytics/custom-analytics";
const T0 = Date.UTC(2026, 6, 1); // Wednesday 2026-07-01
const H = 3_600_000;
const DAY = 24 * H;

/**
 * Four traces:
 * A "agent-turn" (T0+1h, 10 s, depth 3): LLM gpt-4o (linked to a prompt), tool "search" (4 s) calling LLM claude.
 * B "agent-turn" (T0+2h, 5 s, depth 2, error): tool "calculator" failing (0.5 s), LLM gpt-4o.
 * C "batch-job" (T0+1d+3h, 1 s): one span naming workflow wf-7.
 * D no root (T0+8d, 2 s): one "search" tool span whose parent was never sent.
 */
let ws: TestKey;
let promptId: number;
const ids = { A: "", B: "", C: "", D: "" };
const cost = { A1: priceOf("gpt-4o", 100, 50), A2: priceOf("claude-3-5-sonnet-20241022", 200, 20), B: priceOf("gpt-4o", 10, 10) };

beforeAll(async () => {
  ws = await createWorkspace();
  const name = `traced-prompt-${hexOf(8)}`;
  const published = await call("/rest/prompt-templates", {
    method: "POST",
    key: ws.key,
    json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], input_variables: [] } } },
  });
  expect(published.status).toBeLessThan(300);
  promptId = (await json(published)).id;
  for (const k of Object.keys(ids) as (keyof typeof ids)[]) ids[k] = hexOf(32);
  const [rA, tA] = [hexOf(16), hexOf(16)];
  await send(ws, ids.A, T0 + H, [
    { id: rA, name: "agent-turn", kind: 2, start: 0, end: 10_000, status: 1 },
    { id: hexOf(16), parent: rA, name: "chat gpt-4o", kind: 3, start: 1000, end: 3000, attrs: [...llm("gpt-4o", "openai", 100, 50), str("promptlayer.prompt.name", name)] },
    { id: tA, parent: rA, name: "execute_tool search", start: 3000, end: 7000, status: 1, attrs: [str("gen_ai.operation.name", "execute_tool"), str("gen_ai.tool.name", "search"), str("env", "prod")] },
    { id: hexOf(16), parent: tA, name: "chat claude", kind: 3, start: 4000, end: 5000, attrs: llm("claude-3-5-sonnet-20241022", "anthropic", 200, 20) },
  ]);
  const rB = hexOf(16);
  await send(ws, ids.B, T0 + 2 * H, [
    { id: rB, name: "agent-turn", kind: 2, start: 0, end: 5000 },
    { id: hexOf(16), parent: rB, name: "calculator", start: 1000, end: 1500, status: 2, attrs: [str("gen_ai.tool.name", "calculator")] },
    { id: hexOf(16), parent: rB, name: "chat gpt-4o", kind: 3, start: 2000, end: 4000, attrs: llm("gpt-4o", "openai", 10, 10) },
  ]);
  await send(ws, ids.C, T0 + DAY + 3 * H, [{ id: hexOf(16), name: "batch-job", start: 0, end: 1000, status: 1, attrs: [str("promptlayer.workflow.id", "wf-7")] }]);
  await send(ws, ids.D, T0 + 8 * DAY, [{ id: hexOf(16), parent: hexOf(16), name: "orphan step", kind: 0, start: 0, end: 2000, attrs: [str("gen_ai.tool.name", "search")] }]);
});

async function charts(customCharts: unknown[], filter_group?: unknown, key = ws.key) {
  const res = await call(PATH, { method: "POST", key, json: { customCharts, ...(filter_group ? { filter_group } : {}) } });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}
const chart = async (spec: Record<string, unknown>, filter_group?: unknown) => (await charts([{ id: "c", ...spec }], filter_group)).customCharts[0];
/** label → value of a one-series chart */
const byLabel = (c: { data: { label: string; value: number | null }[] }) => Object.fromEntries(c.data.map((d) => [d.label, d.value]));
const count = async (filter_group: unknown) => (await chart({ chartType: "bar", metric: "count" }, filter_group)).data[0].value;

describe("trace-level charts", () => {
  it("counts traces by name (the root span's; none without a root) and sums their cost, as the document's example", async () => {
    const body = await charts([
      { id: "by_name", chartType: "bar", metric: "count", groupByField: "trace_name" },
      { id: "cost_by_trace", chartType: "bar", metric: "sum", metricField: "trace_total_cost_usd", groupByField: "trace_name" },
    ]);
    expect(body.scanned).toMatchObject({ traces: 4, spans: 9, capped: false, max_traces: 1000, max_spans: 20000 });
    const [byName, costs] = body.customCharts;
    expect(byName.data).toEqual([
      { label: "agent-turn", value: 2 },
      { label: "(none)", value: 1 },
      { label: "batch-job", value: 1 },
    ]);
    expect(costs).toMatchObject({ id: "cost_by_trace", title: "cost_by_trace", chartType: "bar", series: [{ key: "value", unit: "currency" }] });
    expect(byLabel(costs)["agent-turn"]).toBeCloseTo(cost.A1 + cost.A2 + cost.B, 6);
    expect(byLabel(costs)["batch-job"]).toBe(0);
  });

  it("answers every metric of trace values: durations in seconds, exact percentiles, depth and span counts", async () => {
    const c = await chart({
      chartType: "bar",
      series: [
        { key: "avg", label: "Average", metric: "avg", metricField: "trace_duration_ms" },
        { key: "p50", label: "p50", metric: "percentile", percentile: 50, metricField: "trace_duration_ms" },
        { key: "p100", label: "p100", metric: "percentile", percentile: 100, metricField: "trace_duration_ms" },
        { key: "min", label: "Min", metric: "min", metricField: "trace_duration_ms" },
        { key: "tokens", label: "Tokens", metric: "sum", metricField: "trace_total_tokens" },
        { key: "in", label: "In", metric: "sum", metricField: "trace_input_tokens" },
        { key: "out", label: "Out", metric: "max", metricField: "trace_duration_ms" },
        { key: "spans", label: "Spans", metric: "sum", metricField: "trace_span_count" },
      ],
      derivedInsights: [{ label: "tokens per span", numeratorSeriesKey: "tokens", denominatorSeriesKey: "spans" }],
    });
    expect(c.data[0]).toEqual({ label: "c", avg: 4.5, p50: 2, p100: 10, min: 1, tokens: 390, in: 310, out: 10, spans: 9 });
    expect(c.series.map((s: any) => s.unit)).toEqual(["duration_seconds", "duration_seconds", "duration_seconds", "duration_seconds", "tokens", "tokens", "duration_seconds", "number"]);
    expect(c.derivedInsights).toEqual([{ type: "ratio", label: "tokens per span", numeratorSeriesKey: "tokens", denominatorSeriesKey: "spans", value: 43.333333 }]);
    const depth = await chart({ chartType: "bar", metric: "max", metricField: "trace_depth", groupByField: "trace_name" });
    expect(byLabel(depth)).toEqual({ "agent-turn": 3, "(none)": 1, "batch-job": 1 });
    const outputs = await chart({ chartType: "bar", metric: "avg", metricField: "trace_output_tokens", groupByField: "trace_status" });
    expect(byLabel(outputs)).toEqual({ ok: 23.333333, error: 10 });
  });

  it("groups by status and by the sets a trace's spans carry: models, prompt ids, tools, workflow ids", async () => {
    const [status, models, prompts, tools, workflows] = (
      await charts(
        ["trace_status", "trace_models_used", "trace_prompt_ids", "trace_tool_names", "trace_workflow_ids"].map((f) => ({ id: f, chartType: "bar", metric: "count", groupByField: f })),
      )
    ).customCharts;
    expect(byLabel(status)).toEqual({ ok: 3, error: 1 });
    expect(byLabel(models)).toEqual({ "gpt-4o": 2, "claude-3-5-sonnet-20241022": 1 });
    expect(byLabel(prompts)).toEqual({ [String(promptId)]: 1 });
    expect(byLabel(tools)).toEqual({ search: 2, calculator: 1 });
    expect(byLabel(workflows)).toEqual({ "wf-7": 1 });
  });

  it("draws over time by day, week and month, and by group over time; hourly within a two-day trace_start range", async () => {
    const days = await chart({ chartType: "line", metric: "count", timeSeries: true });
    expect(days.data).toEqual([
      { label: "2026-07-01", bucketKey: "2026-07-01", value: 2 },
      { label: "2026-07-02", bucketKey: "2026-07-02", value: 1 },
      { label: "2026-07-09", bucketKey: "2026-07-09", value: 1 },
    ]);
    const weeks = await chart({ chartType: "line", metric: "count", timeSeries: true, timeBucket: "week" });
    expect(weeks.data.map((d: any) => [d.bucketKey, d.value])).toEqual([
      ["2026-06-29", 3],
      ["2026-07-06", 1],
    ]);
    const months = await chart({ chartType: "area", metric: "sum", metricField: "trace_span_count", timeSeries: true, timeBucket: "month" });
    expect(months.data).toEqual([{ label: "2026-07", bucketKey: "2026-07", value: 9 }]);
    const byName = await chart({ chartType: "area", metric: "count", groupByField: "trace_name", timeSeries: true, timeBucket: "day" });
    expect(byName.series.map((s: any) => s.key)).toEqual(["agent-turn", "(none)", "batch-job"]);
    expect(byName.data[0]).toEqual({ label: "2026-07-01", bucketKey: "2026-07-01", "agent-turn": 2 });
    const hourly = await chart({ chartType: "line", metric: "count", timeSeries: true }, { filters: [{ field: "trace_start", operator: "between", value: [new Date(T0).toISOString(), T0 + 2 * DAY] }] });
    expect(hourly.data.map((d: any) => d.bucketKey)).toEqual(["2026-07-01T01:00:00Z", "2026-07-01T02:00:00Z", "2026-07-02T03:00:00Z"]);
  });
});

describe("span-level charts", () => {
  it("counts tool calls and finds the slowest tools of agent traces, as the document's examples", async () => {
    const [calls] = (await charts([{ id: "tool_calls", chartType: "bar", metric: "count", groupByField: "span_tool_name" }])).customCharts;
    expect(calls.data).toEqual([
      { label: "search", value: 2 },
      { label: "calculator", value: 1 },
    ]);
    const slowest = await chart(
      { title: "Slowest Tools", chartType: "bar", metric: "max", metricField: "span_duration_ms", groupByField: "span_tool_name" },
      {
        logic: "AND",
        filters: [
          { field: "trace_name", operator: "is", value: "agent-turn" },
          { field: "trace_start", operator: "between", value: ["2026-07-01T00:00:00Z", "2026-07-08T00:00:00Z"] },
        ],
      },
    );
    expect(slowest).toMatchObject({ title: "Slowest Tools", series: [{ key: "value", label: "Slowest Tools", unit: "duration_seconds" }] });
    expect(slowest.data).toEqual([
      { label: "search", value: 4 },
      { label: "calculator", value: 0.5 },
    ]);
  });

  it("groups spans by type, kind and status; costs and tokens come from each span's log", async () => {
    const [type, kind, status, costs, tokens] = (
      await charts([
        { id: "type", chartType: "bar", metric: "count", groupByField: "span_type" },
        { id: "kind", chartType: "bar", metric: "count", groupByField: "span_kind" },
        { id: "status", chartType: "bar", metric: "count", groupByField: "span_status" },
        { id: "cost", chartType: "bar", metric: "avg", metricField: "span_cost_usd", groupByField: "span_type" },
        {
          id: "tokens",
          chartType: "bar",
          series: [
            { key: "sum", label: "Sum", metric: "sum", metricField: "span_tokens" },
            { key: "in", label: "In", metric: "min", metricField: "span_input_tokens" },
            { key: "out", label: "Out", metric: "sum", metricField: "span_output_tokens" },
            { key: "p", label: "p", metric: "percentile", percentile: 50, metricField: "span_input_tokens" },
          ],
        },
      ])
    ).customCharts;
    expect(byLabel(type)).toEqual({ llm: 3, span: 3, tool: 3 });
    expect(byLabel(kind)).toEqual({ client: 3, internal: 3, server: 2, unspecified: 1 });
    expect(byLabel(status)).toEqual({ unset: 5, ok: 3, error: 1 });
    expect(costs.data[0].label).toBe("llm");
    expect(costs.data[0].value).toBeCloseTo((cost.A1 + cost.A2 + cost.B) / 3, 6);
    expect(costs.data.slice(1)).toEqual([
      { label: "span", value: null },
      { label: "tool", value: null },
    ]);
    expect(tokens.data[0]).toEqual({ label: "tokens", sum: 390, in: 10, out: 80, p: 100 });
    const names = await chart({ chartType: "bar", metric: "sum", metricField: "span_duration_ms", groupByField: "span_name", limit: 2 });
    expect(names.data).toEqual([
      { label: "agent-turn", value: 15 },
      { label: "chat gpt-4o", value: 4 },
    ]);
  });
});

describe("chart types", () => {
  it("pie and donut by a group", async () => {
    const [pie, donut] = (
      await charts([
        { id: "pie", chartType: "pie", metric: "count", groupByField: "trace_status" },
        { id: "donut", chartType: "donut", metric: "sum", metricField: "span_duration_ms", groupByField: "span_type" },
      ])
    ).customCharts;
    expect(pie).toMatchObject({ chartType: "pie", data: [{ label: "ok", value: 3 }, { label: "error", value: 1 }] });
    expect(donut.chartType).toBe("donut");
    expect(byLabel(donut)).toEqual({ span: 16, tool: 6.5, llm: 5 });
  });

  it("histograms: automatic bins from 0, a given width in the field's unit with the last of `limit` bins open, whole-number fields", async () => {
    const auto = await chart({ chartType: "histogram", histogramField: "trace_duration_ms" });
    expect(auto.data).toEqual([
      { label: "1000–2000", bucketStart: 1000, bucketEnd: 2000, value: 1 },
      { label: "2000–3000", bucketStart: 2000, bucketEnd: 3000, value: 1 },
      { label: "5000–6000", bucketStart: 5000, bucketEnd: 6000, value: 1 },
      { label: "10000–11000", bucketStart: 10000, bucketEnd: 11000, value: 1 },
    ]);
    const given = await chart({ chartType: "histogram", histogramField: "trace_duration_ms", histogramInterval: 4000, limit: 2, metric: "sum", metricField: "trace_span_count" });
    expect(given.data).toEqual([
      { label: "0–4000", bucketStart: 0, bucketEnd: 4000, value: 2 },
      { label: "≥ 4000", bucketStart: 4000, bucketEnd: null, value: 7 },
    ]);
    const tokens = await chart({ chartType: "histogram", histogramField: "span_tokens" });
    expect(tokens.data.map((d: any) => [d.bucketStart, d.value])).toEqual([
      [20, 1],
      [140, 1],
      [220, 1],
    ]);
  });

  it("heatmaps of two groupings, treemaps and sunbursts of a hierarchy", async () => {
    const [heat, tree, sun] = (
      await charts([
        { id: "heat", chartType: "heatmap", metric: "count", groupByField: "trace_name", secondaryGroupByField: "trace_status" },
        { id: "tree", chartType: "treemap", metric: "count", hierarchyFields: ["trace_name", "trace_models_used"] },
        { id: "sun", chartType: "sunburst", metric: "avg", metricField: "span_duration_ms", hierarchyFields: ["span_type", "span_tool_name"] },
      ])
    ).customCharts;
    expect(heat.data).toEqual([
      { label: "agent-turn / ok", group: "agent-turn", secondaryGroup: "ok", value: 1 },
      { label: "agent-turn / error", group: "agent-turn", secondaryGroup: "error", value: 1 },
      { label: "(none) / ok", group: "(none)", secondaryGroup: "ok", value: 1 },
      { label: "batch-job / ok", group: "batch-job", secondaryGroup: "ok", value: 1 },
    ]);
    expect(tree.data).toEqual([
      { label: "agent-turn / gpt-4o", path: ["agent-turn", "gpt-4o"], value: 2 },
      { label: "agent-turn / claude-3-5-sonnet-20241022", path: ["agent-turn", "claude-3-5-sonnet-20241022"], value: 1 },
    ]);
    expect(sun.data).toEqual([
      { label: "tool / search", path: ["tool", "search"], value: 3 },
      { label: "tool / calculator", path: ["tool", "calculator"], value: 0.5 },
    ]);
  });
});

describe("filters", () => {
  it("AND across spans may be met by two spans; SPAN_AND needs one span meeting every branch", async () => {
    const slowCalculator = [
      { field: "span_tool_name", operator: "is", value: "calculator" },
      { field: "span_duration_ms", operator: "gt", value: 3000 },
    ];
    expect(await count({ logic: "AND", filters: slowCalculator })).toBe(1);
    expect(await count({ logic: "SPAN_AND", filters: slowCalculator })).toBe(0);
    const slowSearch = [
      { field: "span_tool_name", operator: "is", value: "search" },
      { field: "span_duration_ms", operator: "gt", value: 3000 },
    ];
    expect(await count({ logic: "SPAN_AND", filters: slowSearch })).toBe(1);
    expect(
      await count({
        logic: "SPAN_OR",
        filters: [
          { field: "span_tool_name", operator: "is", value: "calculator" },
          { field: "span_model", operator: "starts_with", value: "claude" },
        ],
      }),
    ).toBe(2);
    // A SPAN_AND group inside an AND with a trace-level filter.
    expect(
      await count({
        logic: "AND",
        filters: [
          { field: "trace_name", operator: "is", value: "agent-turn" },
          { logic: "SPAN_AND", filters: [{ field: "span_type", operator: "is", value: "tool" }, { field: "span_status", operator: "is", value: "error" }] },
        ],
      }),
    ).toBe(1);
  });

  it("takes the operators of request-log filters on trace values, sets, nested span attributes and time", async () => {
    const f = (field: string, operator: string, value?: unknown, nested_key?: string) => ({ filters: [{ field, operator, ...(value !== undefined ? { value } : {}), ...(nested_key ? { nested_key } : {}) }] });
    expect(await count(f("trace_models_used", "contains", "gpt-4o"))).toBe(2);
    expect(await count(f("trace_models_used", "not_contains", "gpt-4o"))).toBe(2);
    expect(await count(f("trace_models_used", "in", ["claude-3-5-sonnet-20241022", "x"]))).toBe(1);
    expect(await count(f("trace_models_used", "is_empty"))).toBe(2);
    expect(await count(f("trace_workflow_ids", "is_not_empty"))).toBe(1);
    expect(await count(f("trace_prompt_ids", "contains", String(promptId)))).toBe(1);
    expect(await count(f("trace_tool_names", "starts_with", "calc"))).toBe(1);
    expect(await count(f("trace_duration_ms", "gte", 5000))).toBe(2);
    expect(await count(f("trace_duration_ms", "between", [1500, 5000]))).toBe(2);
    expect(await count(f("trace_depth", "gt", 1))).toBe(2);
    expect(await count(f("trace_span_count", "in", [1, 3]))).toBe(3);
    expect(await count(f("trace_total_cost_usd", "gt", 0))).toBe(2);
    expect(await count(f("trace_status", "is", "error"))).toBe(1);
    expect(await count(f("trace_name", "is_null"))).toBe(1);
    expect(await count(f("trace_name", "not_in", ["agent-turn"]))).toBe(2);
    expect(await count(f("trace_name", "contains", "JOB"))).toBe(1);
    expect(await count(f("trace_id", "is", ids.C))).toBe(1);
    expect(await count(f("trace_start", "after", "2026-07-02T00:00:00Z"))).toBe(2);
    expect(await count(f("trace_start", "before", T0 + DAY))).toBe(2);
    expect(await count(f("span_attributes", "key_equals", "prod", "env"))).toBe(1);
    expect(await count(f("span_attributes", "is_not_null", undefined, "promptlayer.workflow.id"))).toBe(1);
    expect(await count(f("span_resource", "key_equals", "agent", "service.name"))).toBe(4);
    expect(await count(f("span_kind", "in", ["server"]))).toBe(2);
    expect(await count(f("span_start", "after", T0 + DAY))).toBe(2);
    expect(
      await count({
        logic: "OR",
        filters: [
          { field: "trace_name", operator: "is", value: "batch-job" },
          { field: "trace_status", operator: "is", value: "error" },
        ],
      }),
    ).toBe(2);
  });

  it("in span-level charts each group is asked of the span counted", async () => {
    const llmSpans = await chart(
      { chartType: "bar", metric: "count", groupByField: "span_type" },
      {
        logic: "AND",
        filters: [
          { field: "trace_name", operator: "is", value: "agent-turn" },
          { field: "span_type", operator: "in", value: ["llm", "tool"] },
          { field: "trace_models_used", operator: "contains", value: "claude-3-5-sonnet-20241022" },
        ],
      },
    );
    expect(byLabel(llmSpans)).toEqual({ llm: 2, tool: 1 });
    const either = await chart(
      { chartType: "bar", metric: "count", groupByField: "span_name" },
      { logic: "OR", filters: [{ field: "span_tool_name", operator: "is", value: "calculator" }, { field: "span_name", operator: "is", value: "batch-job" }] },
    );
    expect(byLabel(either)).toEqual({ "batch-job": 1, calculator: 1 });
  });

  it("keeps within D1's 100 bound parameters: a filter needing more is a 400, one just under is answered", async () => {
    const nestedIns = (n: number) => ({
      filters: Array.from({ length: n }, (_, i) => ({ field: "span_attributes", operator: "in", nested_key: `k${i}`, value: Array.from({ length: 8 }, (_, j) => `v${i}-${j}`) })),
    });
    expect(await count(nestedIns(25))).toBe(0);
    const res = await call(PATH, { method: "POST", key: ws.key, json: { filter_group: nestedIns(30), customCharts: [{ id: "c", chartType: "bar", metric: "count" }] } });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/more than the 100 distinct values/);
  });
});

describe("refusals", () => {
  const bad = async (body: Record<string, unknown>, pattern: RegExp) => {
    const res = await call(PATH, { method: "POST", key: ws.key, json: body });
    const got = await json(res);
    expect(res.status, JSON.stringify(got)).toBe(400);
    expect(got).toMatchObject({ success: false, error: "validation_error" });
    expect(got.message).toMatch(pattern);
  };
  const badChart = (spec: Record<string, unknown>, pattern: RegExp) => bad({ customCharts: [{ id: "c", ...spec }] }, pattern);

  it("refuses a chart mixing trace- and span-level fields, and span-level charts over time", async () => {
    await badChart({ chartType: "bar", metric: "max", metricField: "span_duration_ms", groupByField: "trace_name" }, /customCharts\.0: mixes trace-level fields \(trace_name \(groupByField\)\) and span-level fields \(span_duration_ms \(metricField\)\)/);
    await badChart({ chartType: "heatmap", metric: "count", groupByField: "span_type", secondaryGroupByField: "trace_status" }, /mixes trace-level/);
    await badChart({ chartType: "line", metric: "count", groupByField: "span_type", timeSeries: true }, /customCharts\.0\.timeSeries: not with span-level fields/);
  });

  it("refuses bad chart specs with the chart and the rule", async () => {
    await bad({ customCharts: [] }, /customCharts: must hold 1 to 10 charts/);
    await bad({ customCharts: Array.from({ length: 11 }, (_, i) => ({ id: `c${i}`, chartType: "bar", metric: "count" })) }, /customCharts: must hold 1 to 10 charts/);
    expect((await charts(Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, chartType: "bar", metric: "count" })))).customCharts).toHaveLength(10);
    await bad({ customCharts: [{ id: "a", chartType: "bar", metric: "count" }, { id: "a", chartType: "bar", metric: "count" }] }, /customCharts\.1\.id: a is used twice/);
    await badChart({ chartType: "pie", metric: "count" }, /groupByField: is required for pie charts/);
    await badChart({ chartType: "pie", metric: "count", groupByField: "trace_name", timeSeries: true }, /timeSeries: only with bar, line and area charts/);
    await badChart({ chartType: "histogram" }, /histogramField: is required for histogram charts/);
    await badChart({ chartType: "histogram", histogramField: "trace_depth", histogramInterval: 0 }, /histogramInterval: must be above 0/);
    await badChart({ chartType: "bar", metric: "count", histogramField: "trace_depth" }, /histogramField: only with histogram charts/);
    await badChart({ chartType: "heatmap", metric: "count", groupByField: "trace_name" }, /secondaryGroupByField: is required for heatmap charts/);
    await badChart({ chartType: "heatmap", metric: "count", groupByField: "trace_name", secondaryGroupByField: "trace_name" }, /must differ/);
    await badChart({ chartType: "treemap", metric: "count", hierarchyFields: ["trace_name", "trace_name"] }, /hierarchyFields: trace_name is used twice/);
    await badChart({ chartType: "sunburst", metric: "count", hierarchyFields: ["trace_name"] }, /hierarchyFields: must hold 2 to 5 fields/);
    const five = ["trace_status", "trace_name", "trace_models_used", "trace_prompt_ids", "trace_tool_names"];
    expect((await chart({ chartType: "treemap", metric: "count", hierarchyFields: five })).data).toEqual([
      { label: `ok / agent-turn / claude-3-5-sonnet-20241022 / ${promptId} / search`, path: ["ok", "agent-turn", "claude-3-5-sonnet-20241022", String(promptId), "search"], value: 1 },
      { label: `ok / agent-turn / gpt-4o / ${promptId} / search`, path: ["ok", "agent-turn", "gpt-4o", String(promptId), "search"], value: 1 },
    ]);
    await badChart({ chartType: "treemap", metric: "count", hierarchyFields: [...five, "trace_workflow_ids"] }, /hierarchyFields: must hold 2 to 5 fields/);
    await badChart({ chartType: "line", metric: "count" }, /an overall chart/);
    await badChart({ chartType: "bar", metric: "percentile", metricField: "trace_depth" }, /percentile: is required/);
    await badChart({ chartType: "bar", metric: "sum" }, /a field is required/);
    await badChart({ chartType: "bar", metric: "count", groupByField: "engine" }, /groupByField/);
    await badChart({ chartType: "bar", metric: "sum", metricField: "latency_ms" }, /metricField/);
    await badChart(
      {
        chartType: "bar",
        series: [
          { key: "a", label: "A", metric: "max", metricField: "trace_depth" },
          { key: "b", label: "B", metric: "min", metricField: "trace_span_count" },
        ],
      },
      /must share one field/,
    );
  });

  it("refuses bad filter groups: SPAN groups with trace-level fields, unknown fields, operators a field does not take", async () => {
    const chartOf = [{ id: "c", chartType: "bar", metric: "count" }];
    await bad(
      { customCharts: chartOf, filter_group: { logic: "SPAN_AND", filters: [{ field: "span_name", operator: "is", value: "x" }, { logic: "OR", filters: [{ field: "trace_name", operator: "is", value: "x" }] }] } },
      /filter_group\.filters\[1\]\.filters\[0\]\.field: trace_name is a trace-level field; a SPAN_AND group takes span-level/,
    );
    await bad({ customCharts: chartOf, filter_group: { filters: [{ field: "engine", operator: "is", value: "x" }] } }, /filter_group\.filters\[0\]\.field: must be one of trace_id/);
    await bad({ customCharts: chartOf, filter_group: { filters: [{ field: "trace_status", operator: "contains", value: "x" }] } }, /contains does not apply to trace_status/);
    await bad({ customCharts: chartOf, filter_group: { filters: [{ field: "trace_status", operator: "is", value: "broken" }] } }, /must be one of ok, error/);
    await bad({ customCharts: chartOf, filter_group: { logic: "XOR", filters: [] } }, /logic: must be AND, OR, SPAN_AND or SPAN_OR/);
    await bad({ customCharts: chartOf, filter_group: { filters: [{ field: "span_attributes", operator: "key_equals", value: "x" }] } }, /nested_key: is required/);
    await bad({ customCharts: chartOf, filter_group: { filters: [{ field: "trace_start", operator: "after", value: "yesterday" }] } }, /trace_start/);
  });
});

describe("isolation and bounds", () => {
  it("reads only the caller's spans, even under the same trace id", async () => {
    const other = await createWorkspace();
    // One log database: only the workspace condition keeps the same trace id's spans apart.
    await shareLogsDb(other, ws);
    await send(other, ids.A, T0 + H, [{ id: hexOf(16), name: "other-turn", start: 0, end: 100 }]);
    const theirs = await charts([{ id: "n", chartType: "bar", metric: "count", groupByField: "trace_name" }], undefined, other.key);
    expect(theirs.customCharts[0].data).toEqual([{ label: "other-turn", value: 1 }]);
    expect(theirs.scanned).toMatchObject({ traces: 1, spans: 1 });
    const ours = await chart({ chartType: "bar", metric: "count", groupByField: "trace_name" });
    expect(byLabel(ours)).toEqual({ "agent-turn": 2, "(none)": 1, "batch-job": 1 });
    const empty = await charts([{ id: "n", chartType: "bar", metric: "count" }], undefined, (await createWorkspace()).key);
    expect(empty.customCharts[0].data).toEqual([{ label: "n", value: 0 }]);
    expect(empty.scanned).toEqual({ traces: 0, spans: 0, capped: false, max_traces: 1000, max_spans: 20000, oldest_span_start: null });
    expect((await call(PATH, { method: "POST", json: { customCharts: [{ id: "n", chartType: "bar", metric: "count" }] } })).status).toBe(401);
  });

  it("reads names from attributes by their first 256 characters", async () => {
    const mine = await createWorkspace();
    const [at, over] = ["t".repeat(256), `${"t".repeat(256)}u`];
    await send(mine, hexOf(32), T0, [
      { id: hexOf(16), name: "a", start: 0, end: 10, attrs: [str("gen_ai.tool.name", at)] },
      { id: hexOf(16), name: "b", start: 0, end: 10, attrs: [str("gen_ai.tool.name", over)] },
    ]);
    const got = await charts([{ id: "n", chartType: "bar", metric: "count", groupByField: "span_tool_name" }], undefined, mine.key);
    expect(got.customCharts[0].data).toEqual([{ label: at, value: 2 }]);
  });

  it("reads the newest traces within both caps, saying when older ones were left out", async () => {
    const db = await logsOf(ws);
    const input = { customCharts: [{ id: "n", chartType: "bar" as const, metric: "count" as const, groupByField: "trace_name" as const }] };
    const run = (maxTraces: number, maxSpans: number) => traceCustomAnalytics(db, ws.workspaceId, input, { maxTraces, maxSpans });
    // Newest first: D (1 span), C (1), B (3), A (4).
    expect((await run(4, 9)).scanned).toMatchObject({ traces: 4, spans: 9, capped: false, oldest_span_start: new Date(T0 + H).toISOString() });
    const byTraces = await run(3, 9);
    expect(byTraces.scanned).toMatchObject({ traces: 3, spans: 5, capped: true, oldest_span_start: new Date(T0 + 2 * H).toISOString() });
    expect(byLabel(byTraces.customCharts[0] as any)).toEqual({ "agent-turn": 1, "(none)": 1, "batch-job": 1 });
    expect((await run(4, 8)).scanned).toMatchObject({ traces: 3, spans: 5, capped: true });
    expect((await run(4, 5)).scanned).toMatchObject({ traces: 3, spans: 5, capped: true });
    expect((await run(4, 4)).scanned).toMatchObject({ traces: 2, spans: 2, capped: true });
    // The window follows the top-level trace_start range.
    const parsed = parseTraceFilterGroup({ filters: [{ field: "trace_start", operator: "lt", value: T0 + DAY }] });
    if (!parsed.ok) throw new Error("filter");
    const ranged = await traceCustomAnalytics(db, ws.workspaceId, { ...input, filter_group: parsed.group }, { maxTraces: 2, maxSpans: 9 });
    expect(ranged.scanned).toMatchObject({ traces: 2, spans: 7, capped: false });
    expect(byLabel(ranged.customCharts[0] as any)).toEqual({ "agent-turn": 2 });
  });
});

describe("the reference", () => {
  it("describes the operation, its filter language and chart spec in /openapi.json", async () => {
    const doc = await json(await call("/openapi.json"));
    const op = doc.paths[PATH].post;
    expect(op.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/TraceAnalyticsCustomAnalyticsQuery");
    expect(Object.keys(op.responses)).toContain("200");
    expect(op.description).toMatch(/at most 1000 traces and 20000 spans/);
    const schemas = doc.components.schemas;
    expect(schemas.TraceStructuredFilterGroup.properties.logic.enum).toEqual(["AND", "OR", "SPAN_AND", "SPAN_OR"]);
    expect(schemas.TraceStructuredFilterGroup.properties.filters.items.oneOf).toEqual([{ $ref: "#/components/schemas/TraceStructuredFilter" }, { $ref: "#/components/schemas/TraceStructuredFilterGroup" }]);
    expect(schemas.TraceStructuredFilter.properties.field.enum).toEqual(expect.arrayContaining(["trace_start", "span_tool_name", "span_attributes"]));
    expect(schemas.TraceStructuredFilter.description).toMatch(/trace_status: is, is_not, in, not_in/);
    expect(schemas.TraceCustomChartSpec.properties.chartType.enum).toEqual(["bar", "line", "area", "pie", "donut", "histogram", "heatmap", "treemap", "sunburst"]);
    expect(schemas.TraceAnalyticsCustomAnalyticsResponse.properties.scanned.properties.capped.type).toBe("boolean");
  });
});

describe("query plans", () => {
  const explain = async (q: { sql: string; params: (string | number)[] }) =>
    ((await (await logsDb(ws)).prepare(`EXPLAIN QUERY PLAN ${q.sql}`).bind(...q.params).all()).results as { detail: string }[]).map((r) => r.detail);

  it("reads spans only by seeks on the window's traces and their children, and the window by a start-time range", async () => {
    const parsed = parseTraceFilterGroup({
      filters: [
        { field: "trace_depth", operator: "gt", value: 1 },
        { field: "span_attributes", operator: "key_equals", nested_key: "env", value: "prod" },
      ],
    });
    if (!parsed.ok) throw new Error("filter");
    for (const [spec, level] of [
      [{ id: "t", chartType: "bar", metric: "max", metricField: "trace_depth", groupByField: "trace_models_used" }, "trace"],
      [{ id: "s", chartType: "histogram", histogramField: "span_duration_ms" }, "span"],
    ] as const) {
      const plan = await explain(chartQuery(spec, level, parsed.group, ws.workspaceId, JSON.stringify([ids.A]), "day"));
      expect(plan.filter((d) => /\b(SCAN|SEARCH) (sx|c|px)\b/.test(d))).toEqual([
        "SEARCH sx USING INDEX spans_workspace_parent (workspace_id=? AND trace_id=?)",
        "SEARCH px USING COVERING INDEX sqlite_autoindex_spans_1 (workspace_id=? AND trace_id=? AND span_id=?)",
        "SEARCH c USING INDEX spans_workspace_parent (workspace_id=? AND trace_id=? AND parent_span_id=?)",
      ]);
    }
    const window = await explain(windowQuery(ws.workspaceId, { from: T0, to: T0 + DAY }, { maxTraces: 10, maxSpans: 10 }));
    expect(window.filter((d) => /spans/.test(d))).toEqual([
      "SEARCH spans USING INDEX spans_workspace_start (workspace_id=? AND start_time>? AND start_time<?)",
      "SEARCH s USING COVERING INDEX spans_workspace_parent (workspace_id=? AND trace_id=?)",
    ]);
  });
});
