// The tool registry: named tools (unique per workspace) with numbered versions of their OpenAI-format
// definition and optional release labels. Creation is one db.batch(): tool, first version, labels, mappings.
import { and, asc, desc, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { col, columnList, inJsonList, isUniqueViolation, nowMs } from "../../db/sql";
import { runBatch } from "../../db/batch";
import { toolLabels, toolRegistry, toolVersions, type ToolRow, type ToolVersionRow } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { grants } from "../../lib/scopes";
import { toIso } from "../../lib/time";
import { type ExternalIdLookupQuery, type ExternalIdPair, externalIdsFor, newMappings, resolveExternalIdLookup } from "./external-ids";
import { requireFolder } from "./folders";
import { resourceConditions, resourceOrder, type ResourceFilters } from "../workspace";
import { labelStatements as moveLabels, type LabelTable } from "./release-labels";

type Obj = Record<string, unknown>;

export interface ToolVersionInput {
  tool_definition: Obj;
  execution?: Obj | null;
  commit_message?: string | null;
  release_labels?: string[] | null;
}

export interface CreateToolInput extends ToolVersionInput {
  name: string;
  description?: string | null;
  folder_id?: number | null;
  external_ids?: ExternalIdPair[] | null;
}

export function toolView(t: ToolRow, ext: ExternalIdPair[]) {
  return {
    id: t.id,
    name: t.name,
    description: t.description ?? null,
    workspace_id: t.workspaceId,
    folder_id: t.folderId ?? null,
    created_at: toIso(t.createdAt),
    updated_at: toIso(t.updatedAt),
    external_ids: ext,
  };
}

export async function versionView(db: Db, v: ToolVersionRow) {
  const labels = await db.select({ name: toolLabels.name }).from(toolLabels).where(eq(toolLabels.toolVersionId, v.id)).orderBy(asc(toolLabels.name));
  return {
    id: v.id,
    tool_registry_id: v.toolId,
    version_number: v.version,
    tool_definition: v.toolDefinition,
    execution: v.execution ?? null,
    commit_message: v.commitMessage ?? null,
    created_by: v.createdBy ?? null,
    created_at: toIso(v.createdAt),
    labels: labels.map((l) => l.name),
  };
}

export async function toolExists(db: Db, ws: number, id: number): Promise<boolean> {
  const [row] = await db.select({ id: toolRegistry.id }).from(toolRegistry).where(and(eq(toolRegistry.workspaceId, ws), eq(toolRegistry.id, id))).limit(1);
  return Boolean(row);
}

/** A tool by id or name; a numeric identifier is tried as an id first, then as a name. */
export async function requireTool(db: Db, ws: number, identifier: string): Promise<ToolRow> {
  if (/^[1-9][0-9]{0,15}$/.test(identifier)) {
    const [byId] = await db.select().from(toolRegistry).where(and(eq(toolRegistry.workspaceId, ws), eq(toolRegistry.id, Number(identifier)))).limit(1);
    if (byId) return byId;
  }
  const [byName] = await db.select().from(toolRegistry).where(and(eq(toolRegistry.workspaceId, ws), eq(toolRegistry.name, identifier))).limit(1);
  if (!byName) throw ApiError.notFound("tool registry entry");
  return byName;
}

function insertVersion(ws: number, toolIdSql: SQL, input: ToolVersionInput, userId: number): SQL {
  const v = toolVersions;
  return sql`
    INSERT INTO ${v} (${columnList(v, ["workspaceId", "toolId", "version", "toolDefinition", "execution", "commitMessage", "createdBy"])})
    SELECT ${ws}, t.${col(toolRegistry.id)}, coalesce((SELECT max(${v.version}) FROM ${v} WHERE ${v.toolId} = t.${col(toolRegistry.id)}), 0) + 1,
           ${JSON.stringify(input.tool_definition)}, ${input.execution ? JSON.stringify(input.execution) : null}, ${input.commit_message ?? null}, ${userId}
    FROM (${toolIdSql}) AS t
    RETURNING ${col(v.id)}`;
}

/** The tools' release labels (release-labels.ts). */
const TOOL_LABELS: LabelTable = {
  labels: toolLabels,
  workspaceId: toolLabels.workspaceId,
  owner: toolLabels.toolId,
  version: toolLabels.toolVersionId,
  name: toolLabels.name,
  updatedAt: toolLabels.updatedAt,
  versions: toolVersions,
  versionId: toolVersions.id,
  versionOwner: toolVersions.toolId,
};

const labelStatements = (ws: number, toolIdSql: SQL, labels: string[] | null | undefined) => moveLabels(TOOL_LABELS, ws, toolIdSql, labels);

async function latestVersion(db: Db, toolId: number): Promise<ToolVersionRow> {
  const [v] = await db.select().from(toolVersions).where(eq(toolVersions.toolId, toolId)).orderBy(desc(toolVersions.version)).limit(1);
  return v;
}

/**
 * A version whose execution declares environment variables reads their values when it runs
 * (test-execute answers what it returns): storing one takes the admin scope, as reading a secret
 * does nowhere else (settings:write sets values and never reads them).
 */
function requireAdminForEnvVars(auth: AuthContext, input: ToolVersionInput): void {
  const declared = (input.execution as { env_vars?: unknown } | null | undefined)?.env_vars;
  if (Array.isArray(declared) && declared.length > 0 && !grants(auth.scopes ?? [], "admin")) {
    throw new ApiError("forbidden", "execution.env_vars: a tool version that declares environment variables reads their values when it runs, so storing one needs an API key with the admin scope", {
      details: [{ field: "execution.env_vars", rule: "needs scope admin" }],
    });
  }
}

export async function createTool(db: Db, auth: AuthContext, input: CreateToolInput) {
  requireAdminForEnvVars(auth, input);
  const ws = auth.workspaceId;
  await requireFolder(db, ws, input.folder_id);
  const mappings = await newMappings(db, ws, "tool_registry", null, input.external_ids);
  const self = sql`SELECT ${toolRegistry.id} FROM ${toolRegistry} WHERE ${toolRegistry.workspaceId} = ${ws} AND ${toolRegistry.name} = ${input.name}`;
  try {
    await runBatch(db, [
      db.insert(toolRegistry).values({ workspaceId: ws, name: input.name, description: input.description ?? null, folderId: input.folder_id ?? null, createdBy: auth.userId }),
      insertVersion(ws, self, input, auth.userId),
      ...labelStatements(ws, self, input.release_labels),
      ...mappings.attach(self),
    ]);
  } catch (err) {
    if (isUniqueViolation(err, toolRegistry)) {
      throw new ApiError("conflict", `name: a tool named "${input.name}" already exists in this workspace`);
    }
    mappings.throwIfTaken(err);
    throw err;
  }
  const [tool] = await db.select().from(toolRegistry).where(sql`${toolRegistry.id} = (${self})`);
  const ext = (await externalIdsFor(db, ws, "tool_registry", [tool.id])).get(String(tool.id)) ?? [];
  return { tool_registry: toolView(tool, ext), version: await versionView(db, await latestVersion(db, tool.id)), external_ids: ext };
}

export async function addToolVersion(db: Db, auth: AuthContext, identifier: string, input: ToolVersionInput) {
  requireAdminForEnvVars(auth, input);
  const tool = await requireTool(db, auth.workspaceId, identifier);
  const self = sql`SELECT ${tool.id} AS id`;
  const [written] = await runBatch(db, [
    insertVersion(auth.workspaceId, self, input, auth.userId),
    db.update(toolRegistry).set({ updatedAt: nowMs }).where(eq(toolRegistry.id, tool.id)),
    ...labelStatements(auth.workspaceId, self, input.release_labels),
  ]);
  // The answer describes the version this call wrote, not whichever is newest by now.
  const id = (written.results[0] as { id: number }).id;
  const [row] = await db.select().from(toolVersions).where(eq(toolVersions.id, id));
  return versionView(db, row);
}

export async function getTool(db: Db, ws: number, identifier: string, sel: { version?: number; label?: string }) {
  if (sel.version !== undefined && sel.label !== undefined) throw new ApiError("validation_error", "version: give either version or label, not both");
  const tool = await requireTool(db, ws, identifier);
  let v: ToolVersionRow | undefined;
  if (sel.label !== undefined) {
    [v] = await db
      .select({ v: toolVersions })
      .from(toolLabels)
      .innerJoin(toolVersions, eq(toolVersions.id, toolLabels.toolVersionId))
      .where(and(eq(toolLabels.toolId, tool.id), eq(toolLabels.name, sel.label)))
      .limit(1)
      .then((r) => r.map((x) => x.v));
    if (!v) throw new ApiError("not_found", `label: no label "${sel.label}" on this tool`);
  } else if (sel.version !== undefined) {
    [v] = await db.select().from(toolVersions).where(and(eq(toolVersions.toolId, tool.id), eq(toolVersions.version, sel.version))).limit(1);
    if (!v) throw new ApiError("not_found", `version: tool has no version ${sel.version}`);
  } else {
    v = await latestVersion(db, tool.id);
  }
  const labels = await db
    .select({ id: toolLabels.id, name: toolLabels.name, tool_version_id: toolLabels.toolVersionId, version_number: toolVersions.version })
    .from(toolLabels)
    .innerJoin(toolVersions, eq(toolVersions.id, toolLabels.toolVersionId))
    .where(eq(toolLabels.toolId, tool.id))
    .orderBy(asc(toolLabels.name));
  const ext = (await externalIdsFor(db, ws, "tool_registry", [tool.id])).get(String(tool.id)) ?? [];
  const version = v ? await versionView(db, v) : null;
  return { ...toolView(tool, ext), labels, version, tool_definition: version?.tool_definition ?? null };
}

export interface ListToolsQuery extends ExternalIdLookupQuery, Omit<ResourceFilters, "name"> {
  sort_order: "asc" | "desc";
}

export async function listTools(db: Db, ws: number, q: ListToolsQuery) {
  const lookup = await resolveExternalIdLookup(db, ws, "tool_registry", q);
  if (lookup === null) return [];
  const t = toolRegistry;
  const columns = { id: t.id, name: t.name, userId: t.createdBy, createdAt: t.createdAt, updatedAt: t.updatedAt };
  const rows = await db
    .select()
    .from(t)
    .where(and(eq(t.workspaceId, ws), lookup !== undefined ? sql`CAST(${t.id} AS TEXT) = ${lookup}` : undefined, ...resourceConditions(ws, columns, q)))
    .orderBy(...resourceOrder(columns, q));
  const ids = rows.map((r) => r.id);
  const ext = await externalIdsFor(db, ws, "tool_registry", ids);
  const vs = await db
    .select({ toolId: toolVersions.toolId, n: sql<number>`max(${toolVersions.version})` })
    .from(toolVersions)
    .where(inJsonList(toolVersions.toolId, ids))
    .groupBy(toolVersions.toolId);
  const latest = new Map(vs.map((v) => [v.toolId, v.n]));
  return rows.map((r) => ({ ...toolView(r, ext.get(String(r.id)) ?? []), latest_version_number: latest.get(r.id) ?? null }));
}
