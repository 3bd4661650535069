// Skill collections: versioned file sets. Contents go to R2 under their SHA-256 (an unchanged file is
// stored once, whatever the number of versions); versions and their path → hash manifests go to D1.
// Everything is validated and hashed before the first byte is stored, and the D1 writes of a request
// are one atomic batch, so a refused request leaves nothing visible behind.
import { and, eq, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  skillCollections,
  skillCollectionVersions,
  type SkillCollectionRow,
  type SkillCollectionVersionRow,
  type SkillManifestEntry,
  type SkillProvider,
} from "../../db/schema";
import { runBatch } from "../../db/batch";
import { eventStatement } from "../webhooks";
import type { AuthContext } from "../../env";
import { sha256Hex } from "../../lib/crypto";
import { ApiError } from "../../lib/errors";
import { isUniqueViolation } from "../../db/sql";
import { toIso } from "../../lib/time";
import type { UnzippedFile } from "../../lib/zip";
import { type ExternalIdLookupQuery, type ExternalIdPair, externalIdsFor, newMappings, resolveExternalIdLookup } from "./external-ids";
import { requireFolder } from "./folders";
import { resourceConditions, resourceOrder, type ResourceFilters } from "../workspace";
import {
  applyChanges,
  fileSetOf,
  rootPathFromName,
  SKILL_MAX_FILE_BYTES,
  SKILL_MAX_FILES,
  type Failure,
  type Result,
} from "./skill-manifest";

/** A file's bytes as R2 knows them; `data` only for content this request brings. */
interface FileRef {
  sha256: string;
  size: number;
  data?: Uint8Array;
}

export interface SkillStore {
  db: Db;
  blobs: R2Bucket;
  /** Largest total of a version's file sizes, in bytes. */
  maxVersionBytes: number;
}

export interface NewFile {
  path: unknown;
  content: Uint8Array;
}

export interface CreateCollectionInput {
  name: string;
  folder_id?: number | null;
  provider?: SkillProvider | null;
  root_path?: string | null;
  commit_message?: string | null;
  external_ids?: ExternalIdPair[] | null;
  /** The inflated ZIP of a multipart upload, when one was sent. */
  archive?: UnzippedFile[] | null;
  files: NewFile[];
}

export interface CreateVersionInput {
  /** When given, the archive's files replace the previous version's before the changes apply. */
  archive?: UnzippedFile[] | null;
  file_updates: NewFile[];
  moves: { from: unknown; to: unknown }[];
  deletes: unknown[];
  commit_message?: string | null;
  release_label?: string | null;
  /** undefined keeps the collection's provider; null makes it universal. */
  provider?: SkillProvider | null;
}

const blobKey = (workspaceId: number, sha256: string) => `skills/${workspaceId}/${sha256}`;
const UPLOAD_CONCURRENCY = 6;
const VERSION_WRITE_ATTEMPTS = 3;

function fail(f: Failure): never {
  throw new ApiError(f.code, f.message);
}

function unwrap<T>(r: Result<T>): T {
  if (!r.ok) fail(r);
  return r;
}

async function refOf(content: Uint8Array, field: string): Promise<FileRef> {
  if (content.byteLength > SKILL_MAX_FILE_BYTES) {
    throw new ApiError("payload_too_large", `${field}: is larger than ${SKILL_MAX_FILE_BYTES / 1048576} MiB`);
  }
  return { sha256: await sha256Hex(content), size: content.byteLength, data: content };
}

function newRefs(files: NewFile[], field: string, contentField: string): Promise<{ path: unknown; value: FileRef }[]> {
  // Distinct paths past the cap can only make a version too big: refuse before hashing them all.
  if (files.length > SKILL_MAX_FILES) {
    throw new ApiError("payload_too_large", `${field}: a version holds at most ${SKILL_MAX_FILES} files (${files.length} given)`);
  }
  return Promise.all(files.map(async (f, i) => ({ path: f.path, value: await refOf(f.content, `${field}[${i}].${contentField}`) })));
}

async function archiveSet(archive: UnzippedFile[]): Promise<Map<string, FileRef>> {
  const entries = await Promise.all(archive.map(async (f) => ({ path: f.name, value: await refOf(f.data, `archive: ${f.name}`) })));
  return unwrap(fileSetOf(entries, "archive", (i) => `archive: ${archive[i].name}`)).files;
}

