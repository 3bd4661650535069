// The reads of A/B releases that serving and logging make: the running release on a (template,
// label), which a fetch by that label goes through, and the releases a new log of a template may have
// been served by, whose variant the log records (ab-split.ts variantOfLog). The releases domain
// (services/releases) writes them.
import { and, eq, gt, isNull, ne, or, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { abTests, promptTemplates, type AbTestRow } from "../db/schema";
import { variantOfLog, type LoggedAssignment, type SplitRelease } from "./ab-split";

/** A release as serving reads it (plain JSON: it travels in the edge cache's entries). */
export interface ServedRelease extends SplitRelease {
  revision: number;
  releaseLabel: string;
}

export const servedRelease = (r: Pick<AbTestRow, "id" | "salt" | "assignmentKey" | "split" | "revision" | "releaseLabel">): ServedRelease => ({
  id: r.id,
  salt: r.salt,
  assignmentKey: r.assignmentKey,
  split: r.split,
  revision: r.revision,
  releaseLabel: r.releaseLabel,
});

/** The running release overloading (template, label), or null. */
export async function runningRelease(db: Db, workspaceId: number, promptId: number, label: string): Promise<ServedRelease | null> {
  const [row] = await db
    .select()
    .from(abTests)
    .where(and(eq(abTests.workspaceId, workspaceId), eq(abTests.promptId, promptId), eq(abTests.releaseLabel, label), eq(abTests.status, "running"), isNull(abTests.deletedAt)))
    .limit(1);
  return row ? servedRelease(row) : null;
}

/** How long after a release ends a log may still be attributed to it (its fetch came before the end). */
export const LOG_ATTRIBUTION_MS = 86_400_000;

/** A release a log may have been served by, running ones first, then the most recently ended. */
export interface LogRelease extends SplitRelease {
  promptId: number;
}

/**
 * The releases of a template (by id, else by exact name) a log written now may belong to: running,
 * or ended (completed, deleted) less than LOG_ATTRIBUTION_MS ago. One query; none for no template.
 */
export async function releasesForLog(db: Db, workspaceId: number, ref: { promptId?: number | null; promptName?: string | null }, now = Date.now()): Promise<LogRelease[]> {
  if (ref.promptId == null && !ref.promptName) return [];
  const template =
    ref.promptId != null
      ? eq(abTests.promptId, ref.promptId)
      : sql`${abTests.promptId} = (SELECT ${promptTemplates.id} FROM ${promptTemplates} WHERE ${promptTemplates.workspaceId} = ${workspaceId} AND ${promptTemplates.name} = ${ref.promptName})`;
  const since = now - LOG_ATTRIBUTION_MS;
  const rows = await db
    .select({ id: abTests.id, promptId: abTests.promptId, salt: abTests.salt, assignmentKey: abTests.assignmentKey, split: abTests.split, status: abTests.status, endedAt: abTests.endedAt, deletedAt: abTests.deletedAt })
    .from(abTests)
    .where(
      and(
        eq(abTests.workspaceId, workspaceId),
        template,
        or(and(eq(abTests.status, "running"), isNull(abTests.deletedAt)), gt(abTests.endedAt, since), gt(abTests.deletedAt, since)),
        // A paused release serves the label's own version: its logs are not the release's.
        or(ne(abTests.status, "paused"), sql`${abTests.deletedAt} IS NOT NULL`),
      ),
    );
  const live = (r: (typeof rows)[number]) => r.status === "running" && r.deletedAt === null;
  const ended = (r: (typeof rows)[number]) => Math.max(r.endedAt ?? 0, r.deletedAt ?? 0);
  return rows
    .sort((a, b) => Number(live(b)) - Number(live(a)) || ended(b) - ended(a) || b.id - a.id)
    .map((r) => ({ id: r.id, promptId: r.promptId, salt: r.salt, assignmentKey: r.assignmentKey, split: r.split }));
}

/** What a log records of the release that served it. */
export interface LogAb {
  testId: number;
  variant: string;
  assignment: LoggedAssignment;
}

/** The first of `releases` (of the log's template) that served the log's version, by its metadata; null if none. */
export async function abOfLog(releases: readonly LogRelease[], promptId: number, metadata: Readonly<Record<string, unknown>>, version: number): Promise<LogAb | null> {
  for (const r of releases) {
    if (r.promptId !== promptId) continue;
    const found = await variantOfLog(r, metadata, version);
    if (found) return { testId: r.id, variant: found.variant, assignment: found.assignment };
  }
  return null;
}
