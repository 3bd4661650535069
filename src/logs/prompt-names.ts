// Prompt names for what the log store reads: logs record a prompt's id, and its current name lives
// with the prompts in the control database, so names are looked up after the log query, by id.
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import { promptTemplates } from "../db/schema";

/** Ids per lookup: well within D1's 100 bound parameters. */
const IDS_PER_QUERY = 90;

/** The workspace's prompt templates' current names by id (ids it does not hold are left out). */
export async function promptNames(db: Db, workspaceId: number, ids: Iterable<number | null>): Promise<Map<number, string>> {
  const wanted = [...new Set([...ids].filter((id): id is number => id !== null && Number.isSafeInteger(id)))];
  const names = new Map<number, string>();
  for (let i = 0; i < wanted.length; i += IDS_PER_QUERY) {
    const found = await db
      .select({ id: promptTemplates.id, name: promptTemplates.name })
      .from(promptTemplates)
      .where(and(eq(promptTemplates.workspaceId, workspaceId), inArray(promptTemplates.id, wanted.slice(i, i + IDS_PER_QUERY))));
    for (const f of found) names.set(f.id, f.name);
  }
  return names;
}
