// /api/public/v2/tables/{table_id}/sheets: create (blank 201, or import 202 with the file streamed
// to R2), list, get, update, delete; the import operation polling endpoint; imports into a sheet (imports.ts).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { receiveUpload } from "../../http/file-upload";
import { assertScope } from "../../http/middleware";
import { ApiError } from "../../lib/errors";
import { defineRoute, defineStreamingRoute, type StreamingRouteOptions } from "../../http/openapi";
import { UuidParam } from "../../lib/schemas";
import { validationError } from "../../lib/validation";
import { createBlankSheet, createFileImport, createRequestLogImport, deleteSheet, findOperation, listSheets, operationView, requireSheet, requireTable, sheetView, updateSheet } from "../../services/tables";
import { CreateSheetBody, ListSheetsQuery, OperationSchema, SheetSchema, UpdateSheetBody } from "../tables/schemas";
import { registerSheetImportRoutes } from "./imports";

const tags = ["smart tables"];
const TableParams = z.object({ table_id: UuidParam("table_id") });
const SheetParams = z.object({ table_id: UuidParam("table_id"), sheet_id: UuidParam("sheet_id") });
const OperationParams = z.object({
  table_id: UuidParam("table_id"),
  operation_id: z.string().min(1).max(255).openapi({ param: { name: "operation_id", in: "path" } }),
});

const ImportAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  operation_id: z.string(),
  operation: OperationSchema,
  sheet: SheetSchema,
});

const createSheet = {
  method: "post",
  path: "/api/public/v2/tables/{table_id}/sheets",
  scope: "tables:write",
  tags,
  summary: "Create a sheet (blank, or imported from a file)",
  description:
    "Without `source`: a blank sheet (a TEXT column \"Column A\", one empty row), 201. With `source` `file`: the base64 CSV or JSON file " +
    "(at most IMPORT_MAX_FILE_BYTES, 100 MiB, decoded) is streamed to storage and imported by a background job, 202; poll the operation. " +
    "`index` places the sheet (0-based; others shift; past the end appends). `operation_id` is an idempotency key: the same id again " +
    "answers the first import and creates nothing. A file whose content cannot be imported (bad base64, empty, not CSV/JSON) gives a " +
    "`failed` operation with `error_message`. With `source` `request_logs`: the workspace's logs matching request_log_ids (which win), or " +
    "prompt_id, prompt_version_id and the start_time..end_time range of request_start_time; one row per log, columns from its input " +
    "variables and fields; it copies the logs' contents, so the key needs `logs:read` as well (403 naming it otherwise).",
  errors: [404, 409],
  request: { params: TableParams, body: { required: true, content: { "application/json": { schema: CreateSheetBody } } } },
  responses: {
    201: { description: "Blank sheet created", content: { "application/json": { schema: z.object({ success: z.literal(true), sheet: SheetSchema }) } } },
    202: { description: "Import accepted", content: { "application/json": { schema: ImportAnswer } } },
  },
} satisfies StreamingRouteOptions;

const listRoute = defineRoute({
  method: "get",
  path: "/api/public/v2/tables/{table_id}/sheets",
  scope: "tables:read",
  tags,
  summary: "List a table's sheets",
  description: "By display position (`order` asc by default). prompt_* filters keep sheets with a column referencing that prompt, version or label.",
  errors: [404],
  request: { params: TableParams, query: ListSheetsQuery },
  responses: {
    200: {
      description: "A page of sheets",
      content: { "application/json": { schema: z.object({ data: z.array(SheetSchema), next_cursor: z.string().nullable(), has_more: z.boolean() }) } },
    },
  },
});

const SheetAnswer = z.object({ success: z.literal(true), sheet: SheetSchema });

const getRoute = defineRoute({
  method: "get",
  path: "/api/public/v2/tables/{table_id}/sheets/{sheet_id}",
  scope: "tables:read",
  tags,
  summary: "Get a sheet",
  description: "row_count and version_count are read from the sheet itself, so they are exact at that moment.",
  errors: [404],
  request: { params: SheetParams },
  responses: { 200: { description: "The sheet", content: { "application/json": { schema: SheetAnswer } } } },
});

const patchRoute = defineRoute({
  method: "patch",
  path: "/api/public/v2/tables/{table_id}/sheets/{sheet_id}",
  scope: "tables:write",
  tags,
  summary: "Update a sheet",
  description: "`title` renames; `index` moves the sheet (0-based; the others shift; past the end moves it last).",
  errors: [404],
  request: { params: SheetParams, body: { required: true, content: { "application/json": { schema: UpdateSheetBody } } } },
  responses: {
    200: { description: "The updated sheet", content: { "application/json": { schema: SheetAnswer.extend({ version: z.int() }) } } },
  },
});

const deleteRoute = defineRoute({
  method: "delete",
  path: "/api/public/v2/tables/{table_id}/sheets/{sheet_id}",
  scope: "tables:write",
  tags,
  summary: "Delete a sheet",
  description: "Soft delete: the sheet leaves lists, the later sheets move up one place, and a running import into it stops.",
  errors: [404],
  request: { params: SheetParams },
  responses: {
    200: { description: "Deleted", content: { "application/json": { schema: z.object({ success: z.literal(true), message: z.string() }) } } },
  },
});

