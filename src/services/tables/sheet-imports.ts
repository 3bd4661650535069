// Sheet imports: creating one (the sheet, its operation, the queued job) and running one (the queue
// consumer streams the stored file through a CSV or JSON row reader into the sheet's Durable Object,
// batch by batch). A run is safe to repeat: batches are idempotent in the object, and a redelivered
// run resumes after the last committed batch.
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { promptLabels, promptVersions, sheetOperations, type SheetImportSource, type SheetOperationRow, type SheetRow } from "../../db/schema";
import type { Filter, FilterGroup } from "../../filters";
import type { AuthContext, Deps } from "../../env";
import { CsvError, CsvRowStream } from "../../lib/csv-stream";
import { ApiError } from "../../lib/errors";
import { JsonStreamError, JsonStreamReader } from "../../lib/json-stream";
import { enqueue } from "../../lib/jobs";
import { runBatch, statement } from "../../db/batch";
import { eventStatement } from "../webhooks";
import { findOperation, insertSheetStatements, operationSheet, tableAlive } from "./sheets";
import { MAX_COLUMNS } from "../../sheets/types";
import { columnLetters } from "../../sheets/imports";
import { fillQuery, logMark, logsInOrder, markFilter, matchingLogIds, matchingLogPages } from "../../logs";
import { MAX_LOGS_PER_JOB, type FillParams } from "../../logs";
import { formatOf, type ImportFormat } from "../../lib/file-format";
import type { WorkspaceLogs } from "../../logs";

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
  const now = Date.now();
  const status = error ? "failed" : "pending";
  const message = error ? "Import failed" : "Import queued";
  const format = input.fileName ? formatOf(input.fileName) : null;
  const params = input.params ? JSON.stringify(input.params) : null;
  const ours = sql`EXISTS (SELECT 1 FROM sheet_operations WHERE workspace_id = ${auth.workspaceId} AND id = ${opId} AND sheet_id = ${sheetId})`;
  await runBatch(db, [
    statement(
      db,
      sql`
      INSERT INTO sheet_operations (workspace_id, id, table_id, sheet_id, source, status, progress, message, file_name, format,
                                    file_bytes, blob_key, params, error_message, created_by, created_at, updated_at)
      SELECT ${auth.workspaceId}, ${opId}, ${tableId}, ${sheetId}, ${input.source}, ${status}, 0, ${message}, ${input.fileName},
             ${format}, ${input.fileBytes}, ${error ? null : input.blobKey}, ${params}, ${error}, ${auth.userId}, ${now}, ${now}
      WHERE ${tableAlive(auth.workspaceId, tableId)}
      ON CONFLICT (workspace_id, id) DO NOTHING`,
    ),
    ...insertSheetStatements(db, { id: sheetId, workspaceId: auth.workspaceId, tableId, title: input.title, index: input.index, stats }, ours),
    // An import known to fail before it runs (bad base64, an empty file) ends here: its event too.
    ...(error ? [statement(db, importEvent(auth.workspaceId, opId, input.source, "failed"))] : []),
  ]);
  const op = await findOperation(db, auth.workspaceId, opId);
  if (!op) {
    await dropBlob();
    throw ApiError.notFound("table");
  }
  if (op.sheetId !== sheetId) {
    // A concurrent request with the same operation_id won the insert.
    await dropBlob();
    return replayOf(db, op, tableId);
  }
  if (error) await dropBlob();
  else {
    try {
      await enqueue(deps.jobs, { v: 1, kind: "sheet_import", workspace_id: auth.workspaceId, operation_id: opId });
    } catch (err) {
      await failOperation(db, op, "the import could not be queued; create it again");
      throw err;
    }
  }
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
      const [label] = await db
        .select({ versionId: promptLabels.promptVersionId })
        .from(promptLabels)
        .where(and(eq(promptLabels.id, src.prompt_label_id), eq(promptLabels.workspaceId, workspaceId)))
        .limit(1);
      if (!label) throw new ApiError("not_found", `source.prompt_label_id: release label ${src.prompt_label_id} not found`);
      versionIds.push(label.versionId);
    }
    for (const id of versionIds) {
      const [pv] = await db
        .select({ promptId: promptVersions.promptId, version: promptVersions.version })
        .from(promptVersions)
        .where(and(eq(promptVersions.id, id), eq(promptVersions.workspaceId, workspaceId)))
        .limit(1);
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

// ---------------------------------------------------------------------------------------------
// Importing into a sheet that exists (POST …/sheets/{sheet_id}/imports/file and …/imports/request-logs):
// the same operation and run, appending after the sheet's rows; a column of the file or of the logs
// goes to the sheet's column of the same title (case-insensitive), and only titles the sheet lacks
// become TEXT columns. A title naming a computed column takes no values: that column's cells of the
// new rows are STALE, as for rows added by hand (sheets/imports.ts).

/** The request-log fields an import makes columns of, in the order an import without include_fields makes them. */
export const LOG_FIELDS = [
  "request_id",
  "prompt_name",
  "prompt_id",
  "prompt_version_number",
  "provider",
  "model",
  "input",
  "output",
  "input_tokens",
  "output_tokens",
  "price",
  "latency_ms",
  "status",
  "tags",
  "metadata",
  "request_start_time",
] as const;
export type LogField = (typeof LOG_FIELDS)[number];

/** The most logs one import into an existing sheet reads (the bound of request_log_ids and limit). */
export const MAX_IMPORT_LOGS = MAX_LOGS_PER_JOB;

/** An operation's params when it imports into a sheet that existed before it. */
interface IntoSheetParams {
  into: "existing_sheet";
  /** request_logs: which logs and in which order (the query dataset fills run), the newest log id included. */
  query?: FillParams;
  /** Input variables made columns: the named ones, or null for every variable a log has. */
  variables?: string[] | null;
  /** Log fields made columns: the named ones, or null for all of LOG_FIELDS. */
  fields?: LogField[] | null;
}

/** True for an import into a sheet that existed before it (no sheet_created_* event announces it). */
export function intoExistingSheet(op: Pick<SheetOperationRow, "params">): boolean {
  return (op.params as { into?: unknown } | null)?.into === "existing_sheet";
}

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
  sql`EXISTS (SELECT 1 FROM sheets WHERE id = ${sheetId} AND table_id = ${tableId} AND workspace_id = ${workspaceId} AND deleted_at IS NULL)
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
  const now = Date.now();
  const format = input.fileName ? formatOf(input.fileName) : null;
  const [inserted] = await runBatch(db, [
    sql`
      INSERT INTO sheet_operations (workspace_id, id, table_id, sheet_id, source, status, progress, message, file_name, format,
                                    file_bytes, blob_key, params, created_by, created_at, updated_at)
      SELECT ${auth.workspaceId}, ${opId}, ${sheet.tableId}, ${sheet.id}, ${input.source}, 'pending', 0, 'Import queued', ${input.fileName},
             ${format}, ${input.fileBytes}, ${input.blobKey}, ${JSON.stringify(input.params)}, ${auth.userId}, ${now}, ${now}
      WHERE ${sheetAlive(auth.workspaceId, sheet.tableId, sheet.id)}
      ON CONFLICT (workspace_id, id) DO NOTHING
      RETURNING seq`,
  ]);
  const op = await findOperation(db, auth.workspaceId, opId);
  if (!op) {
    // The sheet or its table was deleted since the caller found it.
    await dropBlob();
    throw ApiError.notFound("sheet");
  }
  // A concurrent request with the same operation_id won the insert.
  if (inserted.results.length === 0) return replay(op);
  try {
    await enqueue(deps.jobs, { v: 1, kind: "sheet_import", workspace_id: auth.workspaceId, operation_id: opId });
  } catch (err) {
    await failOperation(db, op, "the import could not be queued; create it again");
    throw err;
  }
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
  if (!explicit) fillQuery(ws, query);
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

// ---------------------------------------------------------------------------------------------
// Running an import (the queue consumer)

/** A problem with the file's content: the import fails with this message (no retry can help). */
export class ImportContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImportContentError";
  }
}

export interface ImportRunOptions {
  /** Rows per batch appended to the sheet (each batch is one atomic, idempotent write). */
  batchRows?: number;
  /** Characters of cell text per batch, so a batch of wide rows stays small. */
  batchChars?: number;
  /** Called after each committed batch; tests throw here to kill a run part-way. */
  afterBatch?: (batch: number) => void | Promise<void>;
}

/** Redeliveries before an import that keeps failing for infrastructure reasons is marked failed. */
export const MAX_IMPORT_ATTEMPTS = 5;
/** A sheet holds at most MAX_COLUMNS columns, however they are made. */
export const MAX_IMPORT_COLUMNS = MAX_COLUMNS;
const DEFAULT_BATCH_ROWS = 2000;
const DEFAULT_BATCH_CHARS = 1 << 20;

/**
 * The event of an import's end, written with the status change that ends it: one per operation
 * (its id is the operation's), and only if the operation really is in that state after the change.
 */
function importEvent(workspaceId: number, operationId: string, source: SheetImportSource, outcome: "completed" | "failed"): SQL {
  return eventStatement({
    workspaceId,
    type: source === "file" ? (outcome === "failed" ? "sheet_created_from_file_failed" : "sheet_created_from_file") : outcome === "failed" ? "sheet_created_from_request_logs_failed" : "sheet_created_from_request_logs",
    id: `sheet_import:${workspaceId}:${operationId}`,
    userId: sql`o.created_by`,
    from: sql`sheet_operations AS o`,
    when: sql`o.workspace_id = ${workspaceId} AND o.id = ${operationId} AND o.status = ${outcome}`,
    details: sql`json_object('table_id', o.table_id, 'sheet_id', o.sheet_id, 'operation_id', o.id, 'source', o.source, 'file_name', o.file_name,
      'rows_added', o.rows_added, 'row_count', o.row_count, 'error_message', o.error_message)`,
  });
}

/** The end event of an import that created its sheet; an import into an existing sheet has none. */
function endEvents(op: SheetOperationRow, outcome: "completed" | "failed"): SQL[] {
  return intoExistingSheet(op) ? [] : [importEvent(op.workspaceId, op.id, op.source, outcome)];
}

export async function failOperation(db: Db, op: SheetOperationRow, errorMessage: string): Promise<void> {
  await runBatch(db, [
    db
      .update(sheetOperations)
      .set({ status: "failed", message: "Import failed", errorMessage, blobKey: null, updatedAt: Date.now() })
      .where(and(eq(sheetOperations.seq, op.seq), sql`${sheetOperations.status} IN ('pending', 'running')`)),
    ...endEvents(op, "failed"),
  ]);
}

type Cell = string | null | [string, string];

function jsonCell(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return v;
  const j = JSON.stringify(v);
  return [typeof v === "object" ? j : String(v), j];
}

/** Turns a file's rows into batches of positional cells, tracking the import's columns. */
class RowBatcher {
  readonly columns: string[] = [];
  private readonly positions = new Map<string, number>();
  rows: Cell[][] = [];
  /** Characters of each buffered row, so a batch can be cut by size as well as by count. */
  private rowChars: number[] = [];
  chars = 0;
  /** Data rows read from the file so far (skipped ones included). */
  seen = 0;

  constructor(private readonly skip: number) {}

  private column(title: string): number {
    let pos = this.positions.get(title);
    if (pos === undefined) {
      pos = this.columns.length;
      if (pos >= MAX_IMPORT_COLUMNS) throw new ImportContentError(`the file has more than ${MAX_IMPORT_COLUMNS} columns`);
      this.columns.push(title);
      this.positions.set(title, pos);
    }
    return pos;
  }

  header(fields: string[]): void {
    if (fields.length > MAX_IMPORT_COLUMNS) throw new ImportContentError(`the file has more than ${MAX_IMPORT_COLUMNS} columns`);
    // Positional: duplicate or empty header names still get their own column.
    for (const f of fields) this.columns.push(f);
  }

  csvRow(fields: string[]): void {
    if (this.seen++ < this.skip) return this.extend(fields.length);
    this.extend(fields.length);
    const row: Cell[] = new Array(fields.length);
    let chars = 0;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      row[i] = f === "" ? null : f;
      chars += f.length;
    }
    this.push(row, chars);
  }

  /** A CSV row longer than the header adds untitled columns. */
  private extend(n: number): void {
    if (n > MAX_IMPORT_COLUMNS) throw new ImportContentError(`the file has more than ${MAX_IMPORT_COLUMNS} columns`);
    while (this.columns.length < n) this.columns.push("");
  }

  jsonRow(obj: Record<string, unknown>): void {
    const skipped = this.seen++ < this.skip;
    const row: Cell[] = [];
    let chars = 0;
    for (const key of Object.keys(obj)) {
      const pos = this.column(key);
      if (skipped) continue;
      const cell = jsonCell(obj[key]);
      row[pos] = cell;
      if (cell !== null) chars += typeof cell === "string" ? cell.length : cell[1].length;
    }
    if (skipped) return;
    for (let i = 0; i < row.length; i++) if (row[i] === undefined) row[i] = null;
    this.push(row, chars);
  }

  private push(row: Cell[], chars: number): void {
    this.rows.push(row);
    this.rowChars.push(chars);
    this.chars += chars;
  }

  /** The next batch: buffered rows up to maxRows and maxChars (at least one row); the rest stay. */
  take(maxRows: number, maxChars: number): Cell[][] {
    let n = 0;
    let chars = 0;
    while (n < this.rows.length && n < maxRows && (n === 0 || chars + this.rowChars[n] <= maxChars)) chars += this.rowChars[n++];
    const batch = this.rows.slice(0, n);
    this.rows = this.rows.slice(n);
    this.rowChars = this.rowChars.slice(n);
    this.chars -= chars;
    return batch;
  }
}

function rowReader(format: ImportFormat, batcher: RowBatcher) {
  if (format === "csv") {
    let headerSeen = false;
    const csv = new CsvRowStream((fields) => {
      if (!headerSeen) {
        headerSeen = true;
        batcher.header(fields);
      } else batcher.csvRow(fields);
    });
    return {
      write: (t: string) => csv.write(t),
      end: () => {
        csv.end();
        if (!headerSeen) throw new ImportContentError("the file is empty: a CSV import needs a header row");
      },
    };
  }
  const json = new JsonStreamReader({
    descend: (path) => path.length === 0,
    onContainerStart: (path, kind) => {
      if (path.length === 0 && kind !== "array") throw new ImportContentError("a JSON import must be an array of objects; the file holds an object");
    },
    onValue: (path, value) => {
      if (path.length === 0) throw new ImportContentError("a JSON import must be an array of objects");
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        throw new ImportContentError(`a JSON import must be an array of objects; element ${path[0]} is ${Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`}`);
      }
      batcher.jsonRow(value as Record<string, unknown>);
    },
  });
  return {
    write: (t: string) => json.write(t),
    end: () => {
      try {
        json.end();
      } catch (err) {
        if (err instanceof JsonStreamError && err.reason === "no JSON value") throw new ImportContentError("the file is empty");
        throw err;
      }
    },
  };
}

