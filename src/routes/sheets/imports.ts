// POST /api/public/v2/tables/{table_id}/sheets/{sheet_id}/imports/file and …/imports/request-logs:
// imports appended to a sheet that exists, run by the same queued job as a sheet created from a source.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { FilterGroupSchema } from "../../filters";
import { receiveUpload } from "../../http/file-upload";
import { defineRoute, defineStreamingRoute, type StreamingRouteOptions } from "../../http/openapi";
import { ApiError } from "../../lib/errors";
import { UuidParam } from "../../lib/schemas";
import { validationError } from "../../lib/validation";
import { SORT_COLUMNS, type SortBy } from "../../logs";
import { createFileImportIntoSheet, createRequestLogImportIntoSheet, LOG_FIELDS, MAX_IMPORT_COLUMNS, MAX_IMPORT_LOGS, operationView, requireSheet, type SheetImport } from "../../services/tables";
import { OperationId, OperationSchema } from "../tables/schemas";

const tags = ["smart tables"];
const SheetParams = z.object({ table_id: UuidParam("table_id"), sheet_id: UuidParam("sheet_id") });
const PositiveId = z.int("must be a whole number").positive("must be a positive integer").max(Number.MAX_SAFE_INTEGER);

const MAPPING =
  "Rows are appended after the sheet's rows. Each column of the import goes to the sheet's column of the same title (case-insensitive, " +
  "surrounding spaces ignored; each sheet column takes at most one); a title the sheet lacks becomes a new TEXT column (an empty CSV " +
  `header is named "Column C" by its place). The sheet holds at most ${MAX_IMPORT_COLUMNS} columns: an import whose new titles would ` +
  "pass that fails before its first row. A title naming a computed column is skipped, not refused: its values are not imported (a " +
  "computed column's cells are computed), its cells of the new rows are STALE as for rows added by hand, and the completed " +
  "operation's message names it. Every other computed column's new cells are STALE too. Each committed batch is one sheet version. " +
  "`operation_id` is an idempotency key: the same id again (for this sheet) answers the first import and creates nothing; an id " +
  "already used for an import into another sheet is a 409. Poll `status_url`; no webhook event is sent (the sheet_created_* events " +
  "announce new sheets).";

const StartAnswer = z
  .object({
    success: z.literal(true),
    message: z.string(),
    operation_id: z.string(),
    operation: OperationSchema,
    status_url: z.string().openapi({ description: "GET it to poll the import: /api/public/v2/tables/{table_id}/sheets/operations/{operation_id}" }),
  })
  .openapi("TableSheetImportStartResponse");

const FileImportBody = z
  .object({
    operation_id: OperationId.nullish(),
    file_name: z
      .string()
      .min(1, "must not be empty")
      .max(255, "must be at most 255 characters")
      // Spelled without the i flag, so the pattern reads the same in /openapi.json.
      .regex(/\.([cC][sS][vV]|[jJ][sS][oO][nN])$/, "must end in .csv or .json")
      .openapi({ description: "Its extension (.csv or .json, any case) says how the file is read." }),
    file_content_base64: z
      .string()
      .min(1, "must not be empty")
      .openapi({ description: "The file, base64-encoded; at most IMPORT_MAX_FILE_BYTES (100 MiB) decoded, streamed, never buffered." }),
  })
  .openapi("CreateTableSheetFileImportRequest");

/** What the streamed body holds once read: the file field is "" (its bytes are in R2). */
const FileImportFields = FileImportBody.extend({ file_content_base64: z.string() });

const fileRoute = {
  method: "post",
  path: "/api/public/v2/tables/{table_id}/sheets/{sheet_id}/imports/file",
  scope: "tables:write",
  tags,
  summary: "Import a CSV or JSON file into a sheet",
  description:
    "The file is streamed to storage and imported by a background job, 202. A file over IMPORT_MAX_FILE_BYTES is a 413 while it " +
    "streams, and an empty file or invalid base64 a 400, nothing created in either case. Content found wrong while importing (not " +
    "UTF-8, a CSV or JSON error, more than 500 columns in the file) ends the operation failed with `error_message`; the rows already " +
    "imported stay. A CSV's first row is the header; a JSON file is an array of objects (columns: the keys in first-seen order). " +
    MAPPING,
  errors: [404, 409],
  request: { params: SheetParams, body: { required: true, content: { "application/json": { schema: FileImportBody } } } },
  responses: { 202: { description: "File import queued", content: { "application/json": { schema: StartAnswer } } } },
} satisfies StreamingRouteOptions;

const VariableName = z.string().min(1, "must be 1 to 255 characters").max(255, "must be 1 to 255 characters");

