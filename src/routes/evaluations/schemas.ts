// Request and response schemas of the evaluation endpoints (PromptLayer's /reports, /report-columns and
// /api/public/v2/evaluations shapes); they also feed /openapi.json.
import { NameText } from "../../lib/schemas";
import { z } from "@hono/zod-openapi";
import { QueryBool, QueryInt, ResourceListShape } from "../../lib/query";
import { ExternalId, ExternalIdLookupShape, ExternalIdsInput } from "../external-ids/schemas";
import { COMPUTING_BLOCK_TYPES } from "../../blocks";
import { tooDeepAt } from "../../lib/json-depth";

const PositiveId = z.int("must be an integer").positive("must be a positive integer");
const Name255 = NameText(255);
const ColumnType = z.string().min(1, "must be a block type").openapi({ description: `A block type that computes: ${COMPUTING_BLOCK_TYPES.join(", ")}.` });
/** Nesting a configuration may have: SQLite's JSON functions fail past 1,000, and no block needs a tenth of it. */
export const MAX_CONFIGURATION_DEPTH = 64;

const Configuration = z
  .record(z.string(), z.unknown(), { error: "must be an object" })
  .refine((c) => tooDeepAt(c, MAX_CONFIGURATION_DEPTH) === null, `must nest at most ${MAX_CONFIGURATION_DEPTH} levels`);

export const ColumnDefinition = z
  .object({
    column_type: ColumnType,
    name: Name255,
    configuration: Configuration,
    position: z.int("must be an integer").min(1, "must be >= 1").nullish(),
    is_part_of_score: z.boolean().nullish(),
  })
  .openapi("EvaluationColumnDefinition");

export const CreatePipelineBody = z
  .object({
    dataset_group_id: PositiveId,
    name: Name255.nullish(),
    folder_id: PositiveId.nullish(),
    dataset_version_number: z.int("must be an integer").nullish(),
    columns: z.array(ColumnDefinition).nullish(),
    score_configuration: z.unknown().optional().openapi({ description: "Custom scoring code cannot run here: only null is accepted." }),
    external_ids: ExternalIdsInput,
  })
  .openapi("CreateEvaluationPipelineRequest");

export const ReportColumn = z
  .object({
    id: z.int(),
    report_id: z.int(),
    column_type: z.string(),
    name: z.string(),
    position: z.int().openapi({ description: "1-based order among the evaluation columns" }),
    is_part_of_score: z.boolean(),
    configuration: z.record(z.string(), z.unknown()),
    score: z.number().nullable(),
  })
  .openapi("ReportColumn");

export const CreatePipelineResponse = z
  .object({ success: z.literal(true), report_id: z.int(), report_columns: z.array(ReportColumn), external_ids: z.array(ExternalId) })
  .openapi("CreateEvaluationPipelineResponse");

const StatusCounts = z.object({ COMPLETED: z.int(), FAILED: z.int(), QUEUED: z.int(), RUNNING: z.int() });
const Score = z.record(z.string(), z.unknown()).nullable();

const reportFields = {
  id: z.int(),
  name: z.string(),
  comment: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  workspace_id: z.int(),
  folder_id: z.int().nullable(),
  user_id: z.int().nullable(),
  dataset_group_id: z.int(),
  dataset_id: z.int(),
  is_blueprint: z.boolean(),
  tags: z.array(z.string()),
  deleted: z.boolean(),
  parent_report_id: z.int().nullable(),
  score_configuration: z.null(),
};

const Run = z
  .object({ ...reportFields, score: Score, score_matrix: z.null(), score_calculation_error: z.null(), status: z.enum(["RUNNING", "COMPLETED"]), stats: z.object({ status_counts: StatusCounts }) })
  .openapi("EvaluationRun");

export const Evaluation = z
  .object({ ...reportFields, external_ids: z.array(ExternalId), runs: z.array(Run).optional().openapi({ description: "With include_runs=true: the newest 10 runs, newest first." }),
    run_count: z.int().optional().openapi({ description: "With include_runs=true: how many runs the pipeline has in all." }),
  })
  .openapi("Evaluation");

