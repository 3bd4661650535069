// Moving and deleting what folders hold, and resolving a folder path to its id. Every change of one
// call is one db.batch(): all the named entities move (or go) together, or none does.
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch } from "../../db/batch";
import { col, inJsonList, nowMs } from "../../db/sql";
import { externalIds, folders, type ExternalIdEntityType } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import type { FolderEntityType } from "../../db/schema";
import type { FolderEntitySource, RemoveContext } from "./folder-entities";
import type { AuthContext } from "../../env";
import { isFolderNameTaken, loadFolderTree, subtreeOf } from "./folders";

export interface EntityRef {
  id: number | string;
  type: FolderEntityType;
}

/** SNIPPET is PromptLayer's name for completion-type prompts: the same rows as PROMPT. */
const sourceType = (t: FolderEntityType): FolderEntityType => (t === "SNIPPET" ? "PROMPT" : t);

function sourceFor(sources: readonly FolderEntitySource[], type: FolderEntityType): FolderEntitySource | undefined {
  return sources.find((s) => s.type === sourceType(type));
}

/** Groups the references by source, with ids checked to exist in the workspace (404 naming the first missing one). */
async function resolveRefs(db: Db, ws: number, sources: readonly FolderEntitySource[], refs: EntityRef[]) {
  const groups = new Map<FolderEntitySource, (number | string)[]>();
  for (const ref of refs) {
    const src = sourceFor(sources, ref.type);
    if (!src) throw new ApiError("not_found", `entities: ${ref.type} ${ref.id} not found`);
    const list = groups.get(src) ?? [];
    if (!list.some((id) => String(id) === String(ref.id))) list.push(ref.id);
    groups.set(src, list);
  }
  for (const [src, ids] of groups) {
    const c = src.columns;
    const rows = (await db
      .select({ id: c.id })
      .from(src.table)
      .where(and(eq(c.workspaceId, ws), src.where, inJsonList(sql`CAST(${c.id} AS TEXT)`, ids.map(String))))) as { id: number | string }[];
    const found = new Set(rows.map((r) => String(r.id)));
    const missing = ids.find((id) => !found.has(String(id)));
    if (missing !== undefined) throw new ApiError("not_found", `entities: ${src.type} ${missing} not found`);
  }
  return groups;
}

const idList = (src: FolderEntitySource, ids: (number | string)[]) => inJsonList(sql`CAST(${src.columns.id} AS TEXT)`, ids.map(String));

/** Moves the entities into `folderId` (null: the workspace root). Returns how many were named. */
export async function moveFolderEntities(db: Db, ws: number, sources: readonly FolderEntitySource[], refs: EntityRef[], folderId: number | null): Promise<number> {
  const tree = await loadFolderTree(db, ws);
  if (folderId !== null && !tree.has(folderId)) throw new ApiError("not_found", `folder_id: folder ${folderId} not found`);
  const groups = await resolveRefs(db, ws, sources, refs);
  const statements: SQL[] = [];
  for (const [src, ids] of groups) {
    if (src.type === "FOLDER" && folderId !== null) {
      // A folder cannot go inside itself or anything below it: the tree would lose its root.
      for (const id of ids) {
        if (subtreeOf(tree, Number(id)).includes(folderId)) {
          throw new ApiError("validation_error", `entities: folder ${id} cannot be moved into itself or one of its subfolders`);
        }
      }
    }
    const c = src.columns;
    statements.push(sql`UPDATE ${src.table} SET ${col(c.folderId)} = ${folderId}, ${col(c.updatedAt)} = ${nowMs}
      WHERE ${c.workspaceId} = ${ws} AND ${idList(src, ids)}`);
  }
  try {
    if (statements.length) await runBatch(db, statements);
  } catch (err) {
    if (isFolderNameTaken(err)) throw new ApiError("conflict", "entities: the destination folder already holds a folder of the same name");
    throw err;
  }
  return [...groups.values()].reduce((n, ids) => n + ids.length, 0);
}

/**
 * Deletes the entities. A folder that holds anything is a 400 unless `cascade`, which deletes
 * everything below it too. Returns how many entities were deleted, contents of folders included.
 */
