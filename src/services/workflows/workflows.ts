// Workflows: versions (POST creates a workflow or a version, PATCH merges into a base version), release
// labels (one version per label; giving it to another version moves it), listing and lookup.
// Writes of a version and its labels go in one db.batch(): the version number is MAX+1 inside the
// statement, so concurrent versions of one workflow never collide.
import { and, asc, desc, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonList, isUniqueViolation } from "../../db/sql";
import { workflowReleaseLabels, workflows, workflowVersions, type WorkflowEdgeRow, type WorkflowNodeRow, type WorkflowRow, type WorkflowVersionRow } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { externalIdsFor, labelStatements, listExternalIds, newMappings, requireFolder, resolveExternalIdLookup, resourceConditions, resourceOrder, type ExternalIdPair, type LabelTable, type NewMappings, type ResourceColumns, type ResourceFilters } from "../registry";
import { applyNodeChanges, validateGraph, type EdgeSpec, type GraphIssue, type NodeChange, type NodeSpec } from "./graph";
import { runBatch, type Statement } from "../../db/batch";
import { col, columnList, nowMs, qualified } from "../../db/sql";

export interface VersionInput {
  nodes: NodeSpec[];
  edges: EdgeSpec[];
  requiredInputVariables: Record<string, string>;
  commitMessage: string | null;
  releaseLabels: string[];
}

export interface CreateInput extends Partial<VersionInput> {
  name?: string | null;
  workflow_id?: number | null;
  workflow_name?: string | null;
  folder_id?: number | null;
  external_ids?: ExternalIdPair[] | null;
}

function graphError(issues: GraphIssue[]): ApiError {
  const shown = issues.slice(0, 5).map((i) => `${i.field}: ${i.rule}`);
  if (issues.length > 5) shown.push(`and ${issues.length - 5} more`);
  return new ApiError("validation_error", shown.join("; "), { details: issues });
}

/** Workflow by id (a decimal string) or by name; another workspace's workflow is not found. */
export async function findWorkflow(db: Db, workspaceId: number, idOrName: string): Promise<WorkflowRow | null> {
  if (/^[1-9][0-9]{0,15}$/.test(idOrName)) {
    const [byId] = await db.select().from(workflows).where(and(eq(workflows.workspaceId, workspaceId), eq(workflows.id, Number(idOrName)))).limit(1);
    if (byId) return byId;
  }
  const [byName] = await db.select().from(workflows).where(and(eq(workflows.workspaceId, workspaceId), eq(workflows.name, idOrName))).limit(1);
  return byName ?? null;
}

async function mustFindWorkflow(db: Db, workspaceId: number, idOrName: string): Promise<WorkflowRow> {
  const wf = await findWorkflow(db, workspaceId, idOrName);
  if (!wf) throw ApiError.notFound(`workflow ${JSON.stringify(idOrName)}`);
  return wf;
}

/** A version by number, by label, or the latest. */
export async function findVersion(db: Db, wf: WorkflowRow, sel: { version?: number | null; label?: string | null }): Promise<WorkflowVersionRow> {
  if (sel.label) {
    const [row] = await db
      .select({ v: workflowVersions })
      .from(workflowReleaseLabels)
      .innerJoin(workflowVersions, eq(workflowVersions.id, workflowReleaseLabels.workflowVersionId))
      .where(and(eq(workflowReleaseLabels.workflowId, wf.id), eq(workflowReleaseLabels.name, sel.label)))
      .limit(1);
    if (!row) throw ApiError.notFound(`release label ${JSON.stringify(sel.label)} of workflow ${JSON.stringify(wf.name)}`);
    return row.v;
  }
  const where = [eq(workflowVersions.workflowId, wf.id)];
  if (sel.version) where.push(eq(workflowVersions.versionNumber, sel.version));
  const [row] = await db.select().from(workflowVersions).where(and(...where)).orderBy(desc(workflowVersions.versionNumber)).limit(1);
  if (!row) throw ApiError.notFound(sel.version ? `version ${sel.version} of workflow ${JSON.stringify(wf.name)}` : `a version of workflow ${JSON.stringify(wf.name)}`);
  return row;
}

function checkGraph(v: VersionInput) {
  const res = validateGraph(v.nodes, v.edges, v.requiredInputVariables);
  if (!res.ok) throw graphError(res.issues);
}

const randomName = () => `workflow-${crypto.randomUUID().slice(0, 8)}`;

interface WriteOptions {
  create: boolean;
  baseVersion: number | null;
  /** Placed in (or, for an existing workflow, moved to) this folder; checked by the caller. */
  folderId?: number | null;
  /** External IDs to attach (already checked against other workflows by the caller). */
  mappings?: NewMappings;
}

