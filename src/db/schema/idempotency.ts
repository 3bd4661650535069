// Idempotency keys of the log writes (POST /log-request, POST /track-request): a log-side table, in the
// log database beside request_logs, so a key row is written in the same batch as the log it answers for
// (src/logs/idempotency.ts). Rows past their window are swept by the cron.
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    /** How long the row counts, in ms: a day for an Idempotency-Key, ten minutes for a body. */
    windowMs: integer("window_ms").notNull(),
    /** floor(created_at / window_ms): a row's period; the cron deletes whole periods, a range of the key. */
    bucket: integer("bucket").notNull(),
    workspaceId: integer("workspace_id").notNull(),
    /** The client's Idempotency-Key header, as sent. */
    key: text("key").notNull(),
    /** SHA-256 (hex) of the method, path and canonical JSON body the key was first used with. */
    fingerprint: text("fingerprint").notNull(),
    /** The log the first request made. */
    requestLogId: integer("request_log_id").notNull(),
    /** The first answer, replayed as it was: its status and JSON body (the log id included). */
    status: integer("status").notNull(),
    answer: text("answer").notNull(),
    createdAt: integer("created_at").notNull().default(now),
  },
  // Clustered by this key (the migration makes the table WITHOUT ROWID): a row is one entry written,
  // no index beside it. A key is looked up in the periods around now, and a write goes into the period
  // of the key's live row when it has one, so the primary key still makes the second of two racing
  // requests fail whole (src/logs/idempotency.ts); the cron's sweep is a range of old periods.
  (t) => [primaryKey({ columns: [t.windowMs, t.bucket, t.workspaceId, t.key] })],
);
