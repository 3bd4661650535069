// A sheet's contents: /api/public/v2/tables/{table_id}/sheets/{sheet_id}/ columns, rows, cells,
// recalculations and operations. Every handler checks the sheet in D1 (workspace scoped) and then
// asks the sheet's Durable Object, the single writer of its contents.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { decodeCursor, encodeCursor } from "../../lib/cursor";
import { ApiError } from "../../lib/errors";
import { defineRoute } from "../../http/openapi";
import { ErrorSchema } from "../../lib/schemas";
import { unwrap } from "../../services/tables";
import {
  AddRowsBody,
  CellParams,
  CellSchema,
  ColumnParams,
  ColumnSchema,
  CreateColumnBody,
  CreateOperationBody,
  DeleteRowsBody,
  DELETE_ROWS_MAX,
  ListColumnsQuery,
  ListRowsQuery,
  RecalculateCellsBody,
  RowSchema,
  SheetOperationParams,
  SheetOperationSchema,
  SheetParams,
  UpdateCellBody,
  UpdateColumnBody,
} from "./schemas";
import { sheetOf } from "./access";

const tags = ["smart tables"];
const base = "/api/public/v2/tables/{table_id}/sheets/{sheet_id}";
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const body = <T extends z.ZodType>(schema: T, required = true) => ({ required, content: { "application/json": { schema } } });

const listColumns = defineRoute({
  method: "get",
  path: `${base}/columns`,
  scope: "tables:read",
  tags,
  summary: "List a sheet's columns",
  description: "In display order (position_rank). `dependencies` lists the columns given as dependencies; the titles a config reads are in its config.",
  errors: [404],
  request: { params: SheetParams, query: ListColumnsQuery },
  responses: { 200: json(z.object({ data: z.array(ColumnSchema), next_cursor: z.string().nullable(), has_more: z.boolean() }), "A page of columns") },
});

const createColumn = defineRoute({
  method: "post",
  path: `${base}/columns`,
  scope: "tables:write",
  tags,
  summary: "Add a column",
  description:
    "`type` TEXT, or a block type that computes; `config` is checked against that block's schema. `dependencies` name columns by id or " +
    "by title; the titles a config reads (sources…) must be columns of the sheet too. A computed column's cells start STALE. " +
    "A title already used gets a suffix (\"x (2)\"). `cells`: the new column's cells of the first 100 rows.",
  errors: [404],
  request: { params: SheetParams, body: body(CreateColumnBody) },
  responses: {
    201: json(
      z.object({ success: z.literal(true), column: ColumnSchema, cells: z.array(CellSchema), version: z.int(), stale_count: z.int() }),
      "Created",
    ),
  },
});

const updateColumn = defineRoute({
  method: "patch",
  path: `${base}/columns/{column_id}`,
  scope: "tables:write",
  tags,
  summary: "Update a column",
  description:
    "`title`, `config`, `dependencies`, `is_output_column`, `position_rank`. A new config or dependencies marks the column's cells and every " +
    "cell downstream STALE (`stale_count`, `affected_column_ids`); a change that would make the column graph cyclic is a 400. `type` " +
    "cannot change. A column another column's config reads by title cannot be renamed until that config changes.",
  errors: [404, 409],
  request: { params: ColumnParams, body: body(UpdateColumnBody) },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        column: ColumnSchema,
        requires_recalculation: z.boolean(),
        affected_column_ids: z.array(z.string()),
        stale_count: z.int(),
        version: z.int(),
      }),
      "Updated",
    ),
  },
});

const deleteColumn = defineRoute({
  method: "delete",
  path: `${base}/columns/{column_id}`,
  scope: "tables:write",
  tags,
  summary: "Delete a column",
  description: "Deletes the column and its cells; every cell downstream becomes STALE (`stale_count`). One new sheet version.",
  errors: [404],
  request: { params: ColumnParams },
  responses: { 200: json(z.object({ success: z.literal(true), message: z.string(), stale_count: z.int(), version: z.int() }), "Deleted") },
});

