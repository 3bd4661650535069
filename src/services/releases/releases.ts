// A/B releases (/api/public/v2/ab-tests): create, list, read, ramp or pause, delete, and what a
// release is asked to do by hand (promote, roll back). Every change is one db.batch(): the trail row
// and the webhook event first, guarded by the revision the change was read at, the release's update
// last, so a change made on a release that moved meanwhile writes nothing (and is read again).
import { and, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch } from "../../db/batch";
import { col, columnList, isUniqueViolation, nowMs } from "../../db/sql";
import { abTests, externalIds, labelChangeRequests, promptLabels, promptTemplates, type AbTestRow, type Guardrails } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { grants } from "../../lib/scopes";
import { toIso } from "../../lib/time";
import { assign, findPromptVersion, requireTemplate, type Assignment } from "../../prompts";
import {
  changeRequestStatements,
  changeRequestViews,
  requireChangeRequest,
  type ChangeRequestView,
  externalIdsFor,
  labelMoveStatements,
  newMappings,
  pendingRequestOf,
  requireFolder,
  resolveExternalIdLookup,
  resourceConditions,
  resourceOrder,
  type ExternalIdLookupQuery,
  type ExternalIdPair,
  type LabelActor,
  type ResourceFilters,
} from "../registry";
import { atRevision, releaseChange, trailStatement, webhookDetails } from "./events";
import { baseOnly, checkGuardrails, newSplit, percentagesOf, raisesChallenger, rampedSplit, sameSplit, servesChallenger, variantList, type SegmentInput, type VariantInput } from "./split-input";

const bad = (message: string) => new ApiError("validation_error", message);

export interface CreateInput {
  name: string;
  prompt_template_id?: number | null;
  prompt_name?: string | null;
  release_label: string;
  variants: VariantInput[];
  segments?: SegmentInput[] | null;
  assignment_key?: string | null;
  salt?: string | null;
  status?: "running" | "paused" | null;
  guardrails?: Guardrails | null;
  external_ids?: ExternalIdPair[] | null;
  folder_id?: number | null;
}

/** The workspace's release `id` (not deleted), else 404. */
export async function requireRelease(db: Db, ws: number, id: number): Promise<AbTestRow> {
  const [row] = await db.select().from(abTests).where(and(eq(abTests.workspaceId, ws), eq(abTests.id, id), isNull(abTests.deletedAt))).limit(1);
  if (!row) throw ApiError.notFound("ab test");
  return row;
}

export const releaseExists = async (db: Db, ws: number, id: number) => {
  const [row] = await db.select({ id: abTests.id }).from(abTests).where(and(eq(abTests.workspaceId, ws), eq(abTests.id, id), isNull(abTests.deletedAt))).limit(1);
  return Boolean(row);
};

async function templateNames(db: Db, ids: number[]): Promise<Map<number, string>> {
  const rows = ids.length ? await db.select({ id: promptTemplates.id, name: promptTemplates.name }).from(promptTemplates).where(inArray(promptTemplates.id, [...new Set(ids)])) : [];
  return new Map(rows.map((r) => [r.id, r.name]));
}

export type ReleaseView = ReturnType<typeof viewOf>;

function viewOf(r: AbTestRow, promptName: string, ext: ExternalIdPair[]) {
  return {
    id: r.id,
    name: r.name,
    prompt_template_id: r.promptId,
    prompt_name: promptName,
    release_label: r.releaseLabel,
    status: r.status,
    revision: r.revision,
    assignment_key: r.assignmentKey ?? null,
    salt: r.salt,
    folder_id: r.folderId ?? null,
    base: r.split.base,
    variants: variantList(r.split).map((v, i) => ({ ...v, ranges: r.split.shares[i].ranges })),
    segments: r.split.segments.map((g) => ({
      name: g.name,
      conditions: g.conditions,
      variants: g.shares.map((s) => ({ key: s.key, percentage: percentagesOf([s])[s.key], ranges: s.ranges })),
    })),
    guardrails: r.guardrails ?? null,
    outcome: r.outcome ?? null,
    promoted_variant: r.promotedVariant ?? null,
    pending_change_request_id: r.pendingChangeId ?? null,
    external_ids: ext,
    created_by: r.createdBy ?? null,
    created_at: toIso(r.createdAt),
    updated_at: toIso(r.updatedAt),
    ended_at: r.endedAt === null ? null : toIso(r.endedAt),
  };
}

