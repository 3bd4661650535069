// Datasets: groups, drafts filled on the queue (from request logs or a file), saved versions, listing and rows.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertRoomForJob } from "../../services/workspace";
import type { AppEnv, Deps } from "../../env";
import { receiveUpload } from "../../http/file-upload";
import { validationError } from "../../lib/validation";
import { addRequestLog, createDatasetGroup, createDraft, datasetGroupExists, datasetRowsPage, listDatasets, markFillFailed, MAX_COLUMN_NAME_CHARS, MAX_FILE_COLUMNS, MAX_LOGS_PER_JOB, MAX_ROW_BYTES, previewFill, queueDraftFill, queueFileFill, saveDraft } from "../../services/datasets";
import { FilterGroupSchema } from "../../filters";
import { defineRoute, defineStreamingRoute, type StreamingRouteOptions } from "../../http/openapi";
import { QueryInt, ResourceListShape } from "../../lib/query";
import { NameText, IdParam } from "../../lib/schemas";
import { enqueue } from "../../lib/jobs";
import { requireOwnWorkspace } from "../../http/workspace";
import { externalIdRoutes } from "../external-ids";
import { ExternalId, ExternalIdLookupShape, ExternalIdsInput } from "../external-ids/schemas";
import { Dataset, DatasetGroup, DatasetList, DatasetPreview, DraftResponse, FillQueued } from "./schemas";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const body = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const tags = ["datasets"];
const PositiveId = z.int("must be an integer").positive("must be a positive integer");