const addRows = defineRoute({
  method: "post",
  path: `${base}/rows`,
  scope: "tables:write",
  tags,
  summary: "Append rows",
  description:
    "`count` 1..100 (default 1, or the number of `values` when only values are given); `values` one map of column_id → value per row, " +
    "for TEXT columns only (a computed column's id is a 400); more values than count is a 400. Text values are set at once (strings as " +
    "they are, other JSON values kept in `value` with their JSON text as `display_value`); computed cells are created STALE. A sheet " +
    "without columns is a 400.",
  errors: [404],
  request: { params: SheetParams, body: body(AddRowsBody, false) },
  responses: {
    201: json(
      z.object({
        success: z.literal(true),
        rows_created: z.int(),
        start_row_index: z.int(),
        row_indices: z.array(z.int()),
        rows: z.array(RowSchema),
        cell_count: z.int(),
        row_count: z.int(),
        version: z.int(),
      }),
      "Rows appended",
    ),
  },
});

const listRows = defineRoute({
  method: "get",
  path: `${base}/rows`,
  scope: "tables:read",
  tags,
  summary: "Page through rows with their cells",
  description: "By row_index (`order` asc by default), `limit` 1..100 (default 100), opaque `cursor`. `include_columns=true` adds the columns.",
  errors: [404],
  request: { params: SheetParams, query: ListRowsQuery },
  responses: {
    200: json(
      z.object({
        data: z.array(RowSchema),
        next_cursor: z.string().nullable(),
        has_more: z.boolean(),
        row_count: z.int(),
        version: z.int(),
        columns: z.array(ColumnSchema).optional(),
      }),
      "A page of rows",
    ),
  },
});

const deleteRows = defineRoute({
  method: "delete",
  path: `${base}/rows`,
  scope: "tables:write",
  tags,
  summary: "Delete rows",
  description:
    `\`row_indices\` (1 to ${DELETE_ROWS_MAX}) name the rows to delete; the rows and all their cells go in one change (one sheet version). ` +
    "The other rows keep their row_index (and their cells their ids): indexes are never reused, so a sheet's rows may have gaps. An index " +
    "the sheet has no row for is a 404 naming it, and nothing is deleted.",
  errors: [404],
  request: { params: SheetParams, body: body(DeleteRowsBody) },
  responses: {
    200: json(
      z.object({ success: z.literal(true), deleted_count: z.int(), row_indices: z.array(z.int()), row_count: z.int(), version: z.int() }).openapi("DeleteRowsResponse"),
      "Rows deleted",
    ),
  },
});

const getCell = defineRoute({
  method: "get",
  path: `${base}/cells/{cell_id}`,
  scope: "tables:read",
  tags,
  summary: "Get a cell",
  errors: [404],
  request: { params: CellParams },
  responses: { 200: json(z.object({ success: z.literal(true), cell: CellSchema }), "The cell") },
});

const updateCell = defineRoute({
  method: "patch",
  path: `${base}/cells/{cell_id}`,
  scope: "tables:write",
  tags,
  summary: "Edit a text cell",
  description:
    "Only cells of TEXT columns (others: 400). `display_value` alone sets the text; `value` alone sets a structured value (its text " +
    "becomes the display); both keep both; null and no value empties the cell. Every cell downstream of it in the same row, " +
    "transitively, becomes STALE: `stale_count` counts the cells newly marked. One new sheet version.",
  errors: [404],
  request: { params: CellParams, body: body(UpdateCellBody) },
  responses: { 200: json(z.object({ success: z.literal(true), cell: CellSchema, version: z.int(), stale_count: z.int() }), "Edited") },
});

const NothingToDo = json(ErrorSchema, "no_cells_to_recalculate: the error shape, with status 200");

