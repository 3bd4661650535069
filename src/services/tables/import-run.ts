// Running a sheet import (the queue consumer): the operation's source streamed into the sheet's
// Durable Object batch by batch. A run is safe to repeat: batches are idempotent in the object, and a
// redelivered run resumes after the last committed batch. A run given a slice stops after the batch
// that uses it up and answers "continue" (the consumer queues the next slice, which resumes the same
// way: the source is read again from its start, the rows already imported skipped). Ending an import
// writes its event (only for an import that created its sheet) in the same batch as its status.
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { col } from "../../db/sql";
import { sheetOperations, type SheetImportSource, type SheetOperationRow } from "../../db/schema";
import type { FilterGroup } from "../../filters";
import type { Deps } from "../../env";
import { enqueue, sliceOver, type JobSlice } from "../../lib/jobs";
import { runBatch } from "../../db/batch";
import { eventStatement } from "../webhooks";
import { findOperation } from "./sheets";
import { columnLetters } from "../../sheets";
import type { FillParams } from "../../logs";
import type { ImportFormat } from "../../lib/file-format";
import { contentMessage, fileSource, ImportContentError, logQuerySource, MAX_IMPORT_COLUMNS, requestLogSource, RowBatcher, type Cell, type LogField, type RowSource } from "./import-sources";

export interface ImportRunOptions {
  /** Rows per batch appended to the sheet (each batch is one atomic, idempotent write). */
  batchRows?: number;
  /** Characters of cell text per batch, so a batch of wide rows stays small. */
  batchChars?: number;
  /** Called after each committed batch; tests throw here to kill a run part-way. */
  afterBatch?: (batch: number) => void | Promise<void>;
  /** This delivery's share: past it, the run stops after a committed batch and answers "continue". */
  slice?: JobSlice;
}

/** Thrown through the source once the slice is used up: not an error, the run's pause. */
class SliceEnded extends Error {}

/** Redeliveries before an import that keeps failing for infrastructure reasons is marked failed. */
export const MAX_IMPORT_ATTEMPTS = 5;
const DEFAULT_BATCH_ROWS = 2000;
const DEFAULT_BATCH_CHARS = 1 << 20;

/** An operation's params when it imports into a sheet that existed before it. */
export interface IntoSheetParams {
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

/**
 * The event of an import's end, written with the status change that ends it: one per operation
 * (its id is the operation's), and only if the operation really is in that state after the change.
 */
export function importEvent(workspaceId: number, operationId: string, source: SheetImportSource, outcome: "completed" | "failed"): SQL {
  const o = sheetOperations;
  return eventStatement({
    workspaceId,
    type: source === "file" ? (outcome === "failed" ? "sheet_created_from_file_failed" : "sheet_created_from_file") : outcome === "failed" ? "sheet_created_from_request_logs_failed" : "sheet_created_from_request_logs",
    id: `sheet_import:${workspaceId}:${operationId}`,
    userId: sql`o.${col(o.createdBy)}`,
    from: sql`${o} AS o`,
    when: sql`o.${col(o.workspaceId)} = ${workspaceId} AND o.${col(o.id)} = ${operationId} AND o.${col(o.status)} = ${outcome}`,
    details: sql`json_object('table_id', o.${col(o.tableId)}, 'sheet_id', o.${col(o.sheetId)}, 'operation_id', o.${col(o.id)}, 'source', o.${col(o.source)},
      'file_name', o.${col(o.fileName)}, 'rows_added', o.${col(o.rowsAdded)}, 'row_count', o.${col(o.rowCount)}, 'error_message', o.${col(o.errorMessage)})`,
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

/** Queues the operation's job; an import that cannot be queued fails at once (its event too), and the error goes on. */
export async function queueImport(deps: Pick<Deps, "db" | "jobs">, op: SheetOperationRow): Promise<void> {
  try {
    await enqueue(deps.jobs, { v: 1, kind: "sheet_import", workspace_id: op.workspaceId, operation_id: op.id });
  } catch (err) {
    await failOperation(deps.db, op, "the import could not be queued; create it again");
    throw err;
  }
}

/** The sheet's computed columns among an import's titles (their values were not imported), for the final message. */
async function computedTitles(sheet: ReturnType<Deps["sheet"]>, titles: string[]): Promise<string[]> {
  // Named as the sheet object names them: an empty title by its place.
  const wanted = new Set(titles.map((t, i) => (t.trim() === "" ? `Column ${columnLetters(i + 1)}` : t).trim().toLowerCase()));
  return (await sheet.listColumns()).filter((c) => c.type !== "TEXT" && wanted.has(c.title.trim().toLowerCase())).map((c) => c.title);
}

/**
 * Runs (or resumes) an import. Throws on an infrastructure failure so the queue redelivers;
 * a content problem ends the operation as failed with its error_message.
 */
export async function runImport(deps: Deps, workspaceId: number, operationId: string, opts: ImportRunOptions = {}): Promise<"continue" | void> {
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
    source = logQuerySource(await deps.logs(workspaceId), workspaceId, intoParams.query, intoParams.variables ?? null, intoParams.fields ?? null);
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
  // The slice runs from this delivery's first new row: reading the rows already imported again (the
  // source from its start) takes longer the further the import got, and must not eat the slice.
  let slice = opts.slice;
  let sliceStarted = false;

  const commit = async (rows: Cell[][]) => {
    if (!sliceStarted && slice) slice = { ...slice, endsAt: Math.max(slice.endsAt, Date.now() + (slice.ms ?? 0)) };
    sliceStarted = true;
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
      // Rows still to import and the slice used up (one batch at least each delivery): the next slice goes on.
      if ((!final || batcher.rows.length > 0) && sliceOver(slice)) throw new SliceEnded();
    }
  };

  try {
    await source.run(batcher, () => drain(), (f) => (fraction = f));
    await drain(true);
    // A file with columns but no rows still makes its columns.
    if (batch === 0 && batcher.columns.length > 0) await commit([]);
  } catch (err) {
    if (err instanceof SliceEnded) {
      // A slice that committed is no failed attempt: the count starts over for the next one.
      await db
        .update(sheetOperations)
        .set({ attempts: 0, updatedAt: Date.now() })
        .where(and(eq(sheetOperations.seq, op.seq), eq(sheetOperations.status, "running")));
      await sheet.syncListing();
      return "continue";
    }
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
