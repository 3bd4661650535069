// D1 tables: the one source of truth. drizzle-kit generates migrations/ from this file.
// Times are epoch milliseconds (integers); JSON columns are text parsed by drizzle.
import { sql } from "drizzle-orm";
import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = sql`(cast(unixepoch('subsec') * 1000 as integer))`;

export const REQUEST_STATUSES = ["SUCCESS", "WARNING", "ERROR"] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** Kinds of rows in the search side table; tag and tool rows have key ''. */
export const INDEX_KINDS = ["tag", "tool", "metadata", "input_variable", "output"] as const;
export type IndexKind = (typeof INDEX_KINDS)[number];

/** What a log's output is, derived when it is logged (the is_json / is_tool_call / is_plain_text filters). */
export const OUTPUT_FORMATS = ["json", "tool_call", "text", "empty"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The virtual intent fields of the filter group (PromptLayer's vocabulary). */
export const USER_INTENTS = ["frustrated", "satisfied", "curious"] as const;
export const AGENT_INTENTS = ["apologetic", "refusal", "uncertain"] as const;

/** Fields whose values the suggestions endpoint serves from request_log_facets. */
export const FACET_FIELDS = [
  "engine",
  "provider_type",
  "prompt_id",
  "prompt",
  "tags",
  "metadata_keys",
  "status",
  "tool_names",
  "output_keys",
  "input_variable_keys",
  "metadata_values",
  "output_values",
  "input_variable_values",
] as const;
export type FacetField = (typeof FACET_FIELDS)[number];

export const workspaces = sqliteTable("workspaces", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  createdAt: integer("created_at").notNull().default(now),
});

export const users = sqliteTable(
  "users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    email: text("email").notNull(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [uniqueIndex("users_workspace_email").on(t.workspaceId, t.email)],
);

/** Only the SHA-256 of a key is kept; `prefix` (the first characters) lets people list and revoke. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    userId: integer("user_id").notNull().references(() => users.id),
    keyHash: text("key_hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    createdAt: integer("created_at").notNull().default(now),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("api_keys_prefix").on(t.prefix)],
);

export const promptTemplates = sqliteTable(
  "prompt_templates",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    name: text("name").notNull(),
    folderId: integer("folder_id"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("prompt_templates_workspace_name").on(t.workspaceId, t.name)],
);

export const promptVersions = sqliteTable(
  "prompt_versions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    promptId: integer("prompt_id").notNull().references(() => promptTemplates.id),
    version: integer("version").notNull(),
    promptTemplate: text("prompt_template", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown> | null>(),
    commitMessage: text("commit_message"),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [uniqueIndex("prompt_versions_prompt_version").on(t.promptId, t.version)],
);

export const requestLogs = sqliteTable(
  "request_logs",
  {
    // AUTOINCREMENT: ids are never reused, so the newest row of a write batch is max(id).
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    apiType: text("api_type"),
    input: text("input", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    output: text("output", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    parameters: text("parameters", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    tags: text("tags", { mode: "json" }).notNull().$type<string[]>(),
    metadata: text("metadata", { mode: "json" }).notNull().$type<Record<string, string>>(),
    promptName: text("prompt_name"),
    promptId: integer("prompt_id"),
    promptVersionNumber: integer("prompt_version_number"),
    promptVersionId: integer("prompt_version_id"),
    promptInputVariables: text("prompt_input_variables", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    price: real("price").notNull().default(0),
    functionName: text("function_name").notNull().default(""),
    score: integer("score").notNull().default(0),
    scoreName: text("score_name"),
    status: text("status", { enum: REQUEST_STATUSES }).notNull().default("SUCCESS"),
    errorType: text("error_type"),
    errorMessage: text("error_message"),
    requestStartTime: integer("request_start_time").notNull(),
    requestEndTime: integer("request_end_time").notNull(),
    createdBy: integer("created_by"),
    /** The key that wrote the log; a trigger refuses the insert when that key is revoked. */
    apiKeyId: integer("api_key_id"),
    createdAt: integer("created_at").notNull().default(now),
    // Derived at log time for search (see request-log-index.ts); request_logs_fts indexes the texts.
    inputText: text("input_text").notNull().default(""),
    outputText: text("output_text").notNull().default(""),
    outputFormat: text("output_format", { enum: OUTPUT_FORMATS }).notNull().default("empty"),
    userIntent: text("user_intent", { enum: USER_INTENTS }),
    agentIntent: text("agent_intent", { enum: AGENT_INTENTS }),
  },
  (t) => [
    index("request_logs_workspace_start").on(t.workspaceId, t.requestStartTime),
    index("request_logs_workspace_prompt").on(t.workspaceId, t.promptId, t.promptVersionNumber),
    index("request_logs_workspace_model").on(t.workspaceId, t.model),
    index("request_logs_workspace_price").on(t.workspaceId, t.price),
  ],
);

/**
 * The search side table: one row per (log, kind, key, value) so that filters and autocomplete are
 * index lookups instead of JSON scans. One table for every kind (rather than a table per kind) so a
 * log's side rows are one insert and the filter compiler has one shape to join.
 */
export const requestLogValues = sqliteTable(
  "request_log_values",
  {
    id: integer("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull(),
    requestId: integer("request_id")
      .notNull()
      .references(() => requestLogs.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: INDEX_KINDS }).notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
  },
  (t) => [
    index("request_log_values_lookup").on(t.workspaceId, t.kind, t.key, t.value),
    index("request_log_values_request").on(t.requestId),
  ],
);

/**
 * Autocomplete counts: one row per (workspace, suggestion field, key, value) with the number of logs
 * that carry it, kept up to date in the log's own batch, so suggestions without a filter_group are
 * an index range read instead of a GROUP BY over every log. `value_fold` is the value lower-cased
 * (full Unicode, in JS) for the case-insensitive prefix; `key` is '' for fields without one, the
 * metadata/output/input-variable key for *_values, and the prompt id for `prompt`.
 */
export const requestLogFacets = sqliteTable(
  "request_log_facets",
  {
    id: integer("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull(),
    field: text("field", { enum: FACET_FIELDS }).notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    valueFold: text("value_fold").notNull(),
    count: integer("count").notNull().default(0),
  },
  (t) => [
    uniqueIndex("request_log_facets_value").on(t.workspaceId, t.field, t.key, t.value),
    index("request_log_facets_fold").on(t.workspaceId, t.field, t.key, t.valueFold),
    index("request_log_facets_count").on(t.workspaceId, t.field, t.key, t.count),
  ],
);

export type RequestLogRow = typeof requestLogs.$inferSelect;
export type PromptVersionRow = typeof promptVersions.$inferSelect;

// ---------------------------------------------------------------------------------------------
// Smart tables (issue 7). A sheet's columns, rows and cells live in its Durable Object; D1 keeps what
// lists and lookups across a workspace need. `seq` (AUTOINCREMENT, never reused) orders lists and is
// the keyset of their cursors, so paging visits each row once even while rows are being added.

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
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("sheet_operations_workspace_id").on(t.workspaceId, t.id)],
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
