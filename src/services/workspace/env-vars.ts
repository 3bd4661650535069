// Environment variables of a workspace or of one tool: secrets, encrypted at rest and never
// answered in full after they are written (lists show the last four characters). Blocks, tools and
// the playground read them through `envForRun` (base-deps.ts, so the blocks' context can reach it),
// the only place that decrypts.
import { and, asc, eq } from "drizzle-orm";
import { envForRun, envVarContext as context, envVarScope as inScope, type EnvScope } from "../../base-deps";
import type { Db } from "../../db/client";
import { envVars, type EnvVarRow } from "../../db/schema";
import { isUniqueViolation, nowMs } from "../../db/sql";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { seal } from "../../lib/secret-box";
import { toIso } from "../../lib/time";

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

const suffixOf = (value: string) => (value === "" ? null : [...value].slice(-4).join(""));

function view(row: EnvVarRow): EnvVarView {
  const v: EnvVarView = {
    id: row.id,
    key: row.key,
    value_suffix: row.valueSuffix ?? null,
    is_empty: row.valueSuffix == null,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
  if (row.toolId == null) v.workspace_id = row.workspaceId;
  else v.tool_registry_id = row.toolId;
  return v;
}

export async function listEnvVars(db: Db, scope: EnvScope): Promise<EnvVarView[]> {
  const rows = await db.select().from(envVars).where(inScope(scope)).orderBy(asc(envVars.key));
  return rows.map(view);
}

export async function createEnvVar(db: Db, secret: string | undefined, auth: AuthContext, scope: EnvScope, input: { key: string; value?: string }): Promise<EnvVarView> {
  const value = input.value ?? "";
  const sealedValue = await seal(secret, value, context(scope, input.key));
  try {
    const [row] = await db
      .insert(envVars)
      .values({ workspaceId: scope.workspaceId, toolId: scope.toolId, key: input.key, sealedValue, valueSuffix: suffixOf(value), createdBy: auth.userId })
      .returning();
    return view(row);
  } catch (err) {
    if (isUniqueViolation(err, envVars)) {
      throw new ApiError("conflict", `key: ${input.key} already exists ${scope.toolId == null ? "in this workspace" : "for this tool"}`);
    }
    throw err;
  }
}

export async function updateEnvVar(db: Db, secret: string | undefined, scope: EnvScope, id: number, value: string): Promise<EnvVarView> {
  const [current] = await db.select({ key: envVars.key }).from(envVars).where(and(inScope(scope), eq(envVars.id, id))).limit(1);
  if (!current) throw ApiError.notFound("environment variable");
  const sealedValue = await seal(secret, value, context(scope, current.key));
  const [row] = await db
    .update(envVars)
    .set({ sealedValue, valueSuffix: suffixOf(value), updatedAt: nowMs })
    .where(and(inScope(scope), eq(envVars.id, id)))
    .returning();
  if (!row) throw ApiError.notFound("environment variable");
  return view(row);
}

export async function deleteEnvVar(db: Db, scope: EnvScope, id: number): Promise<void> {
  const rows = await db.delete(envVars).where(and(inScope(scope), eq(envVars.id, id))).returning({ id: envVars.id });
  if (rows.length === 0) throw ApiError.notFound("environment variable");
}
