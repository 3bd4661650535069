// Request analytics: totals, time series, breakdowns and latency percentiles over the logs a filter
// group selects (the same filter group as search).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { FilterGroupSchema } from "../../filters";
import { defineRoute } from "../../http/openapi";
import { requestAnalytics, signalAnalytics } from "../../logs";
import { customAnalytics, redactionAnalytics } from "../../logs";
import { GROUP_FIELDS, METRIC_FIELDS, SIGNAL_FIELD_PREFIX, type MetricField } from "../../analytics/custom-charts";
import { signalIdsByName } from "../../services/signals";
import { ChartKey, ChartLimit, ChartTitle, chartResultSchema, DerivedInsights, Metric, Percentile, seriesSchema } from "./chart-schemas";

const Series = z.array(z.tuple([z.string(), z.number().nullable()]));
const DimensionLatency = z.record(z.string(), z.object({ average_latency: Series, p50_latency: Series, p90_latency: Series, p95_latency: Series }));
const Breakdown = z.object({ requests: z.int(), cost: z.number(), tokens: z.int(), inputTokens: z.int(), outputTokens: z.int() });

export const AnalyticsBody = z
  .object({
    filter_group: FilterGroupSchema.nullable().optional(),
    q: z.string().max(1000).nullable().optional().openapi({ description: "Free text over input and output text, as in search." }),
    sort_by: z.string().max(64).nullable().optional().openapi({ description: "Accepted for compatibility with search bodies; ignored." }),
    sort_order: z.enum(["asc", "desc"]).nullable().optional().openapi({ description: "Accepted for compatibility; ignored." }),
    metadata_cost_breakdown_key: z.string().max(1000).nullable().optional().openapi({ description: "Accepted for compatibility; the metadata breakdown is not computed." }),
    signals: z
      .array(z.string().min(1, "must be 1 to 255 characters").max(255, "must be 1 to 255 characters"))
      .max(10, "at most 10 signals")
      .nullish()
      .openapi({ description: "Names of the workspace's signals whose true-rates to add (the answer's `signals`); a name that is no signal of the workspace is a 400." }),
  })
  .openapi("RequestAnalyticsRequest");

const SignalRate = { judged: z.int().openapi({ description: "Logs with an ok verdict." }), true: z.int(), trueRate: z.number().nullable().openapi({ description: "true / judged; null before a verdict." }) };

const AnalyticsResponse = z
  .object({
    success: z.literal(true),
    chartInterval: z.object({ interval: z.enum(["hour", "day"]), bucketSizeMs: z.int(), bucketMinutes: z.int().nullable() }),
    averageLatency: z.number().openapi({ description: "Seconds." }),
    totalCost: z.number(),
    totalTokens: z.int(),
    totalInputTokens: z.int(),
    totalOutputTokens: z.int(),
    totalRequests: z.int(),
    totalCachedTokens: z.int().openapi({ description: "Always 0: logs do not record cached tokens." }),
    totalThinkingTokens: z.int().openapi({ description: "Always 0: logs do not record thinking tokens." }),
    cacheTokenRatio: z.number().nullable(),
    stats: z.array(
      z.object({
        date: z.string(),
        dateLabel: z.string(),
        requests: z.int(),
        tokens: z.int(),
        inputTokens: z.int(),
        outputTokens: z.int(),
        cost: z.number(),
        latency: z.number(),
        statusCounts: z.record(z.string(), z.int()),
      }),
    ),
    mostUsedModels: z.array(z.tuple([z.string(), z.int()])),
    modelRequestsByDay: z.record(z.string(), z.array(z.tuple([z.string(), z.int()]))),
    mostUsedPromptTemplates: z.array(z.object({ promptId: z.string(), requests: z.int(), promptName: z.string().nullable() })),
    promptTemplateRequestsByDay: z.record(z.string(), z.array(z.tuple([z.string(), z.int()]))),
    providerRequestsByDay: z.record(z.string(), z.array(z.tuple([z.string(), z.int()]))),
    latency: z.object({
      average_latency: z.record(z.string(), z.number().nullable()),
      p50_latency: z.record(z.string(), z.number().nullable()),
      p90_latency: z.record(z.string(), z.number().nullable()),
      p95_latency: z.record(z.string(), z.number().nullable()),
    }),
    latencyByModelByDay: DimensionLatency,
    latencyByPromptTemplateByDay: DimensionLatency,
    latencyByProviderByDay: DimensionLatency,
    errorTypes: z.array(z.object({ errorType: z.string(), requests: z.int() })),
    errorRate: z.number().openapi({ description: "Share of the matching requests whose status is ERROR." }),
    providerBreakdown: z.array(Breakdown.extend({ provider: z.string() })),
    promptBreakdown: z.array(Breakdown.extend({ promptId: z.string() })),
    signals: z
      .record(
        z.string(),
        z.object({
          ...SignalRate,
          trueRateByDay: z.array(z.tuple([z.string(), z.number().nullable()])).openapi({ description: "Per period of the series (hour or day, as stats)." }),
          byPromptVersion: z.array(z.object({ promptId: z.string().nullable(), promptVersionNumber: z.int().nullable(), ...SignalRate })).openapi({ description: "Per prompt template and version, most judged first (null: logs of no template)." }),
        }),
      )
      .optional()
      .openapi({ description: "Only when `signals` is asked: each signal's true-rate over the selected logs, by period and by prompt version." }),
  })
  .openapi("RequestAnalyticsResponse");

