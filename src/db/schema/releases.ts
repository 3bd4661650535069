// A/B releases of prompt templates (ab_tests: a release label overloaded by a split between
// versions), their decision and audit trail, and the change requests of protected release labels.
// The shapes of their JSON columns are declared here; src/prompts/ab-split.ts works on them.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";
import { workspaces } from "./accounts";
import { promptLabels, promptTemplates, promptVersions } from "./registry";

/** Buckets [start, end) of the 10,000 a split has. */
export type BucketRange = [start: number, end: number];

export interface SplitShare {
  key: string;
  ranges: BucketRange[];
}

export interface SplitSegmentCondition {
  key: string;
  operator: "is" | "is_not" | "in";
  value: string | string[];
}

export interface SplitSegment {
  name: string;
  conditions: SplitSegmentCondition[];
  shares: SplitShare[];
}

/** A release's split: each variant's version, the base's key, the bucket ranges of each variant at top level and per segment. */
export interface StoredSplit {
  base: string;
  versions: Record<string, number>;
  shares: SplitShare[];
  segments: SplitSegment[];
}

export const GUARDRAIL_METRIC_TYPES = ["score", "error_rate", "latency_p95_ms", "signal"] as const;
export type GuardrailMetricType = (typeof GUARDRAIL_METRIC_TYPES)[number];

export interface GuardrailMetric {
  type: GuardrailMetricType;
  /** The score's or signal's name. */
  name?: string | null;
  direction: "higher_is_better" | "lower_is_better";
  /** How much worse than the base (in the metric's units: points, a rate, a ratio for latency) before it counts as a regression. */
  max_regression: number;
}

export interface Guardrails {
  min_duration_hours: number;
  min_samples_per_variant: number;
  confidence: number;
  metrics: GuardrailMetric[];
  on_regression: "rollback" | "pause";
  on_success: "promote" | "ramp" | "none";
  ramp: { steps: number[]; every_hours: number } | null;
}

export const AB_TEST_STATUSES = ["running", "paused", "completed"] as const;
export type AbTestStatus = (typeof AB_TEST_STATUSES)[number];

export const abTests = sqliteTable(
  "ab_tests",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    promptId: integer("prompt_id").notNull().references(() => promptTemplates.id),
    releaseLabel: text("release_label").notNull(),
    name: text("name").notNull(),
    folderId: integer("folder_id"),
    status: text("status", { enum: AB_TEST_STATUSES }).notNull().default("running"),
    /** The metadata_filters key whose value is the unit of sticky assignment; null: random per request. */
    assignmentKey: text("assignment_key"),
    salt: text("salt").notNull().default(""),
    /** Moved on by every change of the split or status: the answer's ab_test.revision, a guardrail decision's key. */
    revision: integer("revision").notNull().default(1),
    split: text("split", { mode: "json" }).notNull().$type<StoredSplit>(),
    guardrails: text("guardrails", { mode: "json" }).$type<Guardrails | null>(),
    /** promoted | rolled_back, once completed that way. */
    outcome: text("outcome"),
    promotedVariant: text("promoted_variant"),
    /** A protected label's change request a promote waits on (label_change_requests.id). */
    pendingChangeId: integer("pending_change_id"),
    /** When the guardrails were last evaluated (the cron looks again after GUARDRAIL_INTERVAL_MS). */
    checkedAt: integer("checked_at"),
    /** When the current split took effect: a guardrail ramp waits every_hours from here. */
    rampedAt: integer("ramped_at").notNull().default(now),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
    endedAt: integer("ended_at"),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    // One release at a time overloads a (template, label): a second is a 409, even under concurrency.
    uniqueIndex("ab_tests_active_label").on(t.workspaceId, t.promptId, t.releaseLabel).where(sql`${t.status} <> 'completed' AND ${t.deletedAt} IS NULL`),
    index("ab_tests_workspace_prompt").on(t.workspaceId, t.promptId),
    index("ab_tests_workspace_folder").on(t.workspaceId, t.folderId),
    index("ab_tests_running").on(t.status, t.checkedAt),
  ],
);

export type AbTestRow = typeof abTests.$inferSelect;

/**
 * What happened to a release, in order: who created, ramped, paused, promoted or rolled it back, and
 * each guardrail decision. A decision carries a key unique per release (its revision and action), so a
 * retried cron run cannot write it twice, and the statements acting on it run only where its `token`
 * (fresh per attempt) was the one written.
 */
export const abTestEvents = sqliteTable(
  "ab_test_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull(),
    abTestId: integer("ab_test_id").notNull(),
    revision: integer("revision").notNull(),
    action: text("action").notNull(),
    /** user or guardrail. */
    actor: text("actor").notNull(),
    userId: integer("user_id"),
    details: text("details", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    decisionKey: text("decision_key"),
    token: text("token"),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [uniqueIndex("ab_test_events_decision").on(t.abTestId, t.decisionKey), index("ab_test_events_test").on(t.workspaceId, t.abTestId, t.id)],
);

export type AbTestEventRow = typeof abTestEvents.$inferSelect;

export const CHANGE_REQUEST_STATUSES = ["pending", "approved", "denied"] as const;

/** A requested move of a protected release label, waiting for an approve or deny. */
export const labelChangeRequests = sqliteTable(
  "label_change_requests",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    promptId: integer("prompt_id").notNull().references(() => promptTemplates.id),
    labelId: integer("label_id").notNull().references(() => promptLabels.id),
    labelName: text("label_name").notNull(),
    fromVersionId: integer("from_version_id").notNull().references(() => promptVersions.id),
    toVersionId: integer("to_version_id").notNull().references(() => promptVersions.id),
    status: text("status", { enum: CHANGE_REQUEST_STATUSES }).notNull().default("pending"),
    /** The release whose promote asked for the move, if one did. */
    abTestId: integer("ab_test_id"),
    requestedBy: integer("requested_by"),
    decidedBy: integer("decided_by"),
    createdAt: integer("created_at").notNull().default(now),
    decidedAt: integer("decided_at"),
  },
  (t) => [
    // One pending request per label: a second is a 409 until the first is decided.
    uniqueIndex("label_change_requests_pending").on(t.labelId).where(sql`${t.status} = 'pending'`),
    index("label_change_requests_workspace").on(t.workspaceId, t.status, t.id),
  ],
);

export type LabelChangeRequestRow = typeof labelChangeRequests.$inferSelect;