export async function releaseViews(db: Db, ws: number, rows: AbTestRow[]): Promise<ReleaseView[]> {
  const [names, ext] = await Promise.all([templateNames(db, rows.map((r) => r.promptId)), externalIdsFor(db, ws, "ab_test", rows.map((r) => r.id))]);
  return rows.map((r) => viewOf(r, names.get(r.promptId) ?? "", ext.get(String(r.id)) ?? []));
}

export const releaseView = async (db: Db, ws: number, row: AbTestRow) => (await releaseViews(db, ws, [row]))[0];

/** The template a create names (by id or by name; both must agree), else 404. */
async function templateOf(db: Db, ws: number, input: Pick<CreateInput, "prompt_template_id" | "prompt_name">) {
  if (input.prompt_template_id == null && !input.prompt_name) throw bad("prompt_template_id: give prompt_template_id or prompt_name");
  const t = await requireTemplate(db, ws, input.prompt_template_id != null ? String(input.prompt_template_id) : input.prompt_name!);
  if (input.prompt_template_id != null && t.id !== input.prompt_template_id) throw ApiError.notFound("prompt template");
  if (input.prompt_name && t.name !== input.prompt_name) throw bad(`prompt_name: prompt template ${t.id} is named "${t.name}"`);
  return t;
}

async function activeOn(db: Db, ws: number, promptId: number, label: string): Promise<AbTestRow | null> {
  const [row] = await db
    .select()
    .from(abTests)
    .where(and(eq(abTests.workspaceId, ws), eq(abTests.promptId, promptId), eq(abTests.releaseLabel, label), sql`${abTests.status} <> 'completed'`, isNull(abTests.deletedAt)))
    .limit(1);
  return row ?? null;
}

const busy = (r: Pick<AbTestRow, "id" | "releaseLabel">) => new ApiError("conflict", `release_label: A/B release ${r.id} already overloads "${r.releaseLabel}" on this prompt template (delete, promote or roll it back first)`);

const isAdmin = (auth: AuthContext) => grants(auth.scopes ?? [], "admin");

/** The release label is protected, as the batch reads it (so a label protected meanwhile counts). */
export const labelProtected = (promptId: number, label: string) =>
  sql`EXISTS (SELECT 1 FROM ${promptLabels} AS pl WHERE pl.${col(promptLabels.promptId)} = ${promptId} AND pl.${col(promptLabels.name)} = ${label} AND pl.${col(promptLabels.protected)})`;

/**
 * A protected label serves another version only through an approved change request, or through a
 * release an admin key made or ramped: a release on it, a challenger ramped up, a release resumed.
 */
function needsAdmin(label: string, what: string): ApiError {
  return new ApiError("forbidden", `release_label: "${label}" is protected: ${what} needs an API key with the admin scope (or promote through a change request)`, {
    details: [{ field: "release_label", rule: "needs scope admin on a protected label" }],
  });
}