const operationRoute = defineRoute({
  method: "get",
  path: "/api/public/v2/tables/{table_id}/sheets/operations/{operation_id}",
  scope: "tables:read",
  tags,
  summary: "Poll a sheet import",
  description: "status moves pending → running → completed | failed; progress is 0..100; a failed import has error_message.",
  errors: [404],
  request: { params: OperationParams },
  responses: {
    200: { description: "The operation", content: { "application/json": { schema: z.object({ success: z.literal(true), operation: OperationSchema }) } } },
  },
});

export function registerSheetRoutes(app: OpenAPIHono<AppEnv>) {
  // Registered first: "operations" must not be read as a sheet id.
  app.openapi(operationRoute, async (c) => {
    const { table_id, operation_id } = c.req.valid("param");
    const db = c.var.deps.db;
    const ws = c.get("auth").workspaceId;
    await requireTable(db, ws, table_id);
    const op = await findOperation(db, ws, operation_id);
    if (!op || op.tableId !== table_id) throw ApiError.notFound("operation");
    return c.json({ success: true as const, operation: operationView(op) }, 200);
  });

  // The body is read as a stream (a 100 MiB file must never be held whole), so it is validated by
  // hand after streaming, not by the JSON validator.
  defineStreamingRoute(app, createSheet, async (c, { table_id: tableId }) => {
    const db = c.var.deps.db;
    const auth = c.get("auth");
    await requireTable(db, auth.workspaceId, tableId);

    const received = await receiveUpload(c, `imports/${auth.workspaceId}/${crypto.randomUUID()}`, ["source", "file_content_base64"]);
    const dropBlob = () => (received.file?.blobKey ? c.var.deps.blobs.delete(received.file.blobKey) : Promise.resolve());
    const input = received.fields;
    const parsed = CreateSheetBody.safeParse(input);
    if (!parsed.success) {
      await dropBlob();
      throw validationError(parsed.error.issues, { target: "json", data: input });
    }
    const body = parsed.data;

    if (!body.source) {
      if (body.operation_id != null) {
        throw new ApiError("validation_error", "operation_id: is only allowed with a source (it makes an import idempotent)");
      }
      const sheet = await createBlankSheet(c.var.deps, { workspaceId: auth.workspaceId, tableId, title: body.title ?? null, index: body.index ?? null });
      return c.json({ success: true as const, sheet: sheetView(sheet) }, 201);
    }
    let created;
    if (body.source.type === "request_logs") {
      await dropBlob();
      // The logs' contents are copied into the sheet: reading them takes logs:read.
      assertScope(c, "logs:read", 'with source "request_logs"');
      const { type: _type, ...filters } = body.source;
      created = await createRequestLogImport(c.var.deps, auth, tableId, {
        title: body.title ?? null,
        index: body.index ?? null,
        operationId: body.operation_id ?? null,
        source: filters,
      });
    } else {
      created = await createFileImport(c.var.deps, auth, tableId, {
        title: body.title ?? null,
        index: body.index ?? null,
        operationId: body.operation_id ?? null,
        fileName: body.source.file_name,
        file: received.file ?? { blobKey: null, bytes: 0, error: null },
      });
    }
    return c.json(
      {
        success: true as const,
        message: created.replay ? "Import already created with this operation_id" : "Import started",
        operation_id: created.operation.id,
        operation: operationView(created.operation),
        sheet: sheetView(created.sheet),
      },
      202,
    );
  });

  app.openapi(listRoute, async (c) => {
    const { table_id } = c.req.valid("param");
    const db = c.var.deps.db;
    const ws = c.get("auth").workspaceId;
    await requireTable(db, ws, table_id);
    return c.json(await listSheets(db, ws, table_id, c.req.valid("query")), 200);
  });

  app.openapi(getRoute, async (c) => {
    const { table_id, sheet_id } = c.req.valid("param");
    const db = c.var.deps.db;
    const sheet = await requireSheet(db, c.get("auth").workspaceId, table_id, sheet_id);
    const stats = await c.var.deps.sheet(sheet.id).stats();
    return c.json({ success: true as const, sheet: sheetView(sheet, stats) }, 200);
  });

  app.openapi(patchRoute, async (c) => {
    const { table_id, sheet_id } = c.req.valid("param");
    const db = c.var.deps.db;
    const sheet = await updateSheet(db, c.get("auth").workspaceId, table_id, sheet_id, c.req.valid("json"));
    const stats = await c.var.deps.sheet(sheet.id).stats();
    return c.json({ success: true as const, sheet: sheetView(sheet, stats), version: stats.versionCount }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { table_id, sheet_id } = c.req.valid("param");
    await deleteSheet(c.var.deps.db, c.get("auth").workspaceId, table_id, sheet_id);
    await c.var.deps.sheet(sheet_id).markDeleted();
    return c.json({ success: true as const, message: "Sheet deleted" }, 200);
  });

  registerSheetImportRoutes(app);
}
