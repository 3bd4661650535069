// A workspace's log retention: how many days its request logs stay in D1 before the archive job
// (src/logs/archive.ts) moves them to R2. A control-side setting: it lives on the workspace row.
import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { workspaces } from "../../db/schema";
import { runBatch } from "../../db/batch";
import type { AuthContext } from "../../lib/auth-context";
import { auditStatement } from "./audit";

export async function getLogRetention(db: Db, workspaceId: number): Promise<number | null> {
  const [row] = await db.select({ days: workspaces.logRetentionDays }).from(workspaces).where(eq(workspaces.id, workspaceId)).limit(1);
  return row?.days ?? null;
}

/** Sets the window (days, already within LOG_RETENTION_DAYS) or, with null, keeps every log in D1. */
export async function setLogRetention(db: Db, auth: AuthContext, days: number | null): Promise<number | null> {
  const workspaceId = auth.workspaceId;
  await runBatch(db, [
    auditStatement({
      workspaceId,
      action: "log_retention.updated",
      by: auth,
      targetType: "workspace",
      targetId: workspaceId,
      details: sql`json_object('days', ${days}, 'previous_days', (SELECT ${workspaces.logRetentionDays} FROM ${workspaces} WHERE ${workspaces.id} = ${workspaceId}))`,
    }),
    db.update(workspaces).set({ logRetentionDays: days }).where(eq(workspaces.id, workspaceId)),
  ]);
  return days;
}