export const ListEvaluationsQuery = z.object({
  workspace_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional().openapi({ description: "The key's own workspace (another is a 404)." }),
  include_runs: QueryBool.default(false),
  ...ResourceListShape,
  ...ExternalIdLookupShape,
});

export const ListEvaluationsResponse = z
  .object({ success: z.literal(true), message: z.string(), evaluations: z.array(Evaluation), page: z.int(), per_page: z.int(), total: z.int(), pages: z.int() })
  .openapi("ListEvaluationsResponse");

export const GetReportResponse = z
  .object({
    success: z.literal(true),
    message: z.string(),
    report: z.object({
      ...reportFields,
      external_ids: z.array(ExternalId).optional(),
      score: Score,
      score_matrix: z.null(),
      score_calculation_error: z.null(),
      prompt_registry_id: z.null(),
      prompt_version_number: z.null(),
    }),
    status: z.enum(["RUNNING", "COMPLETED"]),
    stats: z.object({ status_counts: StatusCounts }),
    report_columns: z.array(ReportColumn),
  })
  .openapi("GetReportResponse");

export const RunBody = z
  .object({
    name: Name255,
    dataset_id: PositiveId.nullish(),
    refresh_dataset: z.boolean().nullish().openapi({ description: "Not supported: true is a 400." }),
  })
  .openapi("RunReportRequest");

export const EvaluationRowsQuery = z.object({
  workspace_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
  page: QueryInt(1, Number.MAX_SAFE_INTEGER).default(1),
  per_page: QueryInt(1, 100).default(10),
});

const DatasetCell = z.object({ type: z.literal("dataset"), value: z.unknown() });
const EvalCell = z.object({ type: z.literal("eval"), status: z.enum(["QUEUED", "RUNNING", "COMPLETED", "FAILED"]), value: z.unknown(), error_message: z.string().nullable() });

export const EvaluationRowsResponse = z
  .object({
    success: z.literal(true),
    message: z.string(),
    columns: z.array(z.string()),
    rows: z.array(z.array(z.union([DatasetCell, EvalCell]))),
    page: z.int(),
    per_page: z.int(),
    pages: z.int(),
    total: z.int(),
  })
  .openapi("EvaluationRowsResponse");

export const AddColumnBody = ColumnDefinition.omit({ position: true })
  .extend({ report_id: PositiveId, position: z.int("must be an integer").min(0, "must be >= 0").nullish() })
  .openapi("AddReportColumnRequest");

export const EditColumnBody = z
  .object({
    report_id: PositiveId,
    column_type: ColumnType,
    configuration: Configuration.nullish(),
    name: Name255.nullish(),
    position: z.int("must be an integer").min(1, "must be >= 1").nullish(),
  })
  .openapi("EditReportColumnRequest");

export const PipelineSummary = z.object({ id: z.int(), name: z.string(), tags: z.array(z.string()), score_configuration: z.null() }).openapi("EvaluationPipelineSummary");

export const RenameBody = z.object({ name: Name255.nullish(), tags: z.array(z.string().max(255, "must be at most 255 characters")).max(100, "at most 100 tags").nullish() }).openapi("RenameReportRequest");

export const ScoreCardBody = z
  .object({
    column_names: z.array(z.string()).max(50, "at most 50 names"),
    code: z.string().nullish().openapi({ description: "Custom scoring code cannot run here: only null is accepted." }),
    code_language: z.enum(["PYTHON", "JAVASCRIPT"], { error: "must be PYTHON or JAVASCRIPT" }).nullish(),
  })
  .openapi("UpdateReportScoreCardRequest");

export const ScoreResponse = z
  .object({
    success: z.literal(true),
    message: z.string(),
    score: z.object({
      overall_score: z.number().nullable(),
      score_type: z.enum(["single_column", "multi_column", "custom", "none"]),
      has_custom_scoring: z.boolean(),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .openapi("ReportScoreResponse");
