// Trace analytics: custom charts over traces and spans (the trace-level and span-level values, their
// filter group with AND / OR across spans and SPAN_AND / SPAN_OR within one span).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { CHART_TYPES, TIME_BUCKETS } from "../../analytics/custom-charts";
import { TRACE_GROUP_FIELDS, TRACE_METRIC_FIELDS } from "../../analytics/trace-charts";
import type { AppEnv } from "../../env";
import { FILTER_LIMITS, FILTER_OPERATORS, operatorsByFieldText } from "../../filters";
import { groupTransform } from "../../filters/schema";
import { parseTraceFilterGroup, TRACE_FILTER_FIELDS, TRACE_LOGICS, type TraceFilterGroup } from "../../filters/traces";
import { defineRoute } from "../../http/openapi";
import { HISTOGRAM_AUTO_BINS, MAX_DEPTH, TRACE_ANALYTICS_LIMITS, traceCustomAnalytics } from "../../logs";
import { ChartKey, ChartLimit, ChartTitle, chartResultSchema, DerivedInsights, Metric, Percentile, seriesSchema } from "../analytics/chart-schemas";

const { maxTraces, maxSpans } = TRACE_ANALYTICS_LIMITS;

/** Documentation only: the shape of one trace filter, for /openapi.json. */
export const TraceFilterDoc = z
  .object({
    field: z.enum(Object.keys(TRACE_FILTER_FIELDS) as [string, ...string[]]),
    operator: z.enum(FILTER_OPERATORS),
    value: z.union([z.string(), z.number(), z.boolean(), z.array(z.unknown()), z.null()]).optional(),
    nested_key: z.string().nullable().optional().openapi({ description: "Required for span_attributes, span_resource and span_input_variables: the key to filter on." }),
  })
  .openapi("TraceStructuredFilter", {
    description:
      `One condition on a trace-level (trace_*) or span-level (span_*) value, with the operators of request-log filters. The operators each field takes: ${operatorsByFieldText(TRACE_FILTER_FIELDS)}. ` +
      "trace_* arrays (models, prompt ids, tool names, workflow ids) hold the values the trace's spans carry; contains / in / starts_with / is_not_empty hold when some span carries a match, " +
      "their negations when none does. span_attributes and span_resource read the span's attributes and resource attributes, span_input_variables its log's prompt input variables, " +
      "values compared as text (numbers and booleans as their JSON text).",
  });

export const TraceFilterGroupSchema = z
  .unknown()
  .transform(groupTransform<TraceFilterGroup>(parseTraceFilterGroup))
  .openapi("TraceStructuredFilterGroup", {
    type: "object",
    description:
      `Filters nested up to ${FILTER_LIMITS.maxDepth} levels, at most ${FILTER_LIMITS.maxFilters} filters in all. A trace matches an AND / OR group when its parts hold, a span-level ` +
      "filter holding when some span of the trace meets it (two span-level filters under AND may be met by two different spans). A SPAN_AND / SPAN_OR group holds when one " +
      "and the same span meets all / any of its branches; it takes span-level fields only (a trace-level field in it is a 400). In span-level charts each group is " +
      "asked of the span counted (its trace-level filters of its trace), so AND and SPAN_AND, OR and SPAN_OR, count the same spans. trace_start filters at the top of an AND " +
      "also bound which traces are read (below).",
    required: ["filters"],
    properties: {
      logic: { type: "string", enum: [...TRACE_LOGICS], default: "AND" },
      filters: { type: "array", items: { oneOf: [{ $ref: "#/components/schemas/TraceStructuredFilter" }, { $ref: "#/components/schemas/TraceStructuredFilterGroup" }] } },
    },
  });

const GroupField = z.enum(TRACE_GROUP_FIELDS);
const MetricField = z.enum(TRACE_METRIC_FIELDS);

const TraceChartSpec = z
  .object({
    id: ChartKey,
    title: ChartTitle,
    chartType: z.enum(CHART_TYPES),
    metric: Metric.nullish(),
    metricField: MetricField.nullish(),
    percentile: Percentile.nullish(),
    series: seriesSchema(MetricField),
    derivedInsights: DerivedInsights,
    groupByField: GroupField.nullish(),
    secondaryGroupByField: GroupField.nullish().openapi({ description: "Heatmap charts only: the second grouping." }),
    hierarchyFields: z.array(GroupField).min(2, "must hold 2 to 5 fields").max(5, "must hold 2 to 5 fields").nullish().openapi({ description: "Treemap and sunburst charts only, outermost first." }),
    histogramField: MetricField.nullish().openapi({ description: "Histogram charts only: the field binned." }),
    histogramInterval: z
      .number()
      .positive("must be above 0")
      .max(1e15, "must be at most 1e15")
      .nullish()
      .openapi({ description: "Histogram charts only: the bin width, in the field's own unit (milliseconds for durations). Chosen when absent." }),
    timeSeries: z.boolean().default(false).openapi({ description: "Trace-level charts only." }),
    timeBucket: z.enum(TIME_BUCKETS).nullish().openapi({ description: "With timeSeries: the period; auto draws by the hour over a trace_start range of two days or less, else by the day." }),
    limit: ChartLimit,
  })
  .openapi("TraceCustomChartSpec");

