// API keys made and revoked through the API (the keys CLI does the same on the database directly):
// a key is shown once, when it is made; only its SHA-256 is stored, with its name and scopes. Each
// change writes its audit row in the same batch.
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch } from "../../db/batch";
import { apiKeys, users, type ApiKeyRow } from "../../db/schema";
import { col, nowMs } from "../../db/sql";
import type { AuthContext } from "../../lib/auth-context";
import { toHex } from "../../lib/crypto";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { auditStatement } from "./audit";
import { hashKey } from "./auth";

/** As the keys CLI shows it: "pe_" and 8 hex characters, enough to tell keys apart. */
const PREFIX_LENGTH = 11;

export function apiKeyView(row: ApiKeyRow & { userEmail?: string | null }) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    created_at: toIso(row.createdAt),
    revoked_at: row.revokedAt === null ? null : toIso(row.revokedAt),
    user_email: row.userEmail ?? null,
  };
}

/** A new key of the caller's workspace and user, with a name and scopes; the key itself is in the answer only. */
export async function createApiKey(db: Db, auth: AuthContext, input: { name: string; scopes: string[] }) {
  const key = `pe_${toHex(crypto.getRandomValues(new Uint8Array(24)))}`;
  const keyHash = await hashKey(key);
  const scopes = [...new Set(input.scopes)];
  const [inserted] = await runBatch(db, [
    db
      .insert(apiKeys)
      .values({ workspaceId: auth.workspaceId, userId: auth.userId, keyHash, prefix: key.slice(0, PREFIX_LENGTH), name: input.name, scopes, createdByKeyId: auth.apiKeyId })
      .returning(),
    auditStatement({
      workspaceId: auth.workspaceId,
      action: "api_key.created",
      by: auth,
      targetType: "api_key",
      targetId: sql`(SELECT ${apiKeys.id} FROM ${apiKeys} WHERE ${apiKeys.keyHash} = ${keyHash})`,
      details: { name: input.name, prefix: key.slice(0, PREFIX_LENGTH), scopes },
    }),
  ]);
  const row = (inserted.results as Record<string, unknown>[])[0];
  const [stored] = await db.select().from(apiKeys).where(eq(apiKeys.id, Number(row.id)));
  return { ...apiKeyView({ ...stored, userEmail: auth.userEmail }), key };
}

/** The workspace's keys, oldest first, revoked ones too; never a key or its hash. */
export async function listApiKeys(db: Db, ws: number) {
  const rows = await db
    .select({ k: apiKeys, userEmail: users.email })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(eq(apiKeys.workspaceId, ws))
    .orderBy(asc(apiKeys.id));
  return rows.map((r) => apiKeyView({ ...r.k, userEmail: r.userEmail }));
}

/**
 * Revokes a key of the workspace (the caller's own too): every isolate refuses it within the key
 * cache's bound. Another workspace's or an unknown id is a 404; a key revoked already answers as it is.
 */
export async function revokeApiKey(db: Db, auth: AuthContext, id: number) {
  const ws = auth.workspaceId;
  const active = and(eq(apiKeys.id, id), eq(apiKeys.workspaceId, ws), isNull(apiKeys.revokedAt));
  await runBatch(db, [
    auditStatement({
      workspaceId: ws,
      action: "api_key.revoked",
      by: auth,
      targetType: "api_key",
      targetId: id,
      from: sql`${apiKeys} AS k`,
      when: sql`k.${col(apiKeys.id)} = ${id} AND k.${col(apiKeys.workspaceId)} = ${ws} AND k.${col(apiKeys.revokedAt)} IS NULL`,
      details: sql`json_object('name', k.${col(apiKeys.name)}, 'prefix', k.${col(apiKeys.prefix)}, 'scopes', json(k.${col(apiKeys.scopes)}))`,
    }),
    db.update(apiKeys).set({ revokedAt: nowMs }).where(active),
  ]);
  const [row] = await db
    .select({ k: apiKeys, userEmail: users.email })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(and(eq(apiKeys.id, id), eq(apiKeys.workspaceId, ws)));
  if (!row) throw ApiError.notFound("api key");
  return apiKeyView({ ...row.k, userEmail: row.userEmail });
}