function contentMessage(err: unknown, format: ImportFormat): string | null {
  if (err instanceof ImportContentError) return err.message;
  if (err instanceof CsvError) return `not a valid CSV file: ${err.message}`;
  if (err instanceof JsonStreamError) return `not a valid JSON file: ${err.message}`;
  if (err instanceof TypeError && /decode|UTF-8|encoded data/i.test(err.message)) {
    return `the file is not UTF-8 text (a ${format.toUpperCase()} import needs UTF-8)`;
  }
  return null;
}

/** Reads the logs an import's filter matches, in id order, a page at a time. */
const LOG_PAGE = 100;

interface LogRow {
  id: number;
  prompt_name: string | null;
  prompt_id: number | null;
  prompt_version_number: number | null;
  provider: string;
  model: string;
  input_text: string;
  output_text: string;
  prompt_input_variables: string;
  input_tokens: number;
  output_tokens: number;
  price: number;
  status: string;
  tags: string;
  metadata: string;
  request_start_time: number;
  request_end_time: number;
  [k: string]: unknown;
}

/** One sheet row per log: its input variables first (the inputs computed columns read), then its fields. */
function logRecord(r: LogRow): Record<string, unknown> {
  const vars = JSON.parse(r.prompt_input_variables) as Record<string, unknown>;
  return { ...vars, ...logFields(r) };
}