export async function deleteFolderEntities(db: Db, auth: AuthContext, sources: readonly FolderEntitySource[], refs: EntityRef[], cascade: boolean): Promise<number> {
  const ws = auth.workspaceId;
  const groups = await resolveRefs(db, ws, sources, refs);
  const folderSource = sources.find((s) => s.type === "FOLDER");
  const named = folderSource ? (groups.get(folderSource) ?? []).map(Number) : [];
  const doomed = new Map<FolderEntitySource, Set<string>>();
  const add = (src: FolderEntitySource, ids: (number | string)[]) => {
    const set = doomed.get(src) ?? new Set<string>();
    for (const id of ids) set.add(String(id));
    doomed.set(src, set);
  };
  for (const [src, ids] of groups) add(src, ids);

  if (named.length && folderSource) {
    const tree = await loadFolderTree(db, ws);
    const below = [...new Set(named.flatMap((id) => subtreeOf(tree, id)))];
    for (const src of sources) {
      const c = src.columns;
      const rows = (await db
        .select({ id: c.id, folderId: c.folderId })
        .from(src.table)
        .where(and(eq(c.workspaceId, ws), src.where, inJsonList(c.folderId, below)))) as { id: number | string; folderId: number }[];
      const inside = rows.filter((r) => !(src === folderSource && named.includes(Number(r.id))));
      if (inside.length === 0) continue;
      if (!cascade) {
        const holder = named.find((id) => subtreeOf(tree, id).includes(inside[0].folderId)) ?? named[0];
        throw new ApiError("validation_error", `entities: folder ${holder} is not empty; send cascade=true to delete it with everything in it`);
      }
      add(src, inside.map((r) => r.id));
    }
  }

  // What refuses the delete (a template with a protected label, for a key without admin), judged now
  // and again by every statement of the batch: all of it goes, or none of it.
  const guards: SQL[] = [];
  for (const [src, ids] of doomed) {
    const guard = src.guardRemoval ? await src.guardRemoval(db, auth, [...ids]) : null;
    if (guard) guards.push(guard);
  }
  const when = guards.length ? sql.join(guards, sql` AND `) : sql`1`;
  const ctx: RemoveContext = { workspaceId: ws, by: auth, when };
  const statements: SQL[] = [];
  for (const [src, ids] of doomed) {
    const list = [...ids];
    if (src.externalIdType) statements.push(deleteMappings(ws, src.externalIdType, list, when));
    statements.push(...(src.remove ? src.remove(ctx, list) : [sql`DELETE FROM ${src.table} WHERE ${src.columns.workspaceId} = ${ws} AND ${idList(src, list)} AND ${when}`]));
  }
  if (statements.length === 0) return 0;
  if (guards.length) statements.push(sql`SELECT ${when} AS held`);
  const results = await runBatch(db, statements);
  if (guards.length && !(results.at(-1)!.results[0] as { held: number }).held) {
    // Changed meanwhile (a label protected since): nothing was deleted; the guards say why.
    for (const [src, ids] of doomed) if (src.guardRemoval) await src.guardRemoval(db, auth, [...ids]);
    throw new ApiError("conflict", "entities: what they hold changed while they were deleted; nothing was deleted, try again");
  }
  return [...doomed.values()].reduce((n, ids) => n + ids.size, 0);
}

function deleteMappings(ws: number, type: ExternalIdEntityType, ids: string[], when: SQL): SQL {
  return sql`DELETE FROM ${externalIds} WHERE ${externalIds.workspaceId} = ${ws} AND ${externalIds.entityType} = ${type} AND ${inJsonList(externalIds.entityId, ids)} AND ${when}`;
}

/**
 * A dot-separated folder path ("Team.Evals") to the folder's id. Folder names may themselves hold
 * dots, so each step tries every child whose name is a prefix of what is left; the first full match
 * in name order wins.
 */
export async function resolveFolderPath(db: Db, ws: number, path: string): Promise<number> {
  const rows = await db.select({ id: folders.id, name: folders.name, parentId: folders.parentId }).from(folders).where(eq(folders.workspaceId, ws));
  const children = new Map<number | null, { id: number; name: string }[]>();
  for (const r of rows) {
    const list = children.get(r.parentId ?? null) ?? [];
    list.push(r);
    children.set(r.parentId ?? null, list);
  }
  for (const list of children.values()) list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
  const walk = (parent: number | null, rest: string): number | null => {
    for (const child of children.get(parent) ?? []) {
      if (rest === child.name) return child.id;
      if (rest.startsWith(`${child.name}.`)) {
        const found = walk(child.id, rest.slice(child.name.length + 1));
        if (found !== null) return found;
      }
    }
    return null;
  };
  const id = walk(null, path);
  if (id === null) throw new ApiError("not_found", `path: no folder at ${JSON.stringify(path)}`);
  return id;
}
