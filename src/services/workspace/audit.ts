// The audit log: who (which key, whose user) did which administrative action when. Each action is a
// row written by the SAME batch as the change it records, as the webhook outbox does (a row never
// exists for a change that did not commit, and a change never commits without its row); a change that
// is not one batch records its row right after it. Rows are never changed: no route edits them and the
// database refuses UPDATE and DELETE (migration 0037's triggers). Details name things (a key's name and
// scopes, an env var's key), never a secret value.
import { and, count, desc, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiKeys, auditEvents, users, type AuditEventRow } from "../../db/schema";
import { columnList, nowMs } from "../../db/sql";
import type { AuthContext } from "../../lib/auth-context";
import { toIso } from "../../lib/time";
import { resourceConditions, type ResourceFilters } from "./resource-list";

/** Every action the audit log records (docs/access.md says when each is written). */
export const AUDIT_ACTIONS = [
  "api_key.created",
  "api_key.revoked",
  "prompt_label.created",
  "prompt_label.moved",
  "prompt_label.deleted",
  "prompt_label.protected",
  "prompt_label.unprotected",
  "prompt_label.change_requested",
  "prompt_label.change_approved",
  "prompt_label.change_denied",
  "ab_test.created",
  "ab_test.updated",
  "ab_test.deleted",
  "ab_test.promoted",
  "ab_test.rolled_back",
  "redaction_policy.updated",
  "redaction_policy.deleted",
  "env_var.created",
  "env_var.updated",
  "env_var.deleted",
  "log_retention.updated",
  "webhook.created",
  "webhook.secret_rotated",
  "webhook.deleted",
  "signal.created",
  "signal.updated",
  "signal.deleted",
  "signal_backfill.created",
  "signal_backfill.cancelled",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditSpec {
  workspaceId: number;
  action: AuditAction;
  /** Who: the caller's key and user (null for the keys CLI). */
  by: Pick<AuthContext, "apiKeyId" | "userId"> | null;
  targetType: string;
  /** The target's id; SQL when only the batch knows it (a row it inserts). */
  targetId: string | number | null | SQL;
  /** A plain object, or SQL building the JSON from the rows at hand (json_object(...)). */
  details: Record<string, unknown> | SQL;
  /** FROM clause: one row per row it yields (targetId and details may name its columns). */
  from?: SQL;
  /** Only when this holds (checked in the same batch, against the rows as they are before the change). */
  when?: SQL;
}

const COLUMNS = columnList(auditEvents, ["workspaceId", "action", "targetType", "targetId", "details", "apiKeyId", "userId", "createdAt"]);
const isSql = (v: unknown): v is SQL => typeof v === "object" && v !== null && "queryChunks" in v;

/** The INSERT of one audit row (or one per row of `from`); put it in the change's own batch. */
export function auditStatement(a: AuditSpec): SQL {
  const target = a.targetId === null ? sql`NULL` : isSql(a.targetId) ? sql`CAST(${a.targetId} AS TEXT)` : sql`${String(a.targetId)}`;
  const details = isSql(a.details) ? sql`json(${a.details})` : sql`${JSON.stringify(a.details)}`;
  return sql`INSERT INTO ${auditEvents} (${COLUMNS})
    SELECT ${a.workspaceId}, ${a.action}, ${a.targetType}, ${target}, ${details}, ${a.by?.apiKeyId ?? null}, ${a.by?.userId ?? null}, ${nowMs}
    ${a.from ? sql`FROM ${a.from}` : sql``}
    WHERE ${a.when ?? sql`1`}`;
}

/** Records an action on its own (for a change that was not one batch). */
export async function recordAudit(db: Db, a: AuditSpec): Promise<void> {
  await db.run(auditStatement(a));
}

export interface AuditListQuery extends Pick<ResourceFilters, "created_by_email" | "created_after" | "created_before"> {
  action?: AuditAction;
  target_type?: string;
  target_id?: string;
  page: number;
  per_page: number;
  sort_order?: "asc" | "desc";
}

function eventView(r: AuditEventRow & { email: string | null; keyPrefix: string | null }) {
  return {
    id: r.id,
    action: r.action,
    target_type: r.targetType,
    target_id: r.targetId,
    details: r.details,
    api_key_id: r.apiKeyId,
    api_key_prefix: r.keyPrefix,
    user_email: r.email,
    created_at: toIso(r.createdAt),
  };
}

/**
 * One page of the workspace's audit log, newest first by default, with the list filters every list
 * takes (creator e-mail, created bounds) and the action and target.
 */
export async function listAuditEvents(db: Db, ws: number, q: AuditListQuery) {
  const shared = resourceConditions(ws, { id: auditEvents.id, name: auditEvents.action, userId: auditEvents.userId, createdAt: auditEvents.createdAt, updatedAt: auditEvents.createdAt }, q);
  const where = and(
    eq(auditEvents.workspaceId, ws),
    ...shared,
    q.action !== undefined ? eq(auditEvents.action, q.action) : undefined,
    q.target_type !== undefined ? eq(auditEvents.targetType, q.target_type) : undefined,
    q.target_id !== undefined ? eq(auditEvents.targetId, q.target_id) : undefined,
  );
  const order = q.sort_order === "asc" ? [auditEvents.createdAt, auditEvents.id] : [desc(auditEvents.createdAt), desc(auditEvents.id)];
  const [rows, [{ n }]] = await Promise.all([
    db
      .select({ e: auditEvents, email: users.email, keyPrefix: apiKeys.prefix })
      .from(auditEvents)
      .leftJoin(users, eq(users.id, auditEvents.userId))
      .leftJoin(apiKeys, eq(apiKeys.id, auditEvents.apiKeyId))
      .where(where)
      .orderBy(...order)
      .limit(q.per_page)
      .offset((q.page - 1) * q.per_page),
    db.select({ n: count() }).from(auditEvents).where(where),
  ]);
  const pages = Math.ceil(n / q.per_page);
  return {
    success: true as const,
    items: rows.map((r) => eventView({ ...r.e, email: r.email, keyPrefix: r.keyPrefix })),
    page: q.page,
    per_page: q.per_page,
    total: n,
    pages,
    has_next: q.page < pages,
    has_prev: q.page > 1,
  };
}