/** A log's fields as an import stores them (LOG_FIELDS, in that order). */
function logFields(r: LogRow): Record<LogField, unknown> {
  return {
    request_id: r.id,
    prompt_name: r.prompt_name,
    prompt_id: r.prompt_id,
    prompt_version_number: r.prompt_version_number,
    provider: r.provider,
    model: r.model,
    input: r.input_text,
    output: r.output_text,
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    price: r.price,
    latency_ms: r.request_end_time - r.request_start_time,
    status: r.status,
    tags: JSON.parse(r.tags) as unknown,
    metadata: JSON.parse(r.metadata) as unknown,
    request_start_time: new Date(r.request_start_time).toISOString(),
  };
}

/**
 * One sheet row per log with the columns an import into an existing sheet asked for: the named input
 * variables (null where a log lacks one) or all of them, then the named fields or all of them.
 */
function pickedLogRecord(r: LogRow, variables: string[] | null, fields: readonly LogField[] | null): Record<string, unknown> {
  const vars = JSON.parse(r.prompt_input_variables) as Record<string, unknown>;
  // No prototype: a variable named "__proto__" is a column like any other.
  const out: Record<string, unknown> = Object.create(null);
  if (variables === null) Object.assign(out, vars);
  else for (const name of variables) out[name] = Object.hasOwn(vars, name) ? vars[name] : null;
  const f = logFields(r);
  for (const name of fields ?? LOG_FIELDS) out[name] = f[name];
  return out;
}

