// Shapes of a sheet's columns, rows, cells and recalculation operations, as PromptLayer's document names
// them; the same schemas validate requests and feed /openapi.json.
import { z } from "@hono/zod-openapi";
import { COMPUTING_BLOCK_TYPES } from "../../blocks";
import { UuidParam } from "../../lib/schemas";
import { QueryBool, QueryInt } from "../../lib/query";
import { CELL_STATUSES, jsonDepth, MAX_JSON_DEPTH } from "../../sheets";
import { Title } from "../tables/schemas";

export const SheetParams = z.object({ table_id: UuidParam("table_id"), sheet_id: UuidParam("sheet_id") });
export const ColumnParams = SheetParams.extend({ column_id: UuidParam("column_id") });
export const CellParams = SheetParams.extend({ cell_id: UuidParam("cell_id") });
export const SheetOperationParams = SheetParams.extend({
  operation_id: z.string().min(1).max(255).openapi({ param: { name: "operation_id", in: "path" } }),
});

/** Any JSON value a cell or config holds, nested at most MAX_JSON_DEPTH levels. */
const Json = z.unknown().refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, `must nest at most ${MAX_JSON_DEPTH} levels`);

const Uuid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "must be a UUID");

export const CellStatus = z.enum(CELL_STATUSES);

export const CellSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    sheet_id: z.string().openapi({ format: "uuid" }),
    column_id: z.string().openapi({ format: "uuid" }),
    row_index: z.int(),
    status: CellStatus,
    display_value: z.string().nullable(),
    value: z.unknown(),
    error: z.string().nullable(),
    input_hash: z.string().nullable().openapi({ description: "Hash of the inputs a computed cell was last computed from" }),
    execution_id: z.string().nullable(),
    last_computed_version: z.int().nullable(),
    updated_at: z.string(),
  })
  .openapi("Cell");

export const ColumnType = z
  .string()
  .min(1, "must not be empty")
  .max(64, "must be at most 64 characters")
  .openapi({ enum: ["TEXT", ...COMPUTING_BLOCK_TYPES], description: "TEXT, or a block type that computes" });

const Dependency = z.union([
  z.string().min(1).max(255),
  z.object({
    column_id: z.string().min(1, "must not be empty").max(255, "must be at most 255 characters").openapi({ description: "A column id, or a column title" }),
    reference_type: z.string().max(64).nullish(),
    config_key: z.string().max(255).nullish(),
    config_meta: z.record(z.string(), Json).nullish(),
  }),
]);

export const ColumnSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    sheet_id: z.string().openapi({ format: "uuid" }),
    workspace_id: z.int(),
    title: z.string(),
    type: z.string(),
    config: z.record(z.string(), z.unknown()),
    dependencies: z.array(z.object({ column_id: z.string(), reference_type: z.string(), config_key: z.string().nullable() })),
    position_rank: z.number(),
    is_output_column: z.boolean(),
  })
  .openapi("Column");

const Config = z.record(z.string(), Json, { error: "must be an object" });
const Dependencies = z.array(Dependency, { error: "must be an array" }).max(100, "must have at most 100 items");

export const CreateColumnBody = z
  .object({
    title: Title,
    type: ColumnType,
    config: Config.nullish(),
    dependencies: Dependencies.nullish(),
    is_output_column: z.boolean("must be a boolean").nullish(),
    position_rank: z.number("must be a number").nullish(),
  })
  .openapi("CreateColumnRequest");

export const UpdateColumnBody = z
  .object({
    title: Title.nullish(),
    type: ColumnType.nullish(),
    config: Config.nullish(),
    dependencies: Dependencies.nullish(),
    is_output_column: z.boolean("must be a boolean").nullish(),
    position_rank: z.number("must be a number").nullish(),
  })
  // A PATCH that names nothing to change would still spend a sheet version.
  .refine((b) => Object.values(b).some((v) => v !== undefined && v !== null), {
    message: "give at least one of title, type, config, dependencies, is_output_column, position_rank",
  })
  .openapi("UpdateColumnRequest");

export const ListColumnsQuery = z.object({
  cursor: z.string().optional(),
  limit: QueryInt(1, 100).default(100).openapi({ type: "integer", minimum: 1, maximum: 100, default: 100 }),
  include_system_columns: QueryBool.optional(),
});

export const RowSchema = z.object({ row_index: z.int(), cells: z.record(z.string(), CellSchema) }).openapi("SheetRow");

export const AddRowsBody = z
  .object({
    count: z.int("must be a whole number").min(1, "must be at least 1").max(100, "must be at most 100").optional(),
    values: z
      .array(z.record(z.string(), Json, { error: "each element must be an object of column_id → value" }), { error: "must be an array" })
      .max(100, "must have at most 100 items")
      .nullish(),
  })
  .openapi("AddRowsRequest");

/** At most this many rows per Delete Rows call (one transaction of the sheet's object). */
export const DELETE_ROWS_MAX = 1000;

export const DeleteRowsBody = z
  .object({
    row_indices: z
      .array(z.int("must be whole numbers").min(0, "must be 0 or more"), { error: "must be an array of row indexes" })
      .min(1, "must name at least one row")
      .max(DELETE_ROWS_MAX, `must name at most ${DELETE_ROWS_MAX} rows`)
      .openapi({ description: "The row_index of each row to delete (repeats count once)." }),
  })
  .openapi("DeleteRowsRequest");

export const ListRowsQuery = z.object({
  cursor: z.string().optional(),
  limit: QueryInt(1, 100).default(100).openapi({ type: "integer", minimum: 1, maximum: 100, default: 100 }),
  order: z.enum(["asc", "desc"], { error: "must be asc or desc" }).default("asc"),
  include_columns: QueryBool.optional(),
  include_row_count: QueryBool.optional(),
});

export const UpdateCellBody = z
  .object({
    display_value: z.string("must be a string or null").max(1_000_000).nullish(),
    value: Json.optional(),
  })
  .refine((b) => b.display_value !== undefined || b.value !== undefined, { message: "give display_value or value", path: ["display_value"] })
  .openapi("UpdateCellRequest");

export const RecalculateCellsBody = z
  .object({
    cell_ids: z.array(Uuid, { error: "must be an array of cell ids" }).min(1, "must have at least 1 item").max(1000, "must have at most 1000 items"),
  })
  .openapi("RecalculateCellsRequest");

export const CreateOperationBody = z
  .object({
    operation: z.literal("recalculate", { error: 'must be "recalculate"' }).default("recalculate"),
    column_ids: z.array(Uuid, { error: "must be an array of column ids" }).max(1000, "must have at most 1000 items").nullish(),
    row_ids: z
      .array(z.int("must be whole numbers").min(0, "must be at least 0"), { error: "must be an array of row indexes" })
      .max(10_000, "must have at most 10000 items")
      .nullish(),
    statuses: z.array(CellStatus, { error: "must be an array of cell statuses" }).max(CELL_STATUSES.length).nullish(),
    confirmation_token: z.string().max(255).nullish(),
  })
  .openapi("CreateSheetOperationRequest");

export const SheetOperationSchema = z
  .object({
    operation_id: z.string(),
    operation: z.literal("recalculate"),
    status: z.enum(["queued", "running", "completed", "cancelled"]),
    status_counts: z.record(z.string(), z.int()),
    cell_count: z.int(),
    completed_count: z.int(),
    failed_count: z.int(),
    pending_count: z.int(),
    reused_count: z.int().openapi({ description: "Completed cells whose inputs had not changed: their value was kept, not recomputed" }),
    version: z.int(),
    status_url: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("SheetOperation");
