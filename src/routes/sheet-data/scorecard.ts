// A sheet's scorecard: /api/public/v2/tables/{table_id}/sheets/{sheet_id}/scorecard (get, configure,
// delete), its calculations (queue, cancel, get one), row results (list, one row) and the migration of
// the sheet's score into scorecard steps. The sheet's object keeps and calculates it
// (sheets/scorecard/); each handler finds the sheet in D1 for the key's workspace first.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { ApiError } from "../../lib/errors";
import { QueryInt } from "../../lib/query";
import { NameText, UuidParam } from "../../lib/schemas";
import { unwrap } from "../../services/tables";
import {
  AGGREGATION_METHODS,
  CHUNK_EVALUATIONS,
  jsonDepth,
  KEPT_CALCULATIONS,
  MAX_EVALUATED_COLUMNS,
  MAX_JSON_DEPTH,
  MAX_ROW_INDEX,
  MAX_STEPS,
  PRIMITIVES,
  ROW_RESULT_CALCULATIONS,
  VERDICTS,
} from "../../sheets";
import { SheetParams } from "./schemas";
import { sheetOf } from "./access";

const tags = ["smart tables"];
const base = "/api/public/v2/tables/{table_id}/sheets/{sheet_id}/scorecard";
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const optionalBody = <T extends z.ZodType>(schema: T) => ({ required: false, content: { "application/json": { schema } } });

const Uuid = z
  .string("must be a UUID")
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "must be a UUID")
  .transform((v) => v.toLowerCase());
/** A column of the sheet by id or by title. */
const ColumnRef = z.string("must be a column id or title").min(1, "must not be empty").max(255, "must be at most 255 characters");
const Json = z.unknown().refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, `must nest at most ${MAX_JSON_DEPTH} levels`);
const JsonObject = z.record(z.string(), Json, { error: "must be an object" });
const Verdict = z.enum(VERDICTS as [string, ...string[]], { error: `must be one of ${VERDICTS.join(", ")}` });

const StepIn = z.object({
  id: Uuid.nullish().openapi({ description: "A step of the scorecard keeps its id (and created_at) when sent back with it" }),
  title: NameText(255),
  primitive_type: z.enum(PRIMITIVES, { error: `must be one of ${PRIMITIVES.join(", ")}` }),
  source_column_ids: z
    .array(ColumnRef, { error: "must be an array of column ids or titles" })
    .max(10, "must have at most 10 items")
    .default([])
    .openapi({ description: "The columns the step reads, each by id or by title (the first is what `source` reads)." }),
  weight: z.number("must be a number").min(0, "must be at least 0").max(1000, "must be at most 1000").optional(),
  required: z.boolean("must be a boolean").optional(),
  thresholds: z.record(z.string(), z.number("must be a number"), { error: "must be an object of numbers" }).optional(),
  primitive_config: JsonObject.optional(),
  score_adapter: JsonObject.nullish(),
  description: z.string("must be a string").max(2000, "must be at most 2000 characters").nullish(),
  target_column_id: ColumnRef.nullish().openapi({ description: "The column a COMPARE step compares with, by id or by title." }),
  evidence_mode: z.enum(["summary", "raw", "hidden"], { error: "must be summary, raw or hidden" }).nullish(),
});

const ConfigureBody = z
  .object({
    name: NameText(255),
    evaluated_column_ids: z
      .array(Uuid, { error: "must be an array of column ids" })
      .max(MAX_EVALUATED_COLUMNS, `must have at most ${MAX_EVALUATED_COLUMNS} items`)
      .default([]),
    steps: z.array(StepIn, { error: "must be an array of steps" }).max(MAX_STEPS, `must have at most ${MAX_STEPS} items`).default([]),
    aggregation: JsonObject,
    display_config: JsonObject.nullish(),
    baseline_config: JsonObject.nullish(),
  })
  .openapi("ConfigureTableSheetScorecardRequest");

const Filter = z.object({
  row_indices: z
    .array(z.int("must be whole numbers").min(0, "must be at least 0").max(MAX_ROW_INDEX), { error: "must be an array of row indexes" })
    .max(10_000, "must have at most 10000 items")
    .optional(),
  step_ids: z.array(Uuid, { error: "must be an array of step ids" }).max(MAX_STEPS, `must have at most ${MAX_STEPS} items`).optional(),
});

