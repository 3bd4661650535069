// The entity types GET /api/public/v2/folders/entities lists. To add one, append an entry, e.g.
//   { type: "WORKFLOW", table: workflows, columns: standardColumns(workflows), externalIdType: "workflow" }
// (any table with id, name, workspaceId, folderId, createdBy, createdAt, updatedAt columns; map others by hand).
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { col, columnList, inJsonList as inList, nowMs } from "../../db/sql";
import { eventStatement } from "../webhooks";
import {
  abTestEvents,
  abTests,
  datasetGroups,
  datasets,
  envVars,
  folders,
  promptLabels,
  promptTemplates,
  promptVersions,
  reports,
  skillCollections,
  toolLabels,
  toolRegistry,
  toolVersions,
  workflowExecutionNodes,
  workflowExecutions,
  workflowReleaseLabels,
  workflows,
  workflowVersions,
} from "../../db/schema";
import { latestVersionsOf } from "../../prompts";
import type { FolderEntitySource } from "./folder-entities";

type StandardTable = FolderEntitySource["columns"];

export function standardColumns(t: StandardTable): FolderEntitySource["columns"] {
  return { id: t.id, name: t.name, workspaceId: t.workspaceId, folderId: t.folderId, createdBy: t.createdBy, createdAt: t.createdAt, updatedAt: t.updatedAt };
}

async function promptMetadata(db: Db, _ws: number, ids: string[]) {
  const rows = await db
    .select({
      promptId: promptVersions.promptId,
      version: promptVersions.version,
      type: sql<string | null>`json_extract(${promptVersions.promptTemplate}, '$.type')`,
    })
    .from(promptVersions)
    .where(latestVersionsOf(ids.map(Number)));
  return new Map<string, Record<string, unknown>>(rows.map((r) => [String(r.promptId), { type: r.type, latest_version_number: r.version }]));
}

const ids = (values: string[]) => values.map(Number);

/** Prompts go with their versions and labels (request logs keep their copy of what was sent). */
function removePrompts(ws: number, list: string[]) {
  const p = inList(promptLabels.promptId, ids(list));
  return [
    sql`DELETE FROM ${promptLabels} WHERE ${promptLabels.workspaceId} = ${ws} AND ${p}`,
    sql`DELETE FROM ${promptVersions} WHERE ${inList(promptVersions.promptId, ids(list))}`,
    sql`DELETE FROM ${promptTemplates} WHERE ${promptTemplates.workspaceId} = ${ws} AND ${inList(promptTemplates.id, ids(list))}`,
  ];
}

function removeWorkflows(ws: number, list: string[]) {
  const w = ids(list);
  return [
    sql`DELETE FROM ${workflowExecutionNodes} WHERE ${workflowExecutionNodes.executionId} IN
      (SELECT ${workflowExecutions.id} FROM ${workflowExecutions} WHERE ${workflowExecutions.workspaceId} = ${ws} AND ${inList(workflowExecutions.workflowId, w)})`,
    sql`DELETE FROM ${workflowExecutions} WHERE ${workflowExecutions.workspaceId} = ${ws} AND ${inList(workflowExecutions.workflowId, w)}`,
    sql`DELETE FROM ${workflowReleaseLabels} WHERE ${workflowReleaseLabels.workspaceId} = ${ws} AND ${inList(workflowReleaseLabels.workflowId, w)}`,
    sql`DELETE FROM ${workflowVersions} WHERE ${workflowVersions.workspaceId} = ${ws} AND ${inList(workflowVersions.workflowId, w)}`,
    sql`DELETE FROM ${workflows} WHERE ${workflows.workspaceId} = ${ws} AND ${inList(workflows.id, w)}`,
  ];
}

function removeTools(ws: number, list: string[]) {
  const t = ids(list);
  return [
    sql`DELETE FROM ${envVars} WHERE ${envVars.workspaceId} = ${ws} AND ${inList(envVars.toolId, t)}`,
    sql`DELETE FROM ${toolLabels} WHERE ${inList(toolLabels.toolId, t)}`,
    sql`DELETE FROM ${toolVersions} WHERE ${inList(toolVersions.toolId, t)}`,
    sql`DELETE FROM ${toolRegistry} WHERE ${toolRegistry.workspaceId} = ${ws} AND ${inList(toolRegistry.id, t)}`,
  ];
}

/** Dataset groups, skill collections and evaluations are archived, as their own delete routes do. */
function archiveDatasetGroups(ws: number, list: string[]) {
  return [
    sql`UPDATE ${datasets} SET ${col(datasets.isDeleted)} = 1 WHERE ${datasets.workspaceId} = ${ws} AND ${inList(datasets.datasetGroupId, ids(list))}`,
    sql`UPDATE ${datasetGroups} SET ${col(datasetGroups.isDeleted)} = 1, ${col(datasetGroups.updatedAt)} = ${nowMs}
      WHERE ${datasetGroups.workspaceId} = ${ws} AND ${inList(datasetGroups.id, ids(list))}`,
  ];
}

function archiveSkillCollections(ws: number, list: string[]) {
  return [
    sql`UPDATE ${skillCollections} SET ${col(skillCollections.isDeleted)} = 1, ${col(skillCollections.updatedAt)} = ${nowMs}
      WHERE ${skillCollections.workspaceId} = ${ws} AND ${inList(skillCollections.id, list)}`,
  ];
}

