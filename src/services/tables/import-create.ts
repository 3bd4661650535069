// Creating a sheet import that makes its sheet (POST …/sheets/file and …/sheets/request-logs): the
// sheet and its import operation in one batch, then the queued job (import-run.ts runs it).
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sheetOperations, type SheetImportSource, type SheetOperationRow, type SheetRow } from "../../db/schema";
import type { Filter, FilterGroup } from "../../filters";
import type { AuthContext, Deps } from "../../env";
import { ApiError } from "../../lib/errors";
import { runBatch, statement } from "../../db/batch";
import { findOperation, insertOperation, insertSheetStatements, operationSheet, tableAlive } from "./sheets";
import { logMark, markFilter, type WorkspaceLogs } from "../../logs";
import { labelVersionId, versionNumberOf } from "../../prompts";
import { importEvent, queueImport } from "./import-run";
import { assertRoomForJob, roomForJobSql } from "../workspace";

export interface FileImportInput {
  title: string | null;
  index: number | null;
  operationId: string | null;
  fileName: string;
  file: { blobKey: string | null; bytes: number; error: string | null };
}

export interface CreatedImport {
  operation: SheetOperationRow;
  sheet: SheetRow;
  /** True when operation_id named an import made before: nothing new was created. */
  replay: boolean;
}

async function replayOf(db: Db, op: SheetOperationRow, tableId: string): Promise<CreatedImport> {
  if (op.tableId !== tableId) {
    throw new ApiError("conflict", "operation_id: is already the id of an import into another table");
  }
  return { operation: op, sheet: await operationSheet(db, op), replay: true };
}

interface NewImport {
  title: string;
  index: number | null;
  operationId: string | null;
  source: SheetImportSource;
  fileName: string | null;
  fileBytes: number | null;
  blobKey: string | null;
  params: Record<string, unknown> | null;
  /** Known before anything runs (bad base64, an empty file): the operation is created failed. */
  error: string | null;
}

/**
 * Creates the sheet and its import operation in one batch, then queues the job. The same
 * operation_id again returns the first import (and whatever this request stored is dropped).
 */
async function createImport(deps: Deps, auth: AuthContext, tableId: string, input: NewImport): Promise<CreatedImport> {
  const { db } = deps;
  const dropBlob = () => (input.blobKey ? deps.blobs.delete(input.blobKey) : Promise.resolve());
  const opId = input.operationId ?? crypto.randomUUID();
  if (input.operationId) {
    const existing = await findOperation(db, auth.workspaceId, opId);
    if (existing) {
      await dropBlob();
      return replayOf(db, existing, tableId);
    }
  }
  const sheetId = crypto.randomUUID();
  const stats = await deps.sheet(sheetId).init({ sheetId, tableId, workspaceId: auth.workspaceId });
  const error = input.error;
  const o = sheetOperations;
  const ours = sql`EXISTS (SELECT 1 FROM ${o} WHERE ${o.workspaceId} = ${auth.workspaceId} AND ${o.id} = ${opId} AND ${o.sheetId} = ${sheetId})`;
  await runBatch(db, [
    statement(
      db,
      insertOperation(
        {
          workspaceId: auth.workspaceId, id: opId, tableId, sheetId, source: input.source, fileName: input.fileName,
          fileBytes: input.fileBytes, blobKey: input.blobKey, params: input.params, error, userId: auth.userId,
        },
        // An import known to fail before it runs takes no share of the workspace's open imports.
        error ? tableAlive(auth.workspaceId, tableId) : sql`${tableAlive(auth.workspaceId, tableId)} AND ${roomForJobSql("sheet_import", auth.workspaceId)}`,
      ),
    ),
    ...insertSheetStatements(db, { id: sheetId, workspaceId: auth.workspaceId, tableId, title: input.title, index: input.index, stats }, ours),
    // An import known to fail before it runs (bad base64, an empty file) ends here: its event too.
    ...(error ? [statement(db, importEvent(auth.workspaceId, opId, input.source, "failed"))] : []),
  ]);
  const op = await findOperation(db, auth.workspaceId, opId);
  if (!op) {
    await dropBlob();
    // The workspace has its cap of open imports, or the table is gone.
    if (!error) await assertRoomForJob(db, auth.workspaceId, "sheet_import");
    throw ApiError.notFound("table");
  }
  if (op.sheetId !== sheetId) {
    // A concurrent request with the same operation_id won the insert.
    await dropBlob();
    return replayOf(db, op, tableId);
  }
  if (error) await dropBlob();
  else await queueImport(deps, op);
  return { operation: (await findOperation(db, auth.workspaceId, opId))!, sheet: await operationSheet(db, op), replay: false };
}