const recalcCell = defineRoute({
  method: "post",
  path: `${base}/cells/{cell_id}/recalculations`,
  scope: "tables:write",
  tags,
  summary: "Recalculate a cell",
  description:
    "Queues the cell and the STALE cells it reads (transitively, same row), computed in dependency order off the request. " +
    "QUEUED → RUNNING → COMPLETED | FAILED (`error`). A text cell, or one already queued or running: 200 with the error shape " +
    "(`no_cells_to_recalculate`).",
  errors: [404],
  request: { params: CellParams },
  responses: {
    202: json(z.object({ success: z.literal(true), execution_id: z.string(), cell_count: z.int() }), "Queued"),
    200: NothingToDo,
  },
});

const recalcCells = defineRoute({
  method: "post",
  path: `${base}/cells/recalculations`,
  scope: "tables:write",
  tags,
  summary: "Recalculate cells",
  description: "As one cell's recalculation, for 1..1000 `cell_ids` (text cells among them are skipped; an unknown id is a 404).",
  errors: [404],
  request: { params: SheetParams, body: body(RecalculateCellsBody) },
  responses: {
    202: json(z.object({ success: z.literal(true), execution_id: z.string(), cell_count: z.int(), selected_cell_count: z.int() }), "Queued"),
    200: NothingToDo,
  },
});

const QueuedOperation = z.object({
  success: z.literal(true),
  operation: z.literal("recalculate"),
  operation_id: z.string(),
  execution_id: z.string(),
  execution_ids: z.array(z.string()),
  cell_count: z.int(),
  version: z.int(),
  status_url: z.string(),
  virtual_cell_count: z.int(),
  cells: z.array(CellSchema),
});

const createOperation = defineRoute({
  method: "post",
  path: `${base}/operations`,
  scope: "tables:write",
  tags,
  summary: "Start a recalculation operation",
  description:
    "Recalculates the computed cells of `column_ids` (default: every computed column) in `row_ids` (row indexes; default: all rows) whose " +
    "status is in `statuses` (default: any; cells already QUEUED or RUNNING are left to their operation), plus the STALE cells they read. " +
    "202 with the operation (`cells`: the first 100 queued); nothing to do: 200 with `cell_count` 0.",
  errors: [404],
  request: { params: SheetParams, body: body(CreateOperationBody) },
  responses: {
    202: json(QueuedOperation, "Queued"),
    200: json(z.object({ success: z.literal(true), cell_count: z.literal(0), virtual_cell_count: z.int(), cells: z.array(CellSchema) }), "Nothing to recalculate"),
  },
});

const listOperations = defineRoute({
  method: "get",
  path: `${base}/operations`,
  scope: "tables:read",
  tags,
  summary: "Cell status counts and running operations",
  description: "`status_counts` over every cell of the sheet (text cells count as COMPLETED); `active_operations` those with cells still queued or running.",
  errors: [404],
  request: { params: SheetParams },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        sheet_id: z.string(),
        version: z.int(),
        total_cells: z.int(),
        status_counts: z.record(z.string(), z.int()),
        pending_count: z.int(),
        active_operations: z.array(SheetOperationSchema),
      }),
      "Summary",
    ),
  },
});

const statusCounts = defineRoute({
  method: "get",
  path: `${base}/status-counts`,
  scope: "tables:read",
  tags,
  summary: "Cell status counts",
  description:
    "How many of the sheet's cells are in each status (`STALE`, `QUEUED`, `RUNNING`, `COMPLETED`, `FAILED`; text cells count as COMPLETED) " +
    "and `total_cells` (rows × columns): what the SDKs poll while an evaluation's cells compute. GET …/operations answers the same counts with " +
    "the operations still running.",
  errors: [404],
  request: { params: SheetParams },
  responses: {
    200: json(
      z.object({ success: z.literal(true), sheet_id: z.string(), version: z.int(), total_cells: z.int(), status_counts: z.record(z.string(), z.int()) }).openapi("SheetStatusCounts"),
      "The counts",
    ),
  },
});

