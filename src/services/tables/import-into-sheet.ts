// Importing into a sheet that exists (POST …/sheets/{sheet_id}/imports/file and …/imports/request-logs):
// the same operation and run, appending after the sheet's rows; a column of the file or of the logs
// goes to the sheet's column of the same title (case-insensitive), and only titles the sheet lacks
// become TEXT columns. A title naming a computed column takes no values: that column's cells of the
// new rows are STALE, as for rows added by hand (sheets/imports.ts).
import { sql } from "drizzle-orm";
import { sheets, type SheetImportSource, type SheetOperationRow, type SheetRow } from "../../db/schema";
import type { FilterGroup } from "../../filters";
import type { AuthContext, Deps } from "../../env";
import { ApiError } from "../../lib/errors";
import { runBatch } from "../../db/batch";
import { findOperation, insertOperation, tableAlive } from "./sheets";
import { assertRoomForJob, roomForJobSql } from "../workspace";
import { fillQuery, filterSignalIds, logMark, MAX_LOGS_PER_JOB, type FillParams } from "../../logs";
import { queueImport, type IntoSheetParams } from "./import-run";
import type { LogField } from "./import-sources";

/** The most logs one import into an existing sheet reads (the bound of request_log_ids and limit). */
export const MAX_IMPORT_LOGS = MAX_LOGS_PER_JOB;

export interface SheetImport {
  operation: SheetOperationRow;
  /** True when operation_id named an import made before: nothing new was created. */
  replay: boolean;
}

interface IntoSheetInput {
  operationId: string | null;
  source: SheetImportSource;
  fileName: string | null;
  fileBytes: number | null;
  blobKey: string | null;
  params: IntoSheetParams;
}

function replayIntoSheet(op: SheetOperationRow, sheet: SheetRow): SheetImport {
  if (op.tableId !== sheet.tableId || op.sheetId !== sheet.id) {
    throw new ApiError("conflict", "operation_id: is already the id of an import into another sheet");
  }
  return { operation: op, replay: true };
}

const sheetAlive = (workspaceId: number, tableId: string, sheetId: string) =>
  sql`EXISTS (SELECT 1 FROM ${sheets} WHERE ${sheets.id} = ${sheetId} AND ${sheets.tableId} = ${tableId} AND ${sheets.workspaceId} = ${workspaceId} AND ${sheets.deletedAt} IS NULL)
      AND ${tableAlive(workspaceId, tableId)}`;

/**
 * Creates the import operation for a live sheet (the caller found it in the key's workspace and
 * table) and queues the job. The same operation_id again returns the first import when it was into
 * this sheet, and is a 409 otherwise; whatever this request stored is then dropped.
 */
async function createImportIntoSheet(deps: Deps, auth: AuthContext, sheet: SheetRow, input: IntoSheetInput): Promise<SheetImport> {
  const { db } = deps;
  const dropBlob = () => (input.blobKey ? deps.blobs.delete(input.blobKey) : Promise.resolve());
  const replay = async (op: SheetOperationRow): Promise<SheetImport> => {
    await dropBlob();
    return replayIntoSheet(op, sheet);
  };
  const opId = input.operationId ?? crypto.randomUUID();
  if (input.operationId) {
    const existing = await findOperation(db, auth.workspaceId, opId);
    if (existing) return replay(existing);
  }
  const [inserted] = await runBatch(db, [
    insertOperation(
      {
        workspaceId: auth.workspaceId, id: opId, tableId: sheet.tableId, sheetId: sheet.id, source: input.source, fileName: input.fileName,
        fileBytes: input.fileBytes, blobKey: input.blobKey, params: input.params, error: null, userId: auth.userId,
      },
      sql`${sheetAlive(auth.workspaceId, sheet.tableId, sheet.id)} AND ${roomForJobSql("sheet_import", auth.workspaceId)}`,
    ),
  ]);
  const op = await findOperation(db, auth.workspaceId, opId);
  if (!op) {
    await dropBlob();
    // The workspace has its cap of open imports, or the sheet or its table was deleted since the caller found it.
    await assertRoomForJob(db, auth.workspaceId, "sheet_import");
    throw ApiError.notFound("sheet");
  }
  // A concurrent request with the same operation_id won the insert.
  if (inserted.results.length === 0) return replay(op);
  await queueImport(deps, op);
  return { operation: op, replay: false };
}

/** A file already received into R2 (the route refuses an empty or undecodable one with a 400). */
export function createFileImportIntoSheet(
  deps: Deps,
  auth: AuthContext,
  sheet: SheetRow,
  input: { operationId: string | null; fileName: string; file: { blobKey: string; bytes: number } },
): Promise<SheetImport> {
  return createImportIntoSheet(deps, auth, sheet, {
    operationId: input.operationId,
    source: "file",
    fileName: input.fileName,
    fileBytes: input.file.bytes,
    blobKey: input.file.blobKey,
    params: { into: "existing_sheet" },
  });
}

export interface RequestLogQuery {
  request_log_ids?: number[] | null;
  filter_group?: FilterGroup | null;
  q?: string | null;
  sort_by?: FillParams["sort_by"];
  sort_order?: "asc" | "desc" | null;
  limit?: number | null;
  variables_to_parse?: string[] | null;
  include_fields?: LogField[] | null;
}

/**
 * Explicit ids (deduplicated, in the order given) win over the filter; without sort_by the logs come
 * oldest first. The logs are fixed at creation: only those up to the newest id at that moment are
 * read, so a resumed run sees the same logs in the same order.
 */
export async function createRequestLogImportIntoSheet(
  deps: Deps,
  auth: AuthContext,
  sheet: SheetRow,
  input: { operationId: string | null; query: RequestLogQuery },
): Promise<SheetImport> {
  const { db } = deps;
  const ws = auth.workspaceId;
  const q = input.query;
  if (input.operationId) {
    const existing = await findOperation(db, ws, input.operationId);
    if (existing) return replayIntoSheet(existing, sheet);
  }
  const explicit = q.request_log_ids && q.request_log_ids.length > 0 ? [...new Set(q.request_log_ids)] : null;
  const limit = q.limit ?? null;
  const maxLogId = await logMark(await deps.logs(ws), ws);
  const query: FillParams = explicit
    ? { request_log_ids: explicit, limit, max_log_id: maxLogId }
    : {
        filter_group: q.filter_group ?? null,
        q: q.q ?? null,
        sort_by: q.sort_by ?? "request_start_time",
        sort_order: q.sort_by ? (q.sort_order ?? null) : "asc",
        limit,
        max_log_id: maxLogId,
      };
  // Compiled now, so a filter too large for one D1 statement is a 400 here, not a job that cannot run.
  if (!explicit) fillQuery(ws, query, await filterSignalIds(db, ws, query.filter_group));
  const variables = q.variables_to_parse && q.variables_to_parse.length > 0 ? [...new Set(q.variables_to_parse)] : null;
  const fields = q.include_fields ? [...new Set(q.include_fields)] : null;
  return createImportIntoSheet(deps, auth, sheet, {
    operationId: input.operationId,
    source: "request_logs",
    fileName: null,
    fileBytes: null,
    blobKey: null,
    params: { into: "existing_sheet", query, variables, fields },
  });
}