const StepOut = z.object({
  id: z.string(),
  title: z.string(),
  primitive_type: z.string(),
  source_column_ids: z.array(z.string()),
  weight: z.number(),
  required: z.boolean(),
  thresholds: z.record(z.string(), z.number()),
  primitive_config: z.record(z.string(), z.unknown()),
  score_adapter: z.record(z.string(), z.unknown()).nullable(),
  description: z.string().nullable(),
  target_column_id: z.string().nullable(),
  evidence_mode: z.string().nullable(),
  order_index: z.int(),
  backing_column_id: z.null(),
  config_hash: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const ScorecardSchema = z
  .object({
    id: z.string(),
    workspace_id: z.int(),
    smart_table_id: z.string(),
    sheet_id: z.string(),
    name: z.string(),
    evaluated_column_ids: z.array(z.string()),
    aggregation: z.record(z.string(), z.unknown()),
    display_config: z.record(z.string(), z.unknown()).nullable(),
    baseline_config: z.record(z.string(), z.unknown()).nullable(),
    status: z.enum(["needs_setup", "ready", "queued", "running", "completed", "stale", "failed"]),
    stale_state: z.object({ is_stale: z.boolean(), reasons: z.array(z.string()), stale_step_ids: z.array(z.string()), stale_row_indices: z.array(z.int()) }),
    latest_calculation_id: z.string().nullable(),
    config_hash: z.string(),
    steps: z.array(StepOut),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("TableSheetScorecard");

const CalculationSchema = z
  .object({
    id: z.string(),
    scorecard_id: z.string(),
    workspace_id: z.int(),
    sheet_id: z.string(),
    sheet_revision: z.string().openapi({ description: "The sheet version when it started" }),
    status: z.enum(["queued", "running", "completed", "failed", "cancelled"]),
    aggregate_score: z.number().nullable(),
    aggregate_verdict: z.string().nullable(),
    criterion_summaries: z.record(z.string(), z.unknown()),
    drift_summary: z.record(z.string(), z.unknown()).nullable(),
    config_hash: z.string(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    error_summary: z.string().nullable(),
    total_rows: z.int(),
    scored_rows: z.int(),
    verdict_counts: z.record(z.string(), z.int()),
    row_indices: z.array(z.int()).nullable(),
    step_ids: z.array(z.string()).nullable(),
    created_at: z.string(),
  })
  .openapi("TableSheetScorecardCalculation");

const HOW =
  `A scorecard has up to ${MAX_STEPS} steps; each judges a row from its \`source_column_ids\` (and \`target_column_id\`) and gives a score ` +
  "0..1: COLUMN_AGGREGATE reads the column as a boolean (1 / 0; `true_values` / `false_values` and `score_type` in primitive_config as " +
  "for the sheet score) or a number scaled from primitive_config `min`..`max` (0..1 by default, clamped); CONTAINS, REGEX, ASSERT_VALID, " +
  "COMPARE and LLM_ASSERTION run the block of that type (docs: blocks) with primitive_config as its config, its `source` (COMPARE: " +
  "`sources`) filled from the step's columns; the step's columns, and the columns its primitive_config names (`value_source`, " +
  "`prompt_source`, a mapping's values…), may be named by id or by title (the config is stored as sent, ids read as the columns' current " +
  "titles); STRUCTURE checks the value is JSON of primitive_config `type` (object, or array) with " +
  "`required_keys`; MAX_TOOL_CALLS checks the value's tool calls (OpenAI `tool_calls`, Anthropic `tool_use` blocks, or a list) number at most " +
  "`max_tool_calls`; NO_INVALID_TOOL_CALLS that each has a name and JSON-object arguments. TOOL_EVALUATOR and CODE_EXECUTION cannot run " +
  "here (400). A step's verdict: pass at `thresholds.pass` (default 0.5) or above, warn at `thresholds.warn` (default = pass), else " +
  "fail; skipped when an input is not computed (STALE, QUEUED, RUNNING) or empty, error when an input failed or the check cannot be " +
  `made. A row's score combines its completed steps by \`aggregation.method\` (${AGGREGATION_METHODS.join(", ")}; weighted by \`weight\`, ` +
  "default 1), its verdict from `pass_threshold` (default 0.8) and `warn_threshold` (default 0.5); a required step that fails makes the " +
  "row fail, warn or error (`required_step_failure_behavior`).";

const getScorecard = defineRoute({
  method: "get",
  path: base,
  scope: "tables:read",
  tags,
  summary: "Get the sheet's scorecard",
  description:
    "The active scorecard (null when there is none), its latest calculation, the latest completed one (`display_calculation`, with its " +
    "`criterion_summaries` per step and `drift_summary` against the calculation before) and `progress` of one under way. `status`: " +
    "needs_setup (no steps), ready, queued, running, completed, stale (the configuration or the sheet changed since), failed.",
  errors: [404],
  request: { params: SheetParams },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        scorecard: ScorecardSchema.nullable(),
        latest_calculation: CalculationSchema.nullable(),
        display_calculation: CalculationSchema.nullable(),
        criterion_summaries: z.record(z.string(), z.unknown()).nullable(),
        drift_summary: z.record(z.string(), z.unknown()).nullable(),
        progress: z.object({ scored_rows: z.int(), total_rows: z.int(), partial_score: z.number().nullable() }).nullable(),
      }),
      "The scorecard",
    ),
  },
});

const configureScorecard = defineRoute({
  method: "patch",
  path: base,
  scope: "tables:write",
  tags,
  summary: "Create or replace the sheet's scorecard",
  description:
    "Creates the scorecard, or replaces the configuration of the active one (its id stays; a step sent with its id keeps it). Columns " +
    "must be the sheet's; a step's primitive_config is checked as its block's config (400 naming `steps[i].primitive_config.<field>`). One " +
    "new sheet version; a calculation under way of the configuration before is cancelled. " +
    HOW,
  errors: [404, 413],
  request: { params: SheetParams, body: { required: true, content: { "application/json": { schema: ConfigureBody } } } },
  responses: { 200: json(z.object({ success: z.literal(true), scorecard: ScorecardSchema, version: z.int() }), "Configured") },
});

const deleteScorecard = defineRoute({
  method: "delete",
  path: base,
  scope: "tables:write",
  tags,
  summary: "Delete the sheet's scorecard",
  description: "Removes the active scorecard (a calculation under way is cancelled); one new sheet version. None: 404.",
  errors: [404],
  request: { params: SheetParams },
  responses: { 200: json(z.object({ success: z.literal(true) }), "Deleted") },
});

const recalculate = defineRoute({
  method: "post",
  path: `${base}/recalculate`,
  scope: "tables:write",
  tags,
  summary: "Calculate the scorecard",
  description:
    "Queues a calculation (one under way is cancelled). It runs on the sheet's alarm once no cell is queued or running, at most " +
    `${CHUNK_EVALUATIONS} step evaluations per alarm run. \`row_indices\` and \`step_ids\` limit what is evaluated: the other rows and ` +
    "steps keep their result from the latest completed calculation. A step whose inputs are as in that calculation keeps its result " +
    "without running again. No scorecard, no steps, an unknown step or row: 400.",
  errors: [404],
  request: { params: SheetParams, body: optionalBody(Filter.openapi("RecalculateTableSheetScorecardRequest")) },
  responses: {
    202: json(z.object({ success: z.literal(true), calculation_id: z.string(), status: z.literal("queued"), version: z.int() }), "Queued"),
  },
});

const cancel = defineRoute({
  method: "post",
  path: `${base}/cancel`,
  scope: "tables:write",
  tags,
  summary: "Cancel the scorecard's calculation under way",
  description:
    "Cancels the calculation queued or running (its row results so far are kept). `cancelled_count` counts the calculations cancelled " +
    "(0 when none was under way). Cancelling only some rows or steps is not offered: a non-empty `row_indices` or `step_ids` is a 400.",
  errors: [404],
  request: { params: SheetParams, body: optionalBody(Filter.openapi("CancelTableSheetScorecardRequest")) },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        message: z.string(),
        scorecard: z.object({ id: z.string() }),
        cancelled_count: z.int(),
        execution_ids: z.array(z.string()),
        calculation_id: z.string().nullable(),
      }),
      "Cancelled",
    ),
  },
});

