// Resolves an API key to its workspace and user. Only SHA-256 hashes of keys are stored.
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { apiKeys, users } from "../db/schema";
import { sha256Hex } from "../lib/crypto";
import type { AuthContext } from "../env";

/** Keys look like `pe_` + 40 hex characters; anything far off that is not worth a query. */
const MAX_KEY_LENGTH = 256;

export async function authenticate(db: Db, key: string | undefined | null): Promise<AuthContext | null> {
  if (!key || key.length > MAX_KEY_LENGTH) return null;
  const keyHash = await sha256Hex(key.trim());
  const rows = await db
    .select({
      apiKeyId: apiKeys.id,
      workspaceId: apiKeys.workspaceId,
      userId: apiKeys.userId,
      userEmail: users.email,
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  return rows[0] ?? null;
}
