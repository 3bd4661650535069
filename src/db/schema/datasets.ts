// Datasets: groups, versions (the draft is version -1), rows, and the fill jobs that copy request logs in.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";
import { workspaces } from "./accounts";

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
    /** Times the job sweeper re-queued the job after its heartbeat (updated_at) went stale. */
    redrives: integer("redrives").notNull().default(0),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [index("dataset_jobs_dataset").on(t.datasetId), index("dataset_jobs_open").on(t.updatedAt).where(sql`status IN ('QUEUED', 'RUNNING')`)],
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
    /**
     * The prompt (id, version number) the copied log records, kept with the row: the logs live in a
     * log database, and the dataset list's prompt filters read these instead.
     */
    logPromptId: integer("log_prompt_id"),
    logPromptVersion: integer("log_prompt_version"),
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