const createGroup = defineRoute({
  method: "post",
  path: "/api/public/v2/dataset-groups",
  scope: "datasets:write",
  tags,
  summary: "Create a dataset group",
  description: "name is unique per workspace (409). Creates the group's empty draft (version_number -1).",
  errors: [404, 409],
  request: {
    body: body(
      z
        .object({
          name: NameText(255),
          folder_id: PositiveId.nullish(),
          external_ids: ExternalIdsInput,
          workspace_id: z.int("must be an integer").nullish().openapi({ description: "The key's own workspace (another is a 404)." }),
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
      .openapi({ description: "Columns of the dataset: request fields (the field names of the request log) or input variable names." }),
    limit: z.int("must be an integer").min(1, "must be >= 1").nullish(),
  })
  .openapi("CreateDatasetVersionFromFilterParamsRequest");

const fromFilterParams = defineRoute({
  method: "post",
  path: "/api/public/v2/dataset-versions/from-filter-params",
  scope: "datasets:write",
  alsoScope: "logs:read",
  tags,
  summary: "Fill the group's draft from request logs",
  description: `Answers at once; a queued job copies at most ${MAX_LOGS_PER_JOB} logs into the draft (created when missing), replacing its earlier rows.`,
  errors: [404],
  request: { body: body(FromFilterParamsBody) },
  responses: {
    201: json(FillQueued, "Queued"),
  },
});

const FromFileBody = z
  .object({
    dataset_group_id: PositiveId.openapi({ description: "The group whose draft receives the file's rows (another workspace's is a 404)." }),
    file_name: z
      .string()
      .min(1, "must not be empty")
      .max(255, "must be at most 255 characters")
      // Spelled without the i flag, so the pattern reads the same in /openapi.json.
      .regex(/\.([cC][sS][vV]|[jJ][sS][oO][nN])$/, "must end in .csv or .json")
      .openapi({ description: "Its extension (.csv or .json, any case) says how the file is read." }),
    file_content_base64: z.string().min(1, "must not be empty").openapi({ description: "The file, base64-encoded; at most IMPORT_MAX_FILE_BYTES (100 MiB) decoded, streamed, never buffered." }),
  })
  .openapi("CreateDatasetVersionFromFileRequest");

/** What the streamed body holds once read: the file field is "" (its bytes are in R2). */
const FromFileFields = FromFileBody.extend({ file_content_base64: z.string() });

const fromFile = {
  method: "post",
  path: "/api/public/v2/dataset-versions/from-file",
  scope: "datasets:write",
  tags,
  summary: "Fill the group's draft from a CSV or JSON file",
  description:
    "The file is streamed to storage and read whole before the answer, so a bad one is refused with nothing queued: bad base64, " +
    "an empty file or one without rows, text that is not UTF-8, or a CSV/JSON error (the message names the line) is a 400; a file over " +
    `IMPORT_MAX_FILE_BYTES, or a row over ${MAX_ROW_BYTES} bytes as JSON, a 413. A CSV's first row names the columns (each named, ` +
    `unique, at most ${MAX_COLUMN_NAME_CHARS} characters, at most ${MAX_FILE_COLUMNS}); a row with more fields than the header is a 400, ` +
    "one with fewer leaves the rest null; cells are text. A JSON file is an array of objects: the columns are the keys in the order they " +
    "first appear, values are kept as they are. Then, as from-filter-params, the draft (created when missing) gets a queued job that " +
    "replaces its rows with the file's, in file order; dataset_id is the draft, version_number -1.",
  errors: [404],
  request: { body: body(FromFileBody) },
  responses: {
    201: json(
      z
        .object({
          success: z.literal(true),
          message: z.string(),
          dataset_id: z.int().openapi({ description: "The draft the queued job fills." }),
          dataset_group_id: z.int(),
          version_number: z.int().openapi({ description: "-1: the draft" }),
        })
        .openapi("CreateDatasetVersionFromFileResponse"),
      "Queued",
    ),
  },
} satisfies StreamingRouteOptions;

const save = defineRoute({
  method: "post",
  path: "/api/public/v2/dataset-versions/save-draft",
  scope: "datasets:write",
  tags,
  summary: "Save the draft as the next version",
  description: "The draft becomes version max+1 at once (202 as in PromptLayer's API). 409 while its fill job is still running.",
  errors: [404, 409],
  request: { body: body(z.object({ dataset_group_id: PositiveId }).openapi("SaveDraftDatasetVersionRequest")) },
  responses: {
    202: json(z.object({ success: z.literal(true), message: z.string(), draft_dataset_id: z.int(), version_number: z.int() }), "Saved"),
  },
});


const createDraftRoute = defineRoute({
  method: "post",
  path: "/api/public/v2/dataset-versions/create-draft",
  scope: "datasets:write",
  tags,
  summary: "Create the group's draft",
  description:
    "An empty draft (201), or with source_dataset_id (a saved version of the same group) a draft whose rows a queued job copies from it (202). A group that already has a draft: 409.",
  errors: [404, 409],
  request: {
    body: body(z.object({ dataset_group_id: PositiveId, source_dataset_id: PositiveId.nullish() }).openapi("CreateDraftDatasetVersionRequest")),
  },
  responses: { 201: json(DraftResponse, "Empty draft created"), 202: json(DraftResponse, "Draft created; its rows are being copied") },
});

const addRequestLogRoute = defineRoute({
  method: "post",
  path: "/api/public/v2/dataset-versions/add-request-log",
  scope: "datasets:write",
  alsoScope: "logs:read",
  tags,
  summary: "Add a request log to the group's draft",
  description:
    "Appends the log as one row at once (the draft is created when missing), with the columns of the draft's last fill. A log already in the draft changes nothing; a draft being filled is a 409.",
  errors: [404, 409],
  request: { body: body(z.object({ dataset_group_id: PositiveId, request_log_id: PositiveId }).openapi("AddRequestLogToDatasetRequest")) },
  responses: { 201: json(DraftResponse, "Added") },
});

const previewRoute = defineRoute({
  method: "post",
  path: "/api/public/v2/dataset-versions/from-filter-params/preview",
  scope: "datasets:read",
  alsoScope: "logs:read",
  tags,
  summary: "Preview a from-filter-params call (writes nothing)",
  description:
    "The same body and validation as from-filter-params, plus preview_rows (1 to 100, default 10): how many logs match, how many a job would copy (limit and the 50,000 bound applied), and the first rows it would add.",
  errors: [404],
  request: {
    body: body(
      FromFilterParamsBody.extend({ preview_rows: z.int("must be an integer").min(1, "must be from 1 to 100").max(100, "must be from 1 to 100").default(10) }).openapi(
        "PreviewDatasetVersionFromFilterParamsRequest",
      ),
    ),
  },
  responses: {
    200: json(
      DatasetPreview,
      "What a fill would add",
    ),
  },
});

const list = defineRoute({
  method: "get",
  path: "/api/public/v2/datasets",
  scope: "datasets:read",
  tags,
  summary: "List datasets",
  description: "Paged and sorted like the other lists. prompt_id, prompt_version_id and prompt_label_id keep the datasets holding a row copied from a log of that prompt (version); report_id the dataset an evaluation ran on.",
  errors: [404],
  request: {
    query: z.object({
      dataset_group_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
      prompt_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional().openapi({ description: "Datasets holding a row copied from a log of this prompt." }),
      prompt_version_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional().openapi({ description: "Datasets holding a row copied from a log of this prompt version." }),
      prompt_label_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional().openapi({ description: "As prompt_version_id, for the version the label names." }),
      report_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional().openapi({ description: "The dataset an evaluation (or its parent pipeline) runs on." }),
      workspace_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional().openapi({ description: "The key's own workspace (another is a 404)." }),
      ...ResourceListShape,
      ...ExternalIdLookupShape,
    }),
  },
  responses: {
    200: json(DatasetList, "A page of datasets"),
  },
});

const rows = defineRoute({
  method: "get",
  path: "/api/public/v2/datasets/{dataset_id}/rows",
  scope: "datasets:read",
  tags,
  summary: "Get a page of a dataset's rows",
  description: "Rows in dataset order; q keeps the rows whose values contain the text (case-insensitive).",
  errors: [404],
  request: {
    params: z.object({ dataset_id: IdParam("dataset_id") }),
    query: z.object({
      page: QueryInt(1, Number.MAX_SAFE_INTEGER).default(1),
      per_page: QueryInt(1, 100).default(10),
      q: z.string().max(1024).optional(),
      workspace_id: QueryInt(1, Number.MAX_SAFE_INTEGER).optional().openapi({ description: "The key's own workspace (another is a 404)." }),
    }),
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

/**
 * Queues a fill or copy job. A job the queue refused is FAILED at once: left QUEUED, it would hold the
 * draft busy for good (save-draft and add-request-log answer 409 while a job is queued).
 */
async function enqueueFill(deps: Deps, workspaceId: number, jobId: number): Promise<void> {
  try {
    await enqueue(deps.jobs, { v: 1, kind: "dataset_fill", workspace_id: workspaceId, job_id: jobId });
  } catch (err) {
    await markFillFailed(deps.db, workspaceId, jobId, deps.blobs).catch(() => {});
    throw err;
  }
}

export function registerDatasetRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(createGroup, async (c) => {
    const input = c.req.valid("json");
    requireOwnWorkspace(c.get("auth"), input.workspace_id);
    return c.json(await createDatasetGroup(c.var.deps.db, c.get("auth"), input), 201);
  });

  app.openapi(fromFilterParams, async (c) => {
    const auth = c.get("auth");
    await assertRoomForJob(c.var.deps.db, auth.workspaceId, "dataset_fill");
    const queued = await queueDraftFill(c.var.deps.db, auth, c.req.valid("json"));
    await enqueueFill(c.var.deps, auth.workspaceId, queued.jobId);
    return c.json(
      { success: true as const, message: "Dataset version creation queued", dataset_id: queued.datasetId, dataset_group_id: queued.datasetGroupId, version_number: -1 },
      201,
    );
  });

  // The body is read as a stream (a 100 MiB file must never be held whole), so it is validated by
  // hand after streaming, not by the JSON validator.
  defineStreamingRoute(app, fromFile, async (c) => {
    const auth = c.get("auth");
    const { deps } = c.var;
    // Before the upload: a workspace at its cap of open fills sends its file for nothing.
    await assertRoomForJob(deps.db, auth.workspaceId, "dataset_fill");
    const received = await receiveUpload(c, `dataset-files/${auth.workspaceId}/${crypto.randomUUID()}`, ["file_content_base64"]);
    const parsed = FromFileFields.safeParse(received.fields);
    if (!parsed.success) {
      if (received.file?.blobKey) await deps.blobs.delete(received.file.blobKey);
      throw validationError(parsed.error.issues, { target: "json", data: received.fields });
    }
    const queued = await queueFileFill(deps.db, deps.blobs, auth, { ...parsed.data, file: received.file });
    await enqueueFill(deps, auth.workspaceId, queued.jobId);
    return c.json(
      { success: true as const, message: "Dataset version creation job queued", dataset_id: queued.datasetId, dataset_group_id: queued.datasetGroupId, version_number: -1 },
      201,
    );
  });

  app.openapi(save, async (c) => {
    const saved = await saveDraft(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("json").dataset_group_id);
    return c.json({ success: true as const, message: "Draft dataset version saved", draft_dataset_id: saved.draftDatasetId, version_number: saved.versionNumber }, 202);
  });

  app.openapi(createDraftRoute, async (c) => {
    const auth = c.get("auth");
    const draft = await createDraft(c.var.deps.db, auth, c.req.valid("json"));
    if (!draft.queued) return c.json({ success: true as const, message: "Draft dataset version created", draft_dataset_id: draft.draftDatasetId }, 201);
    await enqueueFill(c.var.deps, auth.workspaceId, draft.jobId);
    return c.json({ success: true as const, message: "Draft created; rows are being copied from the source dataset", draft_dataset_id: draft.draftDatasetId }, 202);
  });

  app.openapi(addRequestLogRoute, async (c) => {
    const added = await addRequestLog(c.var.deps.db, await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth"), c.req.valid("json"), c.var.deps.blobs);
    const message = added.added ? "Request log added to draft dataset" : "Request log already in the draft dataset";
    return c.json({ success: true as const, message, draft_dataset_id: added.draftDatasetId }, 201);
  });

  app.openapi(previewRoute, async (c) =>
    c.json({ success: true as const, message: "Preview of the dataset version", ...(await previewFill(c.var.deps.db, await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth").workspaceId, c.req.valid("json"))) }, 200),
  );

  app.openapi(list, async (c) => {
    const q = c.req.valid("query");
    requireOwnWorkspace(c.get("auth"), q.workspace_id);
    return c.json({ success: true as const, message: "success", ...(await listDatasets(c.var.deps.db, c.get("auth").workspaceId, q)) }, 200);
  });

  app.openapi(rows, async (c) => {
    const { dataset_id } = c.req.valid("param");
    requireOwnWorkspace(c.get("auth"), c.req.valid("query").workspace_id);
    return c.json({ success: true as const, message: "success", ...(await datasetRowsPage(c.var.deps.db, c.get("auth").workspaceId, dataset_id, c.req.valid("query"))) }, 200);
  });

  externalIdRoutes(app, {
    area: "datasets",
    entityType: "dataset_group",
    basePath: "/api/public/v2/dataset-groups",
    idParam: "dataset_group_id",
    label: "dataset group",
    tag: "datasets",
    exists: datasetGroupExists,
  });
}
