// Prompt names for what the log store reads: logs record a prompt's id, and its current name lives
// with the prompts in the control database, so names are looked up after the log query, by id.
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { promptTemplates } from "../db/schema";
import { inJsonList } from "../db/sql";

/** The workspace's prompt templates' current names by id (ids it does not hold are left out). */
export async function promptNames(db: Db, workspaceId: number, ids: Iterable<number | null>): Promise<Map<number, string>> {
  const wanted = [...new Set([...ids].filter((id): id is number => id !== null && Number.isSafeInteger(id)))];
  if (wanted.length === 0) return new Map();
  const found = await db
    .select({ id: promptTemplates.id, name: promptTemplates.name })
    .from(promptTemplates)
    .where(and(eq(promptTemplates.workspaceId, workspaceId), inJsonList(promptTemplates.id, wanted)));
  return new Map(found.map((f) => [f.id, f.name]));
}