function manifestOf(files: Map<string, FileRef>, maxBytes: number): SkillManifestEntry[] {
  let total = 0;
  for (const ref of files.values()) total += ref.size;
  if (total > maxBytes) {
    throw new ApiError("payload_too_large", `files: a version holds at most ${maxBytes} bytes (this one would hold ${total})`);
  }
  return [...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([p, r]) => [p, r.sha256, r.size]);
}

function setOfManifest(manifest: SkillManifestEntry[]): Map<string, FileRef> {
  return new Map(manifest.map(([p, sha256, size]) => [p, { sha256, size }]));
}

/** Stores the new contents that R2 does not already hold for this collection (content-addressed, so a re-put is harmless). */
async function uploadNew(store: SkillStore, workspaceId: number, files: Map<string, FileRef>, known: Set<string>): Promise<void> {
  const todo = new Map<string, Uint8Array>();
  for (const ref of files.values()) if (ref.data && !known.has(ref.sha256)) todo.set(ref.sha256, ref.data);
  const queue = [...todo.entries()];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      await store.blobs.put(blobKey(workspaceId, next[0]), next[1], { sha256: next[0] });
    }
  };
  await Promise.all(Array.from({ length: Math.min(UPLOAD_CONCURRENCY, queue.length) }, worker));
}

/** What a version changed in the file set (a move is a removal and an addition). */
function fileChanges(before: Map<string, FileRef>, after: Map<string, FileRef>) {
  let added = 0, modified = 0, removed = 0;
  for (const [path, ref] of after) {
    const old = before.get(path);
    if (!old) added++;
    else if (old.sha256 !== ref.sha256) modified++;
  }
  for (const path of before.keys()) if (!after.has(path)) removed++;
  return { added, modified, removed };
}

/** skill_collection_files_changed for a version whose files differ from the previous one's; written only if the version row was. */
function filesChangedEvent(auth: AuthContext, collection: { id: string; name: string }, version: SkillCollectionVersionRow, previous: number | null, c: ReturnType<typeof fileChanges>) {
  if (c.added + c.modified + c.removed === 0) return [];
  return [
    eventStatement({
      workspaceId: auth.workspaceId,
      type: "skill_collection_files_changed",
      userId: auth.userId,
      when: sql`EXISTS (SELECT 1 FROM ${skillCollectionVersions} WHERE ${skillCollectionVersions.id} = ${version.id})`,
      details: {
        skill_collection_id: collection.id,
        skill_collection_name: collection.name,
        version_number: version.number,
        previous_version_number: previous,
        files_added: c.added,
        files_modified: c.modified,
        files_removed: c.removed,
      },
    }),
  ];
}

export async function createCollection(store: SkillStore, auth: AuthContext, input: CreateCollectionInput) {
  const { db } = store;
  await requireFolder(db, auth.workspaceId, input.folder_id);
  const base = input.archive ? await archiveSet(input.archive) : new Map<string, FileRef>();
  const files = unwrap(applyChanges(base, { moves: [], deletes: [], updates: await newRefs(input.files, "files", "content"), fields: { updates: "files" } })).files;
  const manifest = manifestOf(files, store.maxVersionBytes);

  const explicitRoot = input.root_path ?? null;
  if (await findByName(db, auth.workspaceId, input.name)) throw nameTaken(input.name);
  let rootPath = explicitRoot ?? (await freeRootPath(db, auth.workspaceId, rootPathFromName(input.name)));
  if (explicitRoot && (await findByRootPath(db, auth.workspaceId, explicitRoot))) throw rootTaken(explicitRoot);
  const mappings = await newMappings(db, auth.workspaceId, "skill_collection", null, input.external_ids);

  await uploadNew(store, auth.workspaceId, files, new Set());

  for (let attempt = 0; ; attempt++) {
    const now = Date.now();
    const collection: SkillCollectionRow = {
      id: crypto.randomUUID(),
      workspaceId: auth.workspaceId,
      folderId: input.folder_id ?? null,
      name: input.name,
      rootPath,
      provider: input.provider ?? null,
      isDeleted: false,
      latestVersion: 1,
      createdBy: auth.userId,
      updatedBy: auth.userId,
      createdAt: now,
      updatedAt: now,
    };
    const version: SkillCollectionVersionRow = {
      id: crypto.randomUUID(),
      workspaceId: auth.workspaceId,
      collectionId: collection.id,
      number: 1,
      rootPathAtVersion: rootPath,
      provider: collection.provider,
      manifest,
      commitMessage: input.commit_message ?? null,
      releaseLabel: null,
      archived: false,
      createdBy: auth.userId,
      userEmail: auth.userEmail,
      createdAt: now,
    };
    try {
      await runBatch(db, [
        db.insert(skillCollections).values(collection),
        db.insert(skillCollectionVersions).values(version),
        ...mappings.attach(sql`SELECT ${collection.id}`),
        ...filesChangedEvent(auth, collection, version, null, fileChanges(new Map(), files)),
      ]);
      return { collection, version, externalIds: mappings.pairs };
    } catch (err) {
      mappings.throwIfTaken(err);
      // Lost a race for the name, or for a root path derived from it (then try the next free one).
      if (isUniqueViolation(err, skillCollections.name)) throw nameTaken(input.name);
      if (isUniqueViolation(err, skillCollections.rootPath)) {
        if (explicitRoot || attempt >= 2) throw rootTaken(rootPath);
        rootPath = await freeRootPath(db, auth.workspaceId, rootPathFromName(input.name));
        continue;
      }
      throw err;
    }
  }
}