interface RowSource {
  /** Feeds every row of the import to the batcher, calling drain() whenever it may have a batch. */
  run(batcher: RowBatcher, drain: () => Promise<void>, progress: (fraction: number) => void): Promise<void>;
}

/** Bytes of the file parsed between two drains of the batcher. */
const PARSE_SLICE_BYTES = 256 * 1024;

function fileSource(object: R2ObjectBody, format: ImportFormat): RowSource {
  return {
    async run(batcher, drain, progress) {
      const reader = rowReader(format, batcher);
      const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
      const r = object.body.getReader();
      let bytesRead = 0;
      for (;;) {
        const { done, value } = await r.read();
        if (done) break;
        // An R2 read can hand over megabytes at once (a whole multipart part): parsed in one go, all
        // its rows would sit in the batcher together. Slices keep what is buffered to one slice's rows.
        for (let at = 0; at < value.byteLength; at += PARSE_SLICE_BYTES) {
          const slice = value.subarray(at, Math.min(value.byteLength, at + PARSE_SLICE_BYTES));
          bytesRead += slice.byteLength;
          progress(bytesRead / Math.max(1, object.size));
          reader.write(text.decode(slice, { stream: true }));
          await drain();
        }
      }
      reader.write(text.decode());
      reader.end();
    },
  };
}