const RequestLogImportBody = z
  .object({
    request_log_ids: z
      .array(PositiveId)
      .min(1, "must have at least 1 item")
      .max(MAX_IMPORT_LOGS, `must have at most ${MAX_IMPORT_LOGS} items`)
      .nullish()
      .openapi({ description: "Logs to import, in this order (repeats once); they win over filter_group. Unknown ids and other workspaces' are skipped." }),
    filter_group: FilterGroupSchema.nullish(),
    q: z.string().max(1000, "must be at most 1000 characters").nullish().openapi({ description: "Free text over input and output, as in search; narrows filter_group." }),
    sort_by: z.enum(Object.keys(SORT_COLUMNS) as [SortBy, ...SortBy[]]).nullish().openapi({ description: "Without it the logs come oldest first." }),
    sort_order: z.enum(["asc", "desc"], { error: "must be asc or desc" }).nullish().openapi({ description: "Requires sort_by. Default desc." }),
    metadata_cost_breakdown_key: z.string().max(1000).nullish().openapi({ description: "Accepted for compatibility (an analytics option); ignored." }),
    operation_id: OperationId.nullish(),
    variables_to_parse: z
      .array(VariableName)
      .max(MAX_IMPORT_COLUMNS, `must have at most ${MAX_IMPORT_COLUMNS} items`)
      .nullish()
      .openapi({ description: "Input variables made columns (null where a log lacks one). Empty or absent: every input variable the logs have." }),
    include_fields: z
      .array(z.enum(LOG_FIELDS, { error: `must be one of ${LOG_FIELDS.join(", ")}` }))
      .nullish()
      .openapi({ description: `Log fields made columns, after the variables. Absent or null: all of them; [] none.` }),
    limit: z
      .int("must be a whole number")
      .min(1, `must be 1 to ${MAX_IMPORT_LOGS}`)
      .max(MAX_IMPORT_LOGS, `must be 1 to ${MAX_IMPORT_LOGS}`)
      .nullish()
      .openapi({ description: `The most logs imported (the first in the import's order); at most ${MAX_IMPORT_LOGS}, also the default.` }),
  })
  .superRefine((b, ctx) => {
    if (b.sort_order && !b.sort_by) ctx.addIssue({ code: "custom", path: ["sort_order"], message: "requires sort_by", input: b.sort_order });
    if (!b.request_log_ids && !b.filter_group) {
      ctx.addIssue({ code: "custom", path: ["filter_group"], message: 'give request_log_ids or filter_group (an empty group, {"filters": []}, matches every log)', input: b });
    }
    const columns = new Set(b.variables_to_parse ?? []).size + new Set(b.include_fields ?? []).size;
    if (columns > MAX_IMPORT_COLUMNS) {
      ctx.addIssue({ code: "custom", path: ["variables_to_parse"], message: `with include_fields names ${columns} columns; a sheet holds at most ${MAX_IMPORT_COLUMNS}`, input: b.variables_to_parse });
    }
  })
  .openapi("CreateTableSheetRequestLogImportRequest");

const requestLogsRoute = defineRoute({
  method: "post",
  path: "/api/public/v2/tables/{table_id}/sheets/{sheet_id}/imports/request-logs",
  scope: "tables:write",
  alsoScope: "logs:read",
  tags,
  summary: "Import request logs into a sheet",
  description:
    `One row per log: request_log_ids, or the logs filter_group (and q) match, sorted by sort_by, at most limit (${MAX_IMPORT_LOGS} ` +
    "at most). The logs are fixed when the import is created (logs written later are not imported). Columns: the input variables " +
    `(variables_to_parse, or all), then the log fields (include_fields, or all: ${LOG_FIELDS.join(", ")}). ` +
    MAPPING,
  errors: [404, 409],
  request: { params: SheetParams, body: { required: true, content: { "application/json": { schema: RequestLogImportBody } } } },
  responses: { 202: { description: "Request-log import queued", content: { "application/json": { schema: StartAnswer } } } },
});

function startAnswer(tableId: string, started: SheetImport) {
  const opId = started.operation.id;
  return {
    success: true as const,
    message: started.replay ? "Import already created with this operation_id" : "Import started",
    operation_id: opId,
    operation: operationView(started.operation),
    status_url: `/api/public/v2/tables/${tableId}/sheets/operations/${encodeURIComponent(opId)}`,
  };
}

export function registerSheetImportRoutes(app: OpenAPIHono<AppEnv>) {
  // The body is read as a stream (a 100 MiB file must never be held whole), so it is validated by
  // hand after streaming, not by the JSON validator.
  defineStreamingRoute(app, fileRoute, async (c, { table_id, sheet_id }) => {
    const deps = c.var.deps;
    const auth = c.get("auth");
    const sheet = await requireSheet(deps.db, auth.workspaceId, table_id, sheet_id);

    const received = await receiveUpload(c, `imports/${auth.workspaceId}/${crypto.randomUUID()}`, ["file_content_base64"]);
    const dropBlob = () => (received.file?.blobKey ? deps.blobs.delete(received.file.blobKey) : Promise.resolve());
    const parsed = FileImportFields.safeParse(received.fields);
    if (!parsed.success) {
      await dropBlob();
      throw validationError(parsed.error.issues, { target: "json", data: received.fields });
    }
    const file = received.file;
    if (file?.error) {
      await dropBlob();
      throw new ApiError("validation_error", file.error);
    }
    if (!file?.blobKey || file.bytes === 0) {
      await dropBlob();
      throw new ApiError("validation_error", "file_content_base64: the file is empty");
    }
    const started = await createFileImportIntoSheet(deps, auth, sheet, {
      operationId: parsed.data.operation_id ?? null,
      fileName: parsed.data.file_name,
      file: { blobKey: file.blobKey, bytes: file.bytes },
    });
    return c.json(startAnswer(table_id, started), 202);
  });

  app.openapi(requestLogsRoute, async (c) => {
    const { table_id, sheet_id } = c.req.valid("param");
    const deps = c.var.deps;
    const auth = c.get("auth");
    const sheet = await requireSheet(deps.db, auth.workspaceId, table_id, sheet_id);
    const { operation_id, metadata_cost_breakdown_key: _ignored, ...query } = c.req.valid("json");
    const started = await createRequestLogImportIntoSheet(deps, auth, sheet, { operationId: operation_id ?? null, query });
    return c.json(startAnswer(table_id, started), 202);
  });
}
