// D1 tables: the one source of truth. drizzle-kit generates migrations/ from this file.
// Times are epoch milliseconds (integers); JSON columns are text parsed by drizzle.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

import { nowMs as now } from "./sql";

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
    tags: text("tags", { mode: "json" }).notNull().default(sql`'[]'`).$type<string[]>(),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("prompt_templates_workspace_name").on(t.workspaceId, t.name),
    index("prompt_templates_workspace_folder").on(t.workspaceId, t.folderId),
  ],
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
    /** Every named score of the log, name → 0..100; `score` stays the one named "default" (or logged unnamed). */
    scores: text("scores", { mode: "json" }).notNull().default(sql`'{}'`).$type<Record<string, number>>(),
    /** The request group (request_groups) the log belongs to. */
    groupId: integer("group_id"),
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
    // Newest-first listing and a covering scan for filters on the scalar fields: counting matches
    // reads this index, never the wide rows (which hold the input and output JSON).
    index("request_logs_workspace_scan").on(
      t.workspaceId,
      t.requestStartTime,
      t.requestEndTime,
      t.model,
      t.provider,
      t.status,
      t.price,
      t.inputTokens,
      t.outputTokens,
      t.promptId,
      t.promptVersionNumber,
      t.outputFormat,
    ),
    index("request_logs_workspace_prompt").on(t.workspaceId, t.promptId, t.promptVersionNumber),
    // Engine filters, with the status after it: "engine in [...] AND status is X" is one index range.
    index("request_logs_workspace_model_status").on(t.workspaceId, t.model, t.status),
    // Provider and latency (an expression: latency_ms filters compile to end - start), so an OR
    // branch on them is an index range too and the OR never falls back to scanning the workspace.
    index("request_logs_workspace_provider_latency").on(t.workspaceId, t.provider, sql`(${t.requestEndTime} - ${t.requestStartTime})`),
    index("request_logs_workspace_price_start").on(t.workspaceId, t.price, t.requestStartTime),
    index("request_logs_workspace_group").on(t.workspaceId, t.groupId),
  ],
);

/** The dimensions request_log_daily keeps totals by; the key of `all` is ''. */
export const ROLLUP_DIMS = ["all", "model", "provider", "prompt", "status"] as const;

/**
 * Request-log totals per workspace, UTC day and one dimension's value: all logs, each model, each
 * provider, each prompt (key: its id), each status with its error type (key: "STATUS|error_type").
 * `all`, `model` and `provider` rows are split by latency bucket (src/analytics/latency-buckets.ts)
 * for percentiles; `prompt` and `status` rows have bucket -1. Kept by a trigger on request_logs, so
 * every way a log is written counts it in the same transaction: analytics over weeks read these
 * rows, never the logs.
 */
export const requestLogDaily = sqliteTable(
  "request_log_daily",
  {
    workspaceId: integer("workspace_id").notNull(),
    dim: text("dim", { enum: ROLLUP_DIMS }).notNull(),
    /** Start of the UTC day, epoch ms. */
    day: integer("day").notNull(),
    key: text("key").notNull(),
    bucket: integer("bucket").notNull(),
    requests: integer("requests").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    cost: real("cost").notNull(),
    /** Sum of the latencies, ms: averages stay exact. */
    latencyMs: integer("latency_ms").notNull(),
  },
  // Clustered by this key (the migration makes the table WITHOUT ROWID): a dimension's busiest values
  // are read as one short range each, and totals by value stream in key order.
  (t) => [primaryKey({ columns: [t.workspaceId, t.dim, t.key, t.day, t.bucket] })],
);

/** Request groups (the SDK's group.create / track.group): ids that tie logs of one flow together. */
export const requestGroups = sqliteTable("request_groups", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
  createdBy: integer("created_by"),
  createdAt: integer("created_at").notNull().default(now),
});

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
    // request_id last: a lookup reads log ids from the index alone, and a probe for one log is a seek.
    index("request_log_values_probe").on(t.workspaceId, t.kind, t.key, t.value, t.requestId),
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

