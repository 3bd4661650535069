// The one lookup of a stored prompt version: by template id, exact name, or a path identifier (an id
// first, then a name), and by version number, release label, or the latest. Logging (log-request,
// spans, track-prompt, track-request), blocks and the registry's reads all go through here; each
// caller writes its own precedence into the selector and keeps its own answer for a miss.
// A template named by id or name costs one joined query; an identifier costs the template lookup
// (one or two queries) and then the version's, as a path lookup always did. The template must be the
// one the identifier picks even when it lacks the version: a single OR query could find another.
import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { col, inJsonList } from "../db/sql";
import { promptLabels, promptTemplates, promptVersions, type PromptTemplateRow, type PromptVersionRow } from "../db/schema";
import { ApiError } from "../lib/errors";
import { toIso } from "../lib/time";

/** `identifier`: a path parameter, tried as an id when numeric, then as a name. */
export type TemplateSel = { id: number } | { name: string } | { identifier: string };
export type VersionSel = { version: number } | { label: string } | { latest: true };

export interface FoundVersion {
  template: PromptTemplateRow;
  version: PromptVersionRow;
}

/** The id a numeric identifier names (tried before the name it also is), else null. */
export const templateIdOf = (identifier: string): number | null => (/^[1-9][0-9]{0,15}$/.test(identifier) ? Number(identifier) : null);

/** A template by id or name. A numeric identifier is tried as an id first, then as a name. */
export async function findTemplate(db: Db, workspaceId: number, identifier: string): Promise<PromptTemplateRow | null> {
  const asId = templateIdOf(identifier);
  if (asId !== null) {
    const [byId] = await db.select().from(promptTemplates).where(and(eq(promptTemplates.workspaceId, workspaceId), eq(promptTemplates.id, asId))).limit(1);
    if (byId) return byId;
  }
  const [byName] = await db.select().from(promptTemplates).where(and(eq(promptTemplates.workspaceId, workspaceId), eq(promptTemplates.name, identifier))).limit(1);
  return byName ?? null;
}

export async function requireTemplate(db: Db, workspaceId: number, identifier: string): Promise<PromptTemplateRow> {
  const t = await findTemplate(db, workspaceId, identifier);
  if (!t) throw ApiError.notFound("prompt template");
  return t;
}

export async function templateExists(db: Db, workspaceId: number, id: number): Promise<boolean> {
  const [row] = await db.select({ id: promptTemplates.id }).from(promptTemplates).where(and(eq(promptTemplates.workspaceId, workspaceId), eq(promptTemplates.id, id))).limit(1);
  return Boolean(row);
}

/** The workspace's version `sel` names, with its template, or null (no such template, version or label). */
export async function findPromptVersion(db: Db, workspaceId: number, sel: TemplateSel & VersionSel): Promise<FoundVersion | null> {
  if ("identifier" in sel) {
    const template = await findTemplate(db, workspaceId, sel.identifier);
    const version = template && (await versionOf(db, template.id, sel));
    return template && version ? { template, version } : null;
  }
  const byTemplate = "id" in sel ? eq(promptTemplates.id, sel.id) : eq(promptTemplates.name, sel.name);
  if ("label" in sel) {
    const [row] = await db
      .select({ template: promptTemplates, version: promptVersions })
      .from(promptLabels)
      .innerJoin(promptTemplates, eq(promptTemplates.id, promptLabels.promptId))
      .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.promptVersionId))
      .where(and(eq(promptTemplates.workspaceId, workspaceId), byTemplate, eq(promptLabels.name, sel.label)))
      .limit(1);
    return row ?? null;
  }
  const where: SQL[] = [eq(promptTemplates.workspaceId, workspaceId), byTemplate];
  if ("version" in sel) where.push(eq(promptVersions.version, sel.version));
  const [row] = await db
    .select({ template: promptTemplates, version: promptVersions })
    .from(promptVersions)
    .innerJoin(promptTemplates, eq(promptTemplates.id, promptVersions.promptId))
    .where(and(...where))
    .orderBy(desc(promptVersions.version))
    .limit(1);
  return row ?? null;
}

/**
 * The condition on prompt_versions that keeps, of the templates `templateIds`, each one's latest
 * version: for a caller that reads only some columns of it (findPromptVersions reads whole rows).
 */
export function latestVersionsOf(templateIds: readonly number[]): SQL {
  return sql`${inJsonList(promptVersions.promptId, templateIds)}
    AND ${promptVersions.version} = (SELECT max(v2.${col(promptVersions.version)}) FROM ${promptVersions} v2 WHERE v2.${col(promptVersions.promptId)} = ${promptVersions.promptId})`;
}

/**
 * Many templates' versions in one query (a list page's): of each template in `templateIds`, its
 * latest version or the one release label `label` names. A template without one has no row. The ids
 * are the caller's, already found in its workspace; none is no query.
 */
