// PUT /prompt-templates/by-external-id/{source}/{external_id}: the template that external ID names is
// brought to the body's state. Sent twice, the same body makes one template and one version: a
// version is added only when the blueprint or its metadata differ from the latest.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch } from "../../db/batch";
import { nowMs } from "../../db/sql";
import { promptLabels, promptTemplates } from "../../db/schema";
import { grants } from "../../lib/scopes";
import { protectedTemplateConflict } from "./label-changes";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { findEntityByExternalId, type ExternalIdPair } from "./external-ids";
import { requireFolder } from "./folders";
import { isTemplateNameTaken, labelEventStatements, labelStatements, publishedView, refuseProtectedLabels, publishTemplate, type PublishedView, type PublishInput } from "./prompt-templates";
import { findPromptVersion, findTemplate, refuseSnippetCycles } from "../../prompts";

/** JSON with object keys sorted, so two blueprints compare by content, not key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));
}

export async function upsertTemplateByExternalId(
  db: Db,
  auth: AuthContext,
  pair: ExternalIdPair,
  input: Omit<PublishInput, "external_ids">,
): Promise<{ created: boolean; view: PublishedView }> {
  const ws = auth.workspaceId;
  const name = input.prompt_template.prompt_name;
  const mappedId = await findEntityByExternalId(db, ws, "prompt_template", pair);
  if (mappedId === null) {
    // Not mapped yet: the name's template (made now if new) takes the mapping and a version.
    const [byName] = await db
      .select({ id: promptTemplates.id })
      .from(promptTemplates)
      .where(and(eq(promptTemplates.workspaceId, ws), eq(promptTemplates.name, name)))
      .limit(1);
    const view = await publishTemplate(db, auth, { ...input, external_ids: [pair] });
    return { created: !byName, view };
  }

  let template = await findTemplate(db, ws, mappedId);
  if (!template) throw new ApiError("not_found", "prompt template not found");
  if (template.name !== name) {
    // The body names the template: a mapped template under another name is renamed. Fetches by name
    // would then find another template (or none) under its protected label: that takes admin.
    const admin = grants(auth.scopes ?? [], "admin");
    const protectedOf = sql`${promptLabels.promptId} = ${template.id} AND ${promptLabels.protected}`;
    const refuse = async () => {
      const [hit] = await db.select({ name: promptLabels.name }).from(promptLabels).where(protectedOf).limit(1);
      if (hit) throw protectedTemplateConflict(template!.id, hit.name, `renaming it to "${name}"`);
    };
    if (!admin) await refuse();
    let renamed;
    try {
      [renamed] = await db
        .update(promptTemplates)
        .set({ name, updatedAt: nowMs })
        .where(and(eq(promptTemplates.workspaceId, ws), eq(promptTemplates.id, template.id), admin ? undefined : sql`NOT EXISTS (SELECT 1 FROM ${promptLabels} WHERE ${protectedOf})`))
        .returning();
    } catch (err) {
      if (isTemplateNameTaken(err)) throw new ApiError("conflict", `prompt_name: another prompt template is named "${name}"`);
      throw err;
    }
    if (!renamed) {
      await refuse();
      throw new ApiError("not_found", "prompt template not found");
    }
    template = renamed;
  }
  const latest = (await findPromptVersion(db, ws, { id: template.id, latest: true }))?.version ?? null;
  const v = input.prompt_version;
  const unchanged =
    latest !== null && canonical(latest.promptTemplate) === canonical(v.prompt_template) && canonical(latest.metadata ?? null) === canonical(v.metadata ?? null);
  if (!unchanged) return { created: false, view: await publishTemplate(db, auth, { ...input, external_ids: [pair] }) };

  // Same content: no new version; tags, folder and labels still follow the body.
  await refuseSnippetCycles(db, ws, name, v.prompt_template);
  await refuseProtectedLabels(db, ws, { id: template.id }, input.release_labels);
  const folderId = input.prompt_template.folder_id;
  await requireFolder(db, ws, folderId);
  const tags = input.prompt_template.tags;
  const self = sql`SELECT ${template.id} AS id`;
  await runBatch(db, [
    db
      .update(promptTemplates)
      .set({ updatedAt: nowMs, ...(tags != null ? { tags } : {}), ...(folderId !== undefined ? { folderId: folderId ?? null } : {}) })
      .where(eq(promptTemplates.id, template.id)),
    // Each label created or moved is in the audit log with its event, as through a publish.
    ...labelEventStatements(ws, auth, self, input.release_labels),
    ...labelStatements(ws, self, input.release_labels),
  ]);
  const fresh = (await findTemplate(db, ws, String(template.id)))!;
  return { created: false, view: await publishedView(db, ws, fresh, latest) };
}