/** Release labels of prompt versions: a name is unique per prompt and moves between its versions. */
export const promptLabels = sqliteTable(
  "prompt_labels",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    promptId: integer("prompt_id").notNull().references(() => promptTemplates.id),
    promptVersionId: integer("prompt_version_id").notNull().references(() => promptVersions.id),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("prompt_labels_prompt_name").on(t.promptId, t.name), index("prompt_labels_version").on(t.promptVersionId)],
);

/** Folders nest by parent_id; a name is unique among its siblings (root level counts as parent 0). */
export const folders = sqliteTable(
  "folders",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    parentId: integer("parent_id"),
    /** parent_id with root as 0, so the unique index also holds at root level (NULLs never collide). */
    parentKey: integer("parent_key").generatedAlwaysAs(sql`coalesce(parent_id, 0)`, { mode: "virtual" }),
    name: text("name").notNull(),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("folders_sibling_name").on(t.workspaceId, t.parentKey, t.name)],
);

export const toolRegistry = sqliteTable(
  "tool_registry",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    name: text("name").notNull(),
    description: text("description"),
    folderId: integer("folder_id"),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("tool_registry_workspace_name").on(t.workspaceId, t.name), index("tool_registry_workspace_folder").on(t.workspaceId, t.folderId)],
);

/**
 * Environment variables, of the workspace (tool_id null) or of one tool. The value is stored only
 * encrypted (src/lib/secret-box.ts); its last four characters are kept apart so lists can show them.
 */
export const envVars = sqliteTable(
  "env_vars",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    toolId: integer("tool_id"),
    /** tool_id with the workspace scope as 0, so the unique index also holds there (NULLs never collide). */
    scopeKey: integer("scope_key").generatedAlwaysAs(sql`coalesce(tool_id, 0)`, { mode: "virtual" }),
    key: text("key").notNull(),
    sealedValue: text("sealed_value").notNull(),
    valueSuffix: text("value_suffix"),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("env_vars_scope_key").on(t.workspaceId, t.scopeKey, t.key)],
);
export type EnvVarRow = typeof envVars.$inferSelect;

export const toolVersions = sqliteTable(
  "tool_versions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    toolId: integer("tool_id").notNull().references(() => toolRegistry.id),
    version: integer("version").notNull(),
    toolDefinition: text("tool_definition", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    execution: text("execution", { mode: "json" }).$type<Record<string, unknown> | null>(),
    commitMessage: text("commit_message"),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [uniqueIndex("tool_versions_tool_version").on(t.toolId, t.version)],
);

export const toolLabels = sqliteTable(
  "tool_labels",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    toolId: integer("tool_id").notNull().references(() => toolRegistry.id),
    toolVersionId: integer("tool_version_id").notNull().references(() => toolVersions.id),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("tool_labels_tool_name").on(t.toolId, t.name)],
);

/**
 * Every entity type that carries external IDs. Adding a type here (and calling externalIdRoutes) is
 * all a resource needs; the value is stored, so never rename one.
 */
export const EXTERNAL_ID_ENTITY_TYPES = [
  "prompt_template",
  "workflow",
  "folder",
  "dataset_group",
  "tool_registry",
  "skill_collection",
  "evaluation",
] as const;
export type ExternalIdEntityType = (typeof EXTERNAL_ID_ENTITY_TYPES)[number];

/**
 * External ID mappings of all entity types in one table. entity_id is text so integer ids and UUIDs
 * share it. The unique index is what makes a mapping belong to one entity, even under concurrency.
 */
export const externalIds = sqliteTable(
  "external_ids",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    entityType: text("entity_type", { enum: EXTERNAL_ID_ENTITY_TYPES }).notNull(),
    entityId: text("entity_id").notNull(),
    source: text("source").notNull(),
    externalId: text("external_id").notNull(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("external_ids_mapping").on(t.workspaceId, t.entityType, t.source, t.externalId),
    index("external_ids_entity").on(t.workspaceId, t.entityType, t.entityId),
  ],
);