const analytics = defineRoute({
  method: "post",
  path: "/api/public/v2/requests/analytics",
  scope: "logs:read",
  tags: ["request logs"],
  summary: "Analytics over request logs",
  description:
    "Counts, cost, tokens, latency (average and p50/p90/p95) and error rate of the logs the filter group and free text select, as totals, " +
    "as a time series (by the hour when both request_start_time bounds are given and at most two days apart, else by the UTC day), " +
    "and broken down by model, provider, prompt template and error type. Breakdown lists hold the 50 busiest values; per-period series (…ByDay) the 10 busiest. " +
    "Every count and sum is exact. Percentiles come from latency histograms with buckets 20 % wide, so they are within 10 % of the true value; " +
    "histograms are kept overall, by model and by provider, so prompt templates' percentiles are null (their averages are exact). " +
    "When the only filters are top-level request_start_time bounds, whole UTC days are read from daily totals kept as logs are indexed, within seconds of their write " +
    "(the partial days at the edges from the logs); other filters and free text read the matching logs. " +
    "With `signals` (names of the workspace's signals) the answer adds each one's true-rate over the selected logs, overall, per period and per prompt version.",
  request: { body: { required: true, content: { "application/json": { schema: AnalyticsBody } } } },
  responses: { 200: { description: "The analytics", content: { "application/json": { schema: AnalyticsResponse } } } },
});

const LogMetricField = z
  .union([
    z.enum(METRIC_FIELDS),
    z
      .string()
      .startsWith(SIGNAL_FIELD_PREFIX)
      .min(SIGNAL_FIELD_PREFIX.length + 1, "must name a signal after signal:")
      .max(SIGNAL_FIELD_PREFIX.length + 255, "must name a signal of at most 255 characters after signal:")
      .transform((f) => f as MetricField),
  ])
  .openapi({
    description:
      "A field of the logs, or `signal:<name>`: a signal's verdicts (1 true, 0 false; logs without an ok verdict have no value). " +
      "avg is the signal's true-rate over the judged logs, sum its true verdicts; a name that is no signal of the workspace is a 400.",
  });

const ChartSpec = z
  .object({
    id: ChartKey,
    title: ChartTitle,
    chartType: z.enum(["bar", "line", "area"]),
    metric: Metric.nullish(),
    metricField: LogMetricField.nullish(),
    percentile: Percentile.nullish(),
    series: seriesSchema(LogMetricField),
    derivedInsights: DerivedInsights,
    groupByField: z.enum(GROUP_FIELDS).nullish(),
    groupByMetadataKey: z.string().min(1, "must be 1 to 1000 characters").max(1000, "must be 1 to 1000 characters").nullish(),
    timeSeries: z.boolean().default(false),
    limit: ChartLimit,
  })
  .openapi("CustomAnalyticsSpec");

const CustomBody = AnalyticsBody.omit({ metadata_cost_breakdown_key: true, signals: true })
  .extend({ customCharts: z.array(ChartSpec).min(1, "must hold 1 to 20 charts").max(20, "must hold 1 to 20 charts") })
  .openapi("RequestAnalyticsCustomAnalyticsQuery");