export async function createRelease(db: Db, auth: AuthContext, input: CreateInput): Promise<ReleaseView> {
  const ws = auth.workspaceId;
  const t = await templateOf(db, ws, input);
  await requireFolder(db, ws, input.folder_id);
  const [label] = await db.select().from(promptLabels).where(and(eq(promptLabels.promptId, t.id), eq(promptLabels.name, input.release_label))).limit(1);
  if (!label) throw bad(`release_label: prompt template "${t.name}" has no release label "${input.release_label}"`);
  const admin = isAdmin(auth);
  if (label.protected && !admin) throw needsAdmin(input.release_label, "an A/B release on it");
  // Judged again in the batch: a label protected since is refused the same way, and nothing is written.
  const when = admin ? sql`1` : sql`NOT ${labelProtected(t.id, input.release_label)}`;
  const labelled = await findPromptVersion(db, ws, { id: t.id, label: input.release_label });
  const versions = await Promise.all(input.variants.map((v) => findPromptVersion(db, ws, { id: t.id, version: v.prompt_version_number })));
  versions.forEach((found, i) => {
    if (!found) throw bad(`variants[${i}].prompt_version_number: prompt template "${t.name}" has no version ${input.variants[i].prompt_version_number}`);
  });
  const split = newSplit(input.variants, input.segments ?? [], labelled!.version.version);
  const guardrails = input.guardrails ? checkGuardrails(input.guardrails, input.variants.length) : null;
  const existing = await activeOn(db, ws, t.id, input.release_label);
  if (existing) throw busy(existing);
  const mappings = await newMappings(db, ws, "ab_test", null, input.external_ids);
  const status = input.status ?? "running";
  // The release just inserted: D1 runs a batch alone, and AUTOINCREMENT never reuses an id.
  const self = sql`SELECT max(${abTests.id}) AS id FROM ${abTests} WHERE ${abTests.workspaceId} = ${ws}`;
  const newId = sql`(${self})`;
  const draft: AbTestRow = {
    id: 0, workspaceId: ws, promptId: t.id, releaseLabel: input.release_label, name: input.name, folderId: input.folder_id ?? null, status, assignmentKey: input.assignment_key ?? null,
    salt: input.salt ?? "", revision: 1, split, guardrails, outcome: null, promotedVariant: null, pendingChangeId: null, checkedAt: null, rampedAt: 0, createdBy: auth.userId, createdAt: 0, updatedAt: 0, endedAt: null, deletedAt: null,
  };
  const details = webhookDetails(draft, t.name);
  let id: number;
  try {
    const columns = columnList(abTests, ["workspaceId", "promptId", "releaseLabel", "name", "folderId", "status", "assignmentKey", "salt", "split", "guardrails", "createdBy"]);
    const values = [ws, t.id, input.release_label, input.name, input.folder_id ?? null, status, input.assignment_key ?? null, input.salt ?? "", JSON.stringify(split), guardrails ? JSON.stringify(guardrails) : null, auth.userId];
    const [inserted] = await runBatch(db, [
      sql`INSERT INTO ${abTests} (${columns}) SELECT ${sql.join(values.map((v) => sql`${v}`), sql`, `)} WHERE ${when} RETURNING ${col(abTests.id)}`,
      ...mappings.attach(self, when),
      // The trail and the event commit with the release, or neither does.
      trailStatement({ workspaceId: ws, abTestId: newId, revision: 1, action: "created", actor: "user", userId: auth.userId, details: { percentages: percentagesOf(split.shares), status }, when }),
      ...releaseChange(ws, "ab_test_created", auth, newId, sql`json_set(${JSON.stringify(details)}, '$.ab_test_id', ${newId})`, when),
    ]);
    const row = inserted.results[0] as { id: number } | undefined;
    if (!row) throw needsAdmin(input.release_label, "an A/B release on it");
    id = row.id;
  } catch (err) {
    mappings.throwIfTaken(err);
    if (isUniqueViolation(err, abTests)) {
      const now = await activeOn(db, ws, t.id, input.release_label);
      if (now) throw busy(now);
    }
    throw err;
  }
  return releaseView(db, ws, await requireRelease(db, ws, id));
}

export interface ListQuery extends ExternalIdLookupQuery, ResourceFilters {
  page: number;
  per_page: number;
  status?: "running" | "paused" | "completed";
  prompt_template_id?: number;
  release_label?: string;
}