export type RequestLogRow = typeof requestLogs.$inferSelect;
export type PromptVersionRow = typeof promptVersions.$inferSelect;
export type PromptTemplateRow = typeof promptTemplates.$inferSelect;
export type PromptLabelRow = typeof promptLabels.$inferSelect;
export type FolderRow = typeof folders.$inferSelect;
export type ToolRow = typeof toolRegistry.$inferSelect;
export type ToolVersionRow = typeof toolVersions.$inferSelect;

// --- Workflows ---

export const workflows = sqliteTable(
  "workflows",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    name: text("name").notNull(),
    folderId: integer("folder_id"),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("workflows_workspace_name").on(t.workspaceId, t.name)],
);

/** A stored node: the request's node plus its generated id. */
export interface WorkflowNodeRow {
  id: string;
  name: string;
  node_type: string;
  is_output_node: boolean;
  configuration: Record<string, unknown>;
  dependencies: string[];
}

export interface WorkflowEdgeRow {
  id: string;
  source_node_name: string;
  target_node_name: string;
  is_and: boolean;
  conditionals: Record<string, unknown>[];
}

/** Nodes and edges live in the version row: a version is immutable and always read whole. */
export const workflowVersions = sqliteTable(
  "workflow_versions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    workflowId: integer("workflow_id").notNull().references(() => workflows.id),
    versionNumber: integer("version_number").notNull(),
    commitMessage: text("commit_message"),
    requiredInputVariables: text("required_input_variables", { mode: "json" }).notNull().$type<Record<string, string>>(),
    nodes: text("nodes", { mode: "json" }).notNull().$type<WorkflowNodeRow[]>(),
    edges: text("edges", { mode: "json" }).notNull().$type<WorkflowEdgeRow[]>(),
    baseVersion: integer("base_version"),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [uniqueIndex("workflow_versions_number").on(t.workflowId, t.versionNumber)],
);

/** A release label names one version of a workflow; giving it to another version moves it. */
export const workflowReleaseLabels = sqliteTable(
  "workflow_release_labels",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    workflowId: integer("workflow_id").notNull().references(() => workflows.id),
    name: text("name").notNull(),
    workflowVersionId: integer("workflow_version_id").notNull().references(() => workflowVersions.id),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("workflow_release_labels_name").on(t.workflowId, t.name), index("workflow_release_labels_version").on(t.workflowVersionId)],
);

export const EXECUTION_STATUSES = ["QUEUED", "RUNNING", "COMPLETED", "FAILED"] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

export const workflowExecutions = sqliteTable(
  "workflow_executions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    workflowId: integer("workflow_id").notNull().references(() => workflows.id),
    workflowVersionId: integer("workflow_version_id").notNull().references(() => workflowVersions.id),
    status: text("status", { enum: EXECUTION_STATUSES }).notNull().default("QUEUED"),
    inputVariables: text("input_variables", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, string> | null>(),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    finishedAt: integer("finished_at"),
  },
  (t) => [index("workflow_executions_workspace").on(t.workspaceId, t.id)],
);

export const NODE_STATUSES = ["QUEUED", "RUNNING", "SUCCESS", "FAILED", "SKIPPED"] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

/** One row per node of an execution; a redelivered job overwrites its own rows, never adds rows. */
export const workflowExecutionNodes = sqliteTable(
  "workflow_execution_nodes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    executionId: integer("execution_id")
      .notNull()
      .references(() => workflowExecutions.id, { onDelete: "cascade" }),
    nodeName: text("node_name").notNull(),
    isOutputNode: integer("is_output_node", { mode: "boolean" }).notNull(),
    status: text("status", { enum: NODE_STATUSES }).notNull().default("QUEUED"),
    value: text("value", { mode: "json" }).$type<unknown>(),
    errorMessage: text("error_message"),
  },
  (t) => [uniqueIndex("workflow_execution_nodes_name").on(t.executionId, t.nodeName)],
);

export type WorkflowRow = typeof workflows.$inferSelect;
export type WorkflowVersionRow = typeof workflowVersions.$inferSelect;

// ---- datasets ----

