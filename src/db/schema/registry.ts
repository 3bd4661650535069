// The prompt registry (templates, versions, labels), folders, the tool registry with its environment variables, and external IDs.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";
import { workspaces } from "./accounts";

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
    /**
     * Moved on by triggers (migration 0030) whenever the template, one of its versions, labels or
     * external IDs changes: the edge cache's proof that a cached read still holds (src/prompts/cache.ts).
     */
    cacheGeneration: integer("cache_generation").notNull().default(0),
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

/** Release labels of prompt versions: a name is unique per prompt and moves between its versions. */
export const promptLabels = sqliteTable(
  "prompt_labels",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    promptId: integer("prompt_id").notNull().references(() => promptTemplates.id),
    promptVersionId: integer("prompt_version_id").notNull().references(() => promptVersions.id),
    name: text("name").notNull(),
    /** A protected label moves only through an approved change request (label_change_requests). */
    protected: integer("protected", { mode: "boolean" }).notNull().default(false),
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

/**
 * The entity types a folder holds (GET folders/entities), names only, here so the answer schemas can
 * name them without the registry's services. Every type the endpoint knows; those without a registered
 * source (services/registry/folder-entity-sources.ts) simply list nothing.
 */
export const FOLDER_ENTITY_TYPES = [
  "FOLDER",
  "PROMPT",
  "SNIPPET",
  "WORKFLOW",
  "DATASET",
  "REPORT",
  "AB_TEST",
  "INPUT_VARIABLE_SET",
  "SKILL_COLLECTION",
  "TOOL_REGISTRY",
] as const;
export type FolderEntityType = (typeof FOLDER_ENTITY_TYPES)[number];

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
    /** False for a placeholder created without a value. The value's suffix is never stored in plain text: lists open the sealed value. */
    hasValue: integer("has_value", { mode: "boolean" }).notNull().default(false),
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
  "ab_test",
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

export type PromptVersionRow = typeof promptVersions.$inferSelect;

export type PromptTemplateRow = typeof promptTemplates.$inferSelect;

export type PromptLabelRow = typeof promptLabels.$inferSelect;

export type FolderRow = typeof folders.$inferSelect;

export type ToolRow = typeof toolRegistry.$inferSelect;

export type ToolVersionRow = typeof toolVersions.$inferSelect;

