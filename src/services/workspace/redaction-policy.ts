// A workspace's redaction policy (src/redaction/): read, saved (checked first: a custom pattern that
// cannot run in linear time is refused) and removed, each change with its audit row in the same
// batch. The key of the policy's `hash` action is made once, with the first policy, and kept across
// changes, so a value keeps its hash; it is never answered.
import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch } from "../../db/batch";
import { redactionPolicies } from "../../db/schema";
import { nowMs } from "../../db/sql";
import type { AuthContext } from "../../lib/auth-context";
import { toHex } from "../../lib/crypto";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { checkPolicy, publicPolicy, readStoredPolicy, type RedactionPolicy, type StoredPolicy } from "../../redaction";
import { auditStatement } from "./audit";

export interface PolicyView extends RedactionPolicy {
  enabled: boolean;
  updated_at: string | null;
}

const OFF: PolicyView = { enabled: false, detectors: [], custom: [], fields: [], updated_at: null };

export async function storedPolicy(db: Db, ws: number): Promise<{ policy: StoredPolicy; updatedAt: number } | null> {
  const [row] = await db.select().from(redactionPolicies).where(eq(redactionPolicies.workspaceId, ws)).limit(1);
  const policy = row ? readStoredPolicy(row.policy) : null;
  return policy ? { policy, updatedAt: row!.updatedAt } : null;
}

export async function getRedactionPolicy(db: Db, ws: number): Promise<PolicyView> {
  const found = await storedPolicy(db, ws);
  return found ? { enabled: true, ...publicPolicy(found.policy), updated_at: toIso(found.updatedAt) } : OFF;
}

/** What the audit log keeps of a policy: every setting (patterns are settings, not secrets). */
const auditDetails = (p: RedactionPolicy) => ({ detectors: p.detectors, custom: p.custom, fields: p.fields });

/** Saves the policy (400 naming the field it breaks); logs written from now on are redacted by it. */
export async function putRedactionPolicy(db: Db, auth: AuthContext, body: RedactionPolicy): Promise<PolicyView> {
  const checked = checkPolicy(body);
  if (!checked.ok) throw new ApiError("validation_error", `${checked.field}: ${checked.message}`, { details: [{ field: checked.field, rule: checked.message }] });
  const ws = auth.workspaceId;
  const before = await storedPolicy(db, ws);
  const stored: StoredPolicy = { ...checked.value, hash_key: before?.policy.hash_key ?? toHex(crypto.getRandomValues(new Uint8Array(32))) };
  // updated_at is the policy's version (isolates recompile when it changes): strictly increasing.
  const version = sql`max(${nowMs}, coalesce((SELECT ${redactionPolicies.updatedAt} FROM ${redactionPolicies} WHERE ${redactionPolicies.workspaceId} = ${ws}), 0) + 1)`;
  await runBatch(db, [
    db
      .insert(redactionPolicies)
      .values({ workspaceId: ws, policy: stored as unknown as Record<string, unknown>, updatedByKeyId: auth.apiKeyId, updatedAt: version })
      .onConflictDoUpdate({ target: redactionPolicies.workspaceId, set: { policy: stored as unknown as Record<string, unknown>, updatedByKeyId: auth.apiKeyId, updatedAt: version } }),
    auditStatement({ workspaceId: ws, action: "redaction_policy.updated", by: auth, targetType: "redaction_policy", targetId: ws, details: auditDetails(checked.value) }),
  ]);
  return getRedactionPolicy(db, ws);
}

/** Turns redaction off (logs already stored stay as they were stored). */
export async function deleteRedactionPolicy(db: Db, auth: AuthContext): Promise<PolicyView> {
  const ws = auth.workspaceId;
  await runBatch(db, [
    auditStatement({ workspaceId: ws, action: "redaction_policy.deleted", by: auth, targetType: "redaction_policy", targetId: ws, details: {}, when: sql`EXISTS (SELECT 1 FROM ${redactionPolicies} WHERE ${redactionPolicies.workspaceId} = ${ws})` }),
    db.delete(redactionPolicies).where(eq(redactionPolicies.workspaceId, ws)),
  ]);
  return OFF;
}
