// Workspaces, their users and API keys.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";

export const workspaces = sqliteTable("workspaces", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  createdAt: integer("created_at").notNull().default(now),
  /** Days request logs stay in D1 before the archive job moves them to R2; null keeps them all there. */
  logRetentionDays: integer("log_retention_days"),
  /**
   * The log database (a D1 binding's name, src/logs/shards.ts) the workspace's new request logs,
   * groups and spans go to: set on first use, and moved on (a new period) only when that database is
   * full. "DB" is this control database itself (the workspaces that logged before log databases existed).
   */
  logShard: text("log_shard"),
  /**
   * Every log database the workspace has had, oldest first, the current one (log_shard) last: its
   * periods. Reads see them all; nothing is moved between them. NULL: only log_shard.
   */
  logPeriods: text("log_periods", { mode: "json" }).$type<string[]>(),
});

/**
 * The shard map's databases: every database that holds request logs (the log database bindings
 * LOG_SHARDS lists, and "DB", this database, for the workspaces that log here), whether it takes new
 * workspaces, and the id range it numbers logs and groups in. A full or closed shard keeps serving the
 * workspaces it holds.
 */
export const logShards = sqliteTable(
  "log_shards",
  {
    binding: text("binding").primaryKey(),
    open: integer("open", { mode: "boolean" }).notNull().default(true),
    /** The database's size when last measured (bytes), and when. */
    sizeBytes: integer("size_bytes").notNull().default(0),
    measuredAt: integer("measured_at").notNull().default(0),
    createdAt: integer("created_at").notNull().default(now),
    /**
     * Measured at LOG_SHARD_MAX_BYTES or more (or near the end of its id range): the workspaces whose
     * new logs go here start a new period on another database (src/logs/shards.ts).
     */
    full: integer("full", { mode: "boolean" }).notNull().default(false),
    /**
     * The database's id range (src/logs/id-ranges.ts): its request logs and groups are numbered from
     * id_range × 2^40 on. Given once, when the database is first seen, and never changed.
     */
    idRange: integer("id_range"),
  },
  (t) => [uniqueIndex("log_shards_id_range").on(t.idRange)],
);

export const users = sqliteTable(
  "users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    email: text("email").notNull(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [uniqueIndex("users_workspace_email").on(t.workspaceId, t.email)],
);

/** Only the SHA-256 of a key is kept; `prefix` (the first characters) lets people list and revoke. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull().references(() => workspaces.id),
    userId: integer("user_id").notNull().references(() => users.id),
    keyHash: text("key_hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    createdAt: integer("created_at").notNull().default(now),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("api_keys_prefix").on(t.prefix)],
);
