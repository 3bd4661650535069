// Environment variables of a workspace or of one tool: secrets, encrypted at rest and never
// answered in full after they are written (lists show the last four characters of a value of 12 or
// more, opened from the sealed value: nothing of a value is stored in plain text). Blocks, tools and
// the playground read them through `envForRun` (base-deps.ts, so the blocks' context can reach it),
// the only place that hands decrypted values on.
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { PROVIDER_VARIABLES } from "../../blocks";
import { envForRun, envVarContext as context, envVarScope as inScope, type EnvScope } from "../../base-deps";
import type { Db } from "../../db/client";
import { envVars, type EnvVarRow } from "../../db/schema";
import { isUniqueViolation, nowMs } from "../../db/sql";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { open, seal } from "../../lib/secret-box";
import { toIso } from "../../lib/time";
import { grants } from "../../lib/scopes";
import { runBatch } from "../../db/batch";
import { auditStatement, type AuditAction } from "./audit";

export { envForRun, type EnvScope };

export interface EnvVarView {
  id: number;
  key: string;
  value_suffix: string | null;
  is_empty: boolean;
  created_at: string;
  updated_at: string;
  workspace_id?: number;
  tool_registry_id?: number;
}

/** A value shorter than this shows no suffix: four characters of a short value give too much of it away. */
export const SUFFIX_MIN_LENGTH = 12;

export const suffixOf = (value: string): string | null => {
  const chars = [...value];
  return chars.length < SUFFIX_MIN_LENGTH ? null : chars.slice(-4).join("");
};

/** The row as answered; `value` is the row's plaintext (known on a write, opened on a read). */
function view(row: EnvVarRow, value: string): EnvVarView {
  const v: EnvVarView = {
    id: row.id,
    key: row.key,
    value_suffix: row.hasValue ? suffixOf(value) : null,
    is_empty: !row.hasValue,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
  if (row.toolId == null) v.workspace_id = row.workspaceId;
  else v.tool_registry_id = row.toolId;
  return v;
}

/**
 * A provider's base URL (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, any *_BASE_URL): where runs send the
 * workspace's stored provider key. Changing one could send that key to a host of the caller's choosing,
 * so it takes the admin scope, whatever scope the env-var routes need otherwise.
 */
export const isProviderBaseUrl = (key: string) => /_BASE_URL$/i.test(key);

/**
 * A provider credential: a variable the provider client reads (each provider's API key and base URL),
 * any `*_BASE_URL`, and any workspace `*_API_KEY`. A tool's sandbox is never handed one, whatever its
 * version declares (a tool's own `*_API_KEY`, set on the tool, is its to read).
 */
export const isProviderCredential = (key: string, ofTool: boolean): boolean =>
  isProviderBaseUrl(key) || Object.values(PROVIDER_VARIABLES).some((v) => v.key === key || v.baseUrl === key) || (!ofTool && /_API_KEY$/i.test(key));

function requireAdminFor(auth: AuthContext, key: string): void {
  if (isProviderBaseUrl(key) && !grants(auth.scopes ?? [], "admin")) {
    throw new ApiError("forbidden", `${key}: setting, changing or deleting a provider base URL needs the admin scope (it decides where the stored provider key is sent)`, {
      details: [{ field: "key", rule: "needs scope admin" }],
    });
  }
}

/** The audit row of a change to a variable: its key and scope, never its value. */
function audited(auth: AuthContext, action: AuditAction, scope: EnvScope, key: string, targetId: number | SQL) {
  return auditStatement({
    workspaceId: scope.workspaceId,
    action,
    by: auth,
    targetType: scope.toolId == null ? "workspace_env_var" : "tool_env_var",
    targetId,
    details: { key, ...(scope.toolId == null ? {} : { tool_registry_id: scope.toolId }) },
  });
}

export async function listEnvVars(db: Db, secret: string | undefined, scope: EnvScope): Promise<EnvVarView[]> {
  const rows = await db.select().from(envVars).where(inScope(scope)).orderBy(asc(envVars.key));
  return Promise.all(rows.map(async (row) => view(row, row.hasValue ? await open(secret, row.sealedValue, context(scope, row.key)) : "")));
}

export async function createEnvVar(db: Db, secret: string | undefined, auth: AuthContext, scope: EnvScope, input: { key: string; value?: string }): Promise<EnvVarView> {
  requireAdminFor(auth, input.key);
  const value = input.value ?? "";
  const sealedValue = await seal(secret, value, context(scope, input.key));
  try {
    const [inserted] = await runBatch(db, [
      db
        .insert(envVars)
        .values({ workspaceId: scope.workspaceId, toolId: scope.toolId, key: input.key, sealedValue, hasValue: value !== "", createdBy: auth.userId })
        .returning({ id: envVars.id }),
      audited(auth, "env_var.created", scope, input.key, sql`(SELECT max(${envVars.id}) FROM ${envVars} WHERE ${inScope(scope)} AND ${envVars.key} = ${input.key})`),
    ]);
    const id = Number((inserted.results as { id: number }[])[0].id);
    const [row] = await db.select().from(envVars).where(eq(envVars.id, id));
    return view(row, value);
  } catch (err) {
    if (isUniqueViolation(err, envVars)) {
      throw new ApiError("conflict", `key: ${input.key} already exists ${scope.toolId == null ? "in this workspace" : "for this tool"}`);
    }
    throw err;
  }
}

export async function updateEnvVar(db: Db, secret: string | undefined, auth: AuthContext, scope: EnvScope, id: number, value: string): Promise<EnvVarView> {
  const [current] = await db.select({ key: envVars.key }).from(envVars).where(and(inScope(scope), eq(envVars.id, id))).limit(1);
  if (!current) throw ApiError.notFound("environment variable");
  requireAdminFor(auth, current.key);
  const sealedValue = await seal(secret, value, context(scope, current.key));
  const [updated] = await runBatch(db, [
    db
      .update(envVars)
      .set({ sealedValue, hasValue: value !== "", updatedAt: nowMs })
      .where(and(inScope(scope), eq(envVars.id, id)))
      .returning({ id: envVars.id }),
    audited(auth, "env_var.updated", scope, current.key, id),
  ]);
  if ((updated.results ?? []).length === 0) throw ApiError.notFound("environment variable");
  const [row] = await db.select().from(envVars).where(eq(envVars.id, id));
  return view(row, value);
}

export async function deleteEnvVar(db: Db, auth: AuthContext, scope: EnvScope, id: number): Promise<void> {
  const [current] = await db.select({ key: envVars.key }).from(envVars).where(and(inScope(scope), eq(envVars.id, id))).limit(1);
  if (!current) throw ApiError.notFound("environment variable");
  requireAdminFor(auth, current.key);
  const [deleted] = await runBatch(db, [db.delete(envVars).where(and(inScope(scope), eq(envVars.id, id))).returning({ id: envVars.id }), audited(auth, "env_var.deleted", scope, current.key, id)]);
  if ((deleted.results ?? []).length === 0) throw ApiError.notFound("environment variable");
}
