// GET /prompt-templates/{identifier}/snippet-usage: which templates, versions and release labels
// include a snippet. A scan of the workspace's prompt versions: registries hold thousands, not millions.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { promptLabels, promptTemplates, promptVersions, type PromptTemplateRow } from "../../db/schema";
import { findPromptVersion, requirePromptVersion, requireTemplate } from "../../prompts";

export interface SnippetUsage {
  success: true;
  message: string;
  snippet_name: string;
  snippet_usage: { prompt_registry_id: number; prompt_name: string; version_numbers: number[] }[];
  total_prompts_using_snippet: number;
  label_usage: { prompt_registry_id: number; prompt_name: string; label_name: string }[];
  total_labels_using_snippet: number;
}

/**
 * Which templates (and which of their versions) and which release labels include the snippet.
 * References always take the snippet's latest version, so asking about an older version number
 * answers no usage.
 */
export async function snippetUsage(db: Db, ws: number, identifier: string, versionNumber?: number): Promise<SnippetUsage> {
  let snippet: PromptTemplateRow;
  let current = true;
  if (versionNumber === undefined) snippet = await requireTemplate(db, ws, identifier);
  else {
    // The API's 404s for the template and its version; the latest then exists (the asked version is one).
    const asked = await requirePromptVersion(db, ws, { identifier }, { version: versionNumber });
    snippet = asked.template;
    const latest = await findPromptVersion(db, ws, { id: snippet.id, latest: true });
    current = asked.version.id === latest?.version.id;
  }
  const marker = `@@@${snippet.name}@@@`;
  // The marker as it appears inside the stored JSON text (quotes and backslashes escaped).
  const needle = JSON.stringify(marker).slice(1, -1);
  const versions = current
    ? await db
        .select({ id: promptVersions.id, promptId: promptVersions.promptId, version: promptVersions.version, name: promptTemplates.name })
        .from(promptVersions)
        .innerJoin(promptTemplates, eq(promptTemplates.id, promptVersions.promptId))
        .where(and(eq(promptVersions.workspaceId, ws), sql`instr(${promptVersions.promptTemplate}, ${needle}) > 0`, sql`${promptVersions.promptId} <> ${snippet.id}`))
        .orderBy(promptTemplates.name, promptVersions.version)
    : [];
  const byPrompt = new Map<number, { prompt_registry_id: number; prompt_name: string; version_numbers: number[] }>();
  for (const v of versions) {
    const entry = byPrompt.get(v.promptId) ?? { prompt_registry_id: v.promptId, prompt_name: v.name, version_numbers: [] };
    entry.version_numbers.push(v.version);
    byPrompt.set(v.promptId, entry);
  }
  const versionIds = new Set(versions.map((v) => v.id));
  const labels = versionIds.size
    ? (
        await db
          .select({ promptId: promptLabels.promptId, versionId: promptLabels.promptVersionId, label: promptLabels.name, name: promptTemplates.name })
          .from(promptLabels)
          .innerJoin(promptTemplates, eq(promptTemplates.id, promptLabels.promptId))
          .where(and(eq(promptLabels.workspaceId, ws), sql`${promptLabels.promptId} IN (SELECT value FROM json_each(${JSON.stringify([...byPrompt.keys()])}))`))
          .orderBy(promptTemplates.name, promptLabels.name)
      ).filter((l) => versionIds.has(l.versionId))
    : [];
  const usage = [...byPrompt.values()];
  return {
    success: true,
    message: usage.length ? "snippet is in use" : "snippet is not used",
    snippet_name: snippet.name,
    snippet_usage: usage,
    total_prompts_using_snippet: usage.length,
    label_usage: labels.map((l) => ({ prompt_registry_id: l.promptId, prompt_name: l.name, label_name: l.label })),
    total_labels_using_snippet: labels.length,
  };
}
