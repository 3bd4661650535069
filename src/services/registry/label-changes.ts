// Protected release labels and their change requests (PromptLayer's approval flow): a protected
// label moves only when a change request for it is approved. A move asked of a protected label (by
// hand, by an A/B release's promote, by a publish naming it) writes a pending request and emits
// prompt_template_label_change_requested; approving emits …_approved and moves the label through the
// one label-move path (which emits prompt_template_label_moved); denying emits …_denied and leaves it.
// Every step is statements for the caller's batch, so the request, the move, their events and their
// audit rows commit together or not at all.
import { and, desc, eq, getTableName, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch } from "../../db/batch";
import { col, isUniqueViolation, nowMs } from "../../db/sql";
import { labelChangeRequests, promptLabels, promptTemplates, promptVersions, type LabelChangeRequestRow, type PromptLabelRow } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { eventStatement, type EventSpec } from "../webhooks";
import { auditStatement, type AuditAction, type AuditSpec } from "../workspace";

/** Who changes a label: a caller's key (and its user), or null for the guardrails' cron. */
export type LabelActor = AuditSpec["by"];

const LABEL_ACTIONS = {
  prompt_template_label_created: "prompt_label.created",
  prompt_template_label_moved: "prompt_label.moved",
  prompt_template_label_deleted: "prompt_label.deleted",
  prompt_template_label_change_requested: "prompt_label.change_requested",
  prompt_template_label_change_approved: "prompt_label.change_approved",
  prompt_template_label_change_denied: "prompt_label.change_denied",
} as const satisfies Partial<Record<EventSpec["type"], AuditAction>>;

/**
 * A label's change as its webhook event and its audit row, both judged in the same batch by the same
 * FROM and WHEN (their FROM names the template `t`), so each is written exactly when the label changed.
 */
export function labelChange(by: LabelActor, e: Omit<EventSpec, "userId"> & { type: keyof typeof LABEL_ACTIONS }): SQL[] {
  return [
    eventStatement({ ...e, userId: by?.userId ?? null }),
    auditStatement({ workspaceId: e.workspaceId, action: LABEL_ACTIONS[e.type], by, targetType: "prompt_template", targetId: sql`t.${col(promptTemplates.id)}`, details: e.details, from: e.from, when: e.when }),
  ];
}

/** A version as a label move names it. */
export interface TargetVersion {
  id: number;
  version: number;
}

/**
 * The one label-move path: the moved event and audit row (only when the label names another version,
 * and only `when` holds) and the update, last. They read the old version before the update in the same batch.
 */
export function labelMoveStatements(ws: number, by: LabelActor, labelId: number, to: TargetVersion, when: SQL = sql`1`, extra: Record<string, unknown> = {}): SQL[] {
  const extraPairs = Object.entries(extra).flatMap(([k, v]) => [sql`, ${k}, ${typeof v === "object" ? JSON.stringify(v) : v}`]);
  return [
    ...labelChange(by, {
      workspaceId: ws,
      type: "prompt_template_label_moved",
      from: sql`${promptLabels} AS l JOIN ${promptVersions} AS ov ON ov.${col(promptVersions.id)} = l.${col(promptLabels.promptVersionId)} JOIN ${promptTemplates} AS t ON t.${col(promptTemplates.id)} = l.${col(promptLabels.promptId)}`,
      when: sql`l.${col(promptLabels.id)} = ${labelId} AND l.${col(promptLabels.workspaceId)} = ${ws} AND l.${col(promptLabels.promptVersionId)} <> ${to.id} AND ${when}`,
      details: sql`json_object('prompt_template_id', t.${col(promptTemplates.id)}, 'prompt_template_name', t.${col(promptTemplates.name)}, 'prompt_template_version_number', ${to.version},
        'old_prompt_template_version_number', ov.${col(promptVersions.version)}, 'prompt_template_label', l.${col(promptLabels.name)}${sql.join(extraPairs, sql``)})`,
    }),
    sql`UPDATE ${promptLabels} SET ${col(promptLabels.promptVersionId)} = ${to.id}, ${col(promptLabels.updatedAt)} = ${nowMs}
      WHERE ${promptLabels.id} = ${labelId} AND ${promptLabels.workspaceId} = ${ws} AND ${when}`,
  ];
}

const CR = labelChangeRequests;