export function createFileImport(deps: Deps, auth: AuthContext, tableId: string, input: FileImportInput): Promise<CreatedImport> {
  return createImport(deps, auth, tableId, {
    title: input.title ?? input.fileName,
    index: input.index,
    operationId: input.operationId,
    source: "file",
    fileName: input.fileName,
    fileBytes: input.file.bytes,
    blobKey: input.file.blobKey,
    params: null,
    error: input.file.error ?? (input.file.bytes === 0 ? "the file is empty" : null),
  });
}

export interface RequestLogSource {
  request_log_ids?: number[] | null;
  prompt_id?: number | null;
  prompt_version_id?: number | null;
  prompt_label_id?: number | null;
  start_time?: number | null;
  end_time?: number | null;
}

/**
 * The document's request_logs fields as a structured filter group for the shared compiler. Explicit
 * ids win over the other fields; a prompt version id becomes its prompt and version number (what a
 * log records); the date range bounds request_start_time. The logs are fixed when the import is
 * created: only the logs that existed then are read (a mark, src/logs/readers.ts), so a resumed run sees the same set.
 */
export async function requestLogFilter(db: Db, logs: WorkspaceLogs, workspaceId: number, src: RequestLogSource): Promise<FilterGroup> {
  const filters: (Filter | FilterGroup)[] = [];
  if (src.request_log_ids && src.request_log_ids.length > 0) {
    filters.push({ field: "pl_id", operator: "in", value: [...new Set(src.request_log_ids)] });
  } else {
    if (src.prompt_id != null) filters.push({ field: "prompt_id", operator: "is", value: src.prompt_id });
    // A label names a version; a version is recorded on a log as its prompt and version number.
    const versionIds: number[] = [];
    if (src.prompt_version_id != null) versionIds.push(src.prompt_version_id);
    if (src.prompt_label_id != null) {
      const versionId = await labelVersionId(db, workspaceId, src.prompt_label_id);
      if (versionId === null) throw new ApiError("not_found", `source.prompt_label_id: release label ${src.prompt_label_id} not found`);
      versionIds.push(versionId);
    }
    for (const id of versionIds) {
      const pv = await versionNumberOf(db, workspaceId, id);
      if (!pv) throw new ApiError("not_found", `source.prompt_version_id: prompt version ${id} not found`);
      filters.push({ field: "prompt_id", operator: "is", value: pv.promptId });
      filters.push({ field: "prompt_version_number", operator: "is", value: pv.version });
    }
    if (src.start_time != null) filters.push({ field: "request_start_time", operator: "gte", value: src.start_time });
    if (src.end_time != null) filters.push({ field: "request_start_time", operator: "lte", value: src.end_time });
  }
  filters.push(markFilter(await logMark(logs, workspaceId)));
  return { logic: "AND", filters };
}

export async function createRequestLogImport(
  deps: Deps,
  auth: AuthContext,
  tableId: string,
  input: { title: string | null; index: number | null; operationId: string | null; source: RequestLogSource },
): Promise<CreatedImport> {
  const { db } = deps;
  if (input.operationId) {
    const existing = await findOperation(db, auth.workspaceId, input.operationId);
    if (existing) return replayOf(db, existing, tableId);
  }
  const filter = await requestLogFilter(db, await deps.logs(auth.workspaceId), auth.workspaceId, input.source);
  return createImport(deps, auth, tableId, {
    title: input.title ?? "Request Logs",
    index: input.index,
    operationId: input.operationId,
    source: "request_logs",
    fileName: null,
    fileBytes: null,
    blobKey: null,
    params: { source: input.source, filter_group: filter },
    error: null,
  });
}
