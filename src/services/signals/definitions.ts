// Signals and their hooks as a resource: create, list, read, change, delete, and hooks one at a time.
// Every query is scoped to the caller's workspace (another's id is a 404). The caps (50 enabled signals
// a workspace, 20 hooks a signal) are part of the statement that would pass them, so concurrent
// requests cannot pass them together. A change to statement, model or include moves the revision on.
import { and, asc, desc, eq, sql, type SQL } from "drizzle-orm";
import { runBatch, type Statement } from "../../db/batch";
import type { Db } from "../../db/client";
import { promptLabels, promptTemplates, promptVersions, signalBackfills, signalHooks, signals, signalSpend, type SignalHookRow, type SignalHookScope, type SignalInclude, type SignalModel, type SignalRow } from "../../db/schema";
import { isNotNullViolation, isUniqueViolation } from "../../db/sql";
import type { FilterGroup } from "../../filters";
import type { AuthContext } from "../../lib/auth-context";
import { ApiError } from "../../lib/errors";
import { containsText } from "../../lib/query";
import { checkCoverageCompiles, signalIdsOf, type HookCoverage } from "../../logs";
import { toIso } from "../../lib/time";
import { auditStatement } from "../workspace";
import { DEFAULT_INCLUDE } from "./judge";

/** Enabled signals a workspace may have (a judge call per sampled log each: this bounds the fan-out). */
export const MAX_ENABLED_SIGNALS = 50;
export const MAX_HOOKS_PER_SIGNAL = 20;
export const MAX_STATEMENT_LENGTH = 4_000;
export const MAX_NAME_LENGTH = 255;
export const DEFAULT_SAMPLE_RATE = 0.5;
/** The longest wait before judging (the queue's longest delivery delay: 12 hours). */
export const MAX_DELAY_SECONDS = 43_200;
export const MAX_INCLUDE_CHARS = 100_000;

export interface HookInput {
  scope: SignalHookScope;
  prompt_template_id?: number | null;
  prompt_version_number?: number | null;
  release_label?: string | null;
  ab_variant?: string | null;
  sample_rate?: number;
  filters?: FilterGroup | null;
}

export interface SignalInput {
  name: string;
  statement: string;
  color?: string | null;
  enabled?: boolean;
  model?: SignalModel | null;
  include?: Partial<SignalInclude>;
  delay_seconds?: number;
  limits?: { daily_runs?: number | null; daily_cost_usd?: number | null } | null;
  hooks?: HookInput[];
}

export type SignalPatch = Partial<Omit<SignalInput, "hooks">>;

export function hookView(h: SignalHookRow) {
  return {
    id: h.id,
    signal_id: h.signalId,
    scope: h.scope,
    prompt_template_id: h.promptTemplateId ?? null,
    prompt_version_number: h.promptVersionNumber ?? null,
    release_label: h.releaseLabel ?? null,
    ab_variant: h.abVariant ?? null,
    sample_rate: h.sampleRate,
    filters: (h.filters ?? null) as FilterGroup | null,
    created_at: toIso(h.createdAt),
    updated_at: toIso(h.updatedAt),
  };
}
export type HookView = ReturnType<typeof hookView>;

export function signalView(s: SignalRow, hooks: SignalHookRow[]) {
  return {
    id: s.id,
    name: s.name,
    statement: s.statement,
    color: s.color ?? null,
    enabled: s.enabled,
    model: s.model ?? null,
    include: s.include,
    delay_seconds: s.delaySeconds,
    limits: { daily_runs: s.dailyRuns ?? null, daily_cost_usd: s.dailyCostUsd ?? null },
    hooks: hooks.map(hookView),
    revision: s.revision,
    created_at: toIso(s.createdAt),
    updated_at: toIso(s.updatedAt),
  };
}
export type SignalView = ReturnType<typeof signalView>;

const bad = (field: string, rule: string) => new ApiError("validation_error", `${field}: ${rule}`, { details: [{ field, rule }] });

/**
 * A hook's (or backfill's) filters compiled as the indexer and a backfill compile them, with their own
 * parameters: one that could not be (over D1's 100 parameters) is a 400 here, never a failed index batch.
 */
export function checkFiltersCompile(c: HookCoverage, field: string): void {
  try {
    checkCoverageCompiles(c);
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) throw bad(field, err.message.replace(/^filter_group: /, ""));
    throw err;
  }
}