const CustomResponse = z
  .object({ success: z.literal(true), customCharts: z.array(chartResultSchema(["bar", "line", "area"])) })
  .openapi("RequestAnalyticsCustomAnalyticsResponse");

const custom = defineRoute({
  method: "post",
  path: "/api/public/v2/requests/analytics/custom-analytics",
  scope: "logs:read",
  tags: ["request logs"],
  summary: "Custom charts over request logs",
  description:
    "Each chart is a metric (count, sum, avg, min, max, or a percentile of latency_ms) of a field, or several such series; overall (a bar), broken down by a field " +
    "or a metadata key's values (the top `limit` groups by the first series, logs without the field grouped as \"(none)\"), over time (by hour or day, as analytics), " +
    "or over time and by group (one row per time bucket, one key per group). Latency is answered in seconds. turn_count, tool_call_count, cached_tokens and " +
    "thinking_tokens are not recorded by this service: asking for them is a 400. A log counts once per tag, tool, or key it has when grouped by those. " +
    "A metricField `signal:<name>` charts a signal's verdicts (avg: its true-rate, e.g. over time by prompt_version_number). " +
    "Counts, sums and averages are exact; latency percentiles are within 10 %.",
  request: { body: { required: true, content: { "application/json": { schema: CustomBody } } } },
  responses: { 200: { description: "The charts, in the order asked", content: { "application/json": { schema: CustomResponse } } } },
});

const redactions = defineRoute({
  method: "post",
  path: "/api/public/v2/requests/analytics/redactions",
  scope: "logs:read",
  tags: ["request logs"],
  summary: "Redaction counts over time",
  description:
    "How many values each redaction detector (or custom pattern, by its name) replaced in the logs the filter group and free text select (the " +
    "body of POST /api/public/v2/requests/analytics), in total and per hour (ranges of two days or less) or per UTC day. Only logs written under a " +
    "redaction policy count; `logs` is how many logs of the period had that detector's findings. docs/privacy.md.",
  request: { body: { required: true, content: { "application/json": { schema: AnalyticsBody } } } },
  responses: {
    200: {
      description: "Counts",
      content: {
        "application/json": {
          schema: z
            .object({
              success: z.literal(true),
              interval: z.enum(["hour", "day"]),
              totals: z.record(z.string(), z.int()),
              series: z.array(z.object({ period: z.string(), detector: z.string(), redacted: z.int(), logs: z.int() })),
            })
            .openapi("RedactionAnalyticsResponse"),
        },
      },
    },
  },
});

export function registerAnalyticsRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(redactions, async (c) => {
    const ws = c.get("auth").workspaceId;
    return c.json(await redactionAnalytics(await c.var.deps.logs(ws), ws, c.req.valid("json")), 200);
  });

  app.openapi(analytics, async (c) => {
    const body = c.req.valid("json");
    const ws = c.get("auth").workspaceId;
    const asked = (body.signals ?? []).map((name, i) => ({ name, at: `signals.${i}` }));
    const signals = await signalIdsByName(c.var.deps.db, ws, asked);
    const logs = await c.var.deps.logs(ws);
    const answer = await requestAnalytics(c.var.deps.db, logs, ws, body);
    return c.json(asked.length > 0 ? { ...answer, signals: await signalAnalytics(logs, ws, body, signals) } : answer, 200);
  });

  app.openapi(custom, async (c) => {
    const body = c.req.valid("json");
    const ws = c.get("auth").workspaceId;
    const signals = await signalIdsByName(c.var.deps.db, ws, signalFieldsOf(body.customCharts));
    return c.json(await customAnalytics(await c.var.deps.logs(ws), ws, { ...body, signals }), 200);
  });
}

/** The `signal:<name>` fields the charts name, with where each is named (for a 400 on a name that is no signal). */
function signalFieldsOf(charts: z.infer<typeof ChartSpec>[]): { name: string; at: string }[] {
  const named: { name: string; at: string }[] = [];
  charts.forEach((chart, i) => {
    const fields = [chart.metricField ? { f: chart.metricField, at: `customCharts.${i}.metricField` } : null, ...(chart.series ?? []).map((s, k) => ({ f: s.metricField, at: `customCharts.${i}.series.${k}.metricField` }))];
    for (const x of fields) if (x && x.f.startsWith(SIGNAL_FIELD_PREFIX)) named.push({ name: x.f.slice(SIGNAL_FIELD_PREFIX.length), at: x.at });
  });
  return named;
}
