// The shapes of /api/public/v2/ab-tests: a release's create and patch bodies, its answer, its
// scorecard, assignment and trail. The rules across fields (percentages summing to 100, the base on
// the label's version, segments' keys among the variants') are the service's (split-input.ts).
import { z } from "@hono/zod-openapi";
import { AB_TEST_STATUSES, GUARDRAIL_METRIC_TYPES } from "../../db/schema";
import { NameText, Timestamp } from "../../lib/schemas";
import { QueryInt, ResourceFilterShape, SortBy, SortOrder } from "../../lib/query";
import { ExternalId, ExternalIdLookupShape, ExternalIdsInput } from "../external-ids/schemas";
import { LabelName, MetadataFiltersQuery } from "../prompt-templates/schemas";

const VariantKey = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, _ or -")
  .openapi({ description: "The variant's key (what ab_test.variant, logs' ab_variant and the scorecard name it by).", example: "challenger" });
const Percentage = z
  .number({ error: "must be a number" })
  .min(0, "must be 0 to 100")
  .max(100, "must be 0 to 100")
  .openapi({ description: "Share of the traffic, 0 to 100 with at most two decimals (a bucket of 10,000 is 0.01 %)." });

const Variant = z.object({
  key: VariantKey,
  prompt_version_number: z.int({ error: "must be a whole number" }).positive("must be > 0").openapi({ description: "A version of the template (else 400)." }),
  percentage: Percentage,
});

const Share = z.object({ key: VariantKey, percentage: Percentage });

const Condition = z
  .object({
    key: z.string().min(1, "must be 1 to 255 characters").max(255, "must be 1 to 255 characters").openapi({ description: "A metadata_filters key." }),
    operator: z.enum(["is", "is_not", "in"], { error: "must be is, is_not or in" }),
    value: z.union([z.string().max(1024, "must be at most 1024 characters"), z.array(z.string().max(1024, "must be at most 1024 characters")).min(1, "must not be empty").max(100, "at most 100 values")]),
  })
  .superRefine((c, ctx) => {
    if ((c.operator === "in") !== Array.isArray(c.value)) ctx.addIssue({ code: "custom", path: ["value"], message: c.operator === "in" ? "must be a list of strings for in" : `must be a string for ${c.operator}` });
  })
  .openapi({ description: "is: the metadata value equals `value` (compared as text); is_not: it is absent or differs; in: it is one of `value`." });

const Segment = z.object({
  name: z.string().min(1, "must be 1 to 64 characters").max(64, "must be 1 to 64 characters"),
  conditions: z.array(Condition).min(1, "at least one condition").max(10, "at most 10 conditions").openapi({ description: "All must hold (AND)." }),
  variants: z.array(Share).min(1, "at least one variant").max(10, "at most 10 variants").openapi({ description: "The segment's own split over the release's variants (a variant left out gets 0 %); percentages sum to 100." }),
});

const Metric = z
  .object({
    type: z.enum(GUARDRAIL_METRIC_TYPES, { error: `must be one of ${GUARDRAIL_METRIC_TYPES.join(", ")}` }),
    name: z.string().min(1).max(255).nullish().openapi({ description: "The score's name (score) or the signal's (signal)." }),
    direction: z
      .enum(["higher_is_better", "lower_is_better"], { error: "must be higher_is_better or lower_is_better" })
      .default("higher_is_better")
      .openapi({ description: "For score and signal; error_rate and latency_p95_ms are always lower_is_better." }),
    max_regression: z
      .number()
      .min(0, "must be >= 0")
      .max(1e9)
      .default(0)
      .openapi({ description: "How much worse than the base counts as a regression: score points, a rate (0.01 = one point of error rate or true-rate), or for latency_p95_ms a ratio (0.2 = 20 % slower)." }),
  })
  .openapi("AbGuardrailMetric");