/** The hook's references checked against the workspace's registry; a broken one is a 400 naming the field (create, hooks and estimates). */
export async function checkHook(db: Db, ws: number, h: HookInput, at: string): Promise<void> {
  checkFiltersCompile(
    {
      promptId: h.scope === "prompt_template" ? (h.prompt_template_id ?? null) : null,
      versionNumber: h.scope === "prompt_template" ? (h.prompt_version_number ?? null) : null,
      // A label's versions and releases are one JSON parameter each, however many: count both.
      labelVersions: h.release_label ? [[0, 0]] : null,
      labelReleases: h.release_label ? [0] : null,
      abVariant: h.ab_variant ?? null,
      filter: h.filters ?? null,
    },
    `${at}filters`,
  );
  if (h.scope === "release_label" && h.release_label) {
    const [label] = await db
      .select({ id: promptLabels.id })
      .from(promptLabels)
      .where(and(eq(promptLabels.workspaceId, ws), eq(promptLabels.name, h.release_label)))
      .limit(1);
    if (!label) throw bad(`${at}release_label`, `no prompt template in this workspace has a release label ${JSON.stringify(h.release_label)}`);
  }
  if (h.scope !== "prompt_template" || h.prompt_template_id == null) return;
  const [template] = await db
    .select({ id: promptTemplates.id })
    .from(promptTemplates)
    .where(and(eq(promptTemplates.workspaceId, ws), eq(promptTemplates.id, h.prompt_template_id)))
    .limit(1);
  if (!template) throw bad(`${at}prompt_template_id`, `no prompt template ${h.prompt_template_id} in this workspace`);
  if (h.prompt_version_number != null) {
    const [version] = await db
      .select({ id: promptVersions.id })
      .from(promptVersions)
      .where(and(eq(promptVersions.promptId, template.id), eq(promptVersions.version, h.prompt_version_number)))
      .limit(1);
    if (!version) throw bad(`${at}prompt_version_number`, `prompt template ${template.id} has no version ${h.prompt_version_number}`);
  }
  if (h.release_label != null) {
    const [label] = await db
      .select({ id: promptLabels.id })
      .from(promptLabels)
      .where(and(eq(promptLabels.promptId, template.id), eq(promptLabels.name, h.release_label)))
      .limit(1);
    if (!label) throw bad(`${at}release_label`, `prompt template ${template.id} has no release label ${JSON.stringify(h.release_label)}`);
  }
}

function hookValues(h: HookInput) {
  return {
    scope: h.scope,
    promptTemplateId: h.scope === "prompt_template" ? (h.prompt_template_id ?? null) : null,
    promptVersionNumber: h.scope === "prompt_template" ? (h.prompt_version_number ?? null) : null,
    releaseLabel: h.release_label ?? null,
    abVariant: h.ab_variant ?? null,
    sampleRate: h.sample_rate ?? DEFAULT_SAMPLE_RATE,
    filters: h.filters && h.filters.filters.length > 0 ? h.filters : null,
  };
}

/** SQL true while the workspace has room for one more enabled signal. */
const roomToEnable = (ws: number) => sql`(SELECT count(*) FROM ${signals} WHERE ${signals.workspaceId} = ${ws} AND ${signals.enabled} = 1) < ${MAX_ENABLED_SIGNALS}`;

const enabledCap = () =>
  new ApiError("conflict", `the workspace already has ${MAX_ENABLED_SIGNALS} enabled signals, the most it may have; disable one first`);

const nameTaken = (name: string) => new ApiError("conflict", `a signal named ${JSON.stringify(name)} already exists in this workspace`);

