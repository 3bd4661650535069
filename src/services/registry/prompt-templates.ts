// The prompt registry: templates, their numbered versions and release labels. New versions and
// label moves are single conditional statements in one db.batch(), so concurrent publishes never
// reuse a version number and a label always names exactly one version.
import { and, asc, eq, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { col, columnList, inJsonList, isUniqueViolation, nowMs } from "../../db/sql";
import { runBatch } from "../../db/batch";
import { promptLabels, promptTemplates, promptVersions, type LabelChangeRequestRow, type PromptLabelRow, type PromptTemplateRow, type PromptVersionRow } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { type ExternalIdLookupQuery, type ExternalIdPair, externalIdsFor, newMappings, resolveExternalIdLookup } from "./external-ids";
import { requireFolder } from "./folders";
import {
  applyPromptPatch,
  findPromptVersion,
  findPromptVersions,
  refuseSnippetCycles,
  renderTemplate,
  requirePromptVersion,
  requireTemplate,
  resolveSnippets,
  runningRelease,
  templateExists,
  templateIdOf,
  type PromptPatch,
  type ReadSource,
  type SnippetDependencies,
} from "../../prompts";
import { eventStatement } from "../webhooks";
import { llmKwargsFor, withModelOverrides, type ModelOverrides } from "../../converters";
import { resourceConditions, resourceOrder, type ResourceFilters } from "../workspace";
import { labelStatements as moveLabels, type LabelTable } from "./release-labels";
import { readRelease, servedVariant, type ReleaseRead, type ServedAb } from "./release-reads";
import { labelChange, labelMoveStatements, labelRequestsRemoval, requestLabelMove } from "./label-changes";

type Obj = Record<string, unknown>;

export interface PublishInput {
  prompt_template: { prompt_name: string; tags?: string[] | null; folder_id?: number | null };
  prompt_version: { prompt_template: Obj; commit_message?: string | null; metadata?: Obj | null };
  release_labels?: string[] | null;
  external_ids?: ExternalIdPair[] | null;
}

export interface PublishedView {
  id: number;
  prompt_name: string;
  prompt_version_id: number;
  version_number: number;
  tags: string[];
  release_labels: string[];
  prompt_template: Obj;
  metadata: Obj | null;
  commit_message: string | null;
  folder_id: number | null;
  external_ids: ExternalIdPair[];
}

/** Creates a template with its first version, or adds a version when the name exists. */
export async function publishTemplate(db: Db, auth: AuthContext, input: PublishInput): Promise<PublishedView> {
  const ws = auth.workspaceId;
  const name = input.prompt_template.prompt_name;
  const tags = input.prompt_template.tags ?? null;
  const folderId = input.prompt_template.folder_id;
  await requireFolder(db, ws, folderId);
  await refuseSnippetCycles(db, ws, name, input.prompt_version.prompt_template);
  await refuseProtectedLabels(db, ws, { name }, input.release_labels);
  const existing = await findByName(db, ws, name);
  const mappings = await newMappings(db, ws, "prompt_template", existing?.id ?? null, input.external_ids);
  const self = sql`SELECT ${promptTemplates.id} FROM ${promptTemplates} WHERE ${promptTemplates.workspaceId} = ${ws} AND ${promptTemplates.name} = ${name}`;
  const v = input.prompt_version;

  const upsert = db
    .insert(promptTemplates)
    .values({ workspaceId: ws, name, folderId: folderId ?? null, tags: tags ?? [], createdBy: auth.userId })
    .onConflictDoUpdate({
      target: [promptTemplates.workspaceId, promptTemplates.name],
      set: {
        updatedAt: nowMs,
        // Only what the caller sent changes an existing template.
        ...(tags !== null ? { tags: sql`excluded.${col(promptTemplates.tags)}` } : {}),
        ...(folderId !== undefined ? { folderId: sql`excluded.${col(promptTemplates.folderId)}` } : {}),
      },
    });
  const version = insertVersionStatement(ws, self, v.prompt_template, v.metadata ?? null, v.commit_message ?? null, auth.userId);
  let results: D1Result[];
  try {
    results = await runBatch(db, [
      upsert,
      version,
      ...versionEventStatements(ws, auth, self, input.release_labels),
      ...labelStatements(ws, self, input.release_labels),
      ...mappings.attach(self),
    ]);
  } catch (err) {
    mappings.throwIfTaken(err);
    throw err;
  }
  const t = await requireTemplate(db, ws, name);
  // The answer describes the version this call wrote, not whichever is newest by now.
  return publishedView(db, ws, t, await insertedVersion(db, results[1]));
}

/** The version row a batch's insertVersionStatement wrote (it answers its id). */
async function insertedVersion(db: Db, result: D1Result): Promise<PromptVersionRow> {
  const id = (result.results[0] as { id: number }).id;
  const [row] = await db.select().from(promptVersions).where(eq(promptVersions.id, id));
  return row;
}

export interface PatchInput extends PromptPatch {
  version?: number | null;
  label?: string | null;
  commit_message?: string | null;
  release_labels?: string[] | null;
}

/** A new version from a base version (latest, `version` or `label`) with the patch applied. */
export async function patchTemplate(
  db: Db,
  auth: AuthContext,
  identifier: string,
  input: PatchInput,
  validate: (template: Obj) => Obj,
): Promise<PublishedView & { base_version: number }> {
  const ws = auth.workspaceId;
  const { template: t, version: base } = await requirePromptVersion(db, ws, { identifier }, { version: input.version, label: input.label });
  const next = applyPromptPatch({ template: base.promptTemplate, metadata: base.metadata ?? null }, input);
  const template = validate(next.template);
  await refuseSnippetCycles(db, ws, t.name, template);
  await refuseProtectedLabels(db, ws, { id: t.id }, input.release_labels);
  const self = sql`SELECT ${t.id} AS id`;
  const [written] = await runBatch(db, [
    insertVersionStatement(ws, self, template, next.metadata, input.commit_message ?? null, auth.userId),
    db.update(promptTemplates).set({ updatedAt: nowMs }).where(eq(promptTemplates.id, t.id)),
    ...versionEventStatements(ws, auth, self, input.release_labels),
    ...labelStatements(ws, self, input.release_labels),
  ]);
  return { ...(await publishedView(db, ws, t, await insertedVersion(db, written))), base_version: base.version };
}

function insertVersionStatement(ws: number, templateIdSql: SQL, template: Obj, metadata: Obj | null, commitMessage: string | null, userId: number): SQL {
  return sql`
    INSERT INTO ${promptVersions} (${columnList(promptVersions, ["workspaceId", "promptId", "version", "promptTemplate", "metadata", "commitMessage", "createdBy"])})
    SELECT ${ws}, t.id, coalesce((SELECT max(${promptVersions.version}) FROM ${promptVersions} WHERE ${promptVersions.promptId} = t.id), 0) + 1,
           ${JSON.stringify(template)}, ${metadata === null ? null : JSON.stringify(metadata)}, ${commitMessage}, ${userId}
    FROM (${templateIdSql}) AS t
    RETURNING ${col(promptVersions.id)}`;
}

const NEWEST_VERSION = sql`(SELECT max(${promptVersions.version}) FROM ${promptVersions} WHERE ${promptVersions.promptId} = t.${col(promptTemplates.id)})`;

/**
 * The events of a new version (right after its insert) and of the labels it takes: each name is a
 * label created or a label moved, judged before labelStatements changes them (same batch).
 */
function versionEventStatements(ws: number, auth: AuthContext, templateIdSql: SQL, labels: string[] | null | undefined): SQL[] {
  const userId = auth.userId;
  const template = sql`(${templateIdSql}) AS s JOIN ${promptTemplates} AS t ON t.${col(promptTemplates.id)} = s.id`;
  const events = [
    eventStatement({
      workspaceId: ws,
      type: "prompt_template_version_created",
      userId,
      from: template,
      details: sql`json_object('prompt_template_id', t.${col(promptTemplates.id)}, 'prompt_template_name', t.${col(promptTemplates.name)}, 'prompt_template_version_number', ${NEWEST_VERSION})`,
    }),
  ];
  return [...events, ...labelEventStatements(ws, auth, templateIdSql, labels)];
}

/**
 * The events and audit rows of labels about to be created or moved to the template's newest version
 * (labelStatements, next in the same batch): each name a label created, or a label moved when it
 * names another version (a label on the newest already has not moved).
 */
export function labelEventStatements(ws: number, auth: AuthContext, templateIdSql: SQL, labels: string[] | null | undefined): SQL[] {
  const template = sql`(${templateIdSql}) AS s JOIN ${promptTemplates} AS t ON t.${col(promptTemplates.id)} = s.id`;
  const names = JSON.stringify([...new Set(labels ?? [])]);
  if (names === "[]") return [];
  const newestId = sql`(SELECT max(${promptVersions.id}) FROM ${promptVersions} WHERE ${promptVersions.promptId} = t.${col(promptTemplates.id)})`;
  return [
    ...labelChange(auth, {
      workspaceId: ws,
      type: "prompt_template_label_moved",
      from: sql`${template} JOIN ${promptLabels} AS l ON l.${col(promptLabels.promptId)} = t.${col(promptTemplates.id)} JOIN ${promptVersions} AS ov ON ov.${col(promptVersions.id)} = l.${col(promptLabels.promptVersionId)}`,
      when: sql`l.${col(promptLabels.name)} IN (SELECT value FROM json_each(${names})) AND NOT l.${col(promptLabels.protected)} AND l.${col(promptLabels.promptVersionId)} <> ${newestId}`,
      details: sql`json_object('prompt_template_id', t.${col(promptTemplates.id)}, 'prompt_template_name', t.${col(promptTemplates.name)}, 'prompt_template_version_number', ${NEWEST_VERSION},
        'old_prompt_template_version_number', ov.${col(promptVersions.version)}, 'prompt_template_label', l.${col(promptLabels.name)})`,
    }),
    ...labelChange(auth, {
      workspaceId: ws,
      type: "prompt_template_label_created",
      from: sql`${template}, json_each(${names}) AS j`,
      when: sql`NOT EXISTS (SELECT 1 FROM ${promptLabels} WHERE ${promptLabels.promptId} = t.${col(promptTemplates.id)} AND ${promptLabels.name} = j.value)`,
      details: sql`json_object('prompt_template_id', t.${col(promptTemplates.id)}, 'prompt_template_name', t.${col(promptTemplates.name)}, 'prompt_template_version_number', ${NEWEST_VERSION}, 'prompt_template_label', j.value)`,
    }),
  ];
}

/** The prompt templates' release labels (release-labels.ts). */
const PROMPT_LABELS: LabelTable = {
  labels: promptLabels,
  workspaceId: promptLabels.workspaceId,
  owner: promptLabels.promptId,
  version: promptLabels.promptVersionId,
  name: promptLabels.name,
  updatedAt: promptLabels.updatedAt,
  versions: promptVersions,
  versionId: promptVersions.id,
  versionOwner: promptVersions.promptId,
  protected: promptLabels.protected,
};

/**
 * A publish, patch or upsert naming a protected label in release_labels is a 409 that writes
 * nothing: a protected label moves only through an approved change request (label-changes.ts).
 */
export async function refuseProtectedLabels(db: Db, ws: number, template: { id: number } | { name: string }, labels: string[] | null | undefined): Promise<void> {
  if (!labels?.length) return;
  const owner = "id" in template ? sql`${template.id}` : sql`(SELECT ${promptTemplates.id} FROM ${promptTemplates} WHERE ${promptTemplates.workspaceId} = ${ws} AND ${promptTemplates.name} = ${template.name})`;
  const [hit] = await db
    .select({ name: promptLabels.name })
    .from(promptLabels)
    .where(and(eq(promptLabels.workspaceId, ws), sql`${promptLabels.promptId} = ${owner}`, inJsonList(promptLabels.name, [...new Set(labels)]), eq(promptLabels.protected, true)))
    .limit(1);
  if (hit) throw new ApiError("conflict", `release_labels: "${hit.name}" is protected; publish without it, then move it with PATCH /prompt-labels/{id}, which asks for approval`);
}

/** Creates or moves each label to the template's newest version (the one the batch just added). */
export function labelStatements(ws: number, templateIdSql: SQL, labels: string[] | null | undefined): SQL[] {
  return moveLabels(PROMPT_LABELS, ws, templateIdSql, labels);
}

async function findByName(db: Db, ws: number, name: string) {
  const [row] = await db.select().from(promptTemplates).where(and(eq(promptTemplates.workspaceId, ws), eq(promptTemplates.name, name))).limit(1);
  return row ?? null;
}

export async function publishedView(db: Db, ws: number, t: PromptTemplateRow, v: PromptVersionRow): Promise<PublishedView> {
  const [labels, ext] = await Promise.all([
    db.select({ name: promptLabels.name }).from(promptLabels).where(eq(promptLabels.promptVersionId, v.id)).orderBy(asc(promptLabels.name)),
    externalIdsFor(db, ws, "prompt_template", [t.id]),
  ]);
  return {
    id: t.id,
    prompt_name: t.name,
    prompt_version_id: v.id,
    version_number: v.version,
    tags: t.tags ?? [],
    release_labels: labels.map((l) => l.name),
    prompt_template: v.promptTemplate,
    metadata: v.metadata ?? null,
    commit_message: v.commitMessage ?? null,
    folder_id: t.folderId ?? null,
    external_ids: ext.get(String(t.id)) ?? [],
  };
}

export interface TemplateVersionView {
  success: true;
  id: number;
  prompt_name: string;
  prompt_version_id: number;
  version: number;
  workspace_id: number;
  folder_id: number | null;
  prompt_template: Obj;
  metadata: Obj | null;
  commit_message: string | null;
  tags: string[];
  release_labels: string[];
  created_at: string;
  updated_at: string;
  snippets: { id: number; prompt_name: string; version: number }[];
  llm_kwargs: Obj | null;
  external_ids: ExternalIdPair[];
  /** The A/B release variant the answer serves (release-reads.ts); absent when no release applies. */
  ab_test?: ServedAb;
}

/**
 * What a fetch reads before it renders anything: the template, the selected version, its labels and
 * external IDs, the blueprint with its snippets filled in, and what the snippets' lookups found. Plain
 * JSON, so the edge cache can keep it (src/prompts/cache.ts): change TEMPLATE_READ_FORMAT with its shape.
 */
export interface TemplateVersionRead extends VersionRead {
  t: PromptTemplateRow;
  /** A read by label that a running A/B release overloads: the release and its variants' reads (release-reads.ts). */
  release?: ReleaseRead<VersionRead> | null;
}

/** One version's part of a read. */
export interface VersionRead {
  v: PromptVersionRow;
  p: Pick<PublishedView, "release_labels" | "external_ids">;
  expanded: Obj;
  snippets: { id: number; prompt_name: string; version: number }[];
  dependencies: SnippetDependencies;
}

/** Names TemplateVersionRead's shape (and its rows' columns) in the edge cache's keys. */
export const TEMPLATE_READ_FORMAT = "template-version-2";

async function readVersion(db: Db, ws: number, t: PromptTemplateRow, v: PromptVersionRow): Promise<VersionRead> {
  // Snippets first: their text may hold input variables too.
  const [p, { template: expanded, snippets, dependencies }] = await Promise.all([publishedView(db, ws, t, v), resolveSnippets(db, ws, t.name, v.promptTemplate)]);
  return { v, p: { release_labels: p.release_labels, external_ids: p.external_ids }, expanded, snippets, dependencies };
}

export async function readTemplateVersion(db: Db, ws: number, identifier: string, sel: { version?: number | null; label?: string | null }): Promise<TemplateVersionRead> {
  const { template: t, version: v } = await requirePromptVersion(db, ws, { identifier }, sel);
  const [own, release] = await Promise.all([readVersion(db, ws, t, v), sel.label != null ? runningRelease(db, ws, t.id, sel.label) : null]);
  if (!release) return { t, ...own };
  return {
    t,
    ...own,
    release: await readRelease(release, v.version, async (number) => {
      const found = await findPromptVersion(db, ws, { id: t.id, version: number });
      // A release names versions that existed when it was made; versions are never deleted without their template.
      if (!found) throw new ApiError("not_found", `version: prompt template has no version ${number}`);
      return readVersion(db, ws, t, found.version);
    }),
  };
}

/** What a version-pinned read rests on: its template at a generation, and each snippet name's answer. */
export interface TemplateReadPin {
  id: number;
  generation: number;
  snippets: SnippetDependencies;
}

/** The generations a read was made at: the template's read with its row, each snippet's with its text. */
const templateReadPin = (read: TemplateVersionRead): TemplateReadPin => ({ id: read.t.id, generation: read.t.cacheGeneration, snippets: read.dependencies });

/**
 * Whether a read pinned by `pin` would be read the same now, in one query: the identifier still names
 * that template at that generation, and every snippet name still finds what it found (or still nothing).
 */
export async function templateReadHolds(db: Db, ws: number, identifier: string, pin: TemplateReadPin): Promise<boolean> {
  const asId = templateIdOf(identifier);
  const names = [identifier, ...Object.keys(pin.snippets)];
  const rows = await db
    .select({ id: promptTemplates.id, name: promptTemplates.name, generation: promptTemplates.cacheGeneration })
    .from(promptTemplates)
    .where(and(eq(promptTemplates.workspaceId, ws), or(asId !== null ? eq(promptTemplates.id, asId) : undefined, inJsonList(promptTemplates.name, names))));
  const named = (name: string) => rows.find((r) => r.name === name);
  const t = (asId !== null ? rows.find((r) => r.id === asId) : undefined) ?? named(identifier);
  if (!t || t.id !== pin.id || t.generation !== pin.generation) return false;
  return Object.entries(pin.snippets).every(([name, found]) => {
    const now = named(name);
    return found === null ? now === undefined : now !== undefined && now.id === found.id && now.generation === found.generation;
  });
}

/** The edge cache's source of a template read (src/prompts/cache.ts): the read, its pin, the pin's proof. */
export function templateReadSource(
  db: Db,
  ws: number,
  identifier: string,
  sel: { version?: number | null; label?: string | null },
): ReadSource<TemplateVersionRead, TemplateReadPin> {
  return {
    format: TEMPLATE_READ_FORMAT,
    load: () => readTemplateVersion(db, ws, identifier, sel),
    pin: templateReadPin,
    holds: (pin) => templateReadHolds(db, ws, identifier, pin),
  };
}

/**
 * One template at the selected version; with input variables, text blocks come back filled in. run()'s
 * overrides (provider, model, model_parameter_overrides) change the answered metadata.model and the
 * llm_kwargs built from it, never the stored version. `read`: the read already made (the edge cache's).
 * `sdkForm` (POST, the SDKs' fetch) also fills variables when none are given but the version has
 * provider arguments, missing ones empty: PromptLayer's rule, which the Python SDK's template cache
 * repeats on what it fetched with skip_input_variable_rendering. GET never fills them.
 */
export async function getTemplateVersion(
  db: Db,
  ws: number,
  identifier: string,
  sel: {
    version?: number | null;
    label?: string | null;
    input_variables?: Record<string, unknown> | null;
    skip_input_variable_rendering?: boolean | null;
    sdkForm?: boolean;
    /** The SDKs' metadata: the unit and segment of a running release's assignment. */
    metadata_filters?: Record<string, unknown> | null;
  } & ModelOverrides,
  read?: TemplateVersionRead,
): Promise<TemplateVersionView> {
  const whole = read ?? (await readTemplateVersion(db, ws, identifier, sel));
  // Through a running release, the variant the request is assigned (a pinned or latest read has none).
  const served = whole.release && sel.version == null ? await servedVariant(whole.release, sel.metadata_filters) : null;
  const { t } = whole;
  const { v, p, expanded, snippets } = served?.variant ?? whole;
  const metadata = withModelOverrides(v.metadata ?? null, sel);
  const render = !sel.skip_input_variable_rendering && (sel.input_variables != null || (sel.sdkForm === true && llmKwargsFor(expanded, metadata) !== null));
  const promptTemplate = render ? renderTemplate(expanded, sel.input_variables ?? {}) : expanded;
  return {
    success: true,
    id: t.id,
    prompt_name: t.name,
    prompt_version_id: v.id,
    version: v.version,
    workspace_id: ws,
    folder_id: t.folderId ?? null,
    prompt_template: promptTemplate,
    metadata,
    commit_message: v.commitMessage ?? null,
    tags: t.tags ?? [],
    release_labels: p.release_labels,
    created_at: toIso(v.createdAt),
    updated_at: toIso(t.updatedAt),
    snippets,
    // What the SDK's run() hands the provider: built from the (rendered) blueprint and metadata.model.
    llm_kwargs: llmKwargsFor(promptTemplate, metadata),
    external_ids: p.external_ids,
    // Only when a release served the answer: without one the answer is what it always was.
    ...(served ? { ab_test: served.ab } : {}),
  };
}

export interface ListTemplatesQuery extends ExternalIdLookupQuery, ResourceFilters {
  page: number;
  per_page: number;
  label?: string;
  tags?: string[];
  sort_order: "asc" | "desc";
}

export async function listTemplates(db: Db, ws: number, q: ListTemplatesQuery) {
  const lookup = await resolveExternalIdLookup(db, ws, "prompt_template", q);
  const empty = { has_next: false, has_prev: q.page > 1, items: [], next_num: null, prev_num: q.page > 1 ? q.page - 1 : null, page: q.page, pages: 0, total: 0 };
  if (lookup === null) return empty;
  const t = promptTemplates;
  const columns = { id: t.id, name: t.name, userId: t.createdBy, createdAt: t.createdAt, updatedAt: t.updatedAt };
  const conds: (SQL | undefined)[] = [
    eq(t.workspaceId, ws),
    sql`EXISTS (SELECT 1 FROM ${promptVersions} v WHERE v.${col(promptVersions.promptId)} = ${t.id})`,
    lookup !== undefined ? sql`CAST(${t.id} AS TEXT) = ${lookup}` : undefined,
    ...resourceConditions(ws, columns, { ...q, name: q.name || undefined }),
    q.label ? sql`EXISTS (SELECT 1 FROM ${promptLabels} l WHERE l.${col(promptLabels.promptId)} = ${t.id} AND l.${col(promptLabels.name)} = ${q.label})` : undefined,
    // Every tag asked for: the list is one JSON parameter, however many tags are given.
    q.tags?.length
      ? sql`NOT EXISTS (SELECT 1 FROM json_each(${JSON.stringify([...new Set(q.tags)])}) AS w WHERE w.value NOT IN (SELECT value FROM json_each(${t.tags})))`
      : undefined,
  ];
  const where = and(...conds);
  const [{ total }] = await db.select({ total: sql<number>`count(*)` }).from(t).where(where);
  const rows = await db
    .select()
    .from(t)
    .where(where)
    .orderBy(...resourceOrder(columns, q))
    .limit(q.per_page)
    .offset((q.page - 1) * q.per_page);
  const ids = rows.map((r) => r.id);
  const versions = await findPromptVersions(db, ids, q.label ? { label: q.label } : { latest: true });
  const byTemplate = new Map(versions.map((v) => [v.promptId, v]));
  const ext = await externalIdsFor(db, ws, "prompt_template", ids);
  const pages = Math.ceil(total / q.per_page);
  return {
    has_next: q.page < pages,
    has_prev: q.page > 1,
    items: rows.map((r) => {
      const v = byTemplate.get(r.id)!;
      return {
        id: r.id,
        prompt_name: r.name,
        prompt_version_id: v.id,
        version: v.version,
        prompt_template: v.promptTemplate,
        metadata: v.metadata ?? null,
        commit_message: v.commitMessage ?? null,
        llm_kwargs: llmKwargsFor(v.promptTemplate, v.metadata ?? null),
        tags: r.tags ?? [],
        folder_id: r.folderId ?? null,
        created_at: toIso(r.createdAt),
        updated_at: toIso(r.updatedAt),
        external_ids: ext.get(String(r.id)) ?? [],
      };
    }),
    next_num: q.page < pages ? q.page + 1 : null,
    prev_num: q.page > 1 ? q.page - 1 : null,
    page: q.page,
    pages,
    total,
  };
}

// ---- release labels ----

export interface LabelView {
  id: number;
  name: string;
  protected: boolean;
  prompt_id: number;
  prompt_version_id: number;
  prompt_version_number: number;
  created_at: string;
  updated_at: string;
}

export function labelView(l: PromptLabelRow, versionNumber: number): LabelView {
  return {
    id: l.id,
    name: l.name,
    protected: l.protected,
    prompt_id: l.promptId,
    prompt_version_id: l.promptVersionId,
    prompt_version_number: versionNumber,
    created_at: toIso(l.createdAt),
    updated_at: toIso(l.updatedAt),
  };
}

export async function templateLabels(db: Db, ws: number, identifier: string) {
  const t = await requireTemplate(db, ws, identifier);
  const rows = await db
    .select({ l: promptLabels, number: promptVersions.version })
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.promptVersionId))
    .where(eq(promptLabels.promptId, t.id))
    .orderBy(asc(promptLabels.name));
  return rows.map((r) => ({ prompt_version_id: r.l.promptVersionId, prompt_version_number: r.number, release_label: r.l.name, release_label_id: r.l.id, protected: r.l.protected }));
}

