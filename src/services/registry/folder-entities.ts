// GET /api/public/v2/folders/entities: what a folder holds, across every registered entity type.
// A resource joins by adding one FolderEntitySource to FOLDER_ENTITY_SOURCES (folder-entity-sources.ts).
import { and, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { inJsonList } from "../../db/sql";
import type { ExternalIdEntityType, FolderEntityType } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import { containsText } from "../../lib/query";
import { toIso } from "../../lib/time";
import { externalIdsFor, findEntityByExternalId, type ExternalIdPair } from "./external-ids";
import { ancestorsOf, loadFolderTree, subtreeOf, type FolderNode } from "./folders";
import { resourceConditions, type AuditSpec, type ResourceFilters } from "../workspace";
import type { AuthContext } from "../../env";


/** How one entity type is found in D1: its table and the columns the listing needs. */
export interface FolderEntitySource {
  type: FolderEntityType;
  table: SQLiteTable;
  columns: {
    id: SQLiteColumn;
    name: SQLiteColumn;
    workspaceId: SQLiteColumn;
    /** The containing folder (for folders: parent_id); null means root level. */
    folderId: SQLiteColumn;
    /** The user who created it (created_by_email). */
    createdBy: SQLiteColumn;
    /** Epoch milliseconds. */
    createdAt: SQLiteColumn;
    updatedAt: SQLiteColumn;
  };
  /** Extra condition, e.g. "not deleted". */
  where?: SQL;
  /** Entity type of its external IDs: enables the lookup and fills `external_ids`. */
  externalIdType?: ExternalIdEntityType;
  /** Type-specific `metadata` for include_metadata=true, keyed by String(id). */
  metadata?: (db: Db, workspaceId: number, ids: string[]) => Promise<Map<string, Record<string, unknown>>>;
  /**
   * Statements that delete (or archive) these entities and what hangs off them, in an order the
   * foreign keys accept, with the audit rows and events of what they take along; every one only
   * `ctx.when` holds. Without it, a plain DELETE of the rows. External IDs go separately.
   */
  remove?: (ctx: RemoveContext, ids: string[]) => SQL[];
  /**
   * Before a delete: throws the 4xx refusing it (judged now), or returns the condition the delete's
   * batch holds it to (judged again there, so a change made meanwhile refuses it as well).
   */
  guardRemoval?: (db: Db, auth: AuthContext, ids: string[]) => Promise<SQL | null>;
}

/** Who deletes, and the condition every statement of the delete's batch holds. */
export interface RemoveContext {
  workspaceId: number;
  by: AuditSpec["by"];
  when: SQL;
}

export interface FolderEntityQuery extends Omit<ResourceFilters, "name" | "sort_by" | "sort_order"> {
  folder_id?: number;
  filter_type?: FolderEntityType[];
  search_query?: string;
  flatten?: boolean;
  include_metadata?: boolean;
  external_source?: string;
  external_id?: string;
  sort_by?: "created_at" | "updated_at" | "name" | "id";
  sort_order?: "asc" | "desc";
}

export interface FolderEntity {
  id: number | string;
  name: string;
  type: FolderEntityType;
  created_at: string | null;
  updated_at: string | null;
  folder_id: number | null;
  path: string[];
  external_ids: ExternalIdPair[];
  metadata?: Record<string, unknown> | null;
}

const asIso = (v: unknown) => (typeof v === "number" ? toIso(v) : typeof v === "string" ? v : null);

export async function listFolderEntities(db: Db, workspaceId: number, sources: readonly FolderEntitySource[], q: FolderEntityQuery): Promise<FolderEntity[]> {
  const tree = await loadFolderTree(db, workspaceId);
  if (q.folder_id !== undefined && !tree.has(q.folder_id)) throw ApiError.notFound("folder");
  const lookup = externalLookup(q);
  const wanted = q.filter_type?.length ? new Set(q.filter_type) : null;
  const active = sources.filter((s) => !wanted || wanted.has(s.type));
  // A lookup searches the whole workspace (or the folder's subtree): callers rarely know where the entity lives.
  const deep = q.flatten || lookup !== undefined;
  const scope = q.folder_id === undefined ? (deep ? null : "root") : deep ? subtreeOf(tree, q.folder_id) : [q.folder_id];

  const perSource = await Promise.all(
    active.map(async (src) => {
      const c = src.columns;
      const conds: (SQL | undefined)[] = [eq(c.workspaceId, workspaceId), src.where];
      if (scope === "root") conds.push(isNull(c.folderId));
      else if (scope) conds.push(inJsonList(c.folderId, scope));
      if (q.search_query) conds.push(containsText(c.name, q.search_query));
      conds.push(...resourceConditions(workspaceId, { id: c.id, name: c.name, userId: c.createdBy, createdAt: c.createdAt, updatedAt: c.updatedAt }, q));
      if (lookup) {
        if (!src.externalIdType) return [];
        const id = await findEntityByExternalId(db, workspaceId, src.externalIdType, lookup);
        if (id === null) return [];
        conds.push(sql`CAST(${c.id} AS TEXT) = ${id}`);
      }
      const rows = (await db
        .select({ id: c.id, name: c.name, folderId: c.folderId, createdAt: c.createdAt, updatedAt: c.updatedAt })
        .from(src.table)
        .where(and(...conds))) as { id: number | string; name: string; folderId: number | null; createdAt: unknown; updatedAt: unknown }[];
      const ids = rows.map((r) => String(r.id));
      const ext = src.externalIdType ? await externalIdsFor(db, workspaceId, src.externalIdType, ids) : new Map<string, ExternalIdPair[]>();
      const meta = q.include_metadata && src.metadata && ids.length ? await src.metadata(db, workspaceId, ids) : undefined;
      return rows.map((r) => {
        const e: FolderEntity = {
          id: r.id,
          name: r.name,
          type: src.type,
          created_at: asIso(r.createdAt),
          updated_at: asIso(r.updatedAt),
          folder_id: r.folderId ?? null,
          path: pathOf(tree, r.folderId ?? null),
          external_ids: ext.get(String(r.id)) ?? [],
        };
        if (q.include_metadata) e.metadata = meta?.get(String(r.id)) ?? null;
        return e;
      });
    }),
  );
  return sortEntities(perSource.flat(), q, active);
}

function externalLookup(q: FolderEntityQuery): ExternalIdPair | undefined {
  if ((q.external_source === undefined) !== (q.external_id === undefined)) {
    throw new ApiError("validation_error", q.external_source === undefined ? "external_source: is required with external_id" : "external_id: is required with external_source");
  }
  return q.external_source === undefined ? undefined : { source: q.external_source, external_id: q.external_id! };
}

/** Folder names from the root down to and including the containing folder. */
function pathOf(tree: Map<number, FolderNode>, folderId: number | null): string[] {
  if (folderId == null) return [];
  const node = tree.get(folderId);
  return node ? [...ancestorsOf(tree, folderId).map((n) => n.name), node.name] : [];
}

function sortEntities(list: FolderEntity[], q: FolderEntityQuery, sources: readonly FolderEntitySource[]): FolderEntity[] {
  const dir = q.sort_order === "asc" ? 1 : -1;
  const typeRank = new Map(sources.map((s, i) => [s.type, i]));
  const cmp = (a: unknown, b: unknown) => (a === b ? 0 : a == null ? -1 : b == null ? 1 : (a as never) < (b as never) ? -1 : 1);
  return list.sort((a, b) => {
    if (!q.sort_by) {
      // Default: as a file browser shows them: by type (folders first), then by name.
      return typeRank.get(a.type)! - typeRank.get(b.type)! || a.name.localeCompare(b.name) || cmp(a.id, b.id);
    }
    const field = q.sort_by;
    return dir * cmp(a[field], b[field]) || dir * cmp(a.id, b.id);
  });
}