export const Guardrails = z
  .object({
    min_duration_hours: z.number().min(0, "must be 0 to 8760").max(8760, "must be 0 to 8760").default(24).openapi({ description: "Success (promote, ramp) waits this long after the release starts; a regression does not." }),
    min_samples_per_variant: z.int().min(1, "must be 1 to 10000000").max(10_000_000, "must be 1 to 10000000").default(100).openapi({ description: "Requests each compared variant needs before anything is decided." }),
    confidence: z.number().min(0.5, "must be 0.5 to 0.999").max(0.999, "must be 0.5 to 0.999").default(0.95).openapi({ description: "Of each one-sided test, Bonferroni-corrected by the number of metrics." }),
    metrics: z.array(Metric).max(10, "at most 10 metrics").default([]),
    on_regression: z.enum(["rollback", "pause"], { error: "must be rollback or pause" }).default("rollback"),
    on_success: z.enum(["promote", "ramp", "none"], { error: "must be promote, ramp or none" }).default("none").openapi({ description: "none: the decision is only written to the release's events (ready_to_promote)." }),
    ramp: z
      .object({
        steps: z.array(z.number()).min(1, "at least one step").max(20, "at most 20 steps").openapi({ description: "The challenger's percentages, increasing; past the last, success promotes." }),
        every_hours: z.number().min(0, "must be 0 to 8760").max(8760, "must be 0 to 8760").openapi({ description: "Hours between two ramps at least." }),
      })
      .nullish()
      .transform((v) => v ?? null),
  })
  .openapi("AbGuardrails", { description: "Evaluated by the cron every few minutes; each decision is written once and shown in GET /ab-tests/{id}/events." });

export const CreateBody = z
  .object({
    name: NameText(255),
    prompt_template_id: z.int().positive().nullish().openapi({ description: "The template (or give prompt_name)." }),
    prompt_name: NameText(512).nullish(),
    release_label: LabelName.openapi({ description: "The release label the split overloads: fetches by this label go through the release." }),
    variants: z
      .array(Variant)
      .min(2, "at least 2 variants")
      .max(10, "at most 10 variants")
      .openapi({ description: "Versions and percentages summing to 100; exactly one is the base, the label's current version. Challengers take the lowest buckets, in order." }),
    segments: z.array(Segment).max(20, "at most 20 segments").nullish().openapi({ description: "Matched in order on metadata_filters: the first whose conditions all hold uses its own split." }),
    assignment_key: z
      .string()
      .min(1, "must be 1 to 255 characters")
      .max(255, "must be 1 to 255 characters")
      .nullish()
      .openapi({ description: "The metadata_filters key whose value is the unit of sticky assignment (e.g. user_id). Without it, or when a request lacks it, assignment is random per request." }),
    salt: z.string().max(255, "must be at most 255 characters").nullish().openapi({ description: "Mixed into the hash; another salt reshuffles the units." }),
    status: z.enum(["running", "paused"], { error: "must be running or paused" }).nullish(),
    guardrails: Guardrails.nullish(),
    external_ids: ExternalIdsInput,
    folder_id: z.int().positive().nullish(),
  })
  .openapi("CreateAbTest");

export const PatchBody = z
  .object({
    name: NameText(255).nullish(),
    status: z.enum(["running", "paused"], { error: "must be running or paused" }).nullish().openapi({ description: "paused: the label serves its own version, as without the release." }),
    variants: z.array(Share).min(1).max(10).nullish().openapi({ description: "A ramp: new percentages (variants left out keep theirs), summing to 100. Only base units change variant." }),
    segments: z
      .array(z.object({ name: z.string().min(1).max(64), variants: z.array(Share).min(1).max(10) }))
      .max(20)
      .nullish()
      .openapi({ description: "A ramp of segments' splits, by name (conditions cannot change)." }),
    guardrails: Guardrails.nullish().openapi({ description: "Replaces the guardrails; null removes them." }),
    folder_id: z.int().positive().nullish(),
  })
  .openapi("PatchAbTest");

const Ranges = z.array(z.tuple([z.int(), z.int()])).openapi({ description: "The buckets [start, end) of 10,000 this variant owns." });

export const AbTest = z
  .object({
    id: z.int(),
    name: z.string(),
    prompt_template_id: z.int(),
    prompt_name: z.string(),
    release_label: z.string(),
    status: z.enum(AB_TEST_STATUSES),
    revision: z.int(),
    assignment_key: z.string().nullable(),
    salt: z.string(),
    folder_id: z.int().nullable(),
    base: z.string(),
    variants: z.array(z.object({ key: z.string(), prompt_version_number: z.int(), percentage: z.number(), is_base: z.boolean(), ranges: Ranges })),
    segments: z.array(z.object({ name: z.string(), conditions: z.array(z.looseObject({})), variants: z.array(z.object({ key: z.string(), percentage: z.number(), ranges: Ranges })) })),
    guardrails: z.looseObject({}).nullable(),
    outcome: z.string().nullable().openapi({ description: "promoted or rolled_back, once completed." }),
    promoted_variant: z.string().nullable(),
    pending_change_request_id: z.int().nullable().openapi({ description: "A protected label's change request the promote waits on." }),
    external_ids: z.array(ExternalId),
    created_by: z.int().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    ended_at: z.string().nullable(),
  })
  .openapi("AbTest");

