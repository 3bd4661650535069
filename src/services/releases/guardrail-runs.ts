// The cron's part of the guardrails: every running release with guardrails, at most once per
// GUARDRAIL_INTERVAL_MS each, has its rollups read (every log database of its workspace) and its
// guardrails decide (guardrails.ts). A decision is written once: its trail row carries the key
// `<revision>:<action>` (unique per release) and a token fresh per attempt, and its changes (a
// rollback, a pause, a ramp, a promote through the label-move path or a protected label's change
// request) run only where that token was written, in the same batch. A retried or concurrent run
// finds the key taken and does nothing.
import { and, asc, eq, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch, type Statement } from "../../db/batch";
import { nowMs } from "../../db/sql";
import { abTests, type AbTestRow } from "../../db/schema";
import { abTotals, type WorkspaceLogs } from "../../logs";
import { decide, type Decision } from "./guardrails";
import { decisionWritten, releaseChange, trailStatement, webhookDetails } from "./events";
import { labelIsProtected, labelProtected, promoteStatements, rollbackStatements, templateNames, type Actor } from "./releases";
import { percentagesOf, rampedSplit } from "./split-input";
import { variantStats } from "./scorecard";

/** How often one release's guardrails are evaluated at most. */
export const GUARDRAIL_INTERVAL_MS = 5 * 60_000;

/** Releases evaluated per cron run at most (the rest wait for the next minutes). */
const RELEASES_PER_RUN = 25;

/** Takes the release for this run (no other run evaluates it until the interval has passed). */
async function claim(db: Db, r: AbTestRow, now: number): Promise<boolean> {
  const res = await db
    .update(abTests)
    .set({ checkedAt: now })
    .where(and(eq(abTests.id, r.id), r.checkedAt === null ? isNull(abTests.checkedAt) : eq(abTests.checkedAt, r.checkedAt)))
    .returning({ id: abTests.id });
  return res.length > 0;
}

/** The statements carrying out a decision read at `r`, guarded by its trail row. */
async function decisionStatements(db: Db, r: AbTestRow, decided: NonNullable<Decision>, token: string): Promise<Statement[]> {
  // A ramp to 100 % would serve the challenger alone: on a protected label that is a promote, which
  // asks for approval (a change request) instead. Judged again in the batch (a label protected meanwhile).
  const full = decided.action === "ramp" && decided.percentage >= 100;
  const d: NonNullable<Decision> = full && (await labelIsProtected(db, r)) ? { action: "promote", variant: decided.variant } : decided;
  const decision = { key: `${r.revision}:${d.action}`, token };
  const actor: Actor = { by: null, kind: "guardrail", decision };
  const written = decisionWritten(r.id, decision);
  const guard = sql`${abTests.revision} = ${r.revision} AND ${abTests.status} = 'running' AND ${abTests.deletedAt} IS NULL AND ${abTests.pendingChangeId} IS NULL`;
  const ownGuard = sql`EXISTS (SELECT 1 FROM ${abTests} WHERE ${abTests.id} = ${r.id} AND ${guard})${d.action === "ramp" && full ? sql` AND NOT ${labelProtected(r.promptId, r.releaseLabel)}` : sql``}`;
  const promptName = (await templateNames(db, [r.promptId])).get(r.promptId) ?? "";
  const trail = (action: string, revision: number, details: Record<string, unknown>) =>
    trailStatement({ workspaceId: r.workspaceId, abTestId: r.id, revision, action, actor: "guardrail", userId: null, details, decision, when: ownGuard });
  switch (d.action) {
    case "rollback":
      return [trail("rolled_back", r.revision + 1, d), ...rollbackStatements(db, r, promptName, actor, written, { variant: d.variant, metric: d.metric, observed: d.observed, bound: d.bound, p_value: d.p_value })];
    case "pause": {
      const next = { ...r, status: "paused" as const, revision: r.revision + 1 };
      return [
        trail("paused", r.revision + 1, d),
        ...releaseChange(r.workspaceId, "ab_test_updated", null, r.id, webhookDetails(next, promptName, { reason: "guardrail", ...d }), written),
        db.update(abTests).set({ status: "paused", revision: r.revision + 1, updatedAt: nowMs }).where(and(eq(abTests.id, r.id), written)),
      ];
    }
    case "ramp": {
      const split = rampedSplit(r.split, [{ key: d.variant, percentage: d.percentage }, { key: r.split.base, percentage: 100 - d.percentage }], null);
      const next = { ...r, split, revision: r.revision + 1 };
      return [
        trail("ramped", r.revision + 1, { ...d, percentages: percentagesOf(split.shares), previous_percentages: percentagesOf(r.split.shares) }),
        ...releaseChange(r.workspaceId, "ab_test_updated", null, r.id, webhookDetails(next, promptName, { reason: "guardrail", previous_percentages: percentagesOf(r.split.shares) }), written),
        db.update(abTests).set({ split, revision: r.revision + 1, rampedAt: nowMs, updatedAt: nowMs }).where(and(eq(abTests.id, r.id), written)),
      ];
    }
    case "promote": {
      const { statements, requested } = await promoteStatements(db, r, d.variant, actor, written);
      return [trail(requested ? "promote_requested" : "promoted", requested ? r.revision : r.revision + 1, d), ...statements];
    }
    case "ready":
      return [trail("ready_to_promote", r.revision, d)];
  }
}

/**
 * Evaluates the guardrails of the releases due (any workspace's); returns the decisions acted on.
 * `logsOf` is the workspace's log store (deps.logs). A release that fails is logged and waits for its next turn.
 */
export async function runGuardrails(db: Db, logsOf: (workspaceId: number) => Promise<WorkspaceLogs>, now = Date.now()): Promise<number> {
  const due = await db
    .select()
    .from(abTests)
    .where(
      and(
        eq(abTests.status, "running"),
        isNull(abTests.deletedAt),
        isNotNull(abTests.guardrails),
        isNull(abTests.pendingChangeId),
        or(isNull(abTests.checkedAt), lte(abTests.checkedAt, now - GUARDRAIL_INTERVAL_MS)),
      ),
    )
    .orderBy(asc(abTests.checkedAt))
    .limit(RELEASES_PER_RUN);
  let acted = 0;
  for (const r of due) {
    try {
      if (!(await claim(db, r, now))) continue;
      const totals = await abTotals(await logsOf(r.workspaceId), r.workspaceId, r.id);
      const d = decide({ guardrails: r.guardrails!, base: r.split.base, createdAt: r.createdAt, rampedAt: r.rampedAt, now, variants: variantStats(r, totals) });
      if (!d) continue;
      const [trail] = await runBatch(db, await decisionStatements(db, r, d, crypto.randomUUID()));
      if (trail.meta.changes > 0) acted++;
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "guardrail evaluation failed", ab_test_id: r.id, error: String(err) }));
    }
  }
  return acted;
}