const getCalculation = defineRoute({
  method: "get",
  path: `${base}/calculations/{calculation_id}`,
  scope: "tables:read",
  tags,
  summary: "Get a scorecard calculation",
  description: `The latest ${KEPT_CALCULATIONS} calculations are kept.`,
  errors: [404],
  request: { params: SheetParams.extend({ calculation_id: UuidParam("calculation_id") }) },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        calculation: CalculationSchema,
        criterion_summaries: z.record(z.string(), z.unknown()).nullable(),
        drift_summary: z.record(z.string(), z.unknown()).nullable(),
      }),
      "The calculation",
    ),
  },
});

const RowSummary = z.object({
  row_index: z.int(),
  aggregate_score: z.number().nullable(),
  aggregate_verdict: z.string().nullable(),
  drift_summary: z.record(z.string(), z.unknown()).nullable(),
  stale_state: z.record(z.string(), z.unknown()).nullable(),
  error_summary: z.string().nullable(),
});

const listRows = defineRoute({
  method: "get",
  path: `${base}/rows`,
  scope: "tables:read",
  tags,
  summary: "List row results of a scorecard calculation",
  description:
    "Of `calculation_id`, else the latest calculation (one under way shows the rows done so far), by row index from `cursor` (a row " +
    "index; `next_cursor` continues), `limit` 1..100 (default 50), optionally one `verdict`. `verdict_counts` counts the whole " +
    `calculation. Row results are kept for the latest ${ROW_RESULT_CALCULATIONS} calculations.`,
  errors: [404],
  request: {
    params: SheetParams,
    query: z.object({
      calculation_id: Uuid.optional().openapi({ type: "string", format: "uuid" }),
      verdict: Verdict.optional(),
      cursor: QueryInt(0).optional(),
      limit: QueryInt(1, 100).default(50).openapi({ type: "integer", minimum: 1, maximum: 100, default: 50 }),
    }),
  },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        calculation_id: z.string().nullable(),
        rows: z.array(RowSummary),
        next_cursor: z.int().nullable(),
        verdict_counts: z.record(z.string(), z.int()),
      }),
      "Row results",
    ),
  },
});