export async function createSignal(db: Db, auth: AuthContext, input: SignalInput, now = Date.now()): Promise<SignalView> {
  const ws = auth.workspaceId;
  const hooks = input.hooks ?? [];
  for (const [i, h] of hooks.entries()) await checkHook(db, ws, h, `hooks[${i}].`);
  const enabled = input.enabled ?? false;
  const include = { ...DEFAULT_INCLUDE, ...input.include };
  const row = {
    workspaceId: ws,
    name: input.name,
    statement: input.statement,
    color: input.color ?? null,
    enabled,
    model: input.model ?? null,
    include,
    delaySeconds: input.delay_seconds ?? 0,
    dailyRuns: input.limits?.daily_runs ?? null,
    dailyCostUsd: input.limits?.daily_cost_usd ?? null,
    revision: 1,
    createdBy: auth.userId,
    createdAt: now,
    updatedAt: now,
  };
  const created = sql`(SELECT ${signals.id} FROM ${signals} WHERE ${signals.workspaceId} = ${ws} AND ${signals.name} = ${input.name})`;
  const statements: Statement[] = [
    // The cap is read inside the insert: an enabled signal past it writes a NULL name, which fails the
    // whole batch (hooks and audit row found by name must never attach to an existing signal of that name).
    db
      .insert(signals)
      .select(
        sql`SELECT NULL, ${ws}, ${enabled ? sql`CASE WHEN ${roomToEnable(ws)} THEN ${row.name} END` : row.name}, ${row.statement}, ${row.color}, ${enabled ? 1 : 0}, ${row.model ? JSON.stringify(row.model) : null}, ${JSON.stringify(include)},
                   ${row.delaySeconds}, ${row.dailyRuns}, ${row.dailyCostUsd}, 1, ${auth.userId}, ${now}, ${now}`,
      )
      .returning({ id: signals.id }),
    ...hooks.map((h) => {
      const v = hookValues(h);
      return sql`INSERT INTO ${signalHooks} (${sql.raw(["signal_id", "workspace_id", "scope", "prompt_template_id", "prompt_version_number", "release_label", "ab_variant", "sample_rate", "filters", "created_at", "updated_at"].join(", "))})
        SELECT ${created}, ${ws}, ${v.scope}, ${v.promptTemplateId}, ${v.promptVersionNumber}, ${v.releaseLabel}, ${v.abVariant}, ${v.sampleRate}, ${v.filters ? JSON.stringify(v.filters) : null}, ${now}, ${now}
        WHERE ${created} IS NOT NULL`;
    }),
    // The audit row commits with the signal, or not at all (an enabled signal past the cap is not written).
    auditStatement({
      workspaceId: ws,
      action: "signal.created",
      by: auth,
      targetType: "signal",
      targetId: created,
      details: { name: input.name, enabled, model: row.model, limits: { daily_runs: row.dailyRuns, daily_cost_usd: row.dailyCostUsd }, hooks: hooks.length },
      when: sql`${created} IS NOT NULL`,
    }),
  ];
  let inserted: D1Result;
  try {
    [inserted] = await runBatch(db, statements);
  } catch (err) {
    if (isUniqueViolation(err, signals)) throw nameTaken(input.name);
    if (isNotNullViolation(err, signals.name)) throw enabledCap();
    throw err;
  }
  const id = (inserted.results[0] as { id: number } | undefined)?.id;
  if (id === undefined) throw enabledCap();
  return getSignal(db, ws, id);
}

export async function requireSignal(db: Db, ws: number, id: number): Promise<SignalRow> {
  const [row] = await db
    .select()
    .from(signals)
    .where(and(eq(signals.workspaceId, ws), eq(signals.id, id)))
    .limit(1);
  if (!row) throw ApiError.notFound("signal");
  return row;
}

/**
 * The workspace's signals of these names (as `signal:<name>` fields name them), each name to its id;
 * a name that is no signal of the workspace is a 400 at the place that names it.
 */
export async function signalIdsByName(db: Db, ws: number, named: readonly { name: string; at: string }[]): Promise<Map<string, number>> {
  const out = await signalIdsOf(db, ws, named.map((n) => n.name));
  const missing = named.find((n) => !out.has(n.name));
  if (missing) throw new ApiError("validation_error", `${missing.at}: no signal named ${JSON.stringify(missing.name)} in this workspace`);
  return out;
}

async function hooksOf(db: Db, signalIds: number[]): Promise<Map<number, SignalHookRow[]>> {
  const out = new Map<number, SignalHookRow[]>();
  if (signalIds.length === 0) return out;
  const rows = await db
    .select()
    .from(signalHooks)
    .where(sql`${signalHooks.signalId} IN (SELECT value FROM json_each(${JSON.stringify(signalIds)}))`)
    .orderBy(asc(signalHooks.id));
  for (const h of rows) out.set(h.signalId, [...(out.get(h.signalId) ?? []), h]);
  return out;
}

export async function getSignal(db: Db, ws: number, id: number): Promise<SignalView> {
  const row = await requireSignal(db, ws, id);
  return signalView(row, (await hooksOf(db, [id])).get(id) ?? []);
}

export interface SignalListQuery {
  page: number;
  per_page: number;
  name?: string;
  enabled?: boolean;
  sort_order: "asc" | "desc";
}

