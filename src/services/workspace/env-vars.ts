// Environment variables of a workspace or of one tool: secrets, encrypted at rest and never
// answered in full after they are written (lists show the last four characters). Blocks and tools
// read them through `envForRun`, the only place that decrypts.
import { and, asc, eq, isNull, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { envVars, type EnvVarRow } from "../../db/schema";
import { isUniqueViolation, nowMs } from "../../db/sql";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { open, seal } from "../../lib/secret-box";
import { toIso } from "../../lib/time";

/** Where a variable lives: the workspace, or one tool of it. */
export interface EnvScope {
  workspaceId: number;
  toolId: number | null;
}

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

/** The additional data of a sealed value: a value only opens in the row it was written for. */
const context = (scope: EnvScope, key: string) => `env:${scope.workspaceId}:${scope.toolId ?? 0}:${key}`;

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

const inScope = (scope: EnvScope): SQL =>
  and(eq(envVars.workspaceId, scope.workspaceId), scope.toolId == null ? isNull(envVars.toolId) : eq(envVars.toolId, scope.toolId))!;

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

/**
 * The variables a run sees, decrypted: the workspace's, overlaid by the tool's when a tool runs.
 * Placeholders (never given a value) are left out.
 */
export async function envForRun(db: Db, secret: string | undefined, workspaceId: number, toolId: number | null = null): Promise<Record<string, string>> {
  const scopes: EnvScope[] = [{ workspaceId, toolId: null }, ...(toolId == null ? [] : [{ workspaceId, toolId }])];
  const out: Record<string, string> = {};
  for (const scope of scopes) {
    const rows = await db.select().from(envVars).where(inScope(scope));
    for (const row of rows) {
      if (row.valueSuffix == null) continue;
      out[row.key] = await open(secret, row.sealedValue, context(scope, row.key));
    }
  }
  return out;
}