/** The details PromptLayer gives the change events, plus the request's id and the versions. */
function changeDetails(crAlias: string): SQL {
  const cr = sql.raw(crAlias);
  return sql`json_object('prompt_template_id', t.${col(promptTemplates.id)}, 'prompt_template_name', t.${col(promptTemplates.name)}, 'prompt_template_label', ${cr}.${col(CR.labelName)},
    'change_type', 'move', 'change_request_id', ${cr}.${col(CR.id)}, 'prompt_template_version_number', tv.${col(promptVersions.version)},
    'old_prompt_template_version_number', fv.${col(promptVersions.version)}, 'ab_test_id', ${cr}.${col(CR.abTestId)})`;
}

const requestJoins = (crAlias: string) => {
  const cr = sql.raw(crAlias);
  return sql`JOIN ${promptTemplates} AS t ON t.${col(promptTemplates.id)} = ${cr}.${col(CR.promptId)}
    JOIN ${promptVersions} AS tv ON tv.${col(promptVersions.id)} = ${cr}.${col(CR.toVersionId)}
    JOIN ${promptVersions} AS fv ON fv.${col(promptVersions.id)} = ${cr}.${col(CR.fromVersionId)}`;
};

/**
 * A pending change request moving `label` to `to`, with its change_requested event, only `when`
 * holds and the label has no pending request yet (then neither is written: the caller reads back
 * which request is pending). The event comes first, judged before the insert in the same batch; the
 * request's id is the next AUTOINCREMENT value (requests are never deleted, and a batch runs alone).
 */
export function changeRequestStatements(ws: number, by: LabelActor, label: Pick<PromptLabelRow, "id">, to: TargetVersion, abTestId: number | null, when: SQL = sql`1`): SQL[] {
  const userId = by?.userId ?? null;
  const free = sql`l.${col(promptLabels.id)} = ${label.id} AND l.${col(promptLabels.workspaceId)} = ${ws}
    AND NOT EXISTS (SELECT 1 FROM ${CR} AS p WHERE p.${col(CR.labelId)} = ${label.id} AND p.${col(CR.status)} = 'pending') AND ${when}`;
  const nextId = sql`coalesce((SELECT seq FROM sqlite_sequence WHERE name = ${getTableName(CR)}), 0) + 1`;
  return [
    ...labelChange(by, {
      workspaceId: ws,
      type: "prompt_template_label_change_requested",
      from: sql`${promptLabels} AS l JOIN ${promptTemplates} AS t ON t.${col(promptTemplates.id)} = l.${col(promptLabels.promptId)}
        JOIN ${promptVersions} AS fv ON fv.${col(promptVersions.id)} = l.${col(promptLabels.promptVersionId)}`,
      when: free,
      details: sql`json_object('prompt_template_id', t.${col(promptTemplates.id)}, 'prompt_template_name', t.${col(promptTemplates.name)}, 'prompt_template_label', l.${col(promptLabels.name)},
        'change_type', 'move', 'change_request_id', ${nextId}, 'prompt_template_version_number', ${to.version},
        'old_prompt_template_version_number', fv.${col(promptVersions.version)}, 'ab_test_id', ${abTestId})`,
    }),
    sql`INSERT INTO ${CR} (${sql.join([CR.workspaceId, CR.promptId, CR.labelId, CR.labelName, CR.fromVersionId, CR.toVersionId, CR.abTestId, CR.requestedBy].map(col), sql`, `)})
      SELECT l.${col(promptLabels.workspaceId)}, l.${col(promptLabels.promptId)}, l.${col(promptLabels.id)}, l.${col(promptLabels.name)}, l.${col(promptLabels.promptVersionId)}, ${to.id}, ${abTestId}, ${userId}
      FROM ${promptLabels} AS l WHERE ${free}
      ON CONFLICT DO NOTHING`,
  ];
}

/** The label's pending change request, if any. */
export async function pendingRequestOf(db: Db, labelId: number): Promise<LabelChangeRequestRow | null> {
  const [row] = await db.select().from(CR).where(and(eq(CR.labelId, labelId), eq(CR.status, "pending"))).limit(1);
  return row ?? null;
}

export interface ChangeRequestView {
  id: number;
  prompt_template_id: number;
  prompt_label_id: number;
  prompt_template_label: string;
  change_type: "move";
  status: "pending" | "approved" | "denied";
  prompt_version_number: number;
  old_prompt_version_number: number;
  ab_test_id: number | null;
  requested_by: number | null;
  decided_by: number | null;
  created_at: string;
  decided_at: string | null;
}

