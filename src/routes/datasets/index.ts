// Datasets: groups, drafts filled from request logs on the queue, saved versions, listing and rows.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { getDb } from "../../db/client";
import { DATASET_JOB_STATUSES } from "../../db/schema";
import { FilterGroupSchema } from "../../filters";
import { defineRoute } from "../../lib/openapi";
import { QueryInt, SortBy, SortOrder } from "../../lib/query";
import { IdParam, Timestamp } from "../../lib/schemas";
import { enqueue } from "../../queue/messages";
import { createDatasetGroup, datasetGroupExists, datasetRowsPage, listDatasets, MAX_LOGS_PER_JOB, queueDraftFill, saveDraft } from "../../services/datasets";
import { externalIdRoutes } from "../external-ids";
import { ExternalId, ExternalIdLookupShape, ExternalIdsInput } from "../external-ids/schemas";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const body = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const tags = ["datasets"];
const PositiveId = z.int("must be an integer").positive("must be a positive integer");

const DatasetGroup = z
  .object({ id: z.int(), name: z.string(), workspace_id: z.int(), folder_id: z.int().nullable(), is_deleted: z.boolean(), created_at: z.string(), updated_at: z.string() })
  .openapi("DatasetGroup");

const Dataset = z
  .object({
    id: z.int(),
    dataset_group_id: z.int(),
    version_number: z.int().openapi({ description: "-1 for the group's draft" }),
    column_names: z.array(z.string()),
    filter_params: z.record(z.string(), z.unknown()).nullable(),
    is_deleted: z.boolean(),
    user_id: z.int(),
    job_status: z.enum(DATASET_JOB_STATUSES).nullable().openapi({ description: "State of the last fill of this dataset from request logs (null: never filled)." }),
    created_at: z.string(),
    updated_at: z.string(),
    dataset_group: DatasetGroup,
    external_ids: z.array(ExternalId),
  })
  .openapi("Dataset");

const createGroup = defineRoute({
  method: "post",
  path: "/api/public/v2/dataset-groups",
  tags,
  summary: "Create a dataset group",
  description: "name is unique per workspace (409). Creates the group's empty draft (version_number -1).",
  errors: [404, 409],
  request: {
    body: body(
      z
        .object({
          name: z.string().min(1, "must be 1 to 255 characters").max(255, "must be 1 to 255 characters"),
          folder_id: PositiveId.nullish(),
          external_ids: ExternalIdsInput,
        })
        .openapi("CreateDatasetGroupRequest"),
    ),
  },
  responses: {
    201: json(z.object({ success: z.literal(true), message: z.string(), dataset_group: DatasetGroup, dataset: Dataset, external_ids: z.array(ExternalId) }), "Created"),
  },
});

const FromFilterParamsBody = z
  .object({
    dataset_group_id: PositiveId,
    request_log_ids: z
      .array(PositiveId)
      .max(MAX_LOGS_PER_JOB, `at most ${MAX_LOGS_PER_JOB} items`)
      .nullish()
      .openapi({ description: "Explicit request log ids, copied in this order; they take precedence over filter_group. Ids of other workspaces are skipped." }),
    filter_group: FilterGroupSchema.nullish(),
    q: z.string().max(1024, "must be at most 1024 characters").nullish(),
    sort_by: z.enum(["request_start_time", "input_tokens", "output_tokens", "cost", "latency_ms", "status"]).nullish(),
    sort_order: z.enum(["asc", "desc"]).nullish(),
    variables_to_parse: z
      .array(z.string().min(1, "must be 1 to 255 characters").max(255, "must be 1 to 255 characters"))
      .max(50, "at most 50 items")
      .nullish()
      .openapi({ description: "Columns of the dataset: request fields (README) or input variable names." }),
    limit: z.int("must be an integer").min(1, "must be >= 1").nullish(),
  })
  .openapi("CreateDatasetVersionFromFilterParamsRequest");

const fromFilterParams = defineRoute({
  method: "post",
  path: "/api/public/v2/dataset-versions/from-filter-params",
  tags,
  summary: "Fill the group's draft from request logs",
  description: `Answers at once; a queued job copies at most ${MAX_LOGS_PER_JOB} logs into the draft (created when missing), replacing its earlier rows.`,
  errors: [404],
  request: { body: body(FromFilterParamsBody) },
  responses: {
    201: json(
      z.object({ success: z.literal(true), message: z.string(), dataset_id: z.int(), dataset_group_id: z.int(), version_number: z.int() }).openapi("CreateDatasetVersionFromFilterParamsResponse"),
      "Queued",
    ),
  },
});

