// /api/public/v2/tables: create, list (cursor paging and filters), get, update, delete.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { UuidParam } from "../../lib/schemas";
import { createBlankSheet, createTable, deleteTable, listTables, requireTable, sheetView, tableDetail, updateTable } from "../../services/tables";
import { CreateTableBody, ListTablesQuery, SheetSchema, TableDetailSchema, TableSchema, UpdateTableBody } from "./schemas";

const tags = ["smart tables"];
const TableParams = z.object({ table_id: UuidParam("table_id") });
const TableAnswer = z.object({ success: z.literal(true), table: TableDetailSchema });

const create = defineRoute({
  method: "post",
  path: "/api/public/v2/tables",
  scope: "tables:write",
  tags,
  summary: "Create a table",
  description:
    "Creates a table; unless `create_default_sheet` is false, with a blank \"Sheet 1\" (a TEXT column \"Column A\" and one empty row). " +
    "`title` defaults to a unique \"Untitled Table\" name. `folder_id` must be a folder of the workspace (404 otherwise).",
  errors: [404],
  request: { body: { required: false, content: { "application/json": { schema: CreateTableBody } } } },
  responses: {
    201: {
      description: "Created",
      content: {
        "application/json": {
          schema: z.object({ success: z.literal(true), message: z.string(), table: TableDetailSchema, default_sheet: SheetSchema.optional() }),
        },
      },
    },
  },
});

const list = defineRoute({
  method: "get",
  path: "/api/public/v2/tables",
  scope: "tables:read",
  tags,
  summary: "List tables",
  description:
    "Newest first by default. `name` is a case-insensitive contains match on the title. prompt_id / prompt_version_id / prompt_label_id keep " +
    "tables with a column that references that prompt, version or label. created_by_email and the created/updated bounds filter as on every resource list " +
    "(tables carry no external IDs, so there is no external-ID lookup). The cursor continues exactly after the last table shown, so paging " +
    "visits every table once even while tables are being added.",
  request: { query: ListTablesQuery },
  responses: {
    200: {
      description: "A page of tables",
      content: { "application/json": { schema: z.object({ data: z.array(TableSchema), next_cursor: z.string().nullable(), has_more: z.boolean() }) } },
    },
  },
});

const get = defineRoute({
  method: "get",
  path: "/api/public/v2/tables/{table_id}",
  scope: "tables:read",
  tags,
  summary: "Get a table",
  description: "The table, with each live sheet's row count.",
  errors: [404],
  request: { params: TableParams },
  responses: { 200: { description: "The table", content: { "application/json": { schema: TableAnswer } } } },
});

const patch = defineRoute({
  method: "patch",
  path: "/api/public/v2/tables/{table_id}",
  scope: "tables:write",
  tags,
  summary: "Update a table",
  description: "`title` renames; `folder_id` moves the table (null: to the root). Absent or null title: unchanged.",
  errors: [404],
  request: { params: TableParams, body: { required: true, content: { "application/json": { schema: UpdateTableBody } } } },
  responses: { 200: { description: "The updated table", content: { "application/json": { schema: TableAnswer } } } },
});

const remove = defineRoute({
  method: "delete",
  path: "/api/public/v2/tables/{table_id}",
  scope: "tables:write",
  tags,
  summary: "Delete a table",
  description: "Soft-deletes the table and its sheets: they leave every list and answer 404; a running import into them stops.",
  errors: [404],
  request: { params: TableParams },
  responses: {
    200: { description: "Deleted", content: { "application/json": { schema: z.object({ success: z.literal(true), message: z.string() }) } } },
  },
});

export function registerTableRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const db = c.var.deps.db;
    const auth = c.get("auth");
    const table = await createTable(db, auth, body);
    let defaultSheet;
    if (body.create_default_sheet !== false) {
      defaultSheet = await createBlankSheet(c.var.deps, { workspaceId: auth.workspaceId, tableId: table.id, title: "Sheet 1", index: null });
    }
    const detail = await tableDetail(db, await requireTable(db, auth.workspaceId, table.id));
    return c.json(
      { success: true as const, message: "Table created", table: detail, ...(defaultSheet ? { default_sheet: sheetView(defaultSheet) } : {}) },
      201,
    );
  });

  app.openapi(list, async (c) => {
    const q = c.req.valid("query");
    return c.json(await listTables(c.var.deps.db, c.get("auth").workspaceId, q), 200);
  });

  app.openapi(get, async (c) => {
    const db = c.var.deps.db;
    const t = await requireTable(db, c.get("auth").workspaceId, c.req.valid("param").table_id);
    return c.json({ success: true as const, table: await tableDetail(db, t) }, 200);
  });

  app.openapi(patch, async (c) => {
    const db = c.var.deps.db;
    const t = await updateTable(db, c.get("auth").workspaceId, c.req.valid("param").table_id, c.req.valid("json"));
    return c.json({ success: true as const, table: await tableDetail(db, t) }, 200);
  });

  app.openapi(remove, async (c) => {
    const sheetIds = await deleteTable(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").table_id);
    await Promise.all(sheetIds.map((id) => c.var.deps.sheet(id).markDeleted()));
    return c.json({ success: true as const, message: "Table deleted" }, 200);
  });
}
