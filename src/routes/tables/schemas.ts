// Shapes of the smart-table endpoints (tables, sheets, import operations), as PromptLayer's document
// names them; the same schemas validate requests and feed /openapi.json.
import { z } from "@hono/zod-openapi";
import { Timestamp } from "../../lib/schemas";
import { QueryInt, ResourceFilterShape } from "../../lib/query";

export const Title = z.string().trim().min(1, "must not be empty").max(255, "must be at most 255 characters");
const PositiveId = z.int("must be a whole number").positive("must be a positive integer").max(Number.MAX_SAFE_INTEGER);

export const TableSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    workspace_id: z.int(),
    title: z.string(),
    folder_id: z.int().nullable(),
    sheet_count: z.int().openapi({ description: "Number of live sheets" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Table");

export const TableDetailSchema = TableSchema.extend({
  sheet_row_counts: z.record(z.string(), z.int()).openapi({ description: "sheet id → row count" }),
}).openapi("TableDetail");

export const SheetSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    table_id: z.string().openapi({ format: "uuid" }),
    workspace_id: z.int(),
    title: z.string(),
    index: z.int().openapi({ description: "0-based display position in the table" }),
    row_count: z.int(),
    version_count: z.int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Sheet");

export const OperationSchema = z
  .object({
    operation_id: z.string(),
    source: z.enum(["file", "request_logs"]),
    status: z.enum(["pending", "running", "completed", "failed"]),
    progress: z.int().openapi({ description: "0..100" }),
    message: z.string(),
    rows_added: z.int(),
    row_count: z.int(),
    file_name: z.string().nullable(),
    error_message: z.string().nullable(),
    table_id: z.string(),
    sheet_id: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("TableImportOperation");

export const CreateTableBody = z
  .object({
    title: Title.nullish(),
    folder_id: PositiveId.nullish(),
    create_default_sheet: z.boolean("must be a boolean").nullish(),
  })
  .openapi("CreateTableRequest");

export const UpdateTableBody = z
  .object({
    title: Title.nullish(),
    folder_id: PositiveId.nullish(),
  })
  .openapi("UpdateTableRequest");

export const ListTablesQuery = z.object({
  folder_id: QueryInt(1).optional(),
  name: z.string().max(255, "must be at most 255 characters").optional(),
  cursor: z.string().optional(),
  limit: QueryInt(1, 100).default(20).openapi({ type: "integer", minimum: 1, maximum: 100, default: 20 }),
  order: z.enum(["asc", "desc"], { error: "must be asc or desc" }).default("desc"),
  prompt_id: QueryInt(1).optional(),
  prompt_version_id: QueryInt(1).optional(),
  prompt_label_id: QueryInt(1).optional(),
  ...ResourceFilterShape,
});

export const ListSheetsQuery = z.object({
  cursor: z.string().optional(),
  limit: QueryInt(1, 100).default(20).openapi({ type: "integer", minimum: 1, maximum: 100, default: 20 }),
  order: z.enum(["asc", "desc"], { error: "must be asc or desc" }).default("asc"),
  prompt_id: QueryInt(1).optional(),
  prompt_version_id: QueryInt(1).optional(),
  prompt_label_id: QueryInt(1).optional(),
});

export const SheetIndex = z.int("must be a whole number").min(0, "must be at least 0").max(1_000_000, "must be at most 1000000");

/** Idempotency key of an import: printable, no spaces, so it reads back cleanly in the polling path. */
export const OperationId = z
  .string()
  .min(1, "must not be empty")
  .max(255, "must be at most 255 characters")
  .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces");

export const FileSource = z.object({
  type: z.literal("file"),
  file_name: z
    .string()
    .min(1, "must not be empty")
    .max(255, "must be at most 255 characters")
    .regex(/\.(csv|json)$/i, "must end in .csv or .json"),
  file_content_base64: z.string().openapi({ description: "Base64 of a CSV or JSON file of at most 100 MiB (streamed, never buffered)" }),
});

export const RequestLogsSource = z.object({
  type: z.literal("request_logs"),
  request_log_ids: z.array(PositiveId).max(50_000, "must have at most 50000 items").nullish(),
  prompt_id: PositiveId.nullish().openapi({ description: "Matched as logs record it (not checked against the registry): an id no log names imports nothing." }),
  prompt_version_id: PositiveId.nullish().openapi({ description: "A version of the workspace; unknown or another workspace's is a 404." }),
  prompt_label_id: PositiveId.nullish().openapi({ description: "A release label of the workspace; unknown or another workspace's is a 404." }),
  start_time: Timestamp.nullish(),
  end_time: Timestamp.nullish(),
});

export const CreateSheetBody = z
  .object({
    title: Title.nullish(),
    index: SheetIndex.nullish(),
    operation_id: OperationId.nullish(),
    source: z
      .discriminatedUnion("type", [FileSource, RequestLogsSource], {
        error: (iss) => (iss.code === "invalid_union" ? 'type must be "file" or "request_logs"' : undefined),
      })
      .nullish(),
  })
  .openapi("CreateSheetRequest");

export const UpdateSheetBody = z
  .object({
    title: Title.nullish(),
    index: SheetIndex.nullish(),
  })
  .openapi("UpdateSheetRequest");
