// Request analytics: totals, time series, breakdowns and latency percentiles over the logs a filter
// group selects (the same filter group as search).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { getDb } from "../../db/client";
import { FilterGroupSchema } from "../../filters";
import { defineRoute } from "../../lib/openapi";
import { requestAnalytics } from "../../services/request-analytics";

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
  })
  .openapi("RequestAnalyticsRequest");

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
  })
  .openapi("RequestAnalyticsResponse");

const analytics = defineRoute({
  method: "post",
  path: "/api/public/v2/requests/analytics",
  tags: ["request logs"],
  summary: "Analytics over request logs",
  description:
    "Counts, cost, tokens, latency (average and p50/p90/p95) and error rate of the logs the filter group and free text select, as totals, " +
    "as a time series (by the hour for ranges up to two days, else by the UTC day; the range is the request_start_time bounds, else the data's own), " +
    "and broken down by model, provider, prompt template and error type. Every count and sum is exact. Percentiles come from latency histograms " +
    "with buckets 20 % wide, so they are within 10 % of the true value. Whole hours are read from hourly totals kept as logs are written when the filters " +
    "are only on engine, provider_type, prompt_id, status and top-level request_start_time bounds; other filters and free text read the matching logs.",
  request: { body: { required: true, content: { "application/json": { schema: AnalyticsBody } } } },
  responses: { 200: { description: "The analytics", content: { "application/json": { schema: AnalyticsResponse } } } },
});

export function registerAnalyticsRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(analytics, async (c) => {
    const body = c.req.valid("json");
    return c.json(await requestAnalytics(getDb(c.env.DB), c.env.DB, c.get("auth").workspaceId, body), 200);
  });
}