async function versionOf(db: Db, ws: number, promptId: number, number: number): Promise<PromptVersionRow> {
  if (!(await templateExists(db, ws, promptId))) throw ApiError.notFound("prompt template");
  const found = await findPromptVersion(db, ws, { id: promptId, version: number });
  if (!found) throw new ApiError("not_found", `prompt_version_number: prompt ${promptId} has no version ${number}`);
  return found.version;
}

const labelDetails = (version: SQL) =>
  sql`json_object('prompt_template_id', t.${col(promptTemplates.id)}, 'prompt_template_name', t.${col(promptTemplates.name)}, 'prompt_template_version_number', ${version}, 'prompt_template_label', l.${col(promptLabels.name)})`;

export async function createLabel(db: Db, auth: AuthContext, promptId: number, input: { prompt_version_number: number; name: string }): Promise<LabelView> {
  const ws = auth.workspaceId;
  const v = await versionOf(db, ws, promptId, input.prompt_version_number);
  // The event is written only when the label is new (checked before the insert, in the same batch).
  // The change is the batch's last statement (its event and audit row come first).
  const inserted = (await runBatch(db, [
    ...labelChange(auth, {
      workspaceId: ws,
      type: "prompt_template_label_created",
      from: sql`${promptTemplates} AS t, (SELECT ${input.name} AS name) AS l`,
      when: sql`t.${col(promptTemplates.id)} = ${promptId} AND NOT EXISTS (SELECT 1 FROM ${promptLabels} WHERE ${promptLabels.promptId} = ${promptId} AND ${promptLabels.name} = ${input.name})`,
      details: labelDetails(sql`${v.version}`),
    }),
    db.insert(promptLabels).values({ workspaceId: ws, promptId, promptVersionId: v.id, name: input.name }).onConflictDoNothing(),
  ])).at(-1)!;
  // changes counts the rows the cache-generation triggers (migration 0030) update as well: none when nothing was inserted.
  const [row] = inserted.meta.changes > 0 ? await db.select().from(promptLabels).where(and(eq(promptLabels.promptId, promptId), eq(promptLabels.name, input.name))) : [];
  if (!row) throw new ApiError("conflict", `name: prompt ${promptId} already has a label "${input.name}" (move it with PATCH /prompt-labels/{id})`);
  return labelView(row, v.version);
}

