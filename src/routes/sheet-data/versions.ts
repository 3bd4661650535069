// A sheet's saved versions: /api/public/v2/tables/{table_id}/sheets/{sheet_id}/versions. List, get one
// with its snapshot, save a named version or restore one as a new version. The sheet's object keeps
// them (sheets/versions.ts); each handler finds the sheet in D1 for the key's workspace first.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { decodeCursor, encodeCursor } from "../../lib/cursor";
import { NameText, UuidParam } from "../../lib/schemas";
import { QueryInt } from "../../lib/query";
import { unwrap } from "../../services/tables";
import { MAX_VERSION_CELLS } from "../../sheets";
import { ColumnSchema, RowSchema, SheetParams } from "./schemas";
import { sheetOf } from "./access";

const tags = ["smart tables"];
const base = "/api/public/v2/tables/{table_id}/sheets/{sheet_id}/versions";
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

export const VersionSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    sheet_id: z.string().openapi({ format: "uuid" }),
    version_number: z.int().openapi({ description: "1, 2, 3… in the order versions were saved (a restore is a new number)" }),
    name: z.string().nullable(),
    created_by: z.string().nullable().openapi({ description: "Id of the user whose key saved it" }),
    created_at: z.string(),
    metadata: z.record(z.string(), z.unknown()).openapi({
      description:
        "`sheet_version` (the sheet's version it captured), `row_count`, `column_count`, `cell_count` (stored cells), `next_row_index`, " +
        "`restored_from` ({version_id, version_number} when made by a restore, else null)",
    }),
    deltas: z.array(z.record(z.string(), z.unknown())).openapi({
      description: "What changed since the previous saved version: columns added / removed / changed (ids), rows added / removed, cells changed",
    }),
    score: z.record(z.string(), z.unknown()).openapi({ description: "The sheet's score computed at this version's content, or {} when none was" }),
    score_configuration: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi("TableSheetVersion");

const SnapshotSchema = z
  .object({
    sheet_version: z.int(),
    row_count: z.int(),
    column_count: z.int(),
    columns: z.array(ColumnSchema),
    rows: z.array(RowSchema),
    has_more_rows: z.boolean(),
    next_cursor: z.string().nullable().openapi({ description: "Pass as `cursor` to GET this version for the next rows of its snapshot" }),
  })
  .openapi("TableSheetVersionSnapshot");

const VersionWithSnapshot = VersionSchema.extend({ snapshot: SnapshotSchema });

const VersionParams = SheetParams.extend({ version_id: UuidParam("version_id") });

const ListVersionsQuery = z.object({
  cursor: z.string().optional(),
  limit: QueryInt(1, 100).default(20).openapi({ type: "integer", minimum: 1, maximum: 100, default: 20 }),
  sort: z.enum(["version_number"], { error: "must be version_number" }).default("version_number"),
  order: z.enum(["asc", "desc"], { error: "must be asc or desc" }).default("desc"),
});

const GetVersionQuery = z.object({
  cursor: z.string().optional().openapi({ description: "The snapshot's `next_cursor`, for its next rows" }),
  limit: QueryInt(1, 100).default(100).openapi({ type: "integer", minimum: 1, maximum: 100, default: 100, description: "Rows of the snapshot shown" }),
});

const CreateVersionBody = z
  .object({
    name: NameText(255).nullish(),
    source_version_id: z
      .string()
      .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "must be a UUID")
      .transform((v) => v.toLowerCase())
      .nullish()
      .openapi({ type: "string", format: "uuid" }),
  })
  .openapi("CreateTableSheetVersionRequest");

const limits =
  `A sheet is versioned up to ${MAX_VERSION_CELLS.toLocaleString("en-US")} stored cells (a save or restore copies or compares them in one step; ` +
  "over it is a 413). Versions store only what changed since the one before.";

