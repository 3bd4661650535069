// The zod pieces both custom-analytics endpoints (request logs, traces) build their chart specs and
// answers from, so the rules and messages of ids, metrics, series and insights are one.
import { z } from "@hono/zod-openapi";

export const ChartKey = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, hyphens or underscores");
export const Metric = z.enum(["count", "sum", "avg", "min", "max", "percentile"]);
export const Percentile = z.number().min(0, "must be from 0 to 100").max(100, "must be from 0 to 100");
export const ChartTitle = z.string().max(200, "must be at most 200 characters").nullish();
export const ChartLimit = z.int().min(1, "must be from 1 to 100").max(100, "must be from 1 to 100").default(25);

/** Several series of one chart, each a metric of one of the source's fields (`metricField`, its schema). */
export function seriesSchema<F extends z.ZodType<string>>(metricField: F) {
  return z
    .array(
      z.object({
        key: ChartKey,
        label: z.string().min(1, "must be 1 to 120 characters").max(120, "must be 1 to 120 characters"),
        metric: Metric.exclude(["count"]),
        metricField,
        percentile: Percentile.nullish(),
      }),
    )
    .max(10, "at most 10 series")
    .nullish();
}

export const DerivedInsights = z
  .array(z.object({ type: z.literal("ratio").optional(), label: z.string().max(200, "must be at most 200 characters"), numeratorSeriesKey: ChartKey, denominatorSeriesKey: ChartKey }))
  .max(10, "at most 10 insights")
  .nullish();

/** One chart's answer, for charts of the given types. */
export function chartResultSchema<T extends readonly [string, ...string[]]>(chartTypes: T) {
  return z.object({
    id: z.string(),
    title: z.string(),
    chartType: z.enum(chartTypes),
    series: z.array(z.object({ key: z.string(), label: z.string(), unit: z.enum(["count", "tokens", "currency", "duration_seconds", "number"]) })),
    data: z.array(z.record(z.string(), z.unknown())),
    derivedInsights: z
      .array(z.object({ type: z.literal("ratio"), label: z.string(), numeratorSeriesKey: z.string(), denominatorSeriesKey: z.string(), value: z.number().nullable() }))
      .nullable(),
  });
}
