// Approving or denying a protected label's change request. The label's part (the event, the move, the
// request's status) is the registry's (label-changes.ts); a request an A/B release's promote asked
// for also completes that release as promoted on approval, or lets it run on at its split on denial,
// in the same batch. A request is decided once: a second decision is a 409.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch, type Statement } from "../../db/batch";
import { col } from "../../db/sql";
import { abTests, labelChangeRequests, promptVersions } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { changeRequestViews, decisionStatements, requireChangeRequest, type ChangeRequestView } from "../registry";
import { releaseChange, trailStatement, webhookDetails } from "./events";
import { completeAsPromoted, templateNames } from "./releases";

export async function decideChangeRequest(db: Db, auth: AuthContext, id: number, decision: "approved" | "denied"): Promise<ChangeRequestView> {
  const ws = auth.workspaceId;
  const cr = await requireChangeRequest(db, ws, id);
  if (cr.status !== "pending") throw new ApiError("conflict", `change request ${id} is ${cr.status} already`);
  const [to] = await db.select({ version: promptVersions.version }).from(promptVersions).where(eq(promptVersions.id, cr.toVersionId));
  if (!to) throw new ApiError("conflict", `change request ${id} can no longer be decided: the version it would move its label to was deleted`);
  const crPending = sql`EXISTS (SELECT 1 FROM ${labelChangeRequests} AS c WHERE c.${col(labelChangeRequests.id)} = ${id} AND c.${col(labelChangeRequests.status)} = 'pending')`;
  const releaseStatements: Statement[] = [];
  const [r] = cr.abTestId !== null ? await db.select().from(abTests).where(and(eq(abTests.workspaceId, ws), eq(abTests.id, cr.abTestId))).limit(1) : [];
  if (r && r.pendingChangeId === cr.id && r.deletedAt === null) {
    const waiting = sql`${crPending} AND EXISTS (SELECT 1 FROM ${abTests} AS w WHERE w.${col(abTests.id)} = ${r.id} AND w.${col(abTests.pendingChangeId)} = ${cr.id} AND w.${col(abTests.revision)} = ${r.revision})`;
    const variant = Object.entries(r.split.versions).find(([, v]) => v === to.version)?.[0] ?? null;
    if (decision === "approved" && variant) {
      const names = await templateNames(db, [r.promptId]);
      const next = { ...r, status: "completed" as const, outcome: "promoted", promotedVariant: variant, revision: r.revision + 1 };
      releaseStatements.push(
        trailStatement({ workspaceId: ws, abTestId: r.id, revision: r.revision + 1, action: "promoted", actor: "user", userId: auth.userId, details: { variant, change_request_id: cr.id }, when: waiting }),
        ...releaseChange(ws, "ab_test_promoted", auth, r.id, webhookDetails(next, names.get(r.promptId) ?? "", { variant, prompt_template_version_number: to.version, change_request_id: cr.id }), waiting),
        completeAsPromoted(db, r, variant, waiting),
      );
    } else {
      releaseStatements.push(
        trailStatement({ workspaceId: ws, abTestId: r.id, revision: r.revision, action: "promote_denied", actor: "user", userId: auth.userId, details: { variant, change_request_id: cr.id }, when: waiting }),
        db.update(abTests).set({ pendingChangeId: null }).where(and(eq(abTests.id, r.id), eq(abTests.pendingChangeId, cr.id), crPending)),
      );
    }
  }
  // The release's statements first: they read the request as pending; the registry's last one decides it.
  const results = await runBatch(db, [...releaseStatements, ...decisionStatements(ws, auth, cr, to.version, decision)]);
  if (results[results.length - 1].meta.changes === 0) throw new ApiError("conflict", `change request ${id} was decided meanwhile`);
  const [view] = await changeRequestViews(db, [await requireChangeRequest(db, ws, id)]);
  return view;
}