/** The workflows' release labels (release-labels.ts); the newest version is the one the batch adds. */
const WORKFLOW_LABELS: LabelTable = {
  labels: workflowReleaseLabels,
  workspaceId: workflowReleaseLabels.workspaceId,
  owner: workflowReleaseLabels.workflowId,
  version: workflowReleaseLabels.workflowVersionId,
  name: workflowReleaseLabels.name,
  updatedAt: workflowReleaseLabels.updatedAt,
  versions: workflowVersions,
  versionId: workflowVersions.id,
  versionOwner: workflowVersions.workflowId,
};

/** Inserts a version (and a new workflow first when `create`), attaches labels; returns the stored version. */
async function writeVersion(db: Db, auth: AuthContext, wfName: string, v: VersionInput, opts: WriteOptions) {
  const ws = auth.workspaceId;
  const nodes: WorkflowNodeRow[] = v.nodes.map((n) => ({ id: crypto.randomUUID(), ...n }));
  const edges = v.edges.map((e) => ({ id: crypto.randomUUID(), ...e })) as unknown as WorkflowEdgeRow[];
  const self = sql`SELECT ${workflows.id} FROM ${workflows} WHERE ${workflows.workspaceId} = ${ws} AND ${workflows.name} = ${wfName}`;
  const wv = workflowVersions;
  const stmts: Statement[] = [];
  if (opts.create) stmts.push(db.insert(workflows).values({ workspaceId: ws, name: wfName, createdBy: auth.userId, folderId: opts.folderId ?? null }));
  // INSERT … SELECT: the number is MAX+1 inside the batch's transaction, so concurrent versions never share one.
  stmts.push(sql`
    INSERT INTO ${wv} (${columnList(wv, ["workspaceId", "workflowId", "versionNumber", "commitMessage", "requiredInputVariables", "nodes", "edges", "baseVersion", "createdBy"])})
    SELECT ${ws}, w.${col(workflows.id)}, COALESCE((SELECT MAX(${wv.versionNumber}) FROM ${wv} WHERE ${wv.workflowId} = w.${col(workflows.id)}), 0) + 1,
           ${v.commitMessage}, ${JSON.stringify(v.requiredInputVariables)}, ${JSON.stringify(nodes)}, ${JSON.stringify(edges)}, ${opts.baseVersion}, ${auth.userId}
    FROM (${self}) AS w
    RETURNING ${col(wv.id)}, ${col(wv.workflowId)}, ${col(wv.versionNumber)}, ${col(wv.createdAt)}`);
  stmts.push(...labelStatements(WORKFLOW_LABELS, ws, self, v.releaseLabels));
  stmts.push(...(opts.mappings?.attach(self) ?? []));
  stmts.push(
    db
      .update(workflows)
      .set({ updatedAt: nowMs, folderId: sql`coalesce(${opts.folderId ?? null}, ${workflows.folderId})` })
      .where(and(eq(workflows.workspaceId, ws), eq(workflows.name, wfName))),
  );
  let results: D1Result[];
  try {
    results = await runBatch(db, stmts);
  } catch (err) {
    if (opts.create && isUniqueViolation(err, workflows)) {
      throw new ApiError("conflict", `a workflow named ${JSON.stringify(wfName)} already exists; pass workflow_name to add a version to it`);
    }
    opts.mappings?.throwIfTaken(err);
    throw err;
  }
  const row = results[opts.create ? 1 : 0].results[0] as { id: number; workflow_id: number; version_number: number; created_at: number };
  return { row, nodes };
}

function versionResponse(wf: { id: number; name: string }, stored: Awaited<ReturnType<typeof writeVersion>>, v: VersionInput, baseVersion: number | null, externalIds: ExternalIdPair[]) {
  return {
    success: true,
    workflow_id: wf.id,
    workflow_name: wf.name,
    workflow_version_id: stored.row.id,
    version_number: stored.row.version_number,
    base_version: baseVersion,
    release_labels: v.releaseLabels,
    nodes: stored.nodes.map((n) => ({ id: n.id, name: n.name, node_type: n.node_type, is_output_node: n.is_output_node })),
    required_input_variables: v.requiredInputVariables,
    external_ids: externalIds,
  };
}

