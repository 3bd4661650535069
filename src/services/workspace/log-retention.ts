// A workspace's log retention: how many days its request logs stay in D1 before the archive job
// (src/logs/archive.ts) moves them to R2. A control-side setting: it lives on the workspace row.
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { workspaces } from "../../db/schema";

export async function getLogRetention(db: Db, workspaceId: number): Promise<number | null> {
  const [row] = await db.select({ days: workspaces.logRetentionDays }).from(workspaces).where(eq(workspaces.id, workspaceId)).limit(1);
  return row?.days ?? null;
}

/** Sets the window (days, already within LOG_RETENTION_DAYS) or, with null, keeps every log in D1. */
export async function setLogRetention(db: Db, workspaceId: number, days: number | null): Promise<number | null> {
  await db.update(workspaces).set({ logRetentionDays: days }).where(eq(workspaces.id, workspaceId));
  return days;
}
