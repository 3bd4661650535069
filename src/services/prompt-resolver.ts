// The one place blocks find a stored prompt (PROMPT_TEMPLATE): by name and version number, or the
// latest version. Release labels live with the prompt registry (issue 4) and are refused until it lands.
import { and, desc, eq } from "drizzle-orm";
import type { PromptRef, ResolvedPrompt } from "../blocks";
import { BlockError } from "../blocks";
import type { Db } from "../db/client";
import { promptTemplates, promptVersions } from "../db/schema";

export async function resolvePromptForBlocks(db: Db, workspaceId: number, ref: PromptRef): Promise<ResolvedPrompt | null> {
  if (ref.label) throw new BlockError(`prompt release labels are not available in this service yet; name a version_number instead of label "${ref.label}"`);
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