export async function requireLabel(db: Db, ws: number, id: number): Promise<PromptLabelRow> {
  const [l] = await db.select().from(promptLabels).where(and(eq(promptLabels.workspaceId, ws), eq(promptLabels.id, id))).limit(1);
  if (!l) throw ApiError.notFound("release label");
  return l;
}

/** A label's answer as it stands (with the number of the version it names). */
export async function labelAsItStands(db: Db, ws: number, id: number): Promise<LabelView> {
  const l = await requireLabel(db, ws, id);
  const [v] = await db.select({ version: promptVersions.version }).from(promptVersions).where(eq(promptVersions.id, l.promptVersionId));
  return labelView(l, v.version);
}

/**
 * Moves a label to another version of its prompt, through the one label-move path; a protected
 * label is not moved but gets a pending change request (label-changes.ts) that an approval moves.
 */
export async function moveLabel(db: Db, auth: AuthContext, id: number, input: { prompt_version_number: number }): Promise<{ label: LabelView } | { changeRequest: LabelChangeRequestRow }> {
  const ws = auth.workspaceId;
  const l = await requireLabel(db, ws, id);
  const v = await versionOf(db, ws, l.promptId, input.prompt_version_number);
  return moveLabelAsRead(db, auth, l, v);
}

/** moveLabel's write, given the label and version as read (the label may have changed since). */
export async function moveLabelAsRead(db: Db, auth: AuthContext, l: PromptLabelRow, v: PromptVersionRow): Promise<{ label: LabelView } | { changeRequest: LabelChangeRequestRow }> {
  const ws = auth.workspaceId;
  const id = l.id;
  if (l.protected) return { changeRequest: await requestLabelMove(db, auth, l, { id: v.id, version: v.version }) };
  // The old version is read by the event's insert, before the update in the same batch; a label put
  // back on the version it names already has not moved. Only while it is still unprotected (a label
  // protected since it was read moves only through an approval).
  // The change is the batch's last statement (its event and audit row come first).
  const updated = (await runBatch(db, labelMoveStatements(ws, auth, id, { id: v.id, version: v.version }, stillUnprotected(id)))).at(-1)!;
  const [row] = updated.meta.changes > 0 ? await db.select().from(promptLabels).where(eq(promptLabels.id, id)) : [];
  if (!row) throw await labelGoneOrProtected(db, ws, id, "moved");
  return { label: labelView(row, v.version) };
}

