// Folders: create, rename, existence checks and ancestor paths. A name is unique among siblings
// (the folders_sibling_name index decides, so concurrent creates cannot both win).
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runBatch } from "../../db/batch";
import { folders, type FolderRow } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { type ExternalIdPair, externalIdsFor, newMappings } from "./external-ids";
import { isUniqueViolation } from "../../db/sql";

export interface FolderNode {
  id: number;
  name: string;
  parentId: number | null;
}

export interface FolderView {
  id: number;
  name: string;
  created_at: string;
  updated_at: string;
  path: { id: number; name: string }[];
  workspace_id: number;
  parent_id: number | null;
  external_ids: ExternalIdPair[];
}

export async function folderExists(db: Db, workspaceId: number, id: number): Promise<boolean> {
  const [row] = await db.select({ id: folders.id }).from(folders).where(and(eq(folders.workspaceId, workspaceId), eq(folders.id, id))).limit(1);
  return Boolean(row);
}

/** A 404 unless `folderId` (when given) is a folder of this workspace. */
export async function requireFolder(db: Db, workspaceId: number, folderId: number | null | undefined, field = "folder_id"): Promise<void> {
  if (folderId == null) return;
  if (!(await folderExists(db, workspaceId, folderId))) throw new ApiError("not_found", `${field}: folder ${folderId} not found`);
}

/** Every folder of the workspace (id, name, parent): small, and it answers paths and subtrees in memory. */
export async function loadFolderTree(db: Db, workspaceId: number): Promise<Map<number, FolderNode>> {
  const rows = await db.select({ id: folders.id, name: folders.name, parentId: folders.parentId }).from(folders).where(eq(folders.workspaceId, workspaceId));
  return new Map(rows.map((r) => [r.id, r]));
}

/** The ancestors of a folder, root first (the folder itself excluded). */
export function ancestorsOf(tree: Map<number, FolderNode>, id: number): FolderNode[] {
  const out: FolderNode[] = [];
  const seen = new Set<number>([id]);
  let cur = tree.get(id)?.parentId ?? null;
  while (cur != null && !seen.has(cur)) {
    const node = tree.get(cur);
    if (!node) break;
    out.unshift(node);
    seen.add(cur);
    cur = node.parentId;
  }
  return out;
}

/** The folder and all folders below it. */
export function subtreeOf(tree: Map<number, FolderNode>, id: number): number[] {
  const children = new Map<number, number[]>();
  for (const n of tree.values()) {
    if (n.parentId == null) continue;
    const list = children.get(n.parentId) ?? [];
    list.push(n.id);
    children.set(n.parentId, list);
  }
  const out: number[] = [];
  const stack = [id];
  const seen = new Set<number>();
  while (stack.length) {
    const cur = stack.pop()!;
    if (seen.has(cur)) continue;
    seen.add(cur);
    out.push(cur);
    stack.push(...(children.get(cur) ?? []));
  }
  return out;
}

/** A write failed because the parent folder already holds a folder of that name (create, rename, move). */
export function isFolderNameTaken(err: unknown): boolean {
  return isUniqueViolation(err, folders);
}

const taken = (name: string) => new ApiError("conflict", `name: a folder named "${name}" already exists in this parent folder`);

export async function createFolder(
  db: Db,
  auth: AuthContext,
  input: { name: string; parent_id?: number | null; external_ids?: ExternalIdPair[] | null },
): Promise<FolderView> {
  const ws = auth.workspaceId;
  const parentId = input.parent_id ?? null;
  await requireFolder(db, ws, parentId, "parent_id");
  const mappings = await newMappings(db, ws, "folder", null, input.external_ids);
  const self = sql`SELECT ${folders.id} FROM ${folders} WHERE ${folders.workspaceId} = ${ws} AND ${folders.parentKey} = ${parentId ?? 0} AND ${folders.name} = ${input.name}`;
  try {
    await runBatch(db, [
      db.insert(folders).values({ workspaceId: ws, parentId, name: input.name, createdBy: auth.userId }),
      ...mappings.attach(self),
    ]);
  } catch (err) {
    if (isFolderNameTaken(err)) throw taken(input.name);
    mappings.throwIfTaken(err);
    throw err;
  }
  const [row] = await db.select().from(folders).where(sql`${folders.id} = (${self})`);
  return folderView(db, ws, row);
}

export async function renameFolder(db: Db, workspaceId: number, id: number, name: string): Promise<FolderView> {
  let rows: FolderRow[];
  try {
    rows = await db
      .update(folders)
      .set({ name, updatedAt: Date.now() })
      .where(and(eq(folders.workspaceId, workspaceId), eq(folders.id, id)))
      .returning();
  } catch (err) {
    if (isFolderNameTaken(err)) throw taken(name);
    throw err;
  }
  if (!rows[0]) throw ApiError.notFound("folder");
  return folderView(db, workspaceId, rows[0]);
}

export async function folderView(db: Db, workspaceId: number, row: FolderRow, tree?: Map<number, FolderNode>): Promise<FolderView> {
  const t = tree ?? (await loadFolderTree(db, workspaceId));
  const ext = await externalIdsFor(db, workspaceId, "folder", [row.id]);
  return {
    id: row.id,
    name: row.name,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
    path: ancestorsOf(t, row.id).map((n) => ({ id: n.id, name: n.name })),
    workspace_id: row.workspaceId,
    parent_id: row.parentId ?? null,
    external_ids: ext.get(String(row.id)) ?? [],
  };
}