const getRow = defineRoute({
  method: "get",
  path: `${base}/rows/{row_index}`,
  scope: "tables:read",
  tags,
  summary: "Get one row's scorecard result",
  description: "Its steps' results (`step_results` by step id: status, score, verdict, value, error, input_hash), of `calculation_id` or the latest calculation.",
  errors: [404],
  request: {
    params: SheetParams.extend({ row_index: QueryInt(0, MAX_ROW_INDEX).openapi({ param: { name: "row_index", in: "path" }, type: "integer", minimum: 0 }) }),
    query: z.object({ calculation_id: Uuid.optional().openapi({ type: "string", format: "uuid" }) }),
  },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        id: z.string(),
        calculation_id: z.string(),
        scorecard_id: z.string(),
        sheet_id: z.string(),
        row_index: z.int(),
        aggregate_score: z.number().nullable(),
        aggregate_verdict: z.string().nullable(),
        step_results: z.record(z.string(), z.unknown()),
        drift_summary: z.record(z.string(), z.unknown()).nullable(),
        stale_state: z.record(z.string(), z.unknown()).nullable(),
        error_summary: z.string().nullable(),
        config_hash: z.string().nullable(),
        input_hash: z.string().nullable(),
        computed_at: z.string().nullable(),
      }),
      "The row's result",
    ),
  },
});

const migrate = defineRoute({
  method: "post",
  path: `${base}/migrate-legacy-score`,
  scope: "tables:write",
  tags,
  summary: "Turn the sheet's score into scorecard steps",
  description:
    "Each column of the sheet's score configuration (GET /score) becomes a COLUMN_AGGREGATE step (with its score_type and true/false " +
    "values), added to the active scorecard or to a new one named \"Score\" whose method follows the score's aggregation (mean → " +
    "weighted_mean, all → min, any → max). `delete_legacy_score` removes the score configuration afterwards. Columns deleted since, or " +
    "steps beyond the most a scorecard holds, are in `skipped`. A change is one new sheet version; an active scorecard that no longer " +
    "checks (a column it reads was deleted) is a 400.",
  errors: [404],
  request: {
    params: SheetParams,
    body: optionalBody(z.object({ delete_legacy_score: z.boolean("must be a boolean").default(false) }).openapi("MigrateLegacyTableSheetScoreRequest")),
  },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        scorecard: ScorecardSchema.nullable(),
        converted_count: z.int(),
        skipped: z.array(z.object({ reason: z.string(), score_type: z.string().nullable() })),
        legacy_score_deleted: z.boolean(),
        version: z.int(),
      }),
      "Migrated",
    ),
  },
});