export async function listSignals(db: Db, ws: number, q: SignalListQuery) {
  const where = and(eq(signals.workspaceId, ws), q.name !== undefined ? containsText(signals.name, q.name) : undefined, q.enabled !== undefined ? eq(signals.enabled, q.enabled) : undefined);
  const [{ n }] = await db.select({ n: sql<number>`count(*)` }).from(signals).where(where);
  const dir = q.sort_order === "asc" ? asc : desc;
  const rows = await db
    .select()
    .from(signals)
    .where(where)
    .orderBy(dir(signals.createdAt), dir(signals.id))
    .limit(q.per_page)
    .offset((q.page - 1) * q.per_page);
  const hooks = await hooksOf(
    db,
    rows.map((r) => r.id),
  );
  return { items: rows.map((r) => signalView(r, hooks.get(r.id) ?? [])), page: q.page, per_page: q.per_page, total: n, pages: Math.ceil(n / q.per_page) };
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Applies a PATCH: any subset of the fields; statement, model or include changed moves the revision on.
 * One whose fields are all the signal's already writes nothing (`changed` false: no audit row either).
 */
export async function updateSignal(db: Db, ws: number, id: number, patch: SignalPatch, now = Date.now()): Promise<{ signal: SignalView; changed: boolean }> {
  const current = await requireSignal(db, ws, id);
  const set: Record<string, unknown> = { updatedAt: now };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.statement !== undefined) set.statement = patch.statement;
  if (patch.color !== undefined) set.color = patch.color;
  if (patch.enabled !== undefined) set.enabled = patch.enabled;
  if (patch.model !== undefined) set.model = patch.model;
  const include = patch.include !== undefined ? { ...current.include, ...patch.include } : undefined;
  if (include) set.include = include;
  if (patch.delay_seconds !== undefined) set.delaySeconds = patch.delay_seconds;
  if (patch.limits !== undefined) {
    if (patch.limits === null) Object.assign(set, { dailyRuns: null, dailyCostUsd: null });
    else {
      if (patch.limits.daily_runs !== undefined) set.dailyRuns = patch.limits.daily_runs;
      if (patch.limits.daily_cost_usd !== undefined) set.dailyCostUsd = patch.limits.daily_cost_usd;
    }
  }
  const was = current as unknown as Record<string, unknown>;
  if (Object.entries(set).every(([k, v]) => k === "updatedAt" || sameJson(v, was[k]))) return { signal: await getSignal(db, ws, id), changed: false };
  const judged =
    (patch.statement !== undefined && patch.statement !== current.statement) ||
    (patch.model !== undefined && !sameJson(patch.model, current.model)) ||
    (include !== undefined && !sameJson(include, current.include));
  if (judged) set.revision = sql`${signals.revision} + 1`;
  // Enabling checks the cap in the same statement (a signal already enabled passes).
  const conditions: SQL[] = [eq(signals.workspaceId, ws), eq(signals.id, id)];
  if (patch.enabled === true) conditions.push(sql`(${signals.enabled} = 1 OR ${roomToEnable(ws)})`);
  let updated: { id: number }[];
  try {
    updated = await db
      .update(signals)
      .set(set)
      .where(and(...conditions))
      .returning({ id: signals.id });
  } catch (err) {
    if (isUniqueViolation(err, signals)) throw nameTaken(patch.name ?? current.name);
    throw err;
  }
  if (updated.length === 0) {
    await requireSignal(db, ws, id);
    throw enabledCap();
  }
  return { signal: await getSignal(db, ws, id), changed: true };
}

/**
 * Deletes the signal, its hooks, budget rows and backfills (open ones cancelled) at once. Its results,
 * daily totals and judgements owed in the log databases are purged after (the caller queues the purge);
 * until then the readers that match verdicts by name (search, a log's detail, export, archive) still see them.
 */
export async function deleteSignal(db: Db, auth: Pick<AuthContext, "apiKeyId" | "userId">, ws: number, id: number): Promise<void> {
  const { name } = await requireSignal(db, ws, id);
  const [, gone] = await runBatch(db, [
    // First, while the signal is there to be deleted: its row commits with the deletion.
    auditStatement({ workspaceId: ws, action: "signal.deleted", by: auth, targetType: "signal", targetId: id, details: { name }, when: sql`EXISTS (SELECT 1 FROM ${signals} WHERE ${signals.id} = ${id} AND ${signals.workspaceId} = ${ws})` }),
    db
      .delete(signals)
      .where(and(eq(signals.workspaceId, ws), eq(signals.id, id)))
      .returning({ id: signals.id }),
    db.delete(signalHooks).where(eq(signalHooks.signalId, id)),
    db.delete(signalSpend).where(eq(signalSpend.signalId, id)),
    db.delete(signalBackfills).where(eq(signalBackfills.signalId, id)),
  ]);
  if (gone.results.length === 0) throw ApiError.notFound("signal");
}

