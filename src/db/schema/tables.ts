// Smart tables. A sheet's columns, rows and cells live in its Durable Object; D1 keeps what
// lists and lookups across a workspace need. `seq` (AUTOINCREMENT, never reused) orders lists and is
// the keyset of their cursors, so paging visits each row once even while rows are being added.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";
import { workspaces } from "./accounts";

export const smartTables = sqliteTable(
  "smart_tables",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull().unique(),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    title: text("title").notNull(),
    /** title.toLowerCase(), so `name` filters are Unicode case-insensitive (SQLite's lower() is ASCII-only). */
    titleFolded: text("title_folded").notNull(),
    folderId: integer("folder_id"),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("smart_tables_workspace_seq").on(t.workspaceId, t.seq), index("smart_tables_workspace_folder").on(t.workspaceId, t.folderId, t.seq)],
);

/** A sheet's listing fields; row_count and version_count are copied from its Durable Object after each change. */
export const sheets = sqliteTable(
  "sheets",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull().unique(),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    tableId: text("table_id").notNull(),
    title: text("title").notNull(),
    /** 0-based display position among the table's live sheets (contiguous; kept so by every write). */
    position: integer("position").notNull(),
    rowCount: integer("row_count").notNull().default(0),
    versionCount: integer("version_count").notNull().default(0),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("sheets_table_position").on(t.tableId, t.position)],
);

export const SHEET_OPERATION_STATUSES = ["pending", "running", "completed", "failed"] as const;

export type SheetOperationStatus = (typeof SHEET_OPERATION_STATUSES)[number];

export const SHEET_IMPORT_SOURCES = ["file", "request_logs"] as const;

export type SheetImportSource = (typeof SHEET_IMPORT_SOURCES)[number];

/** An import into a sheet. `id` is the caller's operation_id (its idempotency key) or a generated one. */
export const sheetOperations = sqliteTable(
  "sheet_operations",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    id: text("id").notNull(),
    tableId: text("table_id").notNull(),
    sheetId: text("sheet_id").notNull(),
    source: text("source", { enum: SHEET_IMPORT_SOURCES }).notNull(),
    status: text("status", { enum: SHEET_OPERATION_STATUSES }).notNull().default("pending"),
    progress: integer("progress").notNull().default(0),
    message: text("message").notNull().default(""),
    rowsAdded: integer("rows_added").notNull().default(0),
    rowCount: integer("row_count").notNull().default(0),
    fileName: text("file_name"),
    /** csv | json for file imports. */
    format: text("format"),
    fileBytes: integer("file_bytes"),
    /** Where the uploaded file waits for the consumer (deleted once the import ends). */
    blobKey: text("blob_key"),
    /** The request-log filter of a request_logs import, as given. */
    params: text("params", { mode: "json" }).$type<Record<string, unknown> | null>(),
    errorMessage: text("error_message"),
    /** Runs started by the queue consumer: an import failing for internal reasons is given up after a few. */
    attempts: integer("attempts").notNull().default(0),
    /** Times the job sweeper re-queued the import after its heartbeat (updated_at) went stale. */
    redrives: integer("redrives").notNull().default(0),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("sheet_operations_workspace_id").on(t.workspaceId, t.id),
    // The job sweeper's scan: open imports by heartbeat.
    index("sheet_operations_open").on(t.updatedAt).where(sql`status IN ('pending', 'running')`),
  ],
);

/**
 * Which prompts, versions and labels a sheet's columns reference, written by the sheet's Durable
 * Object whenever a column changes, so GET /tables can filter on them without asking every sheet.
 */
export const sheetPromptRefs = sqliteTable(
  "sheet_prompt_refs",
  {
    id: integer("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull(),
    tableId: text("table_id").notNull(),
    sheetId: text("sheet_id").notNull(),
    columnId: text("column_id").notNull(),
    promptId: integer("prompt_id"),
    promptVersionId: integer("prompt_version_id"),
    promptLabelId: integer("prompt_label_id"),
  },
  (t) => [
    index("sheet_prompt_refs_column").on(t.sheetId, t.columnId),
    index("sheet_prompt_refs_prompt").on(t.workspaceId, t.promptId),
    index("sheet_prompt_refs_version").on(t.workspaceId, t.promptVersionId),
    index("sheet_prompt_refs_label").on(t.workspaceId, t.promptLabelId),
  ],
);

export type SmartTableRow = typeof smartTables.$inferSelect;

export type SheetRow = typeof sheets.$inferSelect;

export type SheetOperationRow = typeof sheetOperations.$inferSelect;
