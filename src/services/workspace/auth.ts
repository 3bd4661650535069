// Resolves an API key to its workspace and user. Only SHA-256 hashes of keys are stored.
// A small per-isolate cache of verified keys saves the key lookup's database round trip: every route
// trusts a verified key for a few seconds (AUTH_KEY_CACHE_MS), and POST /log-request for longer
// (AUTH_CACHE_TTL_MS) when the workspace logs into the control database, where a trigger refuses a
// revoked key's writes, so a cached key never outlives its revocation for those writes.
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiKeys, logShards, redactionPolicies, users, workspaces } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import type { AuthContext } from "../../lib/auth-context";

/** Keys look like `pe_` + 48 hex characters; anything far off that is not worth a query. */
const MAX_KEY_LENGTH = 256;

export function plausibleKey(key: string | undefined | null): key is string {
  return Boolean(key) && (key as string).length <= MAX_KEY_LENGTH;
}

/** The stored form of a key (the keys CLI hashes it the same way). */
export function hashKey(key: string): Promise<string> {
  return sha256Hex(key);
}

/**
 * The key's context: its workspace, user, scopes, log databases and the workspace's redaction policy,
 * in one lookup (the policy rides with the key, so a workspace without one pays nothing more for it,
 * and the key cache keeps both).
 */
export async function authenticateHash(db: Db, keyHash: string): Promise<AuthContext | null> {
  const rows = await db
    .select({
      apiKeyId: apiKeys.id,
      workspaceId: apiKeys.workspaceId,
      userId: apiKeys.userId,
      userEmail: users.email,
      scopes: apiKeys.scopes,
      logShard: workspaces.logShard,
      logPeriods: workspaces.logPeriods,
      logShardFull: logShards.full,
      policy: redactionPolicies.policy,
      policyUpdatedAt: redactionPolicies.updatedAt,
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .innerJoin(workspaces, eq(workspaces.id, apiKeys.workspaceId))
    .leftJoin(logShards, eq(logShards.binding, workspaces.logShard))
    .leftJoin(redactionPolicies, eq(redactionPolicies.workspaceId, apiKeys.workspaceId))
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  const row = rows[0];
  if (!row) return null;
  const { policy, policyUpdatedAt, ...auth } = row;
  return { ...auth, redaction: policy ? { policy, updatedAt: policyUpdatedAt ?? 0 } : null };
}


/**
 * Verified keys by hash, each kept for `ttlMs` after it was verified; bounded so a flood of keys
 * cannot grow it without end. A reader may ask for a shorter age (`maxAgeMs`) than the entry is kept.
 */
export class AuthCache {
  private readonly entries = new Map<string, { auth: AuthContext; verified: number; expires: number }>();

  constructor(
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key's context when it was verified less than `maxAgeMs` (of that context) ago, and is still kept. */
  get(keyHash: string, maxAgeMs: number | ((auth: AuthContext) => number) = Number.POSITIVE_INFINITY): AuthContext | null {
    const hit = this.entries.get(keyHash);
    if (!hit) return null;
    const now = this.now();
    if (hit.expires <= now) {
      this.entries.delete(keyHash);
      return null;
    }
    const age = typeof maxAgeMs === "function" ? maxAgeMs(hit.auth) : maxAgeMs;
    return now - hit.verified < age ? hit.auth : null;
  }

  set(keyHash: string, auth: AuthContext, ttlMs: number): void {
    if (ttlMs <= 0) return;
    // Re-setting a key moves it to the end of the insertion order (it is the newest again).
    this.entries.delete(keyHash);
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const now = this.now();
    this.entries.set(keyHash, { auth, verified: now, expires: now + ttlMs });
  }

  delete(keyHash: string): void {
    this.entries.delete(keyHash);
  }

  /** Forgets every key of a workspace (its policy or a key's scopes changed): their next request reads D1. */
  forgetWorkspace(workspaceId: number): void {
    for (const [hash, entry] of this.entries) if (entry.auth.workspaceId === workspaceId) this.entries.delete(hash);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Key hashes just looked up and not found, each refused without a lookup for `ttlMs` (the same bound
 * as a verified key's, AUTH_KEY_CACHE_MS): a client retrying a bad key costs one D1 read per isolate
 * per bound, not one per request. Bounded like AuthCache, oldest dropped first.
 */
export class UnknownKeyCache {
  private readonly entries = new Map<string, number>();

  constructor(
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  has(keyHash: string): boolean {
    const until = this.entries.get(keyHash);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.entries.delete(keyHash);
    return false;
  }

  add(keyHash: string, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.delete(keyHash);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(keyHash, this.now() + ttlMs);
  }

  get size(): number {
    return this.entries.size;
  }
}
