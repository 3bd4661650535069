// External ID mappings for every entity type: attach, list, detach, lookup, and the statements that
// attach mappings in the same batch that creates an entity. The unique index on
// (workspace, entity_type, source, external_id) decides races; this module only translates its verdict.
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { columnList, inJsonList, isUniqueViolation } from "../../db/sql";
import { externalIds, type ExternalIdEntityType } from "../../db/schema";
import { ApiError } from "../../lib/errors";

export interface ExternalIdPair {
  source: string;
  external_id: string;
}

type EntityId = string | number;

const key = (p: ExternalIdPair) => `${p.source}\u0000${p.external_id}`;

/** The mappings without repeats, in the order given. */
export function uniquePairs(pairs: readonly ExternalIdPair[] | null | undefined): ExternalIdPair[] {
  const seen = new Set<string>();
  const out: ExternalIdPair[] = [];
  for (const p of pairs ?? []) {
    if (seen.has(key(p))) continue;
    seen.add(key(p));
    out.push({ source: p.source, external_id: p.external_id });
  }
  return out;
}

function conflict(type: ExternalIdEntityType, p: ExternalIdPair): ApiError {
  return new ApiError("conflict", `external ID ${p.source}/${p.external_id} is already attached to another ${type.replace(/_/g, " ")}`);
}

/** Whether an error is the external-ID unique index refusing a mapping. */
export function isExternalIdConflict(err: unknown): boolean {
  return isUniqueViolation(err, externalIds);
}

/** Attaches one mapping. Same mapping on the same entity: nothing changes. On another entity: 409. */
export async function attachExternalId(
  db: Db,
  workspaceId: number,
  type: ExternalIdEntityType,
  entityId: EntityId,
  pair: ExternalIdPair,
  attempt = 0,
): Promise<ExternalIdPair> {
  const id = String(entityId);
  const inserted = await db
    .insert(externalIds)
    .values({ workspaceId, entityType: type, entityId: id, source: pair.source, externalId: pair.external_id })
    .onConflictDoNothing()
    .returning({ id: externalIds.id });
  if (inserted.length > 0) return pair;
  const [owner] = await db
    .select({ entityId: externalIds.entityId })
    .from(externalIds)
    .where(mappingIs(workspaceId, type, pair))
    .limit(1);
  // The owner may have been detached between the two statements: try once more rather than 409.
  if (!owner) {
    if (attempt >= 2) throw conflict(type, pair);
    return attachExternalId(db, workspaceId, type, entityId, pair, attempt + 1);
  }
  if (owner.entityId !== id) throw conflict(type, pair);
  return pair;
}

export async function listExternalIds(db: Db, workspaceId: number, type: ExternalIdEntityType, entityId: EntityId): Promise<ExternalIdPair[]> {
  return (await externalIdsFor(db, workspaceId, type, [entityId])).get(String(entityId)) ?? [];
}

/** Detaches a mapping from the entity; false when the entity does not carry it. */
export async function detachExternalId(db: Db, workspaceId: number, type: ExternalIdEntityType, entityId: EntityId, pair: ExternalIdPair): Promise<boolean> {
  const deleted = await db
    .delete(externalIds)
    .where(and(mappingIs(workspaceId, type, pair), eq(externalIds.entityId, String(entityId))))
    .returning({ id: externalIds.id });
  return deleted.length > 0;
}

/** The mappings of many entities at once (for list responses), keyed by String(entity id). */
export async function externalIdsFor(db: Db, workspaceId: number, type: ExternalIdEntityType, entityIds: readonly EntityId[]): Promise<Map<string, ExternalIdPair[]>> {
  const out = new Map<string, ExternalIdPair[]>();
  if (entityIds.length === 0) return out;
  const rows = await db
    .select({ entityId: externalIds.entityId, source: externalIds.source, externalId: externalIds.externalId })
    .from(externalIds)
    .where(and(eq(externalIds.workspaceId, workspaceId), eq(externalIds.entityType, type), inJsonList(externalIds.entityId, [...new Set(entityIds.map(String))])))
    .orderBy(externalIds.id);
  for (const r of rows) {
    const list = out.get(r.entityId) ?? [];
    list.push({ source: r.source, external_id: r.externalId });
    out.set(r.entityId, list);
  }
  return out;
}

/** The entity a mapping belongs to, or null. */
export async function findEntityByExternalId(db: Db, workspaceId: number, type: ExternalIdEntityType, pair: ExternalIdPair): Promise<string | null> {
  const [row] = await db.select({ entityId: externalIds.entityId }).from(externalIds).where(mappingIs(workspaceId, type, pair)).limit(1);
  return row?.entityId ?? null;
}

export interface ExternalIdLookupQuery {
  external_source?: string;
  external_id?: string;
}

/**
 * The shared external-ID lookup of list endpoints. `undefined`: no lookup asked, list as usual;
 * `null`: asked, and nothing of this type carries the mapping (answer an empty list);
 * a string: the one entity id to restrict the list to. One of the two parameters alone is a 400.
 */
