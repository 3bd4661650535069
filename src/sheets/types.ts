// The sheet object's types: what its RPC methods take and answer, and the model its modules share.
// Kept apart from the object so the Worker's modules can name them without importing the object.
import type { StoredValue } from "./cell-values";
import type { ColumnGraph } from "./stale-graph";

/**
 * A parsed JSON value, typed loosely on purpose: the RPC stub's types make a method returning
 * `unknown` unusable and recurse too deep on a recursive JSON type.
 */
export type JsonValue = string | number | boolean | null | object;

export const CELL_STATUSES = ["STALE", "QUEUED", "RUNNING", "COMPLETED", "FAILED"] as const;
export type CellStatus = (typeof CELL_STATUSES)[number];

export interface SheetIdentity {
  sheetId: string;
  tableId: string;
  workspaceId: number;
}

export interface SheetStats {
  rowCount: number;
  versionCount: number;
  columnCount: number;
  deleted: boolean;
}

export interface ColumnView {
  id: string;
  sheet_id: string;
  workspace_id: number;
  title: string;
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  config: object;
  dependencies: { column_id: string; reference_type: string; config_key: string | null }[];
  position_rank: number;
  is_output_column: boolean;
}

export interface CellView {
  id: string;
  sheet_id: string;
  column_id: string;
  row_index: number;
  status: CellStatus;
  display_value: string | null;
  value: JsonValue;
  error: string | null;
  input_hash: string | null;
  execution_id: string | null;
  last_computed_version: number | null;
  updated_at: string;
}

export interface RowView {
  row_index: number;
  cells: Record<string, CellView>;
}

export interface NewColumn {
  title: string;
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  config?: Record<string, any>;
  /** Ids of the columns this one reads (the column engine validates the graph). */
  dependencies?: { column_id: string; reference_type?: string; config_key?: string | null }[];
  is_output_column?: boolean;
}

export interface ImportBatchInput {
  operationId: string;
  /** 0-based; batches of one import must arrive in order (a repeat of a committed batch is a no-op). */
  batch: number;
  /** How many rows of this import come before this batch: a batch that does not continue exactly where the last one ended is refused. */
  firstRow: number;
  /** Titles of every column the import has seen so far, by position; only ever grows. */
  columns: string[];
  /**
   * An import into a sheet that existed before it: a position goes to the sheet's column of that title
   * (case-insensitive; a computed one takes no values), and only titles the sheet lacks make TEXT columns.
   */
  mapByTitle?: boolean;
  /**
   * JSON array of rows; each row an array aligned with `columns` (shorter rows leave the rest empty),
   * each cell null (empty), a string (a text value), or [display_value, value_json].
   */
  rowsJson: string;
}

export type ImportBatchResult =
  | { ok: true; duplicate: boolean; rowsAdded: number; rowsImported: number; batchesCommitted: number; rowCount: number; version: number }
  | { ok: false; reason: "deleted" | "out_of_order" | "not_initialized" | "too_many_rows" | "too_many_columns"; expectedBatch?: number };

export interface ImportProgress {
  batchesCommitted: number;
  rowsImported: number;
  rowCount: number;
  version: number;
}

export interface StoredCell {
  row_index: number;
  column_seq: number;
  status: string;
  display_value: string | null;
  value: string | null;
  error: string | null;
  input_hash: string | null;
  execution_id: string | null;
  last_computed_version: number | null;
  updated_at: number;
  [key: string]: SqlStorageValue;
}

/** Column edges derived from a block config's sources (titles it reads); hidden from the column's `dependencies`. */
export const SOURCE_EDGE = "config_source";
/** How long a cell edit's listing copy to D1 waits for more edits to share it. */
export const SYNC_DELAY_MS = 100;
/** Columns a sheet holds at most (Create Column; an import's columns count too). */
export const MAX_COLUMNS = 500;
/** Bytes of JSON a column's config takes at most: the graph and its configs are read whole on most calls. */
export const MAX_CONFIG_BYTES = 65_536;
/** Stored bytes of cell values a page of rows holds at most (beyond its first row): keeps GET rows well inside the object's memory. */
export const ROWS_PAGE_BYTES = 4 * 1024 * 1024;
/** Cells one alarm run computes at most (then it re-arms): keeps each run well inside a Worker's CPU limit. */
export const ALARM_BATCH_CELLS = 2000;
/** Cells read, computed and written together (one transaction for their results). */
export const CHUNK_CELLS = 250;
/** Cells of one chunk evaluated at once (LLM and ENDPOINT calls wait on the network). */
export const EVAL_CONCURRENCY = 6;

/** Who is asking, as the Worker authenticated it: the object answers only its own workspace and table. */
export interface SheetAccess {
  workspaceId: number;
  tableId: string;
}

export type FailCode = "validation_error" | "not_found" | "conflict" | "payload_too_large";
export type Fail = { ok: false; code: FailCode; message: string };
export type Result<T> = ({ ok: true } & T) | Fail;
export const fail = (code: FailCode, message: string): Fail => ({ ok: false, code, message });

export type DependencyInput = string | { column_id: string; reference_type?: string | null; config_key?: string | null };

export interface CreateColumnInput {
  title: string;
  type: string;
  config?: Record<string, unknown> | null;
  dependencies?: DependencyInput[] | null;
  is_output_column?: boolean | null;
  position_rank?: number | null;
}

export interface UpdateColumnInput {
  title?: string | null;
  type?: string | null;
  config?: Record<string, unknown>;
  dependencies?: DependencyInput[];
  is_output_column?: boolean | null;
  position_rank?: number | null;
}

export type RecalcSelection =
  | { kind: "cells"; cellIds: string[]; single?: boolean }
  | { kind: "filter"; columnIds?: string[] | null; rowIds?: number[] | null; statuses?: CellStatus[] | null };

export interface RecalcStarted {
  execution_id: string | null;
  cell_count: number;
  selected_cell_count: number;
  version: number;
  cells: CellView[];
}

export interface SheetOperationView {
  operation_id: string;
  operation: "recalculate";
  status: "queued" | "running" | "completed" | "cancelled";
  status_counts: Record<string, number>;
  cell_count: number;
  completed_count: number;
  failed_count: number;
  pending_count: number;
  reused_count: number;
  version: number;
  status_url: string;
  created_at: string;
  updated_at: string;
}

export interface SheetOperationsSummary {
  sheet_id: string;
  version: number;
  total_cells: number;
  status_counts: Record<string, number>;
  pending_count: number;
  active_operations: SheetOperationView[];
}

export interface ModelColumn {
  seq: number;
  id: string;
  title: string;
  type: string;
  config: Record<string, unknown>;
  computed: boolean;
  upstream: number[];
}

export interface SheetModel {
  list: ModelColumn[];
  bySeq: Map<number, ModelColumn>;
  byId: Map<string, ModelColumn>;
  graph: ColumnGraph;
  sourceReaders: { column_seq: number; depends_on_seq: number }[];
}

export interface PlannedEdge {
  seq: number;
  referenceType: string;
  configKey: string | null;
}

export type Outcome =
  | { kind: "wait" }
  | { kind: "reused" }
  | { kind: "completed"; stored: StoredValue; hash: string }
  | { kind: "failed"; error: string; hash: string | null };

export interface ExecutionRow {
  id: string;
  operation: string;
  cell_count: number;
  completed_count: number;
  failed_count: number;
  reused_count: number;
  version: number;
  started_at: number | null;
  cancelled_at: number | null;
  created_at: number;
  updated_at: number;
  [key: string]: SqlStorageValue;
}
