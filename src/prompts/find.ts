// The one place blocks find a stored prompt (PROMPT_TEMPLATE): by name and version number, by
// release label, or the latest version.
import { and, desc, eq } from "drizzle-orm";
import type { PromptRef, ResolvedPrompt } from "../blocks";
import type { Db } from "../db/client";
import { promptLabels, promptTemplates, promptVersions } from "../db/schema";

export async function resolvePromptForBlocks(db: Db, workspaceId: number, ref: PromptRef): Promise<ResolvedPrompt | null> {
  if (ref.label) {
    const [row] = await db
      .select({ template: promptVersions.promptTemplate, metadata: promptVersions.metadata })
      .from(promptLabels)
      .innerJoin(promptTemplates, eq(promptTemplates.id, promptLabels.promptId))
      .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.promptVersionId))
      .where(and(eq(promptTemplates.workspaceId, workspaceId), eq(promptTemplates.name, ref.name), eq(promptLabels.name, ref.label)))
      .limit(1);
    return row ? { prompt_template: row.template, metadata: row.metadata ?? null } : null;
  }
  const where = [eq(promptTemplates.workspaceId, workspaceId), eq(promptTemplates.name, ref.name)];
  if (ref.version_number) where.push(eq(promptVersions.version, ref.version_number));
  const rows = await db
    .select({ template: promptVersions.promptTemplate, metadata: promptVersions.metadata })
    .from(promptVersions)
    .innerJoin(promptTemplates, eq(promptTemplates.id, promptVersions.promptId))
    .where(and(...where))
    .orderBy(desc(promptVersions.version))
    .limit(1);
  const row = rows[0];
  return row ? { prompt_template: row.template, metadata: row.metadata ?? null } : null;
}
