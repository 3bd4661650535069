// Webhook signing secrets at rest: sealed like environment variables (lib/secret-box.ts, AES-256-GCM
// under the ENV_VARS_KEY secret, bound to the workspace), opened only to sign a delivery. Rows from
// before sealing hold the secret in plain text (64 hex digits, never "v1:…"): they still sign, and the
// cron seals them a batch at a time (sealPlainSecrets), so an upgrade loses none. A rotation keeps the
// replaced secret, sealed, signing beside the new one until its overlap ends.
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { webhooks } from "../../db/schema";
import { open, seal } from "../../lib/secret-box";
import { toHex } from "../../lib/crypto";
import { chainForLog } from "../../lib/error-text";

const SEALED = "v1:";
const context = (workspaceId: number) => `webhook:${workspaceId}`;

export const isSealed = (stored: string) => stored.startsWith(SEALED);

/** A new random secret, as it is shown once (64 hex digits). */
export const newSecret = () => toHex(crypto.getRandomValues(new Uint8Array(32)));

export const sealSecret = (key: string | undefined, workspaceId: number, secret: string) => seal(key, secret, context(workspaceId));

/** The secret as stored, opened: a sealed one decrypted, a plain one (from before sealing) as it is. */
export async function openSecret(key: string | undefined, workspaceId: number, stored: string): Promise<string> {
  return isSealed(stored) ? open(key, stored, context(workspaceId)) : stored;
}

/** The secrets a delivery is signed with now: the current one, and the replaced one while its overlap lasts. */
export async function signingSecrets(
  key: string | undefined,
  workspaceId: number,
  row: { secret: string; previous_secret: string | null; previous_secret_until: number | null },
  now = Date.now(),
): Promise<{ current: string; previous: string | null }> {
  const current = await openSecret(key, workspaceId, row.secret);
  const live = row.previous_secret !== null && row.previous_secret_until !== null && row.previous_secret_until > now;
  return { current, previous: live ? await openSecret(key, workspaceId, row.previous_secret!) : null };
}

/** Rows sealed per cron run. */
const SEAL_BATCH = 100;

/**
 * Seals secrets still stored in plain text (webhooks registered before sealing), a batch a run. Each
 * update is conditional on the row still holding what was read, so a rotation in between wins.
 * Without ENV_VARS_KEY nothing can be sealed: the rows keep working as they are.
 */
export async function sealPlainSecrets(db: Db, key: string | undefined): Promise<number> {
  if (!key || key.length < 32) return 0;
  const plain = await db
    .select({ id: webhooks.id, workspaceId: webhooks.workspaceId, secret: webhooks.secret, previousSecret: webhooks.previousSecret })
    .from(webhooks)
    .where(sql`${webhooks.secret} NOT LIKE 'v1:%' OR (${webhooks.previousSecret} IS NOT NULL AND ${webhooks.previousSecret} NOT LIKE 'v1:%')`)
    .limit(SEAL_BATCH);
  let sealed = 0;
  for (const row of plain) {
    try {
      const secret = isSealed(row.secret) ? row.secret : await sealSecret(key, row.workspaceId, row.secret);
      const previous = row.previousSecret === null || isSealed(row.previousSecret) ? row.previousSecret : await sealSecret(key, row.workspaceId, row.previousSecret);
      const done = await db
        .update(webhooks)
        .set({ secret, previousSecret: previous })
        .where(
          and(
            eq(webhooks.id, row.id),
            eq(webhooks.secret, row.secret),
            row.previousSecret === null ? isNull(webhooks.previousSecret) : eq(webhooks.previousSecret, row.previousSecret),
          ),
        )
        .returning({ id: webhooks.id });
      sealed += done.length;
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "sealing a webhook secret failed; the next run tries again", webhook_id: row.id, error: chainForLog(err) }));
    }
  }
  return sealed;
}

