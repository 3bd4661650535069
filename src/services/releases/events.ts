// A release's trail (ab_test_events, GET /ab-tests/{id}/events), its webhook events and its audit
// rows, all written as statements of the batch that makes the change. A guardrail decision's row carries a key unique
// per release (`<revision>:<action>`) and a token fresh per attempt: the decision's other statements
// run only where that token was written, so a retried or concurrent cron run cannot act twice.
import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { abTestEvents, abTests, type AbTestRow } from "../../db/schema";
import { col, columnList } from "../../db/sql";
import { toIso } from "../../lib/time";
import { eventStatement, type EventType } from "../webhooks";
import { auditStatement, type AuditAction, type AuditSpec } from "../workspace";
import { variantList } from "./split-input";

export interface TrailEntry {
  workspaceId: number;
  /** The release's id, or SQL naming it (a create's, in its own batch). */
  abTestId: number | SQL;
  /** The release's revision once the change is made. */
  revision: number;
  action: string;
  actor: "user" | "guardrail";
  userId: number | null;
  details: Record<string, unknown>;
  /** A guardrail decision: unique per release, with the attempt's token. */
  decision?: { key: string; token: string };
  when?: SQL;
}

export function trailStatement(e: TrailEntry): SQL {
  const E = abTestEvents;
  return sql`INSERT INTO ${E} (${columnList(E, ["workspaceId", "abTestId", "revision", "action", "actor", "userId", "details", "decisionKey", "token"])})
    SELECT ${e.workspaceId}, ${e.abTestId}, ${e.revision}, ${e.action}, ${e.actor}, ${e.userId}, ${JSON.stringify(e.details)}, ${e.decision?.key ?? null}, ${e.decision?.token ?? null}
    WHERE ${e.when ?? sql`1`}
    ON CONFLICT DO NOTHING`;
}

/** True while the decision's row is the one this attempt wrote. */
export function decisionWritten(abTestId: number, decision: { key: string; token: string }): SQL {
  return sql`EXISTS (SELECT 1 FROM ${abTestEvents} AS d WHERE d.${col(abTestEvents.abTestId)} = ${abTestId} AND d.${col(abTestEvents.decisionKey)} = ${decision.key} AND d.${col(abTestEvents.token)} = ${decision.token})`;
}

/** True while the release is still at `revision` (and not deleted): the guard of a change read at that revision. */
export function atRevision(abTestId: number, revision: number): SQL {
  return sql`EXISTS (SELECT 1 FROM ${abTests} AS g WHERE g.${col(abTests.id)} = ${abTestId} AND g.${col(abTests.revision)} = ${revision} AND g.${col(abTests.deletedAt)} IS NULL)`;
}

/** The details of an ab_test_* webhook event: the release as it is after the change, plus `extra`. */
export function webhookDetails(r: AbTestRow, promptName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ab_test_id: r.id,
    ab_test_name: r.name,
    prompt_template_id: r.promptId,
    prompt_template_name: promptName,
    release_label: r.releaseLabel,
    status: r.status,
    revision: r.revision,
    variants: variantList(r.split),
    ...extra,
  };
}

const AUDITED = {
  ab_test_created: "ab_test.created",
  ab_test_updated: "ab_test.updated",
  ab_test_deleted: "ab_test.deleted",
  ab_test_promoted: "ab_test.promoted",
  ab_test_rolled_back: "ab_test.rolled_back",
} as const satisfies Partial<Record<EventType, AuditAction>>;

/**
 * A release's change as its webhook event and its audit row, written only when `when` holds; `by` is
 * the caller's key, or null for the guardrails' cron.
 */
export function releaseChange(ws: number, type: keyof typeof AUDITED, by: AuditSpec["by"], abTestId: number | SQL, details: Record<string, unknown> | SQL, when: SQL = sql`1`): SQL[] {
  return [
    eventStatement({ workspaceId: ws, type, userId: by?.userId ?? null, details, when }),
    auditStatement({ workspaceId: ws, action: AUDITED[type], by, targetType: "ab_test", targetId: abTestId, details, when }),
  ];
}

export interface TrailView {
  id: number;
  action: string;
  actor: string;
  user_id: number | null;
  revision: number;
  details: Record<string, unknown>;
  created_at: string;
}

export async function readTrail(db: Db, ws: number, abTestId: number, page: number, perPage: number) {
  const where = and(eq(abTestEvents.workspaceId, ws), eq(abTestEvents.abTestId, abTestId));
  const [{ total }] = await db.select({ total: sql<number>`count(*)` }).from(abTestEvents).where(where);
  const rows = await db
    .select()
    .from(abTestEvents)
    .where(where)
    .orderBy(desc(abTestEvents.id))
    .limit(perPage)
    .offset((page - 1) * perPage);
  const events: TrailView[] = rows.map((r) => ({ id: r.id, action: r.action, actor: r.actor, user_id: r.userId ?? null, revision: r.revision, details: r.details, created_at: toIso(r.createdAt) }));
  return { success: true as const, events, page, per_page: perPage, total, pages: Math.ceil(total / perPage) };
}