async function versionNumbers(db: Db, ids: number[]): Promise<Map<number, number>> {
  const rows = ids.length ? await db.select({ id: promptVersions.id, version: promptVersions.version }).from(promptVersions).where(sql`${promptVersions.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`) : [];
  return new Map(rows.map((r) => [r.id, r.version]));
}

export async function changeRequestViews(db: Db, rows: LabelChangeRequestRow[]): Promise<ChangeRequestView[]> {
  const numbers = await versionNumbers(db, [...new Set(rows.flatMap((r) => [r.fromVersionId, r.toVersionId]))]);
  return rows.map((r) => ({
    id: r.id,
    prompt_template_id: r.promptId,
    prompt_label_id: r.labelId,
    prompt_template_label: r.labelName,
    change_type: "move" as const,
    status: r.status,
    prompt_version_number: numbers.get(r.toVersionId)!,
    old_prompt_version_number: numbers.get(r.fromVersionId)!,
    ab_test_id: r.abTestId ?? null,
    requested_by: r.requestedBy ?? null,
    decided_by: r.decidedBy ?? null,
    created_at: toIso(r.createdAt),
    decided_at: r.decidedAt === null ? null : toIso(r.decidedAt),
  }));
}

export async function requireChangeRequest(db: Db, ws: number, id: number): Promise<LabelChangeRequestRow> {
  const [row] = await db.select().from(CR).where(and(eq(CR.workspaceId, ws), eq(CR.id, id))).limit(1);
  if (!row) throw ApiError.notFound("change request");
  return row;
}

export async function listChangeRequests(db: Db, ws: number, q: { status?: "pending" | "approved" | "denied"; prompt_template_id?: number; page: number; per_page: number }) {
  const where = and(eq(CR.workspaceId, ws), q.status ? eq(CR.status, q.status) : undefined, q.prompt_template_id ? eq(CR.promptId, q.prompt_template_id) : undefined);
  const [{ total }] = await db.select({ total: sql<number>`count(*)` }).from(CR).where(where);
  const rows = await db.select().from(CR).where(where).orderBy(desc(CR.id)).limit(q.per_page).offset((q.page - 1) * q.per_page);
  return { change_requests: await changeRequestViews(db, rows), page: q.page, per_page: q.per_page, total, pages: Math.ceil(total / q.per_page) };
}

/**
 * Deciding a pending request: its event, for an approval the move (through labelMoveStatements, so
 * prompt_template_label_moved too), and its status, each only while the request is still pending
 * when the batch runs (a decision is taken once). `toVersion` is the request's target's number.
 */
export function decisionStatements(ws: number, by: LabelActor, cr: LabelChangeRequestRow, toVersion: number, decision: "approved" | "denied", when: SQL = sql`1`): SQL[] {
  const userId = by?.userId ?? null;
  const pending = sql`EXISTS (SELECT 1 FROM ${CR} AS p WHERE p.${col(CR.id)} = ${cr.id} AND p.${col(CR.status)} = 'pending') AND ${when}`;
  return [
    ...labelChange(by, {
      workspaceId: ws,
      type: decision === "approved" ? "prompt_template_label_change_approved" : "prompt_template_label_change_denied",
      from: sql`${CR} AS cr ${requestJoins("cr")}`,
      when: sql`cr.${col(CR.id)} = ${cr.id} AND ${pending}`,
      details: changeDetails("cr"),
    }),
    ...(decision === "approved" ? labelMoveStatements(ws, by, cr.labelId, { id: cr.toVersionId, version: toVersion }, pending, { change_request_id: cr.id }) : []),
    sql`UPDATE ${CR} SET ${col(CR.status)} = ${decision}, ${col(CR.decidedBy)} = ${userId}, ${col(CR.decidedAt)} = ${nowMs} WHERE ${CR.id} = ${cr.id} AND ${CR.status} = 'pending' AND ${when}`,
  ];
}

