// Idempotency keys of the log writes (POST /log-request, POST /track-request): a log-side table, in the
// log database beside request_logs, so a key row is written in the same batch as the log it answers for
// (src/logs/idempotency.ts). Rows older than a day are swept by the cron.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
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
  // One key per workspace: the primary key is what makes two racing requests record one log.
  (t) => [primaryKey({ columns: [t.workspaceId, t.key] }), index("idempotency_keys_created").on(t.createdAt)],
);