/** The label is not protected, as the batch reads it. */
const stillUnprotected = (id: number) => sql`NOT EXISTS (SELECT 1 FROM ${promptLabels} AS pp WHERE pp.${col(promptLabels.id)} = ${id} AND pp.${col(promptLabels.protected)})`;

/** Why a label's change wrote nothing: it was deleted (404), or protected meanwhile (409). */
async function labelGoneOrProtected(db: Db, ws: number, id: number, what: string): Promise<ApiError> {
  const [now] = await db.select().from(promptLabels).where(and(eq(promptLabels.workspaceId, ws), eq(promptLabels.id, id))).limit(1);
  if (!now) return ApiError.notFound("release label");
  return new ApiError("conflict", `release label "${now.name}" was protected while it was ${what}: nothing changed (a protected label moves through a change request)`);
}

export async function deleteLabel(db: Db, auth: AuthContext, id: number): Promise<void> {
  const ws = auth.workspaceId;
  return deleteLabelAsRead(db, auth, await requireLabel(db, ws, id));
}

/** deleteLabel's write, given the label as read (it may have been protected since). */
export async function deleteLabelAsRead(db: Db, auth: AuthContext, l: PromptLabelRow): Promise<void> {
  const ws = auth.workspaceId;
  const id = l.id;
  if (l.protected) throw new ApiError("conflict", `release label "${l.name}" is protected: unprotect it first (PUT /api/public/v2/prompt-labels/{id}/protection)`);
  // The change is the batch's last statement (its event and audit row come first).
  const unprotected = stillUnprotected(id);
  const deleted = (await runBatch(db, [
    ...labelChange(auth, {
      workspaceId: ws,
      type: "prompt_template_label_deleted",
      from: sql`${promptLabels} AS l JOIN ${promptVersions} AS v ON v.${col(promptVersions.id)} = l.${col(promptLabels.promptVersionId)} JOIN ${promptTemplates} AS t ON t.${col(promptTemplates.id)} = l.${col(promptLabels.promptId)}`,
      when: sql`l.${col(promptLabels.id)} = ${id} AND l.${col(promptLabels.workspaceId)} = ${ws} AND ${unprotected}`,
      details: labelDetails(sql`v.${col(promptVersions.version)}`),
    }),
    // Its change requests (from when it was protected) name it: they go with it.
    ...labelRequestsRemoval(ws, auth, id, unprotected),
    db.delete(promptLabels).where(and(eq(promptLabels.workspaceId, ws), eq(promptLabels.id, id), unprotected)),
  ])).at(-1)!;
  if (deleted.meta.changes === 0) throw await labelGoneOrProtected(db, ws, id, "deleted");
}

/** A write failed because the workspace already has a template of that name. */
export const isTemplateNameTaken = (err: unknown) => isUniqueViolation(err, promptTemplates);
