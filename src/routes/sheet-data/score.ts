// A sheet's score: /api/public/v2/tables/{table_id}/sheets/{sheet_id}/score (get, configure, queue a
// calculation) and /versions/score-history. The sheet's object keeps and calculates it
// (sheets/score.ts); each handler finds the sheet in D1 for the key's workspace first.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { ApiError } from "../../lib/errors";
import { QueryInt } from "../../lib/query";
import { unwrap } from "../../services/tables";
import { DEFAULT_FALSE_VALUES, DEFAULT_TRUE_VALUES, MAX_SCORE_COLUMNS, SCORE_RANGE_ROWS } from "../../sheets";
import { SheetParams } from "./schemas";
import { sheetOf } from "./access";

const tags = ["smart tables"];
const base = "/api/public/v2/tables/{table_id}/sheets/{sheet_id}";
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

const Uuid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "must be a UUID");
const Aggregation = z.enum(["all", "any", "mean"], { error: "must be all, any or mean" });
const Values = z
  .array(z.string("must be strings").min(1, "must not be empty").max(255, "must be at most 255 characters"), { error: "must be an array of strings" })
  .max(50, "must have at most 50 items");
const ColumnIds = z.array(Uuid, { error: "must be an array of column ids" }).max(MAX_SCORE_COLUMNS, `must have at most ${MAX_SCORE_COLUMNS} items`);
const ColumnNames = z
  .array(z.string("must be strings").min(1, "must not be empty").max(255, "must be at most 255 characters"), { error: "must be an array of column titles" })
  .max(MAX_SCORE_COLUMNS, `must have at most ${MAX_SCORE_COLUMNS} items`);

const ScoreConfig = z
  .strictObject(
    {
      column_ids: ColumnIds.nullish(),
      column_names: ColumnNames.nullish(),
      true_values: Values.nullish(),
      false_values: Values.nullish(),
      assertion_aggregation: Aggregation.nullish(),
    },
    { error: "must be an object" },
  )
  .openapi({ description: "The same fields as the top level; a top-level field wins" });

const ConfigureScoreBody = z
  .object({
    score_type: z.enum(["auto", "boolean", "numeric", "custom"], { error: "must be auto, boolean, numeric or custom" }).nullish(),
    score_config: ScoreConfig.nullish(),
    column_ids: ColumnIds.nullish(),
    column_names: ColumnNames.nullish(),
    code: z.string("must be a string").min(1).max(50_000).nullish(),
    code_language: z.enum(["PYTHON", "JAVASCRIPT"], { error: "must be PYTHON or JAVASCRIPT" }).nullish(),
    true_values: Values.nullish(),
    false_values: Values.nullish(),
    assertion_aggregation: Aggregation.nullish(),
  })
  .openapi("ConfigureTableSheetScoreRequest");

const ScoreColumn = z.object({
  column_id: z.string(),
  title: z.string(),
  score: z.number().nullable(),
  included_count: z.int(),
  excluded_count: z.int(),
  resolved_scoring_type: z.enum(["auto", "boolean", "numeric"]).nullable(),
});

const ScoreSchema = z
  .object({
    success: z.literal(true),
    sheet_id: z.string(),
    scoring_type: z.enum(["auto", "boolean", "numeric"]).nullable(),
    columns: z.array(ScoreColumn),
    aggregate_score: z.number().nullable(),
    total_rows: z.int(),
    scored_rows: z.int(),
    excluded_rows: z.int(),
    calculated_at: z.string().nullable(),
    score_matrix: z.array(z.array(z.union([z.number(), z.string(), z.null()]))).nullable(),
    score_matrix_metrics: z.array(z.object({ key: z.string(), label: z.string(), positive_metric: z.boolean().nullable() })).nullable(),
    status: z.enum(["queued", "running", "completed", "failed"]).nullable(),
    score_calculation_error: z.string().nullable(),
    has_custom_scoring: z.boolean(),
    score_configuration: z.object({ score_type: z.enum(["auto", "boolean", "numeric"]), score_config: z.record(z.string(), z.unknown()) }).nullable(),
    score_type: z.enum(["none", "single_column", "multi_column", "custom"]),
    overall_score: z.number().nullable(),
    details: z.record(z.string(), z.unknown()),
    aggregate: z.record(z.string(), z.unknown()),
    per_column: z.record(z.string(), z.unknown()),
  })
  .openapi("TableSheetScoreResponse");

const HistoryQuery = z.object({
  max_points: QueryInt(50, 5000).default(1200).openapi({ type: "integer", minimum: 50, maximum: 5000, default: 1200 }),
  range: z.enum(["all", "last_25", "last_50", "last_100", "last_250"], { error: "must be all, last_25, last_50, last_100 or last_250" }).default("all"),
  resolution: z.enum(["auto", "raw", "min_max_bucket"], { error: "must be auto, raw or min_max_bucket" }).default("auto"),
});

const HOW =
  "Each scored cell counts when COMPLETED and it reads as a boolean (JSON true/false, or a text in `true_values` / `false_values`, " +
  `compared without regard to case; defaults ${JSON.stringify(DEFAULT_TRUE_VALUES)} / ${JSON.stringify(DEFAULT_FALSE_VALUES)}) or a number ` +
  "(JSON number or numeric text); `boolean` also takes 1 and 0, `numeric` takes numbers only. Booleans count 1 and 0. A column's score is " +
  "the mean of its counted cells (a pass rate for booleans); a row's score combines its columns by `assertion_aggregation`: `mean` " +
  "(default), `all` (the least: every column must pass), `any` (the greatest); the sheet's `aggregate_score` is the mean over the rows " +
  "with at least one counted cell (`scored_rows`; the others are `excluded_rows`).";

