// Evaluations: pipelines (POST /reports), their columns (/report-columns), runs (POST /reports/{id}/run),
// reading (GET /reports/{id}, /score, GET /api/public/v2/evaluations and …/{id}/rows), renaming, scoring
// and archiving. Thin handlers; the work is in services/evaluations/ (pipelines.ts, runs.ts).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { IdParam } from "../../lib/schemas";
import { requireOwnWorkspace } from "../../http/workspace";
import { addColumn, archiveReport, archiveReportsByName, createPipeline, deleteColumn, editColumn, evaluationRows, getReport, getReportScore, listEvaluations, pipelineExists, renameReport, startEvaluationRun, updateScoreCard } from "../../services/evaluations";
import { externalIdRoutes } from "../external-ids";
import {
  AddColumnBody,
  CreatePipelineBody,
  CreatePipelineResponse,
  EditColumnBody,
  EvaluationRowsQuery,
  EvaluationRowsResponse,
  GetReportResponse,
  ListEvaluationsQuery,
  ListEvaluationsResponse,
  PipelineSummary,
  RenameBody,
  ReportColumn,
  RunBody,
  ScoreCardBody,
  ScoreResponse,
} from "./schemas";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const body = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const tags = ["evaluations"];
const reportParam = { params: z.object({ report_id: IdParam("report_id") }) };
const columnParam = { params: z.object({ report_column_id: IdParam("report_column_id") }) };
const Message = z.object({ success: z.literal(true), message: z.string() });

const create = defineRoute({
  method: "post",
  path: "/reports",
  scope: "evaluations:write",
  tags,
  summary: "Create an evaluation pipeline",
  description:
    "On a saved version of a dataset group (dataset_version_number, else the newest; a group without one is a 400). " +
    "Columns are blocks of the shared engine; each reads dataset columns and columns before it. score_configuration (custom code) is refused.",
  errors: [404, 409],
  request: { body: body(CreatePipelineBody) },
  responses: { 201: json(CreatePipelineResponse, "Created") },
});

const list = defineRoute({
  method: "get",
  path: "/api/public/v2/evaluations",
  scope: "evaluations:read",
  tags,
  summary: "List evaluation pipelines",
  description: "Pipelines only; include_runs=true adds each pipeline's newest 10 runs with status, stats and score, and run_count. Paged, filtered and sorted like the other lists.",
  errors: [404],
  request: { query: ListEvaluationsQuery },
  responses: { 200: json(ListEvaluationsResponse, "A page of pipelines") },
});

const get = defineRoute({
  method: "get",
  path: "/reports/{report_id}",
  scope: "evaluations:read",
  tags,
  summary: "Get an evaluation (pipeline or run) with its columns, cell counts and score",
  description: "A pipeline or a run, archived ones too (deleted: true): its columns, cell counts by status and, for a run, its score.",
  errors: [404],
  request: reportParam,
  responses: { 200: json(GetReportResponse, "The report") },
});

const run = defineRoute({
  method: "post",
  path: "/reports/{report_id}/run",
  scope: "evaluations:write",
  tags,
  summary: "Run a pipeline over its dataset (or dataset_id)",
  description: "Creates a run (a report with the pipeline's columns) and evaluates its rows on the queue; poll GET /reports/{report_id}.",
  errors: [404],
  request: { ...reportParam, body: body(RunBody) },
  responses: { 201: json(z.object({ success: z.literal(true), report_id: z.int() }).openapi("RunReportResponse"), "Run started") },
});

const del = defineRoute({
  method: "delete",
  path: "/reports/{report_id}",
  scope: "evaluations:write",
  tags,
  summary: "Archive an evaluation (a pipeline with its runs)",
  description: "Archives the evaluation (a pipeline with its runs); already archived is a 404.",
  errors: [404],
  request: reportParam,
  responses: { 200: json(Message, "Archived") },
});

const delByName = defineRoute({
  method: "delete",
  path: "/reports/name/{report_name}",
  scope: "evaluations:write",
  tags,
  summary: "Archive every evaluation of a name",
  description: "Archives every evaluation of that name; none is a 404.",
  errors: [404],
  request: { params: z.object({ report_name: z.string().min(1).max(255).openapi({ param: { name: "report_name", in: "path" } }) }) },
  responses: { 200: json(Message, "Archived") },
});

const rename = defineRoute({
  method: "patch",
  path: "/reports/{report_id}/rename",
  scope: "evaluations:write",
  tags,
  summary: "Rename or retag an evaluation",
  description: "name and/or tags (at least one, else a 400).",
  errors: [404],
  request: { ...reportParam, body: body(RenameBody) },
  responses: { 200: json(z.object({ success: z.literal(true), report: PipelineSummary }), "Renamed") },
});

const score = defineRoute({
  method: "get",
  path: "/reports/{report_id}/score",
  scope: "evaluations:read",
  tags,
  summary: "Get a run's score",
  description: "The built-in score of a run (a pipeline is a 400): the mean of each scored column's completed boolean (true 100, false 0) or numeric cells, and their mean over several columns.",
  errors: [404],
  request: reportParam,
  responses: { 200: json(ScoreResponse, "The score") },
});