export function registerSheetScorecardRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(getScorecard, async (c) => {
    const { stub, access } = await sheetOf(c, c.req.valid("param"));
    const r = unwrap(await stub.scorecardFor(access));
    return c.json({ success: true as const, ...r }, 200);
  });

  app.openapi(configureScorecard, async (c) => {
    const p = c.req.valid("param");
    const b = c.req.valid("json");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(
      await stub.configureScorecard(access, {
        name: b.name,
        evaluated_column_ids: b.evaluated_column_ids,
        steps: b.steps.map((s) => ({ ...s, primitive_config: s.primitive_config as Record<string, unknown> | undefined, score_adapter: s.score_adapter as Record<string, unknown> | null | undefined })),
        aggregation: b.aggregation as Record<string, unknown>,
        display_config: (b.display_config as Record<string, unknown> | null | undefined) ?? null,
        baseline_config: (b.baseline_config as Record<string, unknown> | null | undefined) ?? null,
      }),
    );
    return c.json({ success: true as const, scorecard: r.scorecard, version: r.version }, 200);
  });

  app.openapi(deleteScorecard, async (c) => {
    const { stub, access } = await sheetOf(c, c.req.valid("param"));
    unwrap(await stub.deleteScorecard(access));
    return c.json({ success: true as const }, 200);
  });

  app.openapi(recalculate, async (c) => {
    const p = c.req.valid("param");
    const b = (c.req.valid("json") as z.infer<typeof Filter> | undefined) ?? {};
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.recalculateScorecard(access, { rows: b.row_indices?.length ? b.row_indices : null, steps: b.step_ids?.length ? b.step_ids : null }));
    return c.json({ success: true as const, calculation_id: r.calculation_id, status: "queued" as const, version: r.version }, 202);
  });

  app.openapi(cancel, async (c) => {
    const p = c.req.valid("param");
    const b = (c.req.valid("json") as z.infer<typeof Filter> | undefined) ?? {};
    if (b.row_indices?.length || b.step_ids?.length) {
      throw new ApiError("validation_error", `${b.row_indices?.length ? "row_indices" : "step_ids"}: cancelling part of a calculation is not offered; send no filter to cancel it whole`);
    }
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.cancelScorecard(access));
    return c.json(
      {
        success: true as const,
        message: r.calculation_ids.length > 0 ? "Scorecard calculation cancelled" : "No scorecard calculation was under way",
        scorecard: { id: r.scorecard_id },
        cancelled_count: r.calculation_ids.length,
        execution_ids: r.calculation_ids,
        calculation_id: r.calculation_ids[0] ?? null,
      },
      200,
    );
  });

  app.openapi(getCalculation, async (c) => {
    const p = c.req.valid("param");
    const { stub, access } = await sheetOf(c, p);
    const { calculation } = unwrap(await stub.scorecardCalculationFor(access, p.calculation_id));
    return c.json({ success: true as const, calculation, criterion_summaries: calculation.criterion_summaries, drift_summary: calculation.drift_summary }, 200);
  });

  app.openapi(listRows, async (c) => {
    const p = c.req.valid("param");
    const q = c.req.valid("query");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(
      await stub.scorecardRowsFor(access, { calculationId: q.calculation_id ?? null, verdict: (q.verdict as never) ?? null, cursor: q.cursor ?? 0, limit: q.limit }),
    );
    return c.json({ success: true as const, ...r }, 200);
  });

  app.openapi(getRow, async (c) => {
    const p = c.req.valid("param");
    const q = c.req.valid("query");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.scorecardRowFor(access, p.row_index, q.calculation_id ?? null));
    return c.json({ success: true as const, ...r }, 200);
  });

  app.openapi(migrate, async (c) => {
    const p = c.req.valid("param");
    const b = (c.req.valid("json") as { delete_legacy_score?: boolean } | undefined) ?? {};
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.migrateLegacyScore(access, b.delete_legacy_score ?? false));
    return c.json({ success: true as const, ...r }, 200);
  });
}
