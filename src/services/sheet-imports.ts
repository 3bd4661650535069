// Sheet imports: creating one (the sheet, its operation, the queued job) and running one (the queue
// consumer streams the stored file through a CSV or JSON row reader into the sheet's Durable Object,
// batch by batch). A run is safe to repeat: batches are idempotent in the object, and a redelivered
// run resumes after the last committed batch.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { getDb } from "../db/client";
import { sheetOperations, type SheetOperationRow, type SheetRow } from "../db/schema";
import type { AuthContext, Env } from "../env";
import { CsvError, CsvRowStream } from "../lib/csv-stream";
import { ApiError } from "../lib/errors";
import { JsonStreamError, JsonStreamReader } from "../lib/json-stream";
import { enqueue } from "../queue/messages";
import { findOperation, insertSheetStatements, operationSheet, sheetStub, statement } from "./sheets";

export type ImportFormat = "csv" | "json";

export function formatOf(fileName: string): ImportFormat | null {
  const m = /\.(csv|json)$/i.exec(fileName);
  return m ? (m[1].toLowerCase() as ImportFormat) : null;
}

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

/**
 * Creates the sheet and its import operation in one batch, then queues the job. The same
 * operation_id again returns the first import (and the file just received is dropped).
 */
export async function createFileImport(
  db: Db,
  env: Env,
  auth: AuthContext,
  tableId: string,
  input: FileImportInput,
): Promise<CreatedImport> {
  const dropBlob = () => (input.file.blobKey ? env.BLOBS.delete(input.file.blobKey) : Promise.resolve());
  const opId = input.operationId ?? crypto.randomUUID();
  if (input.operationId) {
    const existing = await findOperation(db, auth.workspaceId, opId);
    if (existing) {
      await dropBlob();
      return replayOf(db, existing, tableId);
    }
  }
  const sheetId = crypto.randomUUID();
  const stats = await sheetStub(env, sheetId).init({ sheetId, tableId, workspaceId: auth.workspaceId });
  const error = input.file.error ?? (input.file.bytes === 0 ? "the file is empty" : null);
  const now = Date.now();
  const status = error ? "failed" : "pending";
  const message = error ? "Import failed" : "Import queued";
  const tableAlive = sql`EXISTS (SELECT 1 FROM smart_tables WHERE id = ${tableId} AND workspace_id = ${auth.workspaceId} AND deleted_at IS NULL)`;
  const ours = sql`EXISTS (SELECT 1 FROM sheet_operations WHERE workspace_id = ${auth.workspaceId} AND id = ${opId} AND sheet_id = ${sheetId})`;
  await db.$client.batch([
    statement(
      db,
      sql`
      INSERT INTO sheet_operations (workspace_id, id, table_id, sheet_id, source, status, progress, message, file_name, format,
                                    file_bytes, blob_key, error_message, created_by, created_at, updated_at)
      SELECT ${auth.workspaceId}, ${opId}, ${tableId}, ${sheetId}, 'file', ${status}, 0, ${message}, ${input.fileName},
             ${formatOf(input.fileName)}, ${input.file.bytes}, ${error ? null : input.file.blobKey}, ${error}, ${auth.userId}, ${now}, ${now}
      WHERE ${tableAlive}
      ON CONFLICT (workspace_id, id) DO NOTHING`,
    ),
    ...insertSheetStatements(db, { id: sheetId, workspaceId: auth.workspaceId, tableId, title: input.title ?? input.fileName, index: input.index, stats }, ours),
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
      await enqueue(env.JOBS, { v: 1, kind: "sheet_import", workspace_id: auth.workspaceId, operation_id: opId });
    } catch (err) {
      await failOperation(db, op, "the import could not be queued; create it again");
      throw err;
    }
  }
  return { operation: (await findOperation(db, auth.workspaceId, opId))!, sheet: await operationSheet(db, op), replay: false };
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
export const MAX_IMPORT_COLUMNS = 1000;
const DEFAULT_BATCH_ROWS = 2000;
const DEFAULT_BATCH_CHARS = 1 << 20;

async function failOperation(db: Db, op: SheetOperationRow, errorMessage: string): Promise<void> {
  await db
    .update(sheetOperations)
    .set({ status: "failed", message: "Import failed", errorMessage, blobKey: null, updatedAt: Date.now() })
    .where(and(eq(sheetOperations.seq, op.seq), sql`${sheetOperations.status} IN ('pending', 'running')`));
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
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      row[i] = f === "" ? null : f;
      this.chars += f.length;
    }
    this.rows.push(row);
  }

  /** A CSV row longer than the header adds untitled columns. */
  private extend(n: number): void {
    if (n > MAX_IMPORT_COLUMNS) throw new ImportContentError(`the file has more than ${MAX_IMPORT_COLUMNS} columns`);
    while (this.columns.length < n) this.columns.push("");
  }

  jsonRow(obj: Record<string, unknown>): void {
    const skipped = this.seen++ < this.skip;
    const row: Cell[] = [];
    for (const key of Object.keys(obj)) {
      const pos = this.column(key);
      if (skipped) continue;
      const cell = jsonCell(obj[key]);
      row[pos] = cell;
      if (cell !== null) this.chars += typeof cell === "string" ? cell.length : cell[1].length;
    }
    if (skipped) return;
    for (let i = 0; i < row.length; i++) if (row[i] === undefined) row[i] = null;
    this.rows.push(row);
  }

  take(): Cell[][] {
    const rows = this.rows;
    this.rows = [];
    this.chars = 0;
    return rows;
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

/**
 * Runs (or resumes) a file import. Throws on an infrastructure failure so the queue redelivers;
 * a content problem ends the operation as failed with its error_message.
 */
export async function runFileImport(env: Env, workspaceId: number, operationId: string, opts: ImportRunOptions = {}): Promise<void> {
  const db = getDb(env.DB);
  const op = await findOperation(db, workspaceId, operationId);
  if (!op || op.status === "completed" || op.status === "failed") return;
  const format = op.format as ImportFormat | null;
  if (op.source !== "file" || !format || !op.blobKey) {
    await failOperation(db, op, "the import has no file to read");
    return;
  }
  const attempts = await db
    .update(sheetOperations)
    .set({ status: "running", message: op.status === "pending" ? "Import started" : op.message, updatedAt: Date.now(), attempts: sql`${sheetOperations.attempts} + 1` })
    .where(eq(sheetOperations.seq, op.seq))
    .returning({ attempts: sheetOperations.attempts });
  if ((attempts[0]?.attempts ?? 0) > MAX_IMPORT_ATTEMPTS) {
    await failOperation(db, op, `the import failed ${MAX_IMPORT_ATTEMPTS} times for internal reasons; create it again`);
    await env.BLOBS.delete(op.blobKey);
    return;
  }

  const sheet = sheetStub(env, op.sheetId);
  const progress = await sheet.importProgress(op.id);
  const object = await env.BLOBS.get(op.blobKey);
  if (!object) {
    await failOperation(db, op, "the uploaded file is gone");
    return;
  }
  const batchRows = opts.batchRows ?? DEFAULT_BATCH_ROWS;
  const batchChars = opts.batchChars ?? DEFAULT_BATCH_CHARS;
  const batcher = new RowBatcher(progress.rowsImported);
  const reader = rowReader(format, batcher);
  let batch = progress.batchesCommitted;
  let rowsImported = progress.rowsImported;
  let rowCount = progress.rowCount;
  let bytesRead = 0;
  const total = object.size;

  const commit = async (rows: Cell[][]) => {
    const res = await sheet.appendImportBatch({ operationId: op.id, batch, firstRow: rowsImported, columns: batcher.columns, rowsJson: JSON.stringify(rows) });
    if (!res.ok) {
      if (res.reason === "deleted") throw new ImportContentError("the sheet was deleted during the import");
      if (res.reason === "too_many_rows") throw new ImportContentError("the sheet cannot hold more rows");
      throw new Error(`sheet refused import batch ${batch}: ${res.reason} (expected ${res.expectedBatch})`);
    }
    batch++;
    rowsImported = res.rowsImported;
    rowCount = res.rowCount;
    const pct = Math.min(99, Math.floor((bytesRead / Math.max(1, total)) * 100));
    await db
      .update(sheetOperations)
      .set({ progress: pct, rowsAdded: rowsImported, rowCount, message: `Imported ${rowsImported} rows`, updatedAt: Date.now() })
      .where(and(eq(sheetOperations.seq, op.seq), eq(sheetOperations.status, "running")));
    await opts.afterBatch?.(batch - 1);
  };
  const drain = async (final: boolean) => {
    while (batcher.rows.length >= batchRows || batcher.chars >= batchChars || (final && batcher.rows.length > 0)) {
      const all = batcher.take();
      const now = all.slice(0, batchRows);
      if (all.length > batchRows) batcher.rows = all.slice(batchRows);
      await commit(now);
    }
  };

  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  try {
    const r = object.body.getReader();
    for (;;) {
      const { done, value } = await r.read();
      if (done) break;
      bytesRead += value.byteLength;
      reader.write(text.decode(value, { stream: true }));
      await drain(false);
    }
    reader.write(text.decode());
    reader.end();
    await drain(true);
    // A file with columns but no rows still makes its columns.
    if (batch === 0 && batcher.columns.length > 0) await commit([]);
  } catch (err) {
    const msg = contentMessage(err, format);
    if (msg === null) throw err;
    await failOperation(db, op, rowsImported > 0 ? `${msg} (the first ${rowsImported} rows were imported)` : msg);
    await sheet.syncListing();
    await env.BLOBS.delete(op.blobKey);
    return;
  }
  await sheet.syncListing();
  await db
    .update(sheetOperations)
    .set({ status: "completed", progress: 100, rowsAdded: rowsImported, rowCount, message: `Imported ${rowsImported} rows`, blobKey: null, updatedAt: Date.now() })
    .where(and(eq(sheetOperations.seq, op.seq), eq(sheetOperations.status, "running")));
  await env.BLOBS.delete(op.blobKey);
}
