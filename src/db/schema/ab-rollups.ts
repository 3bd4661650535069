// The A/B scorecard's rollups, beside the request logs in each log database (and the control
// database's log tables): per release, variant and UTC day, what its logs counted, so a scorecard
// and the guardrails read a few rows per variant, never the logs. Written by the rollup step the
// index consumer runs after indexing (src/logs/ab-rollups.ts), a log once; scores tracked later move
// their metric rows in the tracking call's own batch.
import { integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Requests, errors, cost and latency per release, variant, day and latency bucket (src/analytics/latency-buckets.ts). */
export const abVariantDaily = sqliteTable(
  "ab_variant_daily",
  {
    workspaceId: integer("workspace_id").notNull(),
    abTestId: integer("ab_test_id").notNull(),
    variant: text("variant").notNull(),
    /** Start of the UTC day of the logs' request_start_time, epoch ms. */
    day: integer("day").notNull(),
    bucket: integer("bucket").notNull(),
    requests: integer("requests").notNull(),
    errors: integer("errors").notNull(),
    cost: real("cost").notNull(),
    latencyMs: integer("latency_ms").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.abTestId, t.variant, t.day, t.bucket] })],
);

/**
 * Kinds of per-variant metric rows: named scores (0..100) now; Signals' true/false results (1/0)
 * will add rows of kind 'signal' the same way, and the scorecard and guardrails read them already.
 */
export const AB_METRIC_KINDS = ["score", "signal"] as const;
export type AbMetricKind = (typeof AB_METRIC_KINDS)[number];

/** Each metric's count, sum and sum of squares per release, variant and day: means, intervals and tests without the logs. */
export const abVariantMetrics = sqliteTable(
  "ab_variant_metrics",
  {
    workspaceId: integer("workspace_id").notNull(),
    abTestId: integer("ab_test_id").notNull(),
    variant: text("variant").notNull(),
    day: integer("day").notNull(),
    kind: text("kind", { enum: AB_METRIC_KINDS }).notNull(),
    name: text("name").notNull(),
    n: integer("n").notNull(),
    sum: real("sum").notNull(),
    sumSq: real("sum_sq").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.abTestId, t.variant, t.kind, t.name, t.day] })],
);

/** The distinct units (a hash of the assignment key's value) each variant served: the scorecard's unique units. */
export const abUnits = sqliteTable(
  "ab_units",
  {
    workspaceId: integer("workspace_id").notNull(),
    abTestId: integer("ab_test_id").notNull(),
    variant: text("variant").notNull(),
    unit: text("unit").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.abTestId, t.variant, t.unit] })],
);