const save = defineRoute({
  method: "post",
  path: "/api/public/v2/dataset-versions/save-draft",
  tags,
  summary: "Save the draft as the next version",
  description: "The draft becomes version max+1 at once (202 as in PromptLayer's API). 409 while its fill job is still running.",
  errors: [404, 409],
  request: { body: body(z.object({ dataset_group_id: PositiveId }).openapi("SaveDraftDatasetVersionRequest")) },
  responses: {
    202: json(z.object({ success: z.literal(true), message: z.string(), draft_dataset_id: z.int(), version_number: z.int() }), "Saved"),
  },
});

const list = defineRoute({
  method: "get",
  path: "/api/public/v2/datasets",
  tags,
  summary: "List datasets",
  request: {
    query: z.object({
      dataset_group_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
      name: z.string().max(255).optional(),
      status: z.enum(["active", "deleted", "all"], { error: "must be active, deleted or all" }).default("active"),
      page: QueryInt(1, Number.MAX_SAFE_INTEGER).default(1),
      per_page: QueryInt(1, 100).default(10),
      created_by_email: z.string().optional(),
      created_after: Timestamp.optional(),
      created_before: Timestamp.optional(),
      updated_after: Timestamp.optional(),
      updated_before: Timestamp.optional(),
      sort_by: SortBy,
      sort_order: SortOrder,
      ...ExternalIdLookupShape,
    }),
  },
  responses: {
    200: json(z.object({ success: z.literal(true), message: z.string(), datasets: z.array(Dataset), page: z.int(), per_page: z.int(), total: z.int(), pages: z.int() }), "A page of datasets"),
  },
});

const rows = defineRoute({
  method: "get",
  path: "/api/public/v2/datasets/{dataset_id}/rows",
  tags,
  summary: "Get a page of a dataset's rows",
  errors: [404],
  request: {
    params: z.object({ dataset_id: IdParam("dataset_id") }),
    query: z.object({ page: QueryInt(1, Number.MAX_SAFE_INTEGER).default(1), per_page: QueryInt(1, 100).default(10), q: z.string().max(1024).optional() }),
  },
  responses: {
    200: json(
      z
        .object({
          success: z.literal(true),
          message: z.string(),
          columns: z.array(z.string()),
          rows: z.array(z.array(z.object({ type: z.literal("dataset"), value: z.unknown() }))),
          page: z.int(),
          per_page: z.int(),
          pages: z.int(),
          total: z.int(),
        })
        .openapi("DatasetRowsResponse"),
      "A page of rows, cells in the order of columns",
    ),
  },
});

export function registerDatasetRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(createGroup, async (c) => c.json(await createDatasetGroup(getDb(c.env.DB), c.get("auth"), c.req.valid("json")), 201));

  app.openapi(fromFilterParams, async (c) => {
    const auth = c.get("auth");
    const queued = await queueDraftFill(getDb(c.env.DB), auth, c.req.valid("json"));
    await enqueue(c.env.JOBS, { v: 1, kind: "dataset_fill", workspace_id: auth.workspaceId, job_id: queued.jobId });
    return c.json(
      { success: true as const, message: "Dataset version creation queued", dataset_id: queued.datasetId, dataset_group_id: queued.datasetGroupId, version_number: -1 },
      201,
    );
  });

  app.openapi(save, async (c) => {
    const saved = await saveDraft(getDb(c.env.DB), c.get("auth").workspaceId, c.req.valid("json").dataset_group_id);
    return c.json({ success: true as const, message: "Draft dataset version saved", draft_dataset_id: saved.draftDatasetId, version_number: saved.versionNumber }, 202);
  });

  app.openapi(list, async (c) => c.json({ success: true as const, message: "success", ...(await listDatasets(getDb(c.env.DB), c.get("auth").workspaceId, c.req.valid("query"))) }, 200));

  app.openapi(rows, async (c) => {
    const { dataset_id } = c.req.valid("param");
    return c.json({ success: true as const, message: "success", ...(await datasetRowsPage(getDb(c.env.DB), c.get("auth").workspaceId, dataset_id, c.req.valid("query"))) }, 200);
  });

  externalIdRoutes(app, {
    entityType: "dataset_group",
    basePath: "/api/public/v2/dataset-groups",
    idParam: "dataset_group_id",
    label: "dataset group",
    tag: "datasets",
    exists: datasetGroupExists,
  });
}