/** Marks a label protected or not (the label answers with `protected`); a change is in the audit log. */
export async function setLabelProtection(db: Db, auth: AuthContext, labelId: number, value: boolean): Promise<PromptLabelRow> {
  const ws = auth.workspaceId;
  await runBatch(db, [
    auditStatement({
      workspaceId: ws,
      action: value ? "prompt_label.protected" : "prompt_label.unprotected",
      by: auth,
      targetType: "prompt_template",
      targetId: sql`t.${col(promptTemplates.id)}`,
      details: sql`json_object('prompt_template_id', t.${col(promptTemplates.id)}, 'prompt_template_name', t.${col(promptTemplates.name)}, 'prompt_label_id', l.${col(promptLabels.id)}, 'prompt_template_label', l.${col(promptLabels.name)})`,
      from: sql`${promptLabels} AS l JOIN ${promptTemplates} AS t ON t.${col(promptTemplates.id)} = l.${col(promptLabels.promptId)}`,
      when: sql`l.${col(promptLabels.id)} = ${labelId} AND l.${col(promptLabels.workspaceId)} = ${ws} AND l.${col(promptLabels.protected)} <> ${value ? 1 : 0}`,
    }),
    db.update(promptLabels).set({ protected: value, updatedAt: Date.now() }).where(and(eq(promptLabels.workspaceId, ws), eq(promptLabels.id, labelId))),
  ]);
  const [row] = await db.select().from(promptLabels).where(and(eq(promptLabels.workspaceId, ws), eq(promptLabels.id, labelId))).limit(1);
  if (!row) throw ApiError.notFound("release label");
  return row;
}

/**
 * Asks for a protected label's move: writes the pending request and its event. A label that has a
 * pending request already is a 409 naming it.
 */
export async function requestLabelMove(db: Db, auth: AuthContext, label: PromptLabelRow, to: TargetVersion): Promise<LabelChangeRequestRow> {
  const before = await pendingRequestOf(db, label.id);
  if (before) throw pendingConflict(label, before);
  try {
    await runBatch(db, changeRequestStatements(auth.workspaceId, auth, label, to, null));
  } catch (err) {
    if (!isUniqueViolation(err, CR)) throw err;
  }
  const row = await pendingRequestOf(db, label.id);
  if (!row || row.toVersionId !== to.id || row.requestedBy !== auth.userId) throw pendingConflict(label, row);
  return row;
}

export function pendingConflict(label: Pick<PromptLabelRow, "name">, pending: Pick<LabelChangeRequestRow, "id"> | null): ApiError {
  return new ApiError("conflict", `release label "${label.name}" is protected and has a pending change request${pending ? ` (${pending.id})` : ""}: approve or deny it first`);
}

/**
 * The pending change requests of templates about to be deleted, closed as denied by who deletes
 * them (their change_denied event and audit row, `reason` prompt_template_deleted), only `when` holds.
 */
export function closeChangeRequestsOf(ws: number, by: LabelActor, promptIds: number[], when: SQL): SQL[] {
  return closeChangeRequests(ws, by, sql`cr.${col(CR.promptId)} IN (SELECT value FROM json_each(${JSON.stringify(promptIds)}))`, "prompt_template_deleted", when);
}

/** The same for the requests `which` selects (of `cr`), closed for `reason`. */
function closeChangeRequests(ws: number, by: LabelActor, which: SQL, reason: string, when: SQL): SQL[] {
  return labelChange(by, {
    workspaceId: ws,
    type: "prompt_template_label_change_denied",
    from: sql`${CR} AS cr ${requestJoins("cr")}`,
    when: sql`cr.${col(CR.workspaceId)} = ${ws} AND ${which} AND cr.${col(CR.status)} = 'pending' AND ${when}`,
    details: sql`json_set(${changeDetails("cr")}, '$.reason', ${reason})`,
  });
}

/**
 * A label about to be deleted takes its change requests with it (they name it): a pending one (left
 * from when it was protected) closed as denied with its event and audit row, then all of them removed.
 */
export function labelRequestsRemoval(ws: number, by: LabelActor, labelId: number, when: SQL): SQL[] {
  return [
    ...closeChangeRequests(ws, by, sql`cr.${col(CR.labelId)} = ${labelId}`, "prompt_label_deleted", when),
    sql`DELETE FROM ${CR} WHERE ${CR.workspaceId} = ${ws} AND ${CR.labelId} = ${labelId} AND ${when}`,
  ];
}

/** A change to a template that holds a protected label, asked by a key without admin: 409, naming the label. */
export function protectedTemplateConflict(promptId: number, label: string, what: string): ApiError {
  return new ApiError("conflict", `prompt template ${promptId} holds the protected release label "${label}": ${what} needs an API key with the admin scope (or unprotect the label first)`);
}
