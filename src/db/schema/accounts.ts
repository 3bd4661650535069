// Workspaces, their users and API keys.
import { sql } from "drizzle-orm";
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

/**
 * Only the SHA-256 of a key is kept; `prefix` (the first characters) lets people list and revoke.
 * `scopes` is what the key may do (src/lib/scopes.ts): keys made before scopes existed, and those the
 * keys CLI makes without --scopes, are `admin`.
 */
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
    /** A label people give the key (POST /api/public/v2/api-keys, keys CLI --name); null for older keys. */
    name: text("name"),
    scopes: text("scopes", { mode: "json" }).notNull().default(sql`'["admin"]'`).$type<string[]>(),
    /** The key that made this one through the API (null: the keys CLI). */
    createdByKeyId: integer("created_by_key_id"),
  },
  (t) => [index("api_keys_prefix").on(t.prefix), index("api_keys_workspace").on(t.workspaceId)],
);

/**
 * A workspace's redaction policy (src/redaction/): what is masked, hashed or dropped from logs before
 * they are stored. No row: redaction is off. Read with the API key (the auth lookup joins it), so a
 * workspace without a policy pays no lookup of its own.
 */
export const redactionPolicies = sqliteTable("redaction_policies", {
  workspaceId: integer("workspace_id")
    .primaryKey()
    .references(() => workspaces.id),
  /** The policy as PUT (normalized): detectors, custom patterns, fields. */
  policy: text("policy", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
  createdAt: integer("created_at").notNull().default(now),
  updatedAt: integer("updated_at").notNull().default(now),
  updatedByKeyId: integer("updated_by_key_id"),
});

/**
 * The audit log: one row per administrative action (keys made and revoked, labels moved, policies and
 * env vars changed …), written in the same batch as the change where the change is one batch. Rows are
 * only ever inserted: no route updates or deletes them, and triggers refuse both (migration 0037).
 */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull(),
    /** What happened, e.g. `api_key.created` (src/services/workspace/audit.ts lists them). */
    action: text("action").notNull(),
    /** What it happened to: a type and its id (`api_key`, `12`). */
    targetType: text("target_type").notNull(),
    targetId: text("target_id"),
    /** Names and settings, never secret values. */
    details: text("details", { mode: "json" }).notNull().default(sql`'{}'`).$type<Record<string, unknown>>(),
    /** Who: the key and its user; null for the keys CLI. */
    apiKeyId: integer("api_key_id"),
    userId: integer("user_id"),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [index("audit_events_workspace_created").on(t.workspaceId, t.createdAt), index("audit_events_workspace_action").on(t.workspaceId, t.action, t.createdAt)],
);

export type AuditEventRow = typeof auditEvents.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