const Body = z
  .object({
    filter_group: TraceFilterGroupSchema.nullable().optional(),
    customCharts: z.array(TraceChartSpec).min(1, "must hold 1 to 10 charts").max(10, "must hold 1 to 10 charts"),
  })
  .openapi("TraceAnalyticsCustomAnalyticsQuery");

const Response = z
  .object({
    success: z.literal(true),
    customCharts: z.array(chartResultSchema(CHART_TYPES)),
    scanned: z
      .object({
        traces: z.int(),
        spans: z.int(),
        capped: z.boolean().openapi({ description: "True when older traces of the range were left out to keep within max_traces and max_spans." }),
        max_traces: z.int(),
        max_spans: z.int(),
        oldest_span_start: z.string().nullable().openapi({ description: "The earliest span start read: with capped, the charts cover traces from about then." }),
      })
      .openapi({ description: "The traces the charts were drawn from, before the filter group's other conditions." }),
  })
  .openapi("TraceAnalyticsCustomAnalyticsResponse");

const route = defineRoute({
  method: "post",
  path: "/api/public/v2/traces/analytics/custom-analytics",
  scope: "logs:read",
  tags: ["traces"],
  summary: "Custom charts over traces and spans",
  description:
    "Each chart is trace-level (it counts traces: trace_* fields) or span-level (it counts spans: span_* fields), by the fields it names; one naming both is a 400, " +
    "one naming none counts traces. Trace values: trace_name (its root span's name: the earliest span without a parent; \"(none)\" while the root has not arrived), " +
    "trace_status (error when any span's status is error, else ok), trace_start, trace_duration_ms (last end − first start), trace_total_cost_usd, trace_total_tokens, " +
    "trace_input_tokens and trace_output_tokens (sums over the request logs its spans made), trace_span_count, trace_depth (the longest parent chain, counted up to " +
    `${MAX_DEPTH} levels), and the sets trace_models_used, trace_prompt_ids, trace_tool_names and trace_workflow_ids (from the attribute promptlayer.workflow.id; empty ` +
    "when no span carries it): grouped by a set, a trace counts once under each value and not at all without one. Span values: span_name, span_kind, span_status " +
    "(unset, ok, error), span_type (llm when the span made a request log, tool when gen_ai.operation.name is execute_tool or it names a tool, else span), span_tool_name " +
    "(gen_ai.tool.name, else the Vercel AI SDK's ai.toolCall.name or OpenInference's tool.name; spans without one are left out when grouped by it), span_duration_ms, " +
    "and span_cost_usd and the span token counts from its log (null, so left out of averages, for spans without one). Charts: bar, line and area as request-log charts " +
    "(overall, by a group, over time, or over time by group; span-level charts are not drawn over time: 400); pie and donut by a group; histogram of histogramField " +
    "(rows are bins from 0, `bucketStart` and `bucketEnd` in the field's own unit, the last of `limit` bins open-ended; without histogramInterval the width is the smallest " +
    `1, 2 or 5 × 10^k putting every value within ${HISTOGRAM_AUTO_BINS} bins, or \`limit\` if lower); heatmap of groupByField × secondaryGroupByField (one row per cell, ` +
    "the top `limit` of each); treemap and sunburst of hierarchyFields (one row per leaf path, the top `limit`). Durations are answered in seconds (unit duration_seconds), " +
    "as request-log latency. Counts, sums, averages, minima, maxima and percentiles are exact over the traces read. " +
    `Bounded: a request reads the newest traces whose spans start within the top-level trace_start range (all time without one), at most ${maxTraces} traces and ` +
    `${maxSpans} spans in all; \`scanned\` says how many were read and \`capped\` whether older ones were left out. Only the key's workspace's spans are read.`,
  request: { body: { required: true, content: { "application/json": { schema: Body } } } },
  responses: { 200: { description: "The charts, in the order asked, and the traces they were drawn from", content: { "application/json": { schema: Response } } } },
});

export function registerTraceAnalyticsRoutes(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.register("TraceStructuredFilter", TraceFilterDoc);
  app.openapi(route, async (c) => c.json(await traceCustomAnalytics(await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth").workspaceId, c.req.valid("json")), 200));
}