function archiveReports(ws: number, list: string[]) {
  const r = ids(list);
  return [
    sql`UPDATE ${reports} SET ${col(reports.deleted)} = 1, ${col(reports.updatedAt)} = ${nowMs}
      WHERE ${reports.workspaceId} = ${ws} AND (${inList(reports.id, r)} OR ${inList(reports.parentReportId, r)})`,
  ];
}

/**
 * A/B releases are deleted as DELETE /api/public/v2/ab-tests/{id} deletes one: marked deleted (the
 * label serves its own version again), with its trail row and ab_test_deleted event.
 */
function removeAbTests(ws: number, list: string[]) {
  const live = sql`${abTests.workspaceId} = ${ws} AND ${inList(abTests.id, ids(list))} AND ${abTests.deletedAt} IS NULL`;
  return [
    sql`INSERT INTO ${abTestEvents} (${columnList(abTestEvents, ["workspaceId", "abTestId", "revision", "action", "actor", "details"])})
      SELECT ${abTests.workspaceId}, ${abTests.id}, ${abTests.revision}, 'deleted', 'user', json_object('via', 'folder') FROM ${abTests} WHERE ${live}`,
    eventStatement({
      workspaceId: ws,
      type: "ab_test_deleted",
      userId: null,
      from: sql`${abTests} AS a`,
      when: sql`a.${col(abTests.workspaceId)} = ${ws} AND a.${col(abTests.id)} IN (SELECT value FROM json_each(${JSON.stringify(ids(list))})) AND a.${col(abTests.deletedAt)} IS NULL`,
      details: sql`json_object('ab_test_id', a.${col(abTests.id)}, 'ab_test_name', a.${col(abTests.name)}, 'prompt_template_id', a.${col(abTests.promptId)}, 'release_label', a.${col(abTests.releaseLabel)}, 'status', a.${col(abTests.status)}, 'revision', a.${col(abTests.revision)})`,
    }),
    sql`UPDATE ${abTests} SET ${col(abTests.deletedAt)} = ${nowMs}, ${col(abTests.updatedAt)} = ${nowMs} WHERE ${live}`,
  ];
}

export const FOLDER_ENTITY_SOURCES: FolderEntitySource[] = [
  {
    type: "FOLDER",
    table: folders,
    columns: {
      id: folders.id,
      name: folders.name,
      workspaceId: folders.workspaceId,
      folderId: folders.parentId,
      createdBy: folders.createdBy,
      createdAt: folders.createdAt,
      updatedAt: folders.updatedAt,
    },
    externalIdType: "folder",
  },
  { type: "PROMPT", table: promptTemplates, columns: standardColumns(promptTemplates), externalIdType: "prompt_template", metadata: promptMetadata, remove: removePrompts },
  { type: "TOOL_REGISTRY", table: toolRegistry, columns: standardColumns(toolRegistry), externalIdType: "tool_registry", remove: removeTools },
  { type: "WORKFLOW", table: workflows, columns: standardColumns(workflows), externalIdType: "workflow", metadata: workflowMetadata, remove: removeWorkflows },
  {
    type: "DATASET",
    table: datasetGroups,
    columns: standardColumns(datasetGroups),
    externalIdType: "dataset_group",
    where: sql`${datasetGroups.isDeleted} = 0`,
    remove: archiveDatasetGroups,
  },
  {
    type: "SKILL_COLLECTION",
    table: skillCollections,
    columns: standardColumns(skillCollections),
    where: sql`${skillCollections.isDeleted} = 0`,
    externalIdType: "skill_collection",
    remove: archiveSkillCollections,
  },
  // Evaluation pipelines; their runs follow the pipeline and are not listed on their own.
  {
    type: "REPORT",
    table: reports,
    // An evaluation's creator is its user_id.
    columns: { id: reports.id, name: reports.name, workspaceId: reports.workspaceId, folderId: reports.folderId, createdBy: reports.userId, createdAt: reports.createdAt, updatedAt: reports.updatedAt },
    externalIdType: "evaluation",
    where: sql`${reports.isBlueprint} = 1 AND ${reports.deleted} = 0`,
    remove: archiveReports,
  },
  { type: "AB_TEST", table: abTests, columns: standardColumns(abTests), externalIdType: "ab_test", where: sql`${abTests.deletedAt} IS NULL`, metadata: abTestMetadata, remove: removeAbTests },
];

async function abTestMetadata(db: Db, ws: number, list: string[]) {
  const rows = await db
    .select({ id: abTests.id, promptId: abTests.promptId, label: abTests.releaseLabel, status: abTests.status, revision: abTests.revision })
    .from(abTests)
    .where(sql`${abTests.workspaceId} = ${ws} AND ${inList(abTests.id, ids(list))}`);
  return new Map<string, Record<string, unknown>>(rows.map((r) => [String(r.id), { prompt_template_id: r.promptId, release_label: r.label, status: r.status, revision: r.revision }]));
}

async function workflowMetadata(db: Db, _ws: number, ids: string[]) {
  const wv = workflowVersions;
  const rows = await db.all<{ workflow_id: number; latest: number }>(
    sql`SELECT ${wv.workflowId}, max(${wv.versionNumber}) AS latest FROM ${wv} WHERE ${inList(wv.workflowId, ids.map(Number))} GROUP BY ${wv.workflowId}`,
  );
  return new Map<string, Record<string, unknown>>(rows.map((r) => [String(r.workflow_id), { latest_version_number: r.latest }]));
}
