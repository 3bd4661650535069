// Skill collections and their versions (file contents live in R2, addressed by SHA-256).
import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";
import { workspaces } from "./accounts";

export const SKILL_PROVIDERS = ["claude_code", "openai", "openclaw"] as const;

export type SkillProvider = (typeof SKILL_PROVIDERS)[number];

/** One file of a skill collection version: its path, the SHA-256 of its bytes (the R2 key) and size. */
export type SkillManifestEntry = [path: string, sha256: string, size: number];

/**
 * Skill collections: versioned file sets. The collection row holds what renames change; contents
 * live in versions. `latest_version` is the number of the newest version, the guard that keeps
 * concurrent version writes from both claiming the same number.
 */
export const skillCollections = sqliteTable(
  "skill_collections",
  {
    id: text("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    folderId: integer("folder_id"),
    name: text("name").notNull(),
    rootPath: text("root_path").notNull(),
    provider: text("provider", { enum: SKILL_PROVIDERS }),
    isDeleted: integer("is_deleted", { mode: "boolean" }).notNull().default(false),
    latestVersion: integer("latest_version").notNull().default(0),
    createdBy: integer("created_by"),
    updatedBy: integer("updated_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("skill_collections_workspace_name").on(t.workspaceId, t.name),
    uniqueIndex("skill_collections_workspace_root_path").on(t.workspaceId, t.rootPath),
  ],
);

/**
 * A saved version: its manifest (path → SHA-256 of the bytes in R2) as one JSON value, so a version
 * is one row read or written at once (1,000 files of ≤1 KiB paths stay far below D1's 2 MB value).
 * A release label names at most one version per collection (NULLs do not collide in the index).
 */
export const skillCollectionVersions = sqliteTable(
  "skill_collection_versions",
  {
    id: text("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    collectionId: text("collection_id")
      .notNull()
      .references(() => skillCollections.id),
    number: integer("number").notNull(),
    rootPathAtVersion: text("root_path_at_version").notNull(),
    provider: text("provider", { enum: SKILL_PROVIDERS }),
    manifest: text("manifest", { mode: "json" }).notNull().$type<SkillManifestEntry[]>(),
    commitMessage: text("commit_message"),
    releaseLabel: text("release_label"),
    archived: integer("archived", { mode: "boolean" }).notNull().default(false),
    createdBy: integer("created_by"),
    userEmail: text("user_email"),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("skill_collection_versions_number").on(t.collectionId, t.number),
    uniqueIndex("skill_collection_versions_label").on(t.collectionId, t.releaseLabel),
  ],
);

export type SkillCollectionRow = typeof skillCollections.$inferSelect;

export type SkillCollectionVersionRow = typeof skillCollectionVersions.$inferSelect;
