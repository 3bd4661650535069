// Answer schemas of the dataset endpoints (the request schemas stay beside their routes, which
// share limits with the services).
import { z } from "@hono/zod-openapi";
import { DATASET_JOB_STATUSES } from "../../db/schema/datasets";
import { ExternalId } from "../external-ids/schemas";

export const DatasetGroup = z
  .object({ id: z.int(), name: z.string(), workspace_id: z.int(), folder_id: z.int().nullable(), is_deleted: z.boolean(), created_at: z.string(), updated_at: z.string() })
  .openapi("DatasetGroup");

export const Dataset = z
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

export const DatasetList = z
  .object({ success: z.literal(true), message: z.string(), datasets: z.array(Dataset), page: z.int(), per_page: z.int(), total: z.int(), pages: z.int() })
  .openapi("ListDatasetsResponse");

export const DatasetPreview = z
  .object({
    success: z.literal(true),
    message: z.string(),
    dataset_group_id: z.int(),
    total_matching: z.int().openapi({ description: "Logs of the workspace the filter (or the explicit ids) match." }),
    rows_to_add: z.int().openapi({ description: "Rows a fill would copy: total_matching bounded by limit and 50,000." }),
    columns: z.array(z.string()),
    rows: z.array(z.array(z.object({ type: z.literal("dataset"), value: z.unknown() }))),
  })
  .openapi("PreviewDatasetVersionFromFilterParamsResponse");

export const FillQueued = z
  .object({ success: z.literal(true), message: z.string(), dataset_id: z.int(), dataset_group_id: z.int(), version_number: z.int() })
  .openapi("CreateDatasetVersionFromFilterParamsResponse");

export const DraftResponse = z.object({ success: z.literal(true), message: z.string(), draft_dataset_id: z.int() }).openapi("DraftDatasetVersionResponse");