const getScore = defineRoute({
  method: "get",
  path: `${base}/score`,
  scope: "tables:read",
  tags,
  summary: "Get the sheet's score",
  description:
    "The configuration, the state of its latest calculation (`status`: queued, running, completed, failed; null before any) and the numbers " +
    "of its latest completed one (kept while a new one runs). `details.is_stale` is true when the sheet changed since. " +
    HOW,
  errors: [404],
  request: { params: SheetParams },
  responses: { 200: json(ScoreSchema, "The score") },
});

const configureScore = defineRoute({
  method: "patch",
  path: `${base}/score`,
  scope: "tables:write",
  tags,
  summary: "Configure the sheet's score",
  description:
    `Columns to score by \`column_ids\` and/or \`column_names\` (titles, without regard to case), 1..${MAX_SCORE_COLUMNS} in all (an unknown ` +
    "one is a 404); `score_type` auto (default), boolean or numeric (`custom` and `code` are a 400: no scoring code runs here); " +
    "`score_config` may carry the same fields (a top-level field wins; `score_type` is then required). One new sheet version; nothing is " +
    "calculated until POST /score. " +
    HOW,
  errors: [404],
  request: { params: SheetParams, body: { required: true, content: { "application/json": { schema: ConfigureScoreBody } } } },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        message: z.string(),
        score_configuration_id: z.string().openapi({ format: "uuid" }),
        status: z.null(),
        requires_recalculation: z.literal(true),
        version: z.int(),
      }),
      "Configured",
    ),
  },
});

const recalculateScore = defineRoute({
  method: "post",
  path: `${base}/score`,
  scope: "tables:write",
  tags,
  summary: "Calculate the sheet's score",
  description:
    "Queues a calculation (one still queued or running starts over). It runs off the request on the sheet's alarm once no cell is queued " +
    `or running, so it scores the results of recalculations asked before it; ${SCORE_RANGE_ROWS} rows per alarm run, requests served ` +
    "between runs; a change to the sheet meanwhile starts it over, so a score is always of one sheet version. Poll GET /score. " +
    "Not configured, or a scored column deleted since: 400.",
  errors: [404],
  request: { params: SheetParams },
  responses: {
    202: json(
      z.object({ success: z.literal(true), score_configuration_id: z.string().openapi({ format: "uuid" }), status: z.literal("queued") }),
      "Queued",
    ),
  },
});

const scoreHistory = defineRoute({
  method: "get",
  path: `${base}/versions/score-history`,
  scope: "tables:read",
  tags,
  summary: "The score across the sheet's versions",
  description:
    "One point per sheet version that has a completed score (its latest), oldest first: `{sheet_version, version_id, version_number, " +
    "version_name (the saved version made at that sheet version, else null), score, scored_rows, total_rows, calculation_id, " +
    "calculated_at}`. `range` keeps the last 25…250 points; over `max_points` (50..5000, default 1200) `auto` and `min_max_bucket` keep the " +
    "lowest and highest point of each of max_points/2 buckets, `raw` the latest max_points (`resolution` answers which was applied). " +
    "The latest 5000 calculations are kept.",
  errors: [404],
  request: { params: SheetParams, query: HistoryQuery },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        score_history: z.object({
          points: z.array(z.record(z.string(), z.unknown())),
          total_points: z.int(),
          returned_points: z.int(),
          resolution: z.enum(["auto", "raw", "min_max_bucket"]),
          range: z.string(),
          max_points: z.int(),
          is_sampled: z.boolean(),
        }),
      }),
      "Score history",
    ),
  },
});

/** Registered before the version routes: "score-history" must not be read as a version id. */
export function registerSheetScoreRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(scoreHistory, async (c) => {
    const p = c.req.valid("param");
    const q = c.req.valid("query");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.scoreHistoryFor(access, { range: q.range, resolution: q.resolution, maxPoints: q.max_points }));
    return c.json({ success: true as const, score_history: r.score_history }, 200);
  });

  app.openapi(getScore, async (c) => {
    const { stub, access } = await sheetOf(c, c.req.valid("param"));
    const { score } = unwrap(await stub.scoreFor(access));
    return c.json({ success: true as const, ...score }, 200);
  });

  app.openapi(configureScore, async (c) => {
    const p = c.req.valid("param");
    const b = c.req.valid("json");
    if (b.score_type === "custom" || b.code != null) {
      const field = b.code != null ? "code" : "score_type";
      throw new ApiError("validation_error", `${field}: custom scoring code is not run here; score columns of booleans or numbers (score_type auto, boolean or numeric)`);
    }
    if (b.score_config != null && b.score_type == null) throw new ApiError("validation_error", "score_type: is required when score_config is given");
    const cfg = b.score_config ?? {};
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(
      await stub.configureScore(access, {
        score_type: b.score_type ?? "auto",
        column_ids: b.column_ids ?? cfg.column_ids ?? [],
        column_names: b.column_names ?? cfg.column_names ?? [],
        true_values: b.true_values ?? cfg.true_values ?? null,
        false_values: b.false_values ?? cfg.false_values ?? null,
        assertion_aggregation: b.assertion_aggregation ?? cfg.assertion_aggregation ?? null,
      }),
    );
    return c.json(
      { success: true as const, message: "Score configuration updated", score_configuration_id: r.score_configuration_id, status: null, requires_recalculation: true as const, version: r.version },
      200,
    );
  });

  app.openapi(recalculateScore, async (c) => {
    const { stub, access } = await sheetOf(c, c.req.valid("param"));
    const r = unwrap(await stub.recalculateScore(access));
    return c.json({ success: true as const, score_configuration_id: r.score_configuration_id, status: "queued" as const }, 202);
  });
}
