// The entity types GET /api/public/v2/folders/entities lists. To add one, append an entry, e.g.
//   { type: "WORKFLOW", table: workflows, columns: standardColumns(workflows), externalIdType: "workflow" }
// (any table with id, name, workspaceId, folderId, createdAt, updatedAt columns; map others by hand).
import { sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db } from "../db/client";
import { inJsonList } from "../db/sql";
import { datasetGroups, folders, promptTemplates, promptVersions, reports, skillCollections, toolRegistry, workflows } from "../db/schema";
import type { FolderEntitySource } from "./folder-entities";

interface StandardTable {
  id: SQLiteColumn;
  name: SQLiteColumn;
  workspaceId: SQLiteColumn;
  folderId: SQLiteColumn;
  createdAt: SQLiteColumn;
  updatedAt: SQLiteColumn;
}

export function standardColumns(t: StandardTable): FolderEntitySource["columns"] {
  return { id: t.id, name: t.name, workspaceId: t.workspaceId, folderId: t.folderId, createdAt: t.createdAt, updatedAt: t.updatedAt };
}

async function promptMetadata(db: Db, _ws: number, ids: string[]) {
  const rows = await db
    .select({
      promptId: promptVersions.promptId,
      version: promptVersions.version,
      type: sql<string | null>`json_extract(${promptVersions.promptTemplate}, '$.type')`,
    })
    .from(promptVersions)
    .where(
      sql`${inJsonList(promptVersions.promptId, ids.map(Number))}
        AND ${promptVersions.version} = (SELECT max(v2.version) FROM prompt_versions v2 WHERE v2.prompt_id = ${promptVersions.promptId})`,
    );
  return new Map<string, Record<string, unknown>>(rows.map((r) => [String(r.promptId), { type: r.type, latest_version_number: r.version }]));
}

export const FOLDER_ENTITY_SOURCES: FolderEntitySource[] = [
  {
    type: "FOLDER",
    table: folders,
    columns: { id: folders.id, name: folders.name, workspaceId: folders.workspaceId, folderId: folders.parentId, createdAt: folders.createdAt, updatedAt: folders.updatedAt },
    externalIdType: "folder",
  },
  { type: "PROMPT", table: promptTemplates, columns: standardColumns(promptTemplates), externalIdType: "prompt_template", metadata: promptMetadata },
  { type: "TOOL_REGISTRY", table: toolRegistry, columns: standardColumns(toolRegistry), externalIdType: "tool_registry" },
  { type: "WORKFLOW", table: workflows, columns: standardColumns(workflows), externalIdType: "workflow", metadata: workflowMetadata },
  { type: "DATASET", table: datasetGroups, columns: standardColumns(datasetGroups), externalIdType: "dataset_group", where: sql`${datasetGroups.isDeleted} = 0` },
  {
    type: "SKILL_COLLECTION",
    table: skillCollections,
    columns: standardColumns(skillCollections),
    where: sql`${skillCollections.isDeleted} = 0`,
    externalIdType: "skill_collection",
  },
  // Evaluation pipelines; their runs follow the pipeline and are not listed on their own.
  { type: "REPORT", table: reports, columns: standardColumns(reports), externalIdType: "evaluation", where: sql`${reports.isBlueprint} = 1 AND ${reports.deleted} = 0` },
];

async function workflowMetadata(db: Db, _ws: number, ids: string[]) {
  const rows = await db.all<{ workflow_id: number; latest: number }>(
    sql`SELECT workflow_id, max(version_number) AS latest FROM workflow_versions WHERE ${inJsonList(sql`workflow_id`, ids.map(Number))} GROUP BY workflow_id`,
  );
  return new Map<string, Record<string, unknown>>(rows.map((r) => [String(r.workflow_id), { latest_version_number: r.latest }]));
}