/** A named, versioned dataset; versions are datasets rows. Names are unique per workspace. */
export const datasetGroups = sqliteTable(
  "dataset_groups",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    name: text("name").notNull(),
    folderId: integer("folder_id"),
    createdBy: integer("created_by"),
    isDeleted: integer("is_deleted", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("dataset_groups_workspace_name").on(t.workspaceId, t.name), index("dataset_groups_workspace_folder").on(t.workspaceId, t.folderId)],
);

/**
 * One version of a dataset group. version_number -1 is the group's draft; the unique index keeps one
 * draft per group. current_job_id is the fill job whose result the draft holds (newer jobs supersede).
 */
export const datasets = sqliteTable(
  "datasets",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    datasetGroupId: integer("dataset_group_id").notNull(),
    versionNumber: integer("version_number").notNull(),
    columnNames: text("column_names", { mode: "json" }).notNull().$type<string[]>(),
    filterParams: text("filter_params", { mode: "json" }).$type<Record<string, unknown>>(),
    currentJobId: integer("current_job_id"),
    isDeleted: integer("is_deleted", { mode: "boolean" }).notNull().default(false),
    userId: integer("user_id"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("datasets_group_version").on(t.datasetGroupId, t.versionNumber), index("datasets_workspace").on(t.workspaceId, t.id)],
);

export const DATASET_JOB_STATUSES = ["QUEUED", "RUNNING", "COMPLETED", "SUPERSEDED", "FAILED"] as const;
export type DatasetJobStatus = (typeof DATASET_JOB_STATUSES)[number];