/** `logs`: the workspace's log database. */
function requestLogSource(logs: WorkspaceLogs, workspaceId: number, filter: FilterGroup): RowSource {
  const pages = matchingLogPages<LogRow>(logs, workspaceId, filter, LOG_PAGE);
  return {
    async run(batcher, drain, progress) {
      const total = await pages.count();
      let done = 0;
      for await (const page of pages.pages()) {
        // Drained row by row: a log can be a megabyte, so a page never piles up in memory.
        for (const row of page) {
          batcher.jsonRow(logRecord(row));
          progress(++done / Math.max(1, total));
          await drain();
        }
      }
    },
  };
}

/** The sheet's computed columns among an import's titles (their values were not imported), for the final message. */
async function computedTitles(sheet: ReturnType<Deps["sheet"]>, titles: string[]): Promise<string[]> {
  // Named as the sheet object names them: an empty title by its place.
  const wanted = new Set(titles.map((t, i) => (t.trim() === "" ? `Column ${columnLetters(i + 1)}` : t).trim().toLowerCase()));
  return (await sheet.listColumns()).filter((c) => c.type !== "TEXT" && wanted.has(c.title.trim().toLowerCase())).map((c) => c.title);
}

/** The logs an import into an existing sheet asked for, in its order (at most MAX_IMPORT_LOGS), from the workspace's log database. */
function logQuerySource(logs: WorkspaceLogs, workspaceId: number, p: IntoSheetParams & { query: FillParams }): RowSource {
  return {
    async run(batcher, drain, progress) {
      const ids = await matchingLogIds(logs, workspaceId, p.query);
      let done = 0;
      for await (const page of logsInOrder<LogRow>(logs, workspaceId, ids, p.query.max_log_id ?? 0, LOG_PAGE)) {
        for (const row of page) {
          batcher.jsonRow(pickedLogRecord(row, p.variables ?? null, p.fields ?? null));
          progress(++done / Math.max(1, ids.length));
          await drain();
        }
      }
    },
  };
}