async function requireHook(db: Db, ws: number, signalId: number, hookId: number): Promise<SignalHookRow> {
  await requireSignal(db, ws, signalId);
  const [row] = await db
    .select()
    .from(signalHooks)
    .where(and(eq(signalHooks.workspaceId, ws), eq(signalHooks.signalId, signalId), eq(signalHooks.id, hookId)))
    .limit(1);
  if (!row) throw ApiError.notFound("hook");
  return row;
}

export async function addHook(db: Db, ws: number, signalId: number, input: HookInput, now = Date.now()): Promise<HookView> {
  await requireSignal(db, ws, signalId);
  await checkHook(db, ws, input, "");
  const v = hookValues(input);
  const [row] = await db
    .insert(signalHooks)
    .select(
      sql`SELECT NULL, ${signalId}, ${ws}, ${v.scope}, ${v.promptTemplateId}, ${v.promptVersionNumber}, ${v.releaseLabel}, ${v.abVariant}, ${v.sampleRate}, ${v.filters ? JSON.stringify(v.filters) : null}, ${now}, ${now}
          WHERE (SELECT count(*) FROM ${signalHooks} WHERE ${signalHooks.signalId} = ${signalId}) < ${MAX_HOOKS_PER_SIGNAL}`,
    )
    .returning();
  if (!row) throw new ApiError("conflict", `the signal already has ${MAX_HOOKS_PER_SIGNAL} hooks, the most it may have; delete one first`);
  await touch(db, signalId, now);
  return hookView(row);
}

/**
 * A hook's PATCH: the fields given replace the hook's, and the result is checked as a whole hook. One
 * that changes nothing writes nothing (`changed` false: no audit row either).
 */
export async function updateHook(db: Db, ws: number, signalId: number, hookId: number, patch: Partial<HookInput>, now = Date.now()): Promise<{ hook: HookView; changed: boolean }> {
  const current = hookView(await requireHook(db, ws, signalId, hookId));
  const merged: HookInput = { ...current, ...patch } as HookInput;
  checkHookShape(merged, "");
  await checkHook(db, ws, merged, "");
  if (sameJson(hookValues(merged), hookValues(current as HookInput))) return { hook: current, changed: false };
  const [row] = await db
    .update(signalHooks)
    .set({ ...hookValues(merged), updatedAt: now })
    .where(and(eq(signalHooks.workspaceId, ws), eq(signalHooks.id, hookId)))
    .returning();
  if (!row) throw ApiError.notFound("hook");
  await touch(db, signalId, now);
  return { hook: hookView(row), changed: true };
}

export async function deleteHook(db: Db, ws: number, signalId: number, hookId: number, now = Date.now()): Promise<void> {
  await requireHook(db, ws, signalId, hookId);
  await db.delete(signalHooks).where(and(eq(signalHooks.workspaceId, ws), eq(signalHooks.id, hookId)));
  await touch(db, signalId, now);
}

async function touch(db: Db, signalId: number, now: number): Promise<void> {
  await db.update(signals).set({ updatedAt: now }).where(eq(signals.id, signalId));
}

/**
 * The rules a hook's fields keep together, for a whole hook (create) and a patched one: which scope
 * takes which narrowing. A broken rule is a 400 naming the field (`at` prefixes the path).
 */
export function checkHookShape(h: HookInput, at: string): void {
  if (h.scope === "prompt_template" && h.prompt_template_id == null) throw bad(`${at}prompt_template_id`, "is required when scope is prompt_template");
  if (h.scope === "release_label" && !h.release_label) throw bad(`${at}release_label`, "is required when scope is release_label");
  if (h.scope !== "prompt_template") {
    if (h.prompt_template_id != null) throw bad(`${at}prompt_template_id`, "is only taken when scope is prompt_template");
    if (h.prompt_version_number != null) throw bad(`${at}prompt_version_number`, "is only taken when scope is prompt_template");
  }
  if (h.scope === "all" && h.release_label != null) throw bad(`${at}release_label`, "is not taken when scope is all (use scope release_label)");
  if (h.prompt_version_number != null && h.release_label != null) throw bad(`${at}release_label`, "narrow a prompt_template hook to a version or to a label, not both");
}