export async function listReleases(db: Db, ws: number, q: ListQuery) {
  const lookup = await resolveExternalIdLookup(db, ws, "ab_test", q);
  const columns = { id: abTests.id, name: abTests.name, userId: abTests.createdBy, createdAt: abTests.createdAt, updatedAt: abTests.updatedAt };
  const where = and(
    eq(abTests.workspaceId, ws),
    isNull(abTests.deletedAt),
    lookup === null ? sql`0` : lookup !== undefined ? sql`CAST(${abTests.id} AS TEXT) = ${lookup}` : undefined,
    q.status ? eq(abTests.status, q.status) : undefined,
    q.prompt_template_id ? eq(abTests.promptId, q.prompt_template_id) : undefined,
    q.release_label ? eq(abTests.releaseLabel, q.release_label) : undefined,
    ...resourceConditions(ws, columns, q),
  );
  const [{ total }] = await db.select({ total: sql<number>`count(*)` }).from(abTests).where(where);
  const rows = await db
    .select()
    .from(abTests)
    .where(where)
    .orderBy(...resourceOrder(columns, q))
    .limit(q.per_page)
    .offset((q.page - 1) * q.per_page);
  return { success: true as const, ab_tests: await releaseViews(db, ws, rows), page: q.page, per_page: q.per_page, total, pages: Math.ceil(total / q.per_page) };
}

export interface PatchInput {
  name?: string | null;
  status?: "running" | "paused" | null;
  variants?: { key: string; percentage: number }[] | null;
  segments?: { name: string; variants: { key: string; percentage: number }[] }[] | null;
  guardrails?: Guardrails | null;
  folder_id?: number | null;
}

const IMMUTABLE = ["salt", "assignment_key", "release_label", "prompt_template_id", "prompt_name"] as const;

/** Fields a PATCH may not change: each a 400 naming why. */
export function refuseImmutable(body: Record<string, unknown>): void {
  for (const f of IMMUTABLE) {
    if (f in body) throw bad(`${f}: cannot change once a release is made (it would reshuffle or move its units); create a new release`);
  }
}

/** Tries a change read at one revision again when the release moved meanwhile (another change landed first). */
async function atMostThrice<T>(attempt: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 3; i++) {
    const done = await attempt();
    if (done !== null) return done;
  }
  throw new ApiError("conflict", "the release kept changing while this change was made; try again");
}

const ended = (r: AbTestRow) => {
  if (r.status === "completed") throw new ApiError("conflict", `ab test ${r.id} is completed (${r.outcome ?? "ended"}): it changes no more`);
};

export async function labelIsProtected(db: Db, r: Pick<AbTestRow, "promptId" | "releaseLabel">): Promise<boolean> {
  const [label] = await db.select({ protected: promptLabels.protected }).from(promptLabels).where(and(eq(promptLabels.promptId, r.promptId), eq(promptLabels.name, r.releaseLabel))).limit(1);
  return Boolean(label?.protected);
}