export async function resolveExternalIdLookup(
  db: Db,
  workspaceId: number,
  type: ExternalIdEntityType,
  q: ExternalIdLookupQuery,
): Promise<string | null | undefined> {
  const pair = lookupPair(q);
  if (!pair) return undefined;
  return findEntityByExternalId(db, workspaceId, type, pair);
}

/** The {source, external_id} a list query asks for, or undefined; a 400 when only one is given. */
export function lookupPair(q: ExternalIdLookupQuery): ExternalIdPair | undefined {
  const hasSource = q.external_source !== undefined;
  const hasId = q.external_id !== undefined;
  if (hasSource !== hasId) {
    throw new ApiError("validation_error", hasSource ? "external_id: is required with external_source" : "external_source: is required with external_id");
  }
  return hasSource ? { source: q.external_source!, external_id: q.external_id! } : undefined;
}

/**
 * Before creating an entity with `external_ids`: refuses (409) mappings already on another entity
 * and drops those already on this one. `entityId` is null for an entity that does not exist yet.
 */
export async function checkNewMappings(
  db: Db,
  workspaceId: number,
  type: ExternalIdEntityType,
  entityId: EntityId | null,
  pairs: readonly ExternalIdPair[] | null | undefined,
): Promise<ExternalIdPair[]> {
  const wanted = uniquePairs(pairs);
  if (wanted.length === 0) return [];
  const rows = await db
    .select({ entityId: externalIds.entityId, source: externalIds.source, externalId: externalIds.externalId })
    .from(externalIds)
    .where(
      and(
        eq(externalIds.workspaceId, workspaceId),
        eq(externalIds.entityType, type),
        sql`(${externalIds.source}, ${externalIds.externalId}) IN (SELECT value ->> 'source', value ->> 'external_id' FROM json_each(${JSON.stringify(wanted)}))`,
      ),
    );
  const owners = new Map(rows.map((r) => [key({ source: r.source, external_id: r.externalId }), r.entityId]));
  const fresh: ExternalIdPair[] = [];
  for (const p of wanted) {
    const owner = owners.get(key(p));
    if (owner === undefined) fresh.push(p);
    else if (entityId === null || owner !== String(entityId)) throw conflict(type, p);
  }
  return fresh;
}

/**
 * A statement for runBatch() that attaches mappings to the entity `entityIdSql` selects (e.g. the
 * row the batch just inserted, found by its unique name). A mapping taken meanwhile makes the unique
 * index fail the whole batch: catch it with isExternalIdConflict and answer 409.
 */
export function insertMappingsStatement(workspaceId: number, type: ExternalIdEntityType, entityIdSql: SQL, pairs: readonly ExternalIdPair[], when: SQL = sql`1`): SQL {
  return sql`
    INSERT INTO ${externalIds} (${columnList(externalIds, ["workspaceId", "entityType", "entityId", "source", "externalId"])})
    SELECT ${workspaceId}, ${type}, CAST((${entityIdSql}) AS TEXT), value ->> 'source', value ->> 'external_id'
    FROM json_each(${JSON.stringify(pairs)}) WHERE ${when}`;
}

/** The external IDs a new or changed entity takes, checked, with what its write batch needs. */
export interface NewMappings {
  readonly pairs: ExternalIdPair[];
  /** The statements (none or one) attaching them to the entity `entityIdSql` selects, for the entity's batch (only `when` holds). */
  attach(entityIdSql: SQL, when?: SQL): SQL[];
  /** After the batch failed: the 409 when a mapping was taken meanwhile (the unique index refused it); else returns. */
  throwIfTaken(err: unknown): void;
}

/**
 * The one external-ID routine every entity type uses on create (or on a new version): check the
 * mappings (409 for one already on another entity), attach them in the entity's own batch, and turn
 * the index's refusal of a mapping taken meanwhile into the same 409.
 */
export async function newMappings(
  db: Db,
  workspaceId: number,
  type: ExternalIdEntityType,
  entityId: EntityId | null,
  pairs: readonly ExternalIdPair[] | null | undefined,
): Promise<NewMappings> {
  const fresh = await checkNewMappings(db, workspaceId, type, entityId, pairs);
  return {
    pairs: fresh,
    attach: (entityIdSql, when) => (fresh.length ? [insertMappingsStatement(workspaceId, type, entityIdSql, fresh, when)] : []),
    throwIfTaken: (err) => {
      if (isExternalIdConflict(err)) rethrowExternalIdConflict(err, type);
    },
  };
}

/** Throws the 409 for a batch the external-ID index refused; rethrows anything else. */
export function rethrowExternalIdConflict(err: unknown, type: ExternalIdEntityType): never {
  if (isExternalIdConflict(err)) {
    throw new ApiError("conflict", `an external ID in external_ids is already attached to another ${type.replace(/_/g, " ")}`);
  }
  throw err;
}

function mappingIs(workspaceId: number, type: ExternalIdEntityType, pair: ExternalIdPair) {
  return and(
    eq(externalIds.workspaceId, workspaceId),
    eq(externalIds.entityType, type),
    eq(externalIds.source, pair.source),
    eq(externalIds.externalId, pair.external_id),
  );
}
