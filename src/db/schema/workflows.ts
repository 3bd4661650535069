// Workflows: versions with their nodes and edges, release labels, executions.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";
import { workspaces } from "./accounts";

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
    /** When the run last made progress (null: not started); the job sweeper re-queues a run whose heartbeat went stale. */
    heartbeatAt: integer("heartbeat_at"),
    redrives: integer("redrives").notNull().default(0),
    /** What the run's caller asked the outputs in: its completion message carries them so. */
    returnAllOutputs: integer("return_all_outputs", { mode: "boolean" }).notNull().default(false),
    /** The Python SDK's channel_name_suffix: the run also ends on channel workflows:<workflow id>:run:<suffix>. */
    channelNameSuffix: text("channel_name_suffix"),
  },
  (t) => [
    index("workflow_executions_workspace").on(t.workspaceId, t.id),
    index("workflow_executions_channel").on(t.workflowId, t.channelNameSuffix).where(sql`channel_name_suffix IS NOT NULL`),
    index("workflow_executions_open").on(t.heartbeatAt, t.createdAt).where(sql`status IN ('QUEUED', 'RUNNING')`),
  ],
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