const scoreCard = defineRoute({
  method: "patch",
  path: "/reports/{report_id}/score-card",
  scope: "evaluations:write",
  tags,
  summary: "Choose the columns of the built-in score",
  description: "column_names chooses which columns of a pipeline count in the built-in score; unknown names are a 400.",
  errors: [404],
  request: { ...reportParam, body: body(ScoreCardBody) },
  responses: { 200: json(z.object({ success: z.literal(true), report: PipelineSummary }), "Updated") },
});

const rows = defineRoute({
  method: "get",
  path: "/api/public/v2/evaluations/{evaluation_id}/rows",
  scope: "evaluations:read",
  tags,
  summary: "Get a page of an evaluation's rows (dataset cells, then one eval cell per column)",
  description: "For a run its rows; for a pipeline the rows of its newest run (none yet: no rows). Dataset cells first, then one eval cell per column.",
  errors: [404],
  request: { params: z.object({ evaluation_id: IdParam("evaluation_id") }), query: EvaluationRowsQuery },
  responses: { 200: json(EvaluationRowsResponse, "A page of rows") },
});

const addCol = defineRoute({
  method: "post",
  path: "/report-columns",
  scope: "evaluations:write",
  tags,
  summary: "Add a column to a pipeline",
  description: "Adds a column to a pipeline; the whole pipeline is checked again (a column reads dataset columns and columns to its left). A run's columns cannot change.",
  errors: [404],
  request: { body: body(AddColumnBody) },
  responses: { 201: json(z.object({ success: z.literal(true), report_column: ReportColumn }), "Added") },
});

const editCol = defineRoute({
  method: "patch",
  path: "/report-columns/{report_column_id}",
  scope: "evaluations:write",
  tags,
  summary: "Edit a pipeline column",
  description: "Edits a pipeline column; report_id must be the column's. The whole pipeline is checked again.",
  errors: [404],
  request: { ...columnParam, body: body(EditColumnBody) },
  responses: { 200: json(z.object({ success: z.literal(true), report_column: ReportColumn }), "Updated") },
});

const deleteCol = defineRoute({
  method: "delete",
  path: "/report-columns/{report_column_id}",
  scope: "evaluations:write",
  tags,
  summary: "Delete a pipeline column",
  description: "Deletes a pipeline column; the rest of the pipeline is checked again (a column that read it makes this a 400).",
  errors: [404],
  request: columnParam,
  responses: { 204: { description: "Deleted" } },
});

export function registerEvaluationRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => c.json(await createPipeline(c.var.deps.db, c.get("auth"), c.req.valid("json")), 201));

  app.openapi(list, async (c) => {
    const q = c.req.valid("query");
    requireOwnWorkspace(c.get("auth"), q.workspace_id);
    return c.json({ success: true as const, message: "success", ...(await listEvaluations(c.var.deps.db, c.get("auth").workspaceId, q)) }, 200);
  });

  app.openapi(get, async (c) => c.json(await getReport(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").report_id), 200));

  app.openapi(run, async (c) => {
    const id = await startEvaluationRun(c.var.deps.db, c.var.deps.jobs, c.get("auth"), c.req.valid("param").report_id, c.req.valid("json"));
    return c.json({ success: true as const, report_id: id }, 201);
  });

  app.openapi(del, async (c) => {
    await archiveReport(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").report_id);
    return c.json({ success: true as const, message: "Report archived successfully" }, 200);
  });

  app.openapi(delByName, async (c) => {
    const n = await archiveReportsByName(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").report_name);
    return c.json({ success: true as const, message: `${n} report${n === 1 ? "" : "s"} archived` }, 200);
  });

  app.openapi(rename, async (c) => c.json(await renameReport(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").report_id, c.req.valid("json")), 200));

  app.openapi(score, async (c) => c.json(await getReportScore(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").report_id), 200));

  app.openapi(scoreCard, async (c) => c.json(await updateScoreCard(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").report_id, c.req.valid("json")), 200));

  app.openapi(rows, async (c) => {
    const q = c.req.valid("query");
    requireOwnWorkspace(c.get("auth"), q.workspace_id);
    return c.json({ success: true as const, message: "success", ...(await evaluationRows(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").evaluation_id, q)) }, 200);
  });

  app.openapi(addCol, async (c) => c.json({ success: true as const, report_column: await addColumn(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("json")) }, 201));

  app.openapi(editCol, async (c) =>
    c.json({ success: true as const, report_column: await editColumn(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").report_column_id, c.req.valid("json")) }, 200),
  );

  app.openapi(deleteCol, async (c) => {
    await deleteColumn(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").report_column_id);
    return c.body(null, 204);
  });

  externalIdRoutes(app, {
    area: "evaluations",
    entityType: "evaluation",
    basePath: "/reports",
    idParam: "report_id",
    label: "evaluation pipeline",
    tag: "evaluations",
    exists: pipelineExists,
  });
}