export async function patchRelease(db: Db, auth: AuthContext, id: number, input: PatchInput, present: (field: string) => boolean): Promise<ReleaseView> {
  const ws = auth.workspaceId;
  return atMostThrice(async () => {
    const r = await requireRelease(db, ws, id);
    ended(r);
    const split = input.variants || input.segments ? rampedSplit(r.split, input.variants, input.segments) : r.split;
    const guardrails = present("guardrails") ? (input.guardrails ? checkGuardrails(input.guardrails, Object.keys(r.split.versions).length) : null) : r.guardrails;
    if (present("folder_id")) await requireFolder(db, ws, input.folder_id);
    const status = input.status ?? r.status;
    if (status !== r.status && r.pendingChangeId !== null) throw new ApiError("conflict", `ab test ${id} waits on change request ${r.pendingChangeId}: approve or deny it first`);
    const moved = !sameSplit(split, r.split) || status !== r.status;
    const revision = moved ? r.revision + 1 : r.revision;
    // On a protected label, serving a challenger more (a ramp up, or resuming a release that serves one) takes admin.
    const exposes = raisesChallenger(r.split, split) || (status === "running" && r.status !== "running" && servesChallenger(split));
    const guarded = exposes && !isAdmin(auth);
    if (guarded && (await labelIsProtected(db, r))) throw needsAdmin(r.releaseLabel, "ramping a challenger up or resuming a release on it");
    const guard = guarded ? sql`${atRevision(id, r.revision)} AND NOT ${labelProtected(r.promptId, r.releaseLabel)}` : atRevision(id, r.revision);
    const next: AbTestRow = { ...r, split, status, guardrails, revision, name: input.name ?? r.name, folderId: present("folder_id") ? (input.folder_id ?? null) : r.folderId };
    const names = await templateNames(db, [r.promptId]);
    const details = { percentages: percentagesOf(split.shares), previous_percentages: percentagesOf(r.split.shares), status, previous_status: r.status, segments: split.segments.map((g) => ({ name: g.name, percentages: percentagesOf(g.shares) })) };
    const results = await runBatch(db, [
      trailStatement({ workspaceId: ws, abTestId: id, revision, action: status !== r.status ? (status === "paused" ? "paused" : "resumed") : "updated", actor: "user", userId: auth.userId, details, when: guard }),
      ...releaseChange(ws, "ab_test_updated", auth, id, webhookDetails(next, names.get(r.promptId) ?? "", { previous_percentages: details.previous_percentages, previous_status: r.status }), guard),
      db
        .update(abTests)
        .set({
          split,
          status,
          guardrails,
          name: next.name,
          folderId: next.folderId,
          revision,
          updatedAt: nowMs,
          ...(sameSplit(split, r.split) ? {} : { rampedAt: nowMs }),
        })
        .where(and(eq(abTests.id, id), eq(abTests.revision, r.revision), isNull(abTests.deletedAt), guarded ? sql`NOT ${labelProtected(r.promptId, r.releaseLabel)}` : undefined)),
    ]);
    if (results[results.length - 1].meta.changes === 0) return null;
    return releaseView(db, ws, await requireRelease(db, ws, id));
  });
}

/** Deletes the release: the label serves its own version again ("reverts to its base mapping"); the label is not moved. */
export async function deleteRelease(db: Db, auth: AuthContext, id: number): Promise<void> {
  const ws = auth.workspaceId;
  const r = await requireRelease(db, ws, id);
  const names = await templateNames(db, [r.promptId]);
  const guard = sql`EXISTS (SELECT 1 FROM ${abTests} AS g WHERE g.${col(abTests.id)} = ${id} AND g.${col(abTests.deletedAt)} IS NULL)`;
  const results = await runBatch(db, [
    trailStatement({ workspaceId: ws, abTestId: id, revision: r.revision, action: "deleted", actor: "user", userId: auth.userId, details: {}, when: guard }),
    ...releaseChange(ws, "ab_test_deleted", auth, id, webhookDetails(r, names.get(r.promptId) ?? ""), guard),
    sql`DELETE FROM ${externalIds} WHERE ${externalIds.workspaceId} = ${ws} AND ${externalIds.entityType} = 'ab_test' AND ${externalIds.entityId} = ${String(id)} AND ${guard}`,
    db.update(abTests).set({ deletedAt: nowMs, updatedAt: nowMs }).where(and(eq(abTests.id, id), isNull(abTests.deletedAt))),
  ]);
  if (results[results.length - 1].meta.changes === 0) throw ApiError.notFound("ab test");
}

/** Who makes a change: a user's key, or the guardrails (null `by`, with their decision's key and token). */
export interface Actor {
  by: LabelActor;
  kind: "user" | "guardrail";
  decision?: { key: string; token: string };
}

/**
 * The statements of a rollback read at `r`: every challenger to 0 %, the release completed as
 * rolled back, the label untouched; `when` guards all of them.
 */
