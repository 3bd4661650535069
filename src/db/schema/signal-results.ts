// Signal results and what they need beside the logs they judge (docs/signals.md): these tables live in
// each log database (migrations-logs/), like the logs, so a result is written, read and archived where
// its log is, and the control database for workspaces whose logs are still there. Each is keyed by its
// lookup (the migration makes them WITHOUT ROWID): one row written per key, no second copy in an index.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";

export const SIGNAL_RESULT_STATUSES = ["ok", "error"] as const;
export type SignalResultStatus = (typeof SIGNAL_RESULT_STATUSES)[number];

/**
 * One result per (log, signal). A newer revision of the signal replaces an older result, and an ok
 * result replaces an error of the same revision; nothing else does (a redelivered message writes nothing).
 */
export const signalResults = sqliteTable(
  "signal_results",
  {
    requestId: integer("request_id").notNull(),
    signalId: integer("signal_id").notNull(),
    workspaceId: integer("workspace_id").notNull(),
    // No name: a result is its signal's by id only, and every reader names it by the signal's current
    // name in the control database (src/logs/signal-names.ts), so a deleted signal's results show nowhere
    // and a new signal of the same name inherits none.
    hookId: integer("hook_id"),
    backfillId: integer("backfill_id"),
    revision: integer("revision").notNull(),
    /** 1 true, 0 false, null for an error. */
    result: integer("result"),
    reasoning: text("reasoning"),
    quote: text("quote"),
    quoteVerified: integer("quote_verified", { mode: "boolean" }).notNull().default(false),
    status: text("status", { enum: SIGNAL_RESULT_STATUSES }).notNull(),
    error: text("error"),
    model: text("model"),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    cost: real("cost").notNull().default(0),
    /** The UTC day of the log's request_start_time (epoch ms): the daily totals' key. */
    day: integer("day").notNull(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [
    // A log's results: read in the same round trip as the log (GET by id, the export, the archive).
    primaryKey({ columns: [t.requestId, t.signalId] }),
    // Search's `signals` filter (the logs with a verdict of a signal, by id), and a deleted signal's purge.
    index("signal_results_signal").on(t.workspaceId, t.signalId, t.result, t.requestId),
    index("signal_results_backfill").on(t.backfillId).where(sql`backfill_id IS NOT NULL`),
  ],
);

/**
 * Judgements owed: written with the index batch that matched the log (or by a backfill), deleted in the
 * batch that stores the result. The queue message is only a nudge: a lost one is sent again by the cron,
 * and a claim (lease_until) keeps two deliveries of one message from both calling the judge.
 */
export const signalPending = sqliteTable(
  "signal_pending",
  {
    requestId: integer("request_id").notNull(),
    signalId: integer("signal_id").notNull(),
    workspaceId: integer("workspace_id").notNull(),
    hookId: integer("hook_id"),
    backfillId: integer("backfill_id"),
    /** Not judged before this time (the signal's delay_seconds after the log was matched). */
    notBefore: integer("not_before").notNull(),
    leaseUntil: integer("lease_until"),
    /** Deliveries that claimed it: the last allowed one stores an error result instead of retrying. */
    attempts: integer("attempts").notNull().default(0),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [primaryKey({ columns: [t.requestId, t.signalId] }), index("signal_pending_backfill").on(t.backfillId).where(sql`backfill_id IS NOT NULL`)],
);

/** Per signal and UTC day of the judged logs: counts and cost, moved in the batch that stores each result. */
export const signalDaily = sqliteTable(
  "signal_daily",
  {
    signalId: integer("signal_id").notNull(),
    day: integer("day").notNull(),
    workspaceId: integer("workspace_id").notNull(),
    trueCount: integer("true_count").notNull().default(0),
    falseCount: integer("false_count").notNull().default(0),
    errorCount: integer("error_count").notNull().default(0),
    cost: real("cost").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.signalId, t.day] })],
);

export type SignalResultRow = typeof signalResults.$inferSelect;
export type SignalPendingRow = typeof signalPending.$inferSelect;