/** A from-filter-params fill of a draft: its parameters (explicit ids included) and outcome. */
export const datasetJobs = sqliteTable(
  "dataset_jobs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    datasetId: integer("dataset_id").notNull(),
    params: text("params", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    status: text("status", { enum: DATASET_JOB_STATUSES }).notNull().default("QUEUED"),
    rowsAdded: integer("rows_added"),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [index("dataset_jobs_dataset").on(t.datasetId)],
);

/**
 * A dataset row: column → value. A request log appears at most once per dataset (the unique index
 * is what makes a redelivered fill job add nothing twice). Rows sort by (job_id, position).
 */
export const datasetRows = sqliteTable(
  "dataset_rows",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    datasetId: integer("dataset_id").notNull(),
    jobId: integer("job_id").notNull().default(0),
    position: integer("position").notNull(),
    requestLogId: integer("request_log_id"),
    values: text("values", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("dataset_rows_dataset_log").on(t.datasetId, t.requestLogId),
    index("dataset_rows_order").on(t.datasetId, t.jobId, t.position),
  ],
);

export type DatasetGroupRow = typeof datasetGroups.$inferSelect;
export type DatasetRow = typeof datasets.$inferSelect;
export const SKILL_PROVIDERS = ["claude_code", "openai", "openclaw"] as const;
export type SkillProvider = (typeof SKILL_PROVIDERS)[number];

/** One file of a skill collection version: its path, the SHA-256 of its bytes (the R2 key) and size. */
export type SkillManifestEntry = [path: string, sha256: string, size: number];

/**
 * Skill collections: versioned file sets. The collection row holds what renames change; contents
 * live in versions. `latest_version` is the number of the newest version, the guard that keeps
 * concurrent version writes from both claiming the same number.
 */
export const skillCollections = sqliteTable(
  "skill_collections",
  {
    id: text("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    folderId: integer("folder_id"),
    name: text("name").notNull(),
    rootPath: text("root_path").notNull(),
    provider: text("provider", { enum: SKILL_PROVIDERS }),
    isDeleted: integer("is_deleted", { mode: "boolean" }).notNull().default(false),
    latestVersion: integer("latest_version").notNull().default(0),
    createdBy: integer("created_by"),
    updatedBy: integer("updated_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("skill_collections_workspace_name").on(t.workspaceId, t.name),
    uniqueIndex("skill_collections_workspace_root_path").on(t.workspaceId, t.rootPath),
  ],
);

/**
 * A saved version: its manifest (path → SHA-256 of the bytes in R2) as one JSON value, so a version
 * is one row read or written at once (1,000 files of ≤1 KiB paths stay far below D1's 2 MB value).
 * A release label names at most one version per collection (NULLs do not collide in the index).
 */
export const skillCollectionVersions = sqliteTable(
  "skill_collection_versions",
  {
    id: text("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    collectionId: text("collection_id")
      .notNull()
      .references(() => skillCollections.id),
    number: integer("number").notNull(),
    rootPathAtVersion: text("root_path_at_version").notNull(),
    provider: text("provider", { enum: SKILL_PROVIDERS }),
    manifest: text("manifest", { mode: "json" }).notNull().$type<SkillManifestEntry[]>(),
    commitMessage: text("commit_message"),
    releaseLabel: text("release_label"),
    archived: integer("archived", { mode: "boolean" }).notNull().default(false),
    createdBy: integer("created_by"),
    userEmail: text("user_email"),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("skill_collection_versions_number").on(t.collectionId, t.number),
    uniqueIndex("skill_collection_versions_label").on(t.collectionId, t.releaseLabel),
  ],
);

export type SkillCollectionRow = typeof skillCollections.$inferSelect;
export type SkillCollectionVersionRow = typeof skillCollectionVersions.$inferSelect;

// ---------------------------------------------------------------------------------------------
// Smart tables. A sheet's columns, rows and cells live in its Durable Object; D1 keeps what
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

// ---------------------------------------------------------------------------------------------
// Webhooks. Events go to an outbox (webhook_events) in the same db.batch() as the change
// that causes them; dispatch fans each event out to one delivery per subscribed webhook, and the
// queue consumer makes the attempts, each one logged.

/** A workspace's receiver. `events` null: every event type (those added later too). */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    url: text("url").notNull(),
    description: text("description"),
    events: text("events", { mode: "json" }).$type<string[] | null>(),
    /** The signing secret itself: HMAC needs it, so it cannot be hashed. Never returned after creation. */
    secret: text("secret").notNull(),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("webhooks_workspace").on(t.workspaceId, t.deletedAt)],
);

/** The outbox. `id` is random, or deterministic where one change must give one event (a job's end). */
export const webhookEvents = sqliteTable(
  "webhook_events",
  {
    id: text("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull(),
    userId: integer("user_id"),
    eventType: text("event_type").notNull(),
    details: text("details", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    createdAt: integer("created_at").notNull().default(now),
    /** Set once the event's deliveries exist; null rows are what dispatch (and the sweeper) pick up. */
    dispatchedAt: integer("dispatched_at"),
  },
  (t) => [
    index("webhook_events_undispatched").on(t.workspaceId, t.createdAt).where(sql`dispatched_at IS NULL`),
    index("webhook_events_created").on(t.createdAt),
  ],
);

export const WEBHOOK_DELIVERY_STATUSES = ["pending", "sending", "retrying", "delivered", "failed"] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** One event to one webhook; `id` is the Standard Webhooks `webhook-id` (the same on every attempt). */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull(),
    webhookId: integer("webhook_id").notNull(),
    eventId: text("event_id").notNull(),
    status: text("status", { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    /** While an attempt is in flight: after this time the attempt is presumed lost and may be made again. */
    leaseUntil: integer("lease_until"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_webhook").on(t.eventId, t.webhookId),
    index("webhook_deliveries_webhook").on(t.webhookId, t.createdAt),
    index("webhook_deliveries_open").on(t.nextAttemptAt).where(sql`status IN ('pending', 'sending', 'retrying')`),
    // The sweeper's retention pass reads closed deliveries by age every minute: without this it scans them all.
    index("webhook_deliveries_closed").on(t.createdAt).where(sql`status IN ('delivered', 'failed')`),
  ],
);

/** The delivery log: every attempt, its time, the receiver's status code (null: no answer) and error. */
export const webhookDeliveryAttempts = sqliteTable(
  "webhook_delivery_attempts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull(),
    deliveryId: text("delivery_id").notNull(),
    attempt: integer("attempt").notNull(),
    attemptedAt: integer("attempted_at").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
  },
  (t) => [uniqueIndex("webhook_delivery_attempts_number").on(t.deliveryId, t.attempt)],
);

export type WebhookRow = typeof webhooks.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

// ---- evaluations ----
// A report is an evaluation pipeline (is_blueprint, its columns run over a dataset version) or one run
// of it (is_blueprint false, parent_report_id = the pipeline), which snapshots the pipeline's columns.

export const REPORT_RUN_STATUSES = ["RUNNING", "COMPLETED"] as const;
export type ReportRunStatus = (typeof REPORT_RUN_STATUSES)[number];

export const reports = sqliteTable(
  "reports",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    name: text("name").notNull(),
    comment: text("comment"),
    tags: text("tags", { mode: "json" }).notNull().$type<string[]>().default(sql`'[]'`),
    folderId: integer("folder_id"),
    isBlueprint: integer("is_blueprint", { mode: "boolean" }).notNull(),
    parentReportId: integer("parent_report_id"),
    datasetGroupId: integer("dataset_group_id").notNull(),
    datasetId: integer("dataset_id").notNull(),
    /** Runs only: RUNNING until every row is evaluated. */
    status: text("status", { enum: REPORT_RUN_STATUSES }),
    /** Runs only: rows of the dataset at the start of the run. */
    rowCount: integer("row_count"),
    /** Runs only: the built-in score, computed when the run completes. */
    score: text("score", { mode: "json" }).$type<Record<string, unknown>>(),
    deleted: integer("deleted", { mode: "boolean" }).notNull().default(false),
    userId: integer("user_id"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [
    index("reports_workspace_blueprint").on(t.workspaceId, t.isBlueprint, t.id),
    index("reports_parent").on(t.parentReportId),
    index("reports_workspace_folder").on(t.workspaceId, t.folderId),
  ],
);

/** A column of a pipeline (or of a run's snapshot): a block of the shared engine, in position order (1-based). */
export const reportColumns = sqliteTable(
  "report_columns",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    reportId: integer("report_id").notNull(),
    columnType: text("column_type").notNull(),
    name: text("name").notNull(),
    position: integer("position").notNull(),
    configuration: text("configuration", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    isPartOfScore: integer("is_part_of_score", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("report_columns_report_name").on(t.reportId, t.name), index("report_columns_report_position").on(t.reportId, t.position)],
);

export const REPORT_ROW_STATES = ["QUEUED", "RUNNING", "DONE"] as const;
export type ReportRowState = (typeof REPORT_ROW_STATES)[number];

/** The cells of one run row, keyed by String(column id). */
export type ReportCells = Record<string, { status: "COMPLETED" | "FAILED"; value: unknown; error_message: string | null }>;

/**
 * One dataset row of a run and its results. Created with the run (one per dataset row); the run job
 * writes a row's cells once, when all its columns are evaluated (state DONE), so a redelivered job
 * only evaluates rows not yet DONE.
 */
export const reportRows = sqliteTable(
  "report_rows",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    reportId: integer("report_id").notNull(),
    rowIndex: integer("row_index").notNull(),
    datasetRowId: integer("dataset_row_id").notNull(),
    state: text("state", { enum: REPORT_ROW_STATES }).notNull().default("QUEUED"),
    cells: text("cells", { mode: "json" }).$type<ReportCells>(),
    completedCount: integer("completed_count").notNull().default(0),
    failedCount: integer("failed_count").notNull().default(0),
    /** When a delivery claimed the row (RUNNING): another delivery takes it only once this lease is stale. */
    claimedAt: integer("claimed_at"),
    /** Times the row was claimed: a row whose evaluation keeps being cut off is failed, not tried forever. */
    claims: integer("claims").notNull().default(0),
  },
  (t) => [uniqueIndex("report_rows_report_row").on(t.reportId, t.rowIndex), index("report_rows_report_state").on(t.reportId, t.state, t.rowIndex)],
);

export type ReportRow = typeof reports.$inferSelect;
export type ReportColumnRow = typeof reportColumns.$inferSelect;
