// Evaluations. A report is an evaluation pipeline (is_blueprint, its columns run over a dataset version) or one run
// of it (is_blueprint false, parent_report_id = the pipeline), which snapshots the pipeline's columns.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";
import { workspaces } from "./accounts";

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
    /** Runs: also the heartbeat of the run's job (each delivery touches it). */
    updatedAt: integer("updated_at").notNull().default(now),
    /** Runs: times the job sweeper re-queued the run after its heartbeat went stale. */
    redrives: integer("redrives").notNull().default(0),
  },
  (t) => [
    index("reports_workspace_blueprint").on(t.workspaceId, t.isBlueprint, t.id),
    index("reports_parent").on(t.parentReportId),
    index("reports_workspace_folder").on(t.workspaceId, t.folderId),
    index("reports_running").on(t.updatedAt).where(sql`status = 'RUNNING' AND is_blueprint = 0`),
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
