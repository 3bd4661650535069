// The filters and order PromptLayer's resource lists share (prompt templates, workflows, datasets,
// evaluations, skill collections, the tool registry, folder entities; tables take the filters without the
// order): name contains, creator, created/updated bounds and sort, over whichever table's columns a list
// reads (the audit log's too: it lives in this lowest domain so that every domain lists the same way).
// The query side is lib/query.ts's ResourceFilterShape; the external-ID lookup is registry/external-ids.ts's.
import { asc, desc, gte, lte, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { users } from "../../db/schema";
import { containsText } from "../../lib/query";

/** The filters and order alone (skill collections take these without paging). */
export interface ResourceFilters {
  name?: string;
  created_by_email?: string;
  created_after?: number;
  created_before?: number;
  updated_after?: number;
  updated_before?: number;
  sort_by?: "created_at" | "updated_at" | "name" | "id";
  sort_order?: "asc" | "desc";
}

export interface ResourceListQuery extends ResourceFilters {
  status: "active" | "deleted" | "all";
  page: number;
  per_page: number;
  sort_order: "asc" | "desc";
}

export interface ResourceColumns {
  id: SQLiteColumn;
  name: SQLiteColumn;
  userId: SQLiteColumn;
  createdAt: SQLiteColumn;
  updatedAt: SQLiteColumn;
}

/** The shared conditions (undefined where a filter is absent); `status` is each list's own. */
export function resourceConditions(ws: number, c: ResourceColumns, q: ResourceFilters): (SQL | undefined)[] {
  return [
    q.name !== undefined ? containsText(c.name, q.name) : undefined,
    // E-mail addresses are matched without regard to case, on every list.
    q.created_by_email !== undefined
      ? sql`${c.userId} IN (SELECT ${users.id} FROM ${users} WHERE ${users.workspaceId} = ${ws} AND lower(${users.email}) = lower(${q.created_by_email}))`
      : undefined,
    q.created_after !== undefined ? gte(c.createdAt, q.created_after) : undefined,
    q.created_before !== undefined ? lte(c.createdAt, q.created_before) : undefined,
    q.updated_after !== undefined ? gte(c.updatedAt, q.updated_after) : undefined,
    q.updated_before !== undefined ? lte(c.updatedAt, q.updated_before) : undefined,
  ];
}

/** ORDER BY the chosen column (created_at by default), ties broken by id in the same direction. */
export function resourceOrder(c: ResourceColumns, q: ResourceFilters): SQL[] {
  const col = { created_at: c.createdAt, updated_at: c.updatedAt, name: c.name, id: c.id }[q.sort_by ?? "created_at"];
  const dir = q.sort_order === "asc" ? asc : desc;
  return [dir(col), dir(c.id)];
}
