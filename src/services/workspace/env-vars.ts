// Environment variables of a workspace or of one tool: secrets, encrypted at rest and never
// answered in full after they are written (lists show the last four characters of a value of 12 or
// more, opened from the sealed value: nothing of a value is stored in plain text). Blocks and tools
// read them through `envForRun`, the only place that hands decrypted values on.
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

const inScope = (scope: EnvScope): SQL =>
  and(eq(envVars.workspaceId, scope.workspaceId), scope.toolId == null ? isNull(envVars.toolId) : eq(envVars.toolId, scope.toolId))!;

export async function listEnvVars(db: Db, secret: string | undefined, scope: EnvScope): Promise<EnvVarView[]> {
  const rows = await db.select().from(envVars).where(inScope(scope)).orderBy(asc(envVars.key));
  return Promise.all(rows.map(async (row) => view(row, row.hasValue ? await open(secret, row.sealedValue, context(scope, row.key)) : "")));
}

export async function createEnvVar(db: Db, secret: string | undefined, auth: AuthContext, scope: EnvScope, input: { key: string; value?: string }): Promise<EnvVarView> {
  const value = input.value ?? "";
  const sealedValue = await seal(secret, value, context(scope, input.key));
  try {
    const [row] = await db
      .insert(envVars)
      .values({ workspaceId: scope.workspaceId, toolId: scope.toolId, key: input.key, sealedValue, hasValue: value !== "", createdBy: auth.userId })
      .returning();
    return view(row, value);
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
    .set({ sealedValue, hasValue: value !== "", updatedAt: nowMs })
    .where(and(inScope(scope), eq(envVars.id, id)))
    .returning();
  if (!row) throw ApiError.notFound("environment variable");
  return view(row, value);
}

export async function deleteEnvVar(db: Db, scope: EnvScope, id: number): Promise<void> {
  const rows = await db.delete(envVars).where(and(inScope(scope), eq(envVars.id, id))).returning({ id: envVars.id });
  if (rows.length === 0) throw ApiError.notFound("environment variable");
}

/**
 * The variables a run sees, decrypted: the workspace's, overlaid by the tool's when a tool runs.
 * Placeholders (never given a value) are left out. With `only`, just those keys (a stored tool
 * version gets the variables its execution declares, nothing else).
 */
export async function envForRun(
  db: Db,
  secret: string | undefined,
  workspaceId: number,
  toolId: number | null = null,
  only?: readonly string[],
): Promise<Record<string, string>> {
  if (only && only.length === 0) return {};
  const scopes: EnvScope[] = [{ workspaceId, toolId: null }, ...(toolId == null ? [] : [{ workspaceId, toolId }])];
  const wanted = only ? new Set(only) : null;
  const out: Record<string, string> = {};
  for (const scope of scopes) {
    const rows = await db.select().from(envVars).where(inScope(scope));
    for (const row of rows) {
      if (!row.hasValue || (wanted && !wanted.has(row.key))) continue;
      out[row.key] = await open(secret, row.sealedValue, context(scope, row.key));
    }
  }
  return out;
}