const getOperation = defineRoute({
  method: "get",
  path: `${base}/operations/{operation_id}`,
  scope: "tables:read",
  tags,
  summary: "Follow a recalculation",
  description: "`operation_id` is also the `execution_id` of a cell or batch recalculation. status queued → running → completed, or cancelled.",
  errors: [404],
  request: { params: SheetOperationParams },
  responses: { 200: json(z.object({ success: z.literal(true), operation: SheetOperationSchema }), "The operation") },
});

const cancelOperation = defineRoute({
  method: "delete",
  path: `${base}/operations/{operation_id}`,
  scope: "tables:write",
  tags,
  summary: "Cancel a recalculation",
  description: "Its queued and running cells go back to STALE (a running cell's result is dropped). A finished operation: 200 with counts 0.",
  errors: [404],
  request: { params: SheetOperationParams },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        message: z.string(),
        operation_id: z.string(),
        execution_ids: z.array(z.string()),
        cancelled_cell_count: z.int(),
        not_started_reset_count: z.int(),
        running_invalidated_count: z.int(),
        version: z.int(),
      }),
      "Cancelled",
    ),
  },
});

export function registerSheetDataRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listColumns, async (c) => {
    const p = c.req.valid("param");
    const q = c.req.valid("query");
    const { stub, access } = await sheetOf(c, p);
    const cols = unwrap(await stub.columnsFor(access)).columns;
    const start = q.cursor === undefined ? 0 : decodeCursor(q.cursor, "asc").k;
    const page = cols.slice(start, start + q.limit);
    const more = start + q.limit < cols.length;
    return c.json({ data: page, next_cursor: more ? encodeCursor({ o: "asc", k: start + q.limit }) : null, has_more: more }, 200);
  });

  app.openapi(createColumn, async (c) => {
    const { stub, access } = await sheetOf(c, c.req.valid("param"));
    const r = unwrap(await stub.createColumn(access, c.req.valid("json")));
    return c.json({ success: true as const, ...r }, 201);
  });

  app.openapi(updateColumn, async (c) => {
    const p = c.req.valid("param");
    const b = c.req.valid("json");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(
      await stub.updateColumn(access, p.column_id, {
        title: b.title,
        type: b.type,
        is_output_column: b.is_output_column,
        position_rank: b.position_rank,
        // null and absent both mean "unchanged" for config and dependencies, except an explicit [] which clears.
        ...(b.config != null ? { config: b.config } : {}),
        ...(b.dependencies != null ? { dependencies: b.dependencies } : {}),
      }),
    );
    return c.json({ success: true as const, ...r }, 200);
  });

  app.openapi(deleteColumn, async (c) => {
    const p = c.req.valid("param");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.deleteColumn(access, p.column_id));
    return c.json({ success: true as const, message: "Column deleted", ...r }, 200);
  });

  app.openapi(addRows, async (c) => {
    const p = c.req.valid("param");
    const b = (c.req.valid("json") as z.infer<typeof AddRowsBody> | undefined) ?? {};
    const values = b.values ?? null;
    const count = b.count ?? (values && values.length > 0 ? values.length : 1);
    if (values && values.length > count) {
      throw new ApiError("validation_error", `values: has ${values.length} elements, more than count (${count}); give one map per row`);
    }
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.addRows(access, { count, values }));
    return c.json({ success: true as const, ...r }, 201);
  });

  app.openapi(deleteRows, async (c) => {
    const p = c.req.valid("param");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.deleteRows(access, c.req.valid("json").row_indices));
    return c.json({ success: true as const, ...r }, 200);
  });

  app.openapi(listRows, async (c) => {
    const p = c.req.valid("param");
    const q = c.req.valid("query");
    const after = q.cursor === undefined ? null : decodeCursor(q.cursor, q.order).k;
    const { stub, access } = await sheetOf(c, p);
    const page = unwrap(await stub.rowsFor(access, { after, limit: q.limit, order: q.order, withColumns: q.include_columns === true }));
    const last = page.rows[page.rows.length - 1];
    return c.json(
      {
        data: page.rows,
        next_cursor: page.hasMore && last ? encodeCursor({ o: q.order, k: last.row_index }) : null,
        has_more: page.hasMore,
        row_count: page.rowCount,
        version: page.version,
        ...(page.columns ? { columns: page.columns } : {}),
      },
      200,
    );
  });

  app.openapi(getCell, async (c) => {
    const p = c.req.valid("param");
    const { stub, access } = await sheetOf(c, p);
    const { cell } = unwrap(await stub.cellFor(access, p.cell_id));
    return c.json({ success: true as const, cell }, 200);
  });

  app.openapi(updateCell, async (c) => {
    const p = c.req.valid("param");
    const { stub, access } = await sheetOf(c, p);
    const t0 = Date.now();
    const r = unwrap(await stub.updateCell(access, p.cell_id, c.req.valid("json")));
    // The sheet object's share of the edit (its transaction and stale propagation, with the call to it).
    c.header("Server-Timing", `sheet;dur=${Date.now() - t0}`);
    return c.json({ success: true as const, ...r }, 200);
  });

  app.openapi(recalcCell, async (c) => {
    const p = c.req.valid("param");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.recalculate(access, { kind: "cells", cellIds: [p.cell_id], single: true }));
    if (r.cell_count === 0) throw new ApiError("no_cells_to_recalculate", "No cells to recalculate: the cell is a text cell, or is already queued or running");
    return c.json({ success: true as const, execution_id: r.execution_id!, cell_count: r.cell_count }, 202);
  });

  app.openapi(recalcCells, async (c) => {
    const p = c.req.valid("param");
    const ids = c.req.valid("json").cell_ids.map((id) => id.toLowerCase());
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.recalculate(access, { kind: "cells", cellIds: ids }));
    if (r.cell_count === 0) throw new ApiError("no_cells_to_recalculate", "No cells to recalculate: the cells are text cells, or are already queued or running");
    return c.json({ success: true as const, execution_id: r.execution_id!, cell_count: r.cell_count, selected_cell_count: r.selected_cell_count }, 202);
  });

  app.openapi(createOperation, async (c) => {
    const p = c.req.valid("param");
    const b = c.req.valid("json");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.recalculate(access, { kind: "filter", columnIds: b.column_ids, rowIds: b.row_ids, statuses: b.statuses }));
    if (r.cell_count === 0) return c.json({ success: true as const, cell_count: 0 as const, virtual_cell_count: 0, cells: [] }, 200);
    const id = r.execution_id!;
    return c.json(
      {
        success: true as const,
        operation: "recalculate" as const,
        operation_id: id,
        execution_id: id,
        execution_ids: [id],
        cell_count: r.cell_count,
        version: r.version,
        status_url: `/api/public/v2/tables/${p.table_id}/sheets/${p.sheet_id}/operations/${id}`,
        virtual_cell_count: 0,
        cells: r.cells,
      },
      202,
    );
  });

  app.openapi(listOperations, async (c) => {
    const { stub, access } = await sheetOf(c, c.req.valid("param"));
    const summary = unwrap(await stub.operationsFor(access));
    return c.json({ success: true as const, ...summary }, 200);
  });

  app.openapi(statusCounts, async (c) => {
    const { stub, access } = await sheetOf(c, c.req.valid("param"));
    const { sheet_id, version, total_cells, status_counts } = unwrap(await stub.operationsFor(access));
    return c.json({ success: true as const, sheet_id, version, total_cells, status_counts }, 200);
  });

  app.openapi(getOperation, async (c) => {
    const p = c.req.valid("param");
    const { stub, access } = await sheetOf(c, p);
    const { operation } = unwrap(await stub.operationFor(access, p.operation_id));
    return c.json({ success: true as const, operation }, 200);
  });

  app.openapi(cancelOperation, async (c) => {
    const p = c.req.valid("param");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.cancelOperation(access, p.operation_id));
    return c.json({ success: true as const, ...r }, 200);
  });
}