export function rollbackStatements(db: Db, r: AbTestRow, promptName: string, actor: Actor, when: SQL, why: Record<string, unknown>): SQL[] {
  const split = baseOnly(r.split);
  const next: AbTestRow = { ...r, split, status: "completed", outcome: "rolled_back", revision: r.revision + 1 };
  return [
    ...releaseChange(r.workspaceId, "ab_test_rolled_back", actor.by, r.id, webhookDetails(next, promptName, { reason: actor.kind === "guardrail" ? "guardrail" : "manual", ...why }), when),
    db
      .update(abTests)
      .set({ split, status: "completed", outcome: "rolled_back", endedAt: nowMs, updatedAt: nowMs, revision: r.revision + 1 })
      .where(and(eq(abTests.id, r.id), eq(abTests.revision, r.revision), isNull(abTests.deletedAt), when))
      .getSQL(),
  ];
}

export async function rollbackRelease(db: Db, auth: AuthContext, id: number): Promise<ReleaseView> {
  const ws = auth.workspaceId;
  return atMostThrice(async () => {
    const r = await requireRelease(db, ws, id);
    ended(r);
    const names = await templateNames(db, [r.promptId]);
    const guard = atRevision(id, r.revision);
    const results = await runBatch(db, [
      trailStatement({ workspaceId: ws, abTestId: id, revision: r.revision + 1, action: "rolled_back", actor: "user", userId: auth.userId, details: { percentages: percentagesOf(r.split.shares) }, when: guard }),
      ...rollbackStatements(db, r, names.get(r.promptId) ?? "", { by: auth, kind: "user" }, guard, {}),
    ]);
    if (results[results.length - 1].meta.changes === 0) return null;
    return releaseView(db, ws, await requireRelease(db, ws, id));
  });
}

/** The release's label row (for a promote), or a 409 when it was deleted since. */
async function labelOf(db: Db, r: AbTestRow) {
  const [label] = await db.select().from(promptLabels).where(and(eq(promptLabels.promptId, r.promptId), eq(promptLabels.name, r.releaseLabel))).limit(1);
  if (!label) throw new ApiError("conflict", `release_label: "${r.releaseLabel}" no longer exists on the prompt template; delete the release`);
  return label;
}

/**
 * The statements of a promote of `variant` read at `r`, all guarded by `when`: on an unprotected
 * label, the label moves through the one label-move path (one prompt_template_label_moved) and the
 * release completes as promoted; on a protected one, a change request is written and the release
 * waits on it (its approval completes it, label-approvals.ts).
 */
export async function promoteStatements(db: Db, r: AbTestRow, variant: string, actor: Actor, when: SQL): Promise<{ statements: SQL[]; requested: boolean }> {
  const label = await labelOf(db, r);
  const found = await findPromptVersion(db, r.workspaceId, { id: r.promptId, version: r.split.versions[variant] });
  if (!found) throw new ApiError("conflict", `variants: version ${r.split.versions[variant]} of the prompt template no longer exists`);
  const to = { id: found.version.id, version: found.version.version };
  const names = await templateNames(db, [r.promptId]);
  const promptName = names.get(r.promptId) ?? "";
  if (label.protected) {
    return {
      requested: true,
      statements: [
        ...changeRequestStatements(r.workspaceId, actor.by, label, to, r.id, when),
        db
          .update(abTests)
          .set({ pendingChangeId: sql`(SELECT max(${labelChangeRequests.id}) FROM ${labelChangeRequests} WHERE ${labelChangeRequests.abTestId} = ${r.id} AND ${labelChangeRequests.status} = 'pending')`, updatedAt: nowMs })
          .where(and(eq(abTests.id, r.id), eq(abTests.revision, r.revision), isNull(abTests.deletedAt), when))
          .getSQL(),
      ],
    };
  }
  const next: AbTestRow = { ...r, status: "completed", outcome: "promoted", promotedVariant: variant, revision: r.revision + 1 };
  return {
    requested: false,
    statements: [
      ...releaseChange(r.workspaceId, "ab_test_promoted", actor.by, r.id, webhookDetails(next, promptName, { variant, prompt_template_version_number: to.version, reason: actor.kind === "guardrail" ? "guardrail" : "manual" }), when),
      ...labelMoveStatements(r.workspaceId, actor.by, label.id, to, when, { reason: "ab_test_promote", ab_test_id: r.id }),
      completeAsPromoted(db, r, variant, when),
    ],
  };
}

