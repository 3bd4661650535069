// Release labels of versioned entities (prompt templates, tools): a label name is unique per entity
// and moves to the version it is given. One statement, for the batch that adds the version, creates
// or moves each named label to the entity's newest version.
import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { col, nowMs } from "../../db/sql";

/** The label table of one entity type, named by its drizzle columns. */
export interface LabelTable {
  labels: SQLiteTable;
  workspaceId: SQLiteColumn;
  owner: SQLiteColumn;
  version: SQLiteColumn;
  name: SQLiteColumn;
  updatedAt: SQLiteColumn;
  /** The versions table and its columns: the newest version is max(id) of the owner's. */
  versions: SQLiteTable;
  versionId: SQLiteColumn;
  versionOwner: SQLiteColumn;
  /** A column marking labels that never move here (protected prompt labels move through an approval). */
  protected?: SQLiteColumn;
}

/** Creates or moves each label to the owner's newest version (the one the same batch just added). */
export function labelStatements(t: LabelTable, ws: number, ownerIdSql: SQL, labels: string[] | null | undefined): SQL[] {
  const names = [...new Set(labels ?? [])];
  if (names.length === 0) return [];
  // Column names unqualified (col) where SQLite's INSERT and ON CONFLICT clauses need them bare.
  return [
    sql`
      INSERT INTO ${t.labels} (${col(t.workspaceId)}, ${col(t.owner)}, ${col(t.version)}, ${col(t.name)})
      SELECT ${ws}, o.id, (SELECT max(${col(t.versionId)}) FROM ${t.versions} WHERE ${col(t.versionOwner)} = o.id), j.value
      FROM (${ownerIdSql}) AS o, json_each(${JSON.stringify(names)}) AS j
      WHERE true
      ON CONFLICT (${col(t.owner)}, ${col(t.name)}) DO UPDATE SET ${col(t.version)} = excluded.${col(t.version)}, ${col(t.updatedAt)} = ${nowMs}
      ${t.protected ? sql`WHERE NOT ${col(t.protected)}` : sql``}`,
  ];
}
