// The entity types GET /api/public/v2/folders/entities lists. To add one, append an entry, e.g.
//   { type: "WORKFLOW", table: workflows, columns: standardColumns(workflows), externalIdType: "workflow" }
// (any table with id, name, workspaceId, folderId, createdBy, createdAt, updatedAt columns; map others by hand).
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { col, columnList, inJsonList as inList, nowMs } from "../../db/sql";
import { eventStatement } from "../webhooks";
import { auditStatement } from "../workspace";
import type { AuthContext } from "../../env";
import { grants } from "../../lib/scopes";
import { closeChangeRequestsOf, labelChange, protectedTemplateConflict } from "./label-changes";
import {
  abTestEvents,
  abTests,
  datasetGroups,
  datasets,
  envVars,
  externalIds,
  folders,
  labelChangeRequests,
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
import type { FolderEntitySource, RemoveContext } from "./folder-entities";

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

const isAdmin = (auth: AuthContext) => grants(auth.scopes ?? [], "admin");

/**
 * A template holding a protected release label is deleted only by an admin key: for any other key it
 * is a 409 naming it (judged now, and again in the delete's batch).
 */
async function guardPrompts(db: Db, auth: AuthContext, list: string[]): Promise<SQL | null> {
  if (isAdmin(auth)) return null;
  const protectedOf = sql`${promptLabels.workspaceId} = ${auth.workspaceId} AND ${inList(promptLabels.promptId, ids(list))} AND ${promptLabels.protected}`;
  const [hit] = await db.select({ promptId: promptLabels.promptId, name: promptLabels.name }).from(promptLabels).where(protectedOf).limit(1);
  if (hit) throw protectedTemplateConflict(hit.promptId, hit.name, "deleting it");
  return sql`NOT EXISTS (SELECT 1 FROM ${promptLabels} WHERE ${protectedOf})`;
}

/**
 * Prompts go with their versions and labels (request logs keep their copy of what was sent), each
 * label with its prompt_label.deleted audit row and event; with their A/B releases (a live one with
 * its ab_test.deleted row and event) and their labels' change requests (a pending one closed as
 * denied, with its row and event), which name the template and cannot outlive it.
 */
function removePrompts(ctx: RemoveContext, list: string[]) {
  const { workspaceId: ws, by, when } = ctx;
  const p = ids(list);
  const ofTemplates = sql`${abTests.workspaceId} = ${ws} AND ${inList(abTests.promptId, p)}`;
  return [
    ...abTestDeletions(ctx, sql`a.${col(abTests.workspaceId)} = ${ws} AND a.${col(abTests.promptId)} IN (SELECT value FROM json_each(${JSON.stringify(p)})) AND a.${col(abTests.deletedAt)} IS NULL`),
    ...closeChangeRequestsOf(ws, by, p, when),
    ...labelChange(by, {
      workspaceId: ws,
      type: "prompt_template_label_deleted",
      from: sql`${promptLabels} AS l JOIN ${promptVersions} AS v ON v.${col(promptVersions.id)} = l.${col(promptLabels.promptVersionId)} JOIN ${promptTemplates} AS t ON t.${col(promptTemplates.id)} = l.${col(promptLabels.promptId)}`,
      when: sql`l.${col(promptLabels.workspaceId)} = ${ws} AND l.${col(promptLabels.promptId)} IN (SELECT value FROM json_each(${JSON.stringify(p)})) AND ${when}`,
      details: sql`json_object('prompt_template_id', t.${col(promptTemplates.id)}, 'prompt_template_name', t.${col(promptTemplates.name)}, 'prompt_template_version_number', v.${col(promptVersions.version)}, 'prompt_template_label', l.${col(promptLabels.name)}, 'reason', 'prompt_template_deleted')`,
    }),
    sql`DELETE FROM ${labelChangeRequests} WHERE ${labelChangeRequests.workspaceId} = ${ws} AND ${inList(labelChangeRequests.promptId, p)} AND ${when}`,
    sql`DELETE FROM ${externalIds} WHERE ${externalIds.workspaceId} = ${ws} AND ${externalIds.entityType} = 'ab_test'
      AND ${externalIds.entityId} IN (SELECT CAST(${abTests.id} AS TEXT) FROM ${abTests} WHERE ${ofTemplates}) AND ${when}`,
    sql`DELETE FROM ${abTestEvents} WHERE ${abTestEvents.workspaceId} = ${ws} AND ${abTestEvents.abTestId} IN (SELECT ${abTests.id} FROM ${abTests} WHERE ${ofTemplates}) AND ${when}`,
    sql`DELETE FROM ${abTests} WHERE ${ofTemplates} AND ${when}`,
    sql`DELETE FROM ${promptLabels} WHERE ${promptLabels.workspaceId} = ${ws} AND ${inList(promptLabels.promptId, p)} AND ${when}`,
    sql`DELETE FROM ${promptVersions} WHERE ${inList(promptVersions.promptId, p)} AND ${when}`,
    sql`DELETE FROM ${promptTemplates} WHERE ${promptTemplates.workspaceId} = ${ws} AND ${inList(promptTemplates.id, p)} AND ${when}`,
  ];
}

function removeWorkflows({ workspaceId: ws, when }: RemoveContext, list: string[]) {
  const w = ids(list);
  return [
    sql`DELETE FROM ${workflowExecutionNodes} WHERE ${workflowExecutionNodes.executionId} IN
      (SELECT ${workflowExecutions.id} FROM ${workflowExecutions} WHERE ${workflowExecutions.workspaceId} = ${ws} AND ${inList(workflowExecutions.workflowId, w)}) AND ${when}`,
    sql`DELETE FROM ${workflowExecutions} WHERE ${workflowExecutions.workspaceId} = ${ws} AND ${inList(workflowExecutions.workflowId, w)} AND ${when}`,
    sql`DELETE FROM ${workflowReleaseLabels} WHERE ${workflowReleaseLabels.workspaceId} = ${ws} AND ${inList(workflowReleaseLabels.workflowId, w)} AND ${when}`,
    sql`DELETE FROM ${workflowVersions} WHERE ${workflowVersions.workspaceId} = ${ws} AND ${inList(workflowVersions.workflowId, w)} AND ${when}`,
    sql`DELETE FROM ${workflows} WHERE ${workflows.workspaceId} = ${ws} AND ${inList(workflows.id, w)} AND ${when}`,
  ];
}

/** Tools go with their versions, labels and variables, each variable with its env_var.deleted audit row (its key, never its value). */
function removeTools({ workspaceId: ws, by, when }: RemoveContext, list: string[]) {
  const t = ids(list);
  const vars = sql`${envVars.workspaceId} = ${ws} AND ${inList(envVars.toolId, t)}`;
  return [
    auditStatement({
      workspaceId: ws,
      action: "env_var.deleted",
      by,
      targetType: "tool_env_var",
      targetId: sql`${envVars.id}`,
      details: sql`json_object('key', ${envVars.key}, 'tool_registry_id', ${envVars.toolId}, 'reason', 'tool_deleted')`,
      from: sql`${envVars}`,
      when: sql`${vars} AND ${when}`,
    }),
    sql`DELETE FROM ${envVars} WHERE ${vars} AND ${when}`,
    sql`DELETE FROM ${toolLabels} WHERE ${inList(toolLabels.toolId, t)} AND ${when}`,
    sql`DELETE FROM ${toolVersions} WHERE ${inList(toolVersions.toolId, t)} AND ${when}`,
    sql`DELETE FROM ${toolRegistry} WHERE ${toolRegistry.workspaceId} = ${ws} AND ${inList(toolRegistry.id, t)} AND ${when}`,
  ];
}

/** Dataset groups, skill collections and evaluations are archived, as their own delete routes do. */
function archiveDatasetGroups({ workspaceId: ws, when }: RemoveContext, list: string[]) {
  return [
    sql`UPDATE ${datasets} SET ${col(datasets.isDeleted)} = 1 WHERE ${datasets.workspaceId} = ${ws} AND ${inList(datasets.datasetGroupId, ids(list))} AND ${when}`,
    sql`UPDATE ${datasetGroups} SET ${col(datasetGroups.isDeleted)} = 1, ${col(datasetGroups.updatedAt)} = ${nowMs}
      WHERE ${datasetGroups.workspaceId} = ${ws} AND ${inList(datasetGroups.id, ids(list))} AND ${when}`,
  ];
}

function archiveSkillCollections({ workspaceId: ws, when }: RemoveContext, list: string[]) {
  return [
    sql`UPDATE ${skillCollections} SET ${col(skillCollections.isDeleted)} = 1, ${col(skillCollections.updatedAt)} = ${nowMs}
      WHERE ${skillCollections.workspaceId} = ${ws} AND ${inList(skillCollections.id, list)} AND ${when}`,
  ];
}

function archiveReports({ workspaceId: ws, when }: RemoveContext, list: string[]) {
  const r = ids(list);
  return [
    sql`UPDATE ${reports} SET ${col(reports.deleted)} = 1, ${col(reports.updatedAt)} = ${nowMs}
      WHERE ${reports.workspaceId} = ${ws} AND (${inList(reports.id, r)} OR ${inList(reports.parentReportId, r)}) AND ${when}`,
  ];
}

/**
 * The releases `live` selects (from ab_tests AS a) as DELETE /api/public/v2/ab-tests/{id} deletes
 * one: its trail row, its ab_test_deleted event and its ab_test.deleted audit row, then marked deleted
 * (the label serves its own version again).
 */
function abTestDeletions({ workspaceId: ws, by, when }: RemoveContext, live: SQL): SQL[] {
  const which = sql`${live} AND ${when}`;
  const details = sql`json_object('ab_test_id', a.${col(abTests.id)}, 'ab_test_name', a.${col(abTests.name)}, 'prompt_template_id', a.${col(abTests.promptId)}, 'release_label', a.${col(abTests.releaseLabel)}, 'status', a.${col(abTests.status)}, 'revision', a.${col(abTests.revision)}, 'via', 'folder')`;
  return [
    sql`INSERT INTO ${abTestEvents} (${columnList(abTestEvents, ["workspaceId", "abTestId", "revision", "action", "actor", "userId", "details"])})
      SELECT a.${col(abTests.workspaceId)}, a.${col(abTests.id)}, a.${col(abTests.revision)}, 'deleted', 'user', ${by?.userId ?? null}, json_object('via', 'folder') FROM ${abTests} AS a WHERE ${which}`,
    eventStatement({ workspaceId: ws, type: "ab_test_deleted", userId: by?.userId ?? null, from: sql`${abTests} AS a`, when: which, details }),
    auditStatement({ workspaceId: ws, action: "ab_test.deleted", by, targetType: "ab_test", targetId: sql`a.${col(abTests.id)}`, details, from: sql`${abTests} AS a`, when: which }),
    sql`UPDATE ${abTests} SET ${col(abTests.deletedAt)} = ${nowMs}, ${col(abTests.updatedAt)} = ${nowMs} WHERE ${abTests.id} IN (SELECT a.${col(abTests.id)} FROM ${abTests} AS a WHERE ${which})`,
  ];
}

function removeAbTests(ctx: RemoveContext, list: string[]) {
  return abTestDeletions(ctx, sql`a.${col(abTests.workspaceId)} = ${ctx.workspaceId} AND a.${col(abTests.id)} IN (SELECT value FROM json_each(${JSON.stringify(ids(list))})) AND a.${col(abTests.deletedAt)} IS NULL`);
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
  { type: "PROMPT", table: promptTemplates, columns: standardColumns(promptTemplates), externalIdType: "prompt_template", metadata: promptMetadata, remove: removePrompts, guardRemoval: guardPrompts },
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