/** The release completed as promoted (its split as it was), guarded by `when`. */
export function completeAsPromoted(db: Db, r: Pick<AbTestRow, "id" | "revision">, variant: string, when: SQL): SQL {
  return db
    .update(abTests)
    .set({ status: "completed", outcome: "promoted", promotedVariant: variant, pendingChangeId: null, endedAt: nowMs, updatedAt: nowMs, revision: r.revision + 1 })
    .where(and(eq(abTests.id, r.id), eq(abTests.revision, r.revision), isNull(abTests.deletedAt), when))
    .getSQL();
}

export async function promoteRelease(db: Db, auth: AuthContext, id: number, variant: string): Promise<{ view: ReleaseView; changeRequest: ChangeRequestView | null }> {
  const ws = auth.workspaceId;
  return atMostThrice(async () => {
    const r = await requireRelease(db, ws, id);
    ended(r);
    if (!(variant in r.split.versions)) throw bad(`variant: "${variant}" is not a variant of this release (${Object.keys(r.split.versions).join(", ")})`);
    if (r.pendingChangeId !== null) throw new ApiError("conflict", `ab test ${id} waits on change request ${r.pendingChangeId}: approve or deny it first`);
    const label = await labelOf(db, r);
    if (label.protected) {
      const pending = await pendingRequestOf(db, label.id);
      if (pending) throw new ApiError("conflict", `release label "${label.name}" has a pending change request (${pending.id}): approve or deny it first`);
    }
    const guard = sql`${atRevision(id, r.revision)} AND NOT EXISTS (SELECT 1 FROM ${abTests} AS p WHERE p.${col(abTests.id)} = ${id} AND p.${col(abTests.pendingChangeId)} IS NOT NULL)`;
    const { statements, requested } = await promoteStatements(db, r, variant, { by: auth, kind: "user" }, guard);
    const results = await runBatch(db, [
      trailStatement({ workspaceId: ws, abTestId: id, revision: requested ? r.revision : r.revision + 1, action: requested ? "promote_requested" : "promoted", actor: "user", userId: auth.userId, details: { variant, prompt_version_number: r.split.versions[variant] }, when: guard }),
      ...statements,
    ]);
    if (results[results.length - 1].meta.changes === 0) return null;
    const now = await requireRelease(db, ws, id);
    const changeRequest = requested && now.pendingChangeId !== null ? (await changeRequestViews(db, [await requireChangeRequest(db, ws, now.pendingChangeId)]))[0] : null;
    return { view: await releaseView(db, ws, now), changeRequest };
  });
}

/** Which variant the release gives these metadata_filters, as a fetch would (a random one without a unit). */
export async function releaseAssignment(db: Db, ws: number, id: number, metadata: Record<string, string> | null): Promise<Assignment & { ab_test_id: number; revision: number; serving: boolean }> {
  const r = await requireRelease(db, ws, id);
  const a = await assign({ id: r.id, salt: r.salt, assignmentKey: r.assignmentKey, split: r.split }, metadata);
  return { ...a, ab_test_id: r.id, revision: r.revision, serving: r.status === "running" };
}

/** The assignment key of each release (the rollup step's units). */
export async function assignmentKeys(db: Db, ids: number[]): Promise<Map<number, string | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db.select({ id: abTests.id, key: abTests.assignmentKey }).from(abTests).where(inArray(abTests.id, ids));
  return new Map(rows.map((r) => [r.id, r.key]));
}

export { templateNames };