export async function createWorkflowVersion(db: Db, auth: AuthContext, body: CreateInput & VersionInput) {
  const given = [body.name != null && "name", body.workflow_id != null && "workflow_id", body.workflow_name != null && "workflow_name"].filter(Boolean) as string[];
  if (given.length > 1) {
    throw new ApiError("validation_error", `${given.join(", ")}: give name to create a workflow, or one of workflow_id and workflow_name to add a version, not several`, {
      details: given.map((f) => ({ field: f, rule: "only one of name, workflow_id and workflow_name" })),
    });
  }
  checkGraph(body);
  await requireFolder(db, auth.workspaceId, body.folder_id);
  if (body.workflow_id != null || body.workflow_name != null) {
    const wf =
      body.workflow_id != null
        ? (await db.select().from(workflows).where(and(eq(workflows.workspaceId, auth.workspaceId), eq(workflows.id, body.workflow_id))).limit(1))[0]
        : (await db.select().from(workflows).where(and(eq(workflows.workspaceId, auth.workspaceId), eq(workflows.name, body.workflow_name as string))).limit(1))[0];
    if (!wf) throw ApiError.notFound(`workflow ${body.workflow_id ?? JSON.stringify(body.workflow_name)}`);
    const mappings = await newMappings(db, auth.workspaceId, "workflow", wf.id, body.external_ids);
    const stored = await writeVersion(db, auth, wf.name, body, { create: false, baseVersion: null, folderId: body.folder_id, mappings });
    return versionResponse(wf, stored, body, null, await listExternalIds(db, auth.workspaceId, "workflow", wf.id));
  }
  const mappings = await newMappings(db, auth.workspaceId, "workflow", null, body.external_ids);
  let name = body.name ?? randomName();
  for (let attempt = 0; ; attempt++) {
    try {
      const stored = await writeVersion(db, auth, name, body, { create: true, baseVersion: null, folderId: body.folder_id, mappings });
      return versionResponse({ id: stored.row.workflow_id, name }, stored, body, null, mappings.pairs);
    } catch (err) {
      // An auto-generated name that happens to exist is our problem, not the caller's.
      if (body.name == null && err instanceof ApiError && err.code === "conflict" && attempt < 3) {
        name = randomName();
        continue;
      }
      throw err;
    }
  }
}

export interface PatchInput {
  base_version?: number | null;
  commit_message?: string | null;
  nodes?: Record<string, NodeChange | null> | null;
  required_input_variables?: Record<string, string> | null;
  edges?: EdgeSpec[] | null;
  release_labels?: string[] | null;
}

export async function patchWorkflow(db: Db, auth: AuthContext, idOrName: string, body: PatchInput) {
  const wf = await mustFindWorkflow(db, auth.workspaceId, idOrName);
  const base = await findVersion(db, wf, { version: body.base_version });
  const baseNodes: NodeSpec[] = base.nodes.map(({ id: _id, ...n }) => n);
  const baseEdges = base.edges.map(({ id: _id, ...e }) => e) as unknown as EdgeSpec[];
  const merged = applyNodeChanges(baseNodes, baseEdges, body.nodes ?? {});
  if (!merged.ok) throw graphError(merged.issues);
  const v: VersionInput = {
    nodes: merged.nodes,
    edges: body.edges ?? merged.edges,
    requiredInputVariables: body.required_input_variables ?? base.requiredInputVariables,
    commitMessage: body.commit_message ?? null,
    releaseLabels: [...new Set(body.release_labels ?? [])],
  };
  checkGraph(v);
  const stored = await writeVersion(db, auth, wf.name, v, { create: false, baseVersion: base.versionNumber });
  return versionResponse(wf, stored, v, base.versionNumber, await listExternalIds(db, auth.workspaceId, "workflow", wf.id));
}

async function labelsByVersion(db: Db, versionIds: number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  if (versionIds.length === 0) return out;
  const rows = await db
    .select({ versionId: workflowReleaseLabels.workflowVersionId, name: workflowReleaseLabels.name })
    .from(workflowReleaseLabels)
    .where(inJsonList(workflowReleaseLabels.workflowVersionId, versionIds))
    .orderBy(asc(workflowReleaseLabels.name));
  for (const r of rows) out.set(r.versionId, [...(out.get(r.versionId) ?? []), r.name]);
  return out;
}

export async function getWorkflowVersion(db: Db, workspaceId: number, idOrName: string, sel: { version?: number; label?: string }) {
  if (sel.version !== undefined && sel.label !== undefined) {
    throw new ApiError("validation_error", "version, label: give one of them, not both", { details: [{ field: "label", rule: "version and label are mutually exclusive" }] });
  }
  const wf = await mustFindWorkflow(db, workspaceId, idOrName);
  const v = await findVersion(db, wf, sel);
  const labels = (await labelsByVersion(db, [v.id])).get(v.id) ?? [];
  return {
    success: true,
    workflow: { id: wf.id, workspace_id: wf.workspaceId, user_id: wf.createdBy ?? null, name: wf.name, is_draft: false, is_deleted: false },
    workflow_id: wf.id,
    workflow_name: wf.name,
    version: v.versionNumber,
    version_number: v.versionNumber,
    workflow_version_id: v.id,
    commit_message: v.commitMessage ?? null,
    required_input_variables: v.requiredInputVariables,
    release_labels: labels,
    created_at: toIso(v.createdAt),
    base_version: v.baseVersion ?? null,
    nodes: v.nodes.map((n) => ({ id: n.id, workflow_version_id: v.id, name: n.name, node_type: n.node_type, is_output_node: n.is_output_node, configuration: n.configuration, dependencies: n.dependencies })),
    edges: v.edges.map((e) => ({ id: e.id, source_node_name: e.source_node_name, target_node_name: e.target_node_name, is_and: e.is_and, conditionals: e.conditionals })),
    external_ids: await listExternalIds(db, workspaceId, "workflow", wf.id),
  };
}

