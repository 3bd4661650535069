// Looks up the prompt version a logged request names (by template id or name, and version number).
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { promptTemplates, promptVersions, type PromptVersionRow } from "../db/schema";
import { toIso } from "../lib/time";

export interface PromptVersionRef {
  promptId?: number | null;
  promptName?: string | null;
  versionNumber?: number | null;
}

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

/** The linked version, or null when the reference does not name one in this workspace. */
export async function findPromptVersion(db: Db, workspaceId: number, ref: PromptVersionRef): Promise<PromptVersionView | null> {
  if (!ref.versionNumber || (ref.promptId == null && !ref.promptName)) return null;
  const byTemplate =
    ref.promptId != null ? eq(promptTemplates.id, ref.promptId) : eq(promptTemplates.name, ref.promptName as string);
  const rows = await db
    .select({ v: promptVersions, name: promptTemplates.name })
    .from(promptVersions)
    .innerJoin(promptTemplates, eq(promptTemplates.id, promptVersions.promptId))
    .where(and(eq(promptTemplates.workspaceId, workspaceId), byTemplate, eq(promptVersions.version, ref.versionNumber)))
    .limit(1);
  const row = rows[0];
  return row ? promptVersionView(row.v, row.name) : null;
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