const listVersions = defineRoute({
  method: "get",
  path: base,
  scope: "tables:read",
  tags,
  summary: "List a sheet's saved versions",
  description: "By `version_number` (newest first by default), cursor-paged (`limit` 1..100, default 20). Items carry no snapshot: GET one version for it.",
  errors: [404],
  request: { params: SheetParams, query: ListVersionsQuery },
  responses: {
    200: json(
      z.object({
        success: z.literal(true),
        data: z.array(VersionSchema),
        pagination: z.object({ next_cursor: z.string().nullable(), prev_cursor: z.null(), has_more: z.boolean(), limit: z.int() }),
        filters: z.object({}),
        count: z.int(),
      }),
      "A page of versions",
    ),
  },
});

const getVersion = defineRoute({
  method: "get",
  path: `${base}/{version_id}`,
  scope: "tables:read",
  tags,
  summary: "Get a saved version with its snapshot",
  description:
    "`snapshot` holds the version's columns and a page of its rows with their cells (`limit` rows, at most 100, fewer once their " +
    "cells hold 4 MiB); `next_cursor` pages on. Cells that were QUEUED or RUNNING when it was saved are kept STALE.",
  errors: [404],
  request: { params: VersionParams, query: GetVersionQuery },
  responses: { 200: json(z.object({ success: z.literal(true), version: VersionWithSnapshot }), "The version") },
});

const createVersion = defineRoute({
  method: "post",
  path: base,
  scope: "tables:write",
  tags,
  summary: "Save a named version, or restore one",
  description:
    "With `name` alone: saves the sheet's columns, rows and cells as the next version (the sheet itself is unchanged; its " +
    "`version_count` stays). With `source_version_id`: replaces the sheet's columns, rows and cells by that version's (one new sheet " +
    "version; recalculations under way are cancelled, row indexes continue from the version's), then saves the result as the next " +
    "version, named `name` or \"Restored from version N\". `name` is required without `source_version_id`. " +
    limits,
  errors: [404, 413],
  request: { params: SheetParams, body: { required: true, content: { "application/json": { schema: CreateVersionBody } } } },
  responses: { 201: json(z.object({ success: z.literal(true), version: VersionWithSnapshot }), "Version created") },
});

function snapshotOut<S extends { has_more_rows: boolean; last_row_index: number | null }>(s: S) {
  const { last_row_index, ...rest } = s;
  return { ...rest, next_cursor: s.has_more_rows && last_row_index !== null ? encodeCursor({ o: "asc", k: last_row_index }) : null };
}

export function registerSheetVersionRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listVersions, async (c) => {
    const p = c.req.valid("param");
    const q = c.req.valid("query");
    const after = q.cursor === undefined ? null : decodeCursor(q.cursor, q.order).k;
    const { stub, access } = await sheetOf(c, p);
    const page = unwrap(await stub.versionsFor(access, { after, limit: q.limit, order: q.order }));
    const last = page.versions[page.versions.length - 1];
    return c.json(
      {
        success: true as const,
        data: page.versions,
        pagination: { next_cursor: page.has_more && last ? encodeCursor({ o: q.order, k: last.version_number }) : null, prev_cursor: null, has_more: page.has_more, limit: q.limit },
        filters: {},
        count: page.versions.length,
      },
      200,
    );
  });

  app.openapi(getVersion, async (c) => {
    const p = c.req.valid("param");
    const q = c.req.valid("query");
    const after = q.cursor === undefined ? null : decodeCursor(q.cursor, "asc").k;
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(await stub.versionFor(access, p.version_id, { after, limit: q.limit }));
    return c.json({ success: true as const, version: { ...r.version, snapshot: snapshotOut(r.snapshot) } }, 200);
  });

  app.openapi(createVersion, async (c) => {
    const p = c.req.valid("param");
    const b = c.req.valid("json");
    const { stub, access } = await sheetOf(c, p);
    const r = unwrap(
      await stub.createVersion(access, { name: b.name ?? null, sourceVersionId: b.source_version_id ?? null, createdBy: String(c.get("auth").userId) }),
    );
    return c.json({ success: true as const, version: { ...r.version, snapshot: snapshotOut(r.snapshot) } }, 201);
  });
}