const nameTaken = (name: string) => new ApiError("conflict", `name: a skill collection named "${name}" already exists in this workspace`);
const rootTaken = (rootPath: string) => new ApiError("conflict", `root_path: "${rootPath}" is already the root path of another skill collection`);

async function findByName(db: Db, workspaceId: number, name: string) {
  const [row] = await db
    .select({ id: skillCollections.id })
    .from(skillCollections)
    .where(and(eq(skillCollections.workspaceId, workspaceId), eq(skillCollections.name, name)))
    .limit(1);
  return row ?? null;
}

async function findByRootPath(db: Db, workspaceId: number, rootPath: string) {
  const [row] = await db
    .select({ id: skillCollections.id })
    .from(skillCollections)
    .where(and(eq(skillCollections.workspaceId, workspaceId), eq(skillCollections.rootPath, rootPath)))
    .limit(1);
  return row ?? null;
}

/** `wanted`, or `wanted-2`, `wanted-3`… : the first one no collection of the workspace uses. */
async function freeRootPath(db: Db, workspaceId: number, wanted: string): Promise<string> {
  const rows = await db
    .select({ rootPath: skillCollections.rootPath })
    .from(skillCollections)
    .where(
      and(
        eq(skillCollections.workspaceId, workspaceId),
        or(eq(skillCollections.rootPath, wanted), sql`substr(${skillCollections.rootPath}, 1, ${wanted.length + 1}) = ${`${wanted}-`}`),
      ),
    );
  const used = new Set(rows.map((r) => r.rootPath));
  if (!used.has(wanted)) return wanted;
  for (let n = 2; ; n++) if (!used.has(`${wanted}-${n}`)) return `${wanted}-${n}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function looksLikeUuid(s: string): boolean {
  return UUID_RE.test(s);
}

/**
 * The collection an identifier names in the workspace: its UUID first, else its name, else its
 * root path (a leading or trailing `/` is ignored). Another workspace's collection is never found.
 */
export async function findCollection(db: Db, workspaceId: number, identifier: string): Promise<SkillCollectionRow | null> {
  const asRoot = identifier.replace(/^\/+|\/+$/g, "");
  const asId = looksLikeUuid(identifier) ? identifier.toLowerCase() : null;
  const rows = await db
    .select()
    .from(skillCollections)
    .where(
      and(
        eq(skillCollections.workspaceId, workspaceId),
        eq(skillCollections.isDeleted, false),
        or(asId ? eq(skillCollections.id, asId) : undefined, eq(skillCollections.name, identifier), eq(skillCollections.rootPath, asRoot)),
      ),
    )
    .limit(3);
  return rows.find((r) => r.id === asId) ?? rows.find((r) => r.name === identifier) ?? rows.find((r) => r.rootPath === asRoot) ?? null;
}

export async function requireCollection(db: Db, workspaceId: number, identifier: string): Promise<SkillCollectionRow> {
  const row = await findCollection(db, workspaceId, identifier);
  if (!row) throw ApiError.notFound("skill collection");
  return row;
}

async function latestVersion(db: Db, collection: SkillCollectionRow): Promise<SkillCollectionVersionRow | null> {
  const [row] = await db
    .select()
    .from(skillCollectionVersions)
    .where(and(eq(skillCollectionVersions.collectionId, collection.id), eq(skillCollectionVersions.number, collection.latestVersion)))
    .limit(1);
  return row ?? null;
}

/**
 * A new version: the previous file set (or the uploaded archive) with the changes applied. Written
 * only if no other version was saved meanwhile; otherwise the changes are re-applied to the newer
 * version (as a rebase would), at most a few times, before answering 409.
 */
export async function createVersion(store: SkillStore, auth: AuthContext, identifier: string, input: CreateVersionInput) {
  const { db } = store;
  const updates = await newRefs(input.file_updates, "file_updates", "content");
  const archived = input.archive ? await archiveSet(input.archive) : null;

  for (let attempt = 0; attempt < VERSION_WRITE_ATTEMPTS; attempt++) {
    const collection = await requireCollection(db, auth.workspaceId, identifier);
    const previous = await latestVersion(db, collection);
    const before = setOfManifest(previous?.manifest ?? []);
    const files = unwrap(applyChanges(archived ?? before, { moves: input.moves, deletes: input.deletes, updates })).files;
    const manifest = manifestOf(files, store.maxVersionBytes);
    await uploadNew(store, auth.workspaceId, files, new Set([...before.values()].map((r) => r.sha256)));

    const expected = collection.latestVersion;
    const provider = input.provider === undefined ? collection.provider : input.provider;
    const now = Date.now();
    const version: SkillCollectionVersionRow = {
      id: crypto.randomUUID(),
      workspaceId: auth.workspaceId,
      collectionId: collection.id,
      number: expected + 1,
      rootPathAtVersion: collection.rootPath,
      provider,
      manifest,
      commitMessage: input.commit_message ?? null,
      releaseLabel: input.release_label ?? null,
      archived: false,
      createdBy: auth.userId,
      userEmail: auth.userEmail,
      createdAt: now,
    };
    // Every statement carries the same guard (nobody saved a version since we read), so the batch
    // either moves the label, inserts the version and bumps the collection, or does nothing.
    const unchanged = sql`exists (select 1 from ${skillCollections} where ${skillCollections.id} = ${collection.id} and ${skillCollections.latestVersion} = ${expected})`;
    // Values in the table's column order (drizzle inserts a raw select into every column).
    const insert = db.insert(skillCollectionVersions).select(
      sql`select ${version.id}, ${version.workspaceId}, ${version.collectionId}, ${version.number}, ${version.rootPathAtVersion}, ${provider},
        ${JSON.stringify(manifest)}, ${version.commitMessage}, ${version.releaseLabel}, 0, ${auth.userId}, ${auth.userEmail}, ${now}
      where ${unchanged}`,
    );
    const bump = db
      .update(skillCollections)
      .set({ latestVersion: expected + 1, provider, updatedBy: auth.userId, updatedAt: now })
      .where(and(eq(skillCollections.id, collection.id), eq(skillCollections.latestVersion, expected)));
    // The label leaves its old version first: one label names one version.
    const event = filesChangedEvent(auth, collection, version, expected > 0 ? expected : null, fileChanges(before, files));
    const results = version.releaseLabel
      ? await runBatch(db, [
          db
            .update(skillCollectionVersions)
            .set({ releaseLabel: null })
            .where(and(eq(skillCollectionVersions.collectionId, collection.id), eq(skillCollectionVersions.releaseLabel, version.releaseLabel), unchanged)),
          insert,
          bump,
          ...event,
        ])
      : [null, ...(await runBatch(db, [insert, bump, ...event]))];
    if ((results[1] as D1Result).meta.changes === 1) {
      return { collection: { ...collection, latestVersion: expected + 1, provider, updatedBy: auth.userId, updatedAt: now }, version };
    }
  }
  throw new ApiError("conflict", "skill collection: other versions were saved at the same time; retry");
}

export async function renameCollection(db: Db, auth: AuthContext, identifier: string, name: string | null | undefined) {
  const collection = await requireCollection(db, auth.workspaceId, identifier);
  if (name == null || name === collection.name) return collection;
  const other = await findByName(db, auth.workspaceId, name);
  if (other && other.id !== collection.id) throw nameTaken(name);
  const now = Date.now();
  try {
    await db
      .update(skillCollections)
      .set({ name, updatedBy: auth.userId, updatedAt: now })
      .where(and(eq(skillCollections.id, collection.id), eq(skillCollections.workspaceId, auth.workspaceId)));
  } catch (err) {
    if (isUniqueViolation(err, skillCollections.name)) throw nameTaken(name);
    throw err;
  }
  return { ...collection, name, updatedBy: auth.userId, updatedAt: now };
}

/** The version a pull asks for: `version=N`, `label=L`, or the newest. */
export async function selectVersion(
  db: Db,
  collection: SkillCollectionRow,
  which: { version?: number; label?: string },
): Promise<SkillCollectionVersionRow | null> {
  const by =
    which.version !== undefined
      ? eq(skillCollectionVersions.number, which.version)
      : which.label !== undefined
        ? eq(skillCollectionVersions.releaseLabel, which.label)
        : eq(skillCollectionVersions.number, collection.latestVersion);
  const [row] = await db
    .select()
    .from(skillCollectionVersions)
    .where(and(eq(skillCollectionVersions.collectionId, collection.id), by))
    .limit(1);
  if (!row && which.version !== undefined) throw ApiError.notFound(`version ${which.version} of the skill collection`);
  if (!row && which.label !== undefined) throw ApiError.notFound(`release label "${which.label}" of the skill collection`);
  return row ?? null;
}

/** A version's files in path order, each read from R2 when asked for (a few reads run ahead). */
export async function* versionFiles(blobs: R2Bucket, workspaceId: number, manifest: SkillManifestEntry[], ahead = 4) {
  const read = async (sha256: string): Promise<Uint8Array> => {
    const obj = await blobs.get(blobKey(workspaceId, sha256));
    if (!obj) throw new Error(`skill file content ${sha256} is missing from R2`);
    return new Uint8Array(await obj.arrayBuffer());
  };
  const inflight: Promise<Uint8Array>[] = [];
  let next = 0;
  for (let i = 0; i < manifest.length; i++) {
    while (next < manifest.length && next < i + ahead) inflight.push(read(manifest[next++][1]));
    const data = await inflight.shift()!;
    yield { path: manifest[i][0], data };
  }
}

export interface ListFilters extends ExternalIdLookupQuery, Omit<ResourceFilters, "name"> {
  folder_id?: number;
}

export async function listCollections(db: Db, workspaceId: number, f: ListFilters): Promise<SkillCollectionRow[]> {
  const t = skillCollections;
  const lookup = await resolveExternalIdLookup(db, workspaceId, "skill_collection", f);
  if (lookup === null) return [];
  const where: (SQL | undefined)[] = [eq(t.workspaceId, workspaceId), eq(t.isDeleted, false)];
  if (lookup !== undefined) where.push(eq(t.id, lookup));
  if (f.folder_id !== undefined) {
    await requireFolder(db, workspaceId, f.folder_id);
    where.push(eq(t.folderId, f.folder_id));
  }
  const columns = { id: t.id, name: t.name, userId: t.createdBy, createdAt: t.createdAt, updatedAt: t.updatedAt };
  where.push(...resourceConditions(workspaceId, columns, f));
  return db
    .select()
    .from(t)
    .where(and(...where))
    .orderBy(...resourceOrder(columns, f));
}

/** Whether the collection `id` (a UUID) exists in the workspace: the external-ID routes' 404 check. */
export async function collectionExists(db: Db, workspaceId: number, id: string): Promise<boolean> {
  const [row] = await db
    .select({ id: skillCollections.id })
    .from(skillCollections)
    .where(and(eq(skillCollections.id, id), eq(skillCollections.workspaceId, workspaceId), eq(skillCollections.isDeleted, false)))
    .limit(1);
  return !!row;
}

/** The external IDs of collections, keyed by id (one query per 90 collections). */
export function collectionExternalIds(db: Db, workspaceId: number, ids: string[]): Promise<Map<string, ExternalIdPair[]>> {
  return externalIdsFor(db, workspaceId, "skill_collection", ids);
}

export function collectionView(row: SkillCollectionRow, externalIds: ExternalIdPair[] = []) {
  return {
    id: row.id,
    workspace_id: row.workspaceId,
    folder_id: row.folderId,
    root_path: row.rootPath,
    name: row.name,
    provider: row.provider,
    is_deleted: row.isDeleted,
    created_by: row.createdBy,
    created_at: toIso(row.createdAt),
    updated_by: row.updatedBy,
    updated_at: toIso(row.updatedAt),
    external_ids: externalIds,
  };
}

export function versionView(row: SkillCollectionVersionRow) {
  return {
    id: row.id,
    skill_collection_id: row.collectionId,
    workspace_id: row.workspaceId,
    number: row.number,
    root_path_at_version: row.rootPathAtVersion,
    provider: row.provider,
    file_paths: row.manifest.map(([p]) => p),
    commit_message: row.commitMessage,
    release_label: row.releaseLabel,
    archived: row.archived,
    created_by: row.createdBy,
    user_email: row.userEmail,
    created_at: toIso(row.createdAt),
  };
}