export const AbTestAnswer = z.object({ success: z.literal(true), ab_test: AbTest }).openapi("AbTestResponse");

export const ListQuery = z.object({
  page: QueryInt(1, Number.MAX_SAFE_INTEGER).default(1),
  per_page: QueryInt(1, 100).default(30),
  name: z.string().max(255).optional().openapi({ description: "Only those whose name contains this (case-insensitive)." }),
  status: z.enum(AB_TEST_STATUSES, { error: `must be one of ${AB_TEST_STATUSES.join(", ")}` }).optional(),
  prompt_template_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
  release_label: LabelName.optional(),
  ...ResourceFilterShape,
  ...ExternalIdLookupShape,
  sort_by: SortBy,
  sort_order: SortOrder,
});

export const AbTestList = z
  .object({ success: z.literal(true), ab_tests: z.array(AbTest), page: z.int(), per_page: z.int(), total: z.int(), pages: z.int() })
  .openapi("AbTestList");

export const ScorecardQuery = z.object({
  from: Timestamp.optional().openapi({ description: "From this day (UTC) on; default: the release's start." }),
  to: Timestamp.optional().openapi({ description: "Up to this time; default: now." }),
});

const Interval = z.tuple([z.number(), z.number()]).nullable();
const MeanStat = z.object({ mean: z.number().nullable(), n: z.int(), ci95: Interval, delta_vs_base: z.number().nullable(), p_value: z.number().nullable() });
const RateStat = z.object({ true_rate: z.number().nullable(), n: z.int(), ci95: Interval, delta_vs_base: z.number().nullable(), p_value: z.number().nullable() });

export const Scorecard = z
  .object({
    success: z.literal(true),
    ab_test_id: z.int(),
    from: z.string().nullable(),
    to: z.string().nullable(),
    base: z.string(),
    variants: z.array(
      z.object({
        key: z.string(),
        prompt_version_number: z.int(),
        is_base: z.boolean(),
        percentage: z.number(),
        requests: z.int(),
        units: z.int().openapi({ description: "Distinct units (assignment_key values) its logs carried." }),
        errors: z.int(),
        error_rate: z.number().nullable(),
        error_rate_ci95: Interval,
        error_rate_delta_vs_base: z.number().nullable(),
        error_rate_p_value: z.number().nullable(),
        cost: z.number().nullable(),
        cost_per_request: z.number().nullable(),
        latency_ms: z.object({ mean: z.number().nullable(), p50: z.number().nullable(), p95: z.number().nullable() }),
        scores: z.record(z.string(), MeanStat).openapi({ description: "Each named score: mean with its 95 % t interval, difference to the base and Welch's p-value." }),
        signals: z.record(z.string(), RateStat).openapi({ description: "Each signal's true-rate with its Wilson interval, difference to the base and a two-proportion p-value (under each signal's current name; a deleted signal's verdicts leave it; empty until a signal judges the release's logs)." }),
      }),
    ),
  })
  .openapi("AbTestScorecard");

export const Assignment = z
  .object({
    success: z.literal(true),
    ab_test_id: z.int(),
    revision: z.int(),
    serving: z.boolean().openapi({ description: "Whether the release serves now (running); a paused or completed one answers what it would assign." }),
    segment: z.string().nullable(),
    variant: z.string(),
    prompt_version_number: z.int(),
    bucket: z.int(),
    assignment: z.enum(["sticky", "random"]),
  })
  .openapi("AbTestAssignment");

export const Events = z
  .object({
    success: z.literal(true),
    events: z.array(z.object({ id: z.int(), action: z.string(), actor: z.string(), user_id: z.int().nullable(), revision: z.int(), details: z.looseObject({}), created_at: z.string() })),
    page: z.int(),
    per_page: z.int(),
    total: z.int(),
    pages: z.int(),
  })
  .openapi("AbTestEvents");

export const AssignmentQuery = z.object({ metadata_filters: MetadataFiltersQuery });

export const EventsQuery = z.object({ page: QueryInt(1, Number.MAX_SAFE_INTEGER).default(1), per_page: QueryInt(1, 100).default(50) });

export const PromoteBody = z.object({ variant: VariantKey }).openapi("PromoteAbTest");