export async function findPromptVersions(db: Db, templateIds: readonly number[], sel: { latest: true } | { label: string }): Promise<PromptVersionRow[]> {
  if (templateIds.length === 0) return [];
  if ("latest" in sel) return db.select().from(promptVersions).where(latestVersionsOf(templateIds));
  const rows = await db
    .select({ v: promptVersions })
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.promptVersionId))
    .where(and(inJsonList(promptLabels.promptId, templateIds), eq(promptLabels.name, sel.label)));
  return rows.map((r) => r.v);
}

/** One version of a template already found (in the caller's workspace): by label, by number, or the latest. */
async function versionOf(db: Db, templateId: number, sel: VersionSel): Promise<PromptVersionRow | null> {
  if ("label" in sel) {
    const [row] = await db
      .select({ v: promptVersions })
      .from(promptLabels)
      .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.promptVersionId))
      .where(and(eq(promptLabels.promptId, templateId), eq(promptLabels.name, sel.label)))
      .limit(1);
    return row?.v ?? null;
  }
  const where = "version" in sel ? and(eq(promptVersions.promptId, templateId), eq(promptVersions.version, sel.version)) : eq(promptVersions.promptId, templateId);
  const [row] = await db.select().from(promptVersions).where(where).orderBy(desc(promptVersions.version)).limit(1);
  return row ?? null;
}

/**
 * The same for the API, with its answers in their order: an unknown template is a 404; then version
 * and label both given, a 400; then a 404 for the label, the version number, or a template with no
 * versions. Neither given: the latest.
 */
export async function requirePromptVersion(
  db: Db,
  workspaceId: number,
  template: TemplateSel,
  sel: { version?: number | null; label?: string | null },
): Promise<FoundVersion> {
  const t = await templateOf(db, workspaceId, template);
  if (!t) throw ApiError.notFound("prompt template");
  if (sel.version != null && sel.label != null) throw new ApiError("validation_error", "version: give either version or label, not both");
  const wanted: VersionSel = sel.label != null ? { label: sel.label } : sel.version != null ? { version: sel.version } : { latest: true };
  const version = await versionOf(db, t.id, wanted);
  if (version) return { template: t, version };
  if (sel.label != null) throw new ApiError("not_found", `label: no release label "${sel.label}" on this prompt template`);
  throw new ApiError("not_found", sel.version != null ? `version: prompt template has no version ${sel.version}` : "prompt template has no versions");
}

async function templateOf(db: Db, workspaceId: number, sel: TemplateSel): Promise<PromptTemplateRow | null> {
  if ("identifier" in sel) return findTemplate(db, workspaceId, sel.identifier);
  const byTemplate = "id" in sel ? eq(promptTemplates.id, sel.id) : eq(promptTemplates.name, sel.name);
  const [row] = await db.select().from(promptTemplates).where(and(eq(promptTemplates.workspaceId, workspaceId), byTemplate)).limit(1);
  return row ?? null;
}

/** The id of the version a release label (by its own id) points at, in the workspace, or null. */
export async function labelVersionId(db: Db, workspaceId: number, labelId: number): Promise<number | null> {
  const [label] = await db
    .select({ versionId: promptLabels.promptVersionId })
    .from(promptLabels)
    .where(and(eq(promptLabels.id, labelId), eq(promptLabels.workspaceId, workspaceId)))
    .limit(1);
  return label?.versionId ?? null;
}

/** What a log records of a version (its template's id and its number), by the version's id, in the workspace, or null. */
export async function versionNumberOf(db: Db, workspaceId: number, versionId: number): Promise<{ promptId: number; version: number } | null> {
  const [pv] = await db
    .select({ promptId: promptVersions.promptId, version: promptVersions.version })
    .from(promptVersions)
    .where(and(eq(promptVersions.id, versionId), eq(promptVersions.workspaceId, workspaceId)))
    .limit(1);
  return pv ?? null;
}

/** A version as a logged request answers it (log-request's prompt link). */
export interface PromptVersionView {
  id: number;
  prompt_id: number;
  prompt_name: string;
  version: number;
  prompt_template: Record<string, unknown>;
  metadata: Record<string, unknown> | null;
  commit_message: string | null;
  created_at: string;
}

export function promptVersionView(v: PromptVersionRow, promptName: string): PromptVersionView {
  return {
    id: v.id,
    prompt_id: v.promptId,
    prompt_name: promptName,
    version: v.version,
    prompt_template: v.promptTemplate,
    metadata: v.metadata ?? null,
    commit_message: v.commitMessage ?? null,
    created_at: toIso(v.createdAt),
  };
}

/**
 * The version a logged request names: its template by id (else by exact name) and an exact version
 * number. Without a version number, or without an id or name, it names none (and costs no query).
 */
export async function loggedPromptVersion(
  db: Db,
  workspaceId: number,
  ref: { promptId?: number | null; promptName?: string | null; versionNumber?: number | null },
): Promise<PromptVersionView | null> {
  if (!ref.versionNumber || (ref.promptId == null && !ref.promptName)) return null;
  const found = await findPromptVersion(db, workspaceId, { ...(ref.promptId != null ? { id: ref.promptId } : { name: ref.promptName as string }), version: ref.versionNumber });
  return found && promptVersionView(found.version, found.template.name);
}