export async function listWorkflowLabels(db: Db, workspaceId: number, idOrName: string) {
  const wf = await mustFindWorkflow(db, workspaceId, idOrName);
  const rows = await db
    .select({ id: workflowReleaseLabels.id, name: workflowReleaseLabels.name, versionId: workflowVersions.id, number: workflowVersions.versionNumber })
    .from(workflowReleaseLabels)
    .innerJoin(workflowVersions, eq(workflowVersions.id, workflowReleaseLabels.workflowVersionId))
    .where(eq(workflowReleaseLabels.workflowId, wf.id))
    .orderBy(asc(workflowReleaseLabels.name));
  return {
    success: true,
    release_labels: rows.map((r) => ({ release_label: r.name, release_label_id: r.id, workflow_version_id: r.versionId, workflow_version_number: r.number })),
  };
}

export interface ListQuery extends Omit<ResourceFilters, "name"> {
  page?: number;
  per_page?: number;
  external_source?: string;
  external_id?: string;
}

const workflowColumns: ResourceColumns = {
  id: workflows.id,
  name: workflows.name,
  userId: workflows.createdBy,
  createdAt: workflows.createdAt,
  updatedAt: workflows.updatedAt,
};

export async function listWorkflows(db: Db, workspaceId: number, q: ListQuery) {
  const page = q.page ?? 1, perPage = q.per_page ?? 30;
  const where: SQL[] = [eq(workflows.workspaceId, workspaceId)];
  const lookedUp = await resolveExternalIdLookup(db, workspaceId, "workflow", q);
  // null: the mapping is on no workflow, so nothing matches.
  if (lookedUp !== undefined) where.push(lookedUp === null ? sql`0` : eq(workflows.id, Number(lookedUp)));
  for (const c of resourceConditions(workspaceId, workflowColumns, q)) if (c) where.push(c);
  const [{ total }] = await db.select({ total: sql<number>`count(*)` }).from(workflows).where(and(...where));
  const rows = await db
    .select({
      wf: workflows,
      // qualified(): drizzle leaves a select field's columns unqualified, and "id" inside the subquery would be the version's.
      latest: sql<number | null>`(SELECT MAX(v.${col(workflowVersions.versionNumber)}) FROM ${workflowVersions} v WHERE v.${col(workflowVersions.workflowId)} = ${qualified(workflows.id)})`,
    })
    .from(workflows)
    .where(and(...where))
    .orderBy(...resourceOrder(workflowColumns, q))
    .limit(perPage)
    .offset((page - 1) * perPage);
  const labelRows = rows.length
    ? await db
        .select({ workflowId: workflowReleaseLabels.workflowId, name: workflowReleaseLabels.name })
        .from(workflowReleaseLabels)
        .where(inJsonList(workflowReleaseLabels.workflowId, rows.map((r) => r.wf.id)))
        .orderBy(asc(workflowReleaseLabels.name))
    : [];
  const mappings = await externalIdsFor(db, workspaceId, "workflow", rows.map((r) => r.wf.id));
  const pages = Math.ceil(total / perPage);
  return {
    items: rows.map(({ wf, latest }) => ({
      id: wf.id,
      workspace_id: wf.workspaceId,
      user_id: wf.createdBy ?? null,
      name: wf.name,
      is_deleted: false,
      latest_version_number: latest ?? null,
      release_labels: labelRows.filter((l) => l.workflowId === wf.id).map((l) => l.name),
      external_ids: mappings.get(String(wf.id)) ?? [],
      folder_id: wf.folderId ?? null,
      created_at: toIso(wf.createdAt),
      updated_at: toIso(wf.updatedAt),
    })),
    page,
    per_page: perPage,
    total,
    pages,
    has_next: page < pages,
    has_prev: page > 1,
    next_num: page < pages ? page + 1 : null,
    prev_num: page > 1 ? page - 1 : null,
  };
}