/**
 * Runs (or resumes) an import. Throws on an infrastructure failure so the queue redelivers;
 * a content problem ends the operation as failed with its error_message.
 */
export async function runImport(deps: Deps, workspaceId: number, operationId: string, opts: ImportRunOptions = {}): Promise<void> {
  const { db } = deps;
  const op = await findOperation(db, workspaceId, operationId);
  if (!op || op.status === "completed" || op.status === "failed") return;
  const format = op.format as ImportFormat | null;
  if (op.source === "file" && (!format || !op.blobKey)) {
    await failOperation(db, op, "the import has no file to read");
    return;
  }
  const dropBlob = () => (op.blobKey ? deps.blobs.delete(op.blobKey) : Promise.resolve());
  const attempts = await db
    .update(sheetOperations)
    .set({ status: "running", message: op.status === "pending" ? "Import started" : op.message, updatedAt: Date.now(), attempts: sql`${sheetOperations.attempts} + 1` })
    .where(eq(sheetOperations.seq, op.seq))
    .returning({ attempts: sheetOperations.attempts });
  if ((attempts[0]?.attempts ?? 0) > MAX_IMPORT_ATTEMPTS) {
    await failOperation(db, op, `the import failed ${MAX_IMPORT_ATTEMPTS} times for internal reasons; create it again`);
    await dropBlob();
    return;
  }

  let source: RowSource;
  const intoParams = op.params as IntoSheetParams | null;
  if (op.source === "file") {
    const object = await deps.blobs.get(op.blobKey!);
    if (!object) {
      await failOperation(db, op, "the uploaded file is gone");
      return;
    }
    source = fileSource(object, format!);
  } else if (intoParams?.query) {
    source = logQuerySource(await deps.logs(workspaceId), workspaceId, { ...intoParams, query: intoParams.query });
  } else {
    const filter = (op.params as { filter_group?: FilterGroup } | null)?.filter_group;
    if (!filter) {
      await failOperation(db, op, "the import has no request-log filter");
      return;
    }
    source = requestLogSource(await deps.logs(workspaceId), workspaceId, filter);
  }

  const sheet = deps.sheet(op.sheetId);
  const mapByTitle = intoExistingSheet(op);
  const progress = await sheet.importProgress(op.id);
  const batchRows = opts.batchRows ?? DEFAULT_BATCH_ROWS;
  const batchChars = opts.batchChars ?? DEFAULT_BATCH_CHARS;
  const batcher = new RowBatcher(progress.rowsImported);
  let batch = progress.batchesCommitted;
  let rowsImported = progress.rowsImported;
  let rowCount = progress.rowCount;
  let fraction = 0;

  const commit = async (rows: Cell[][]) => {
    const res = await sheet.appendImportBatch({ operationId: op.id, batch, firstRow: rowsImported, columns: batcher.columns, rowsJson: JSON.stringify(rows), mapByTitle });
    if (!res.ok) {
      if (res.reason === "deleted") throw new ImportContentError("the sheet was deleted during the import");
      if (res.reason === "too_many_rows") throw new ImportContentError("the sheet cannot hold more rows");
      if (res.reason === "too_many_columns") {
        throw new ImportContentError(`the sheet cannot take the import's new columns: a sheet holds at most ${MAX_IMPORT_COLUMNS} columns, and titles the sheet lacks become new columns`);
      }
      throw new Error(`sheet refused import batch ${batch}: ${res.reason} (expected ${res.expectedBatch})`);
    }
    batch++;
    rowsImported = res.rowsImported;
    rowCount = res.rowCount;
    const pct = Math.min(99, Math.floor(fraction * 100));
    await db
      .update(sheetOperations)
      .set({ progress: pct, rowsAdded: rowsImported, rowCount, message: `Imported ${rowsImported} rows`, updatedAt: Date.now() })
      .where(and(eq(sheetOperations.seq, op.seq), eq(sheetOperations.status, "running")));
    await opts.afterBatch?.(batch - 1);
  };
  const drain = async (final = false) => {
    while (batcher.rows.length >= batchRows || batcher.chars >= batchChars || (final && batcher.rows.length > 0)) {
      await commit(batcher.take(batchRows, batchChars));
    }
  };

  try {
    await source.run(batcher, () => drain(), (f) => (fraction = f));
    await drain(true);
    // A file with columns but no rows still makes its columns.
    if (batch === 0 && batcher.columns.length > 0) await commit([]);
  } catch (err) {
    const msg = contentMessage(err, format ?? "csv");
    if (msg === null) throw err;
    await failOperation(db, op, rowsImported > 0 ? `${msg} (the first ${rowsImported} rows were imported)` : msg);
    await sheet.syncListing();
    await dropBlob();
    return;
  }
  await sheet.syncListing();
  const skipped = mapByTitle ? await computedTitles(sheet, batcher.columns) : [];
  const names = skipped.map((t) => JSON.stringify(t)).join(", ");
  const note = skipped.length === 1 ? `; ${names} is a computed column: not imported, its new cells are STALE` : `; ${names} are computed columns: not imported, their new cells are STALE`;
  const message = `Imported ${rowsImported} rows${skipped.length > 0 ? note : ""}`;
  await runBatch(db, [
    db
      .update(sheetOperations)
      .set({ status: "completed", progress: 100, rowsAdded: rowsImported, rowCount, message, blobKey: null, updatedAt: Date.now() })
      .where(and(eq(sheetOperations.seq, op.seq), eq(sheetOperations.status, "running"))),
    ...endEvents(op, "completed"),
  ]);
  await dropBlob();
}
