// Signals (docs/signals.md): yes/no questions an LLM answers about production logs. Their definitions,
// hooks, daily budgets and backfill jobs live here, in the control database; their results live beside
// the logs they judge, in the log databases (signal-results.ts).
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";
import { workspaces } from "./accounts";

/** Which model judges: null in the row means the workspace's configured provider and its default model. */
export interface SignalModel {
  provider: string;
  name: string;
  parameters: Record<string, unknown>;
}

/** Which parts of a log the judge reads, and how much of it at most. */
export interface SignalInclude {
  input: boolean;
  output: boolean;
  metadata: boolean;
  tools: boolean;
  max_chars: number;
}

export const signals = sqliteTable(
  "signals",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    name: text("name").notNull(),
    statement: text("statement").notNull(),
    color: text("color"),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(false),
    model: text("model", { mode: "json" }).$type<SignalModel | null>(),
    include: text("include", { mode: "json" }).notNull().$type<SignalInclude>(),
    delaySeconds: integer("delay_seconds").notNull().default(0),
    dailyRuns: integer("daily_runs"),
    dailyCostUsd: real("daily_cost_usd"),
    /** Moves on with every change to statement, model or include: a newer revision's result replaces an older one. */
    revision: integer("revision").notNull().default(1),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("signals_workspace_name").on(t.workspaceId, t.name), index("signals_enabled").on(t.workspaceId).where(sql`enabled = 1`)],
);

export const SIGNAL_HOOK_SCOPES = ["all", "release_label", "prompt_template"] as const;
export type SignalHookScope = (typeof SIGNAL_HOOK_SCOPES)[number];

/** What a signal judges: a scope, optional narrowing, a structured filter group and a sample rate. */
export const signalHooks = sqliteTable(
  "signal_hooks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    signalId: integer("signal_id").notNull(),
    workspaceId: integer("workspace_id").notNull(),
    scope: text("scope", { enum: SIGNAL_HOOK_SCOPES }).notNull(),
    promptTemplateId: integer("prompt_template_id"),
    promptVersionNumber: integer("prompt_version_number"),
    releaseLabel: text("release_label"),
    abVariant: text("ab_variant"),
    sampleRate: real("sample_rate").notNull(),
    /** A structured filter group as request search takes it (src/filters/), or null. */
    filters: text("filters", { mode: "json" }).$type<unknown>(),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [index("signal_hooks_signal").on(t.signalId)],
);

/**
 * A signal's budget per UTC day: judgements reserved and their cost (estimated when reserved, settled to
 * the provider's usage after the call), and what the caps turned away. Reserved by one conditional
 * upsert, so concurrent consumers stop exactly at the cap (src/services/signals/budget.ts).
 */
export const signalSpend = sqliteTable(
  "signal_spend",
  {
    signalId: integer("signal_id").notNull(),
    /** Start of the UTC day, epoch ms. */
    day: integer("day").notNull(),
    runs: integer("runs").notNull().default(0),
    cost: real("cost").notNull().default(0),
    skipped: integer("skipped").notNull().default(0),
    /** 1 when the last reservation on this row was granted, 0 when refused: what the reserving statement returns. */
    lastGranted: integer("last_granted").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.signalId, t.day] })],
);

export const SIGNAL_BACKFILL_STATUSES = ["queued", "running", "completed", "failed", "cancelled"] as const;
export type SignalBackfillStatus = (typeof SIGNAL_BACKFILL_STATUSES)[number];

/**
 * Where a backfill's paging stands: the log database (its place among the workspace's periods, oldest
 * first) and the last (request_start_time, id) read there (null: none yet).
 */
export interface BackfillCursor {
  period: number;
  after: { start: number; id: number } | null;
}

/** A backfill: a job on the jobs queue that judges past logs; resumed by the job sweeper after a crash. */
export const signalBackfills = sqliteTable(
  "signal_backfills",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull(),
    signalId: integer("signal_id").notNull(),
    status: text("status", { enum: SIGNAL_BACKFILL_STATUSES }).notNull().default("queued"),
    fromMs: integer("from_ms").notNull(),
    toMs: integer("to_ms").notNull(),
    filters: text("filters", { mode: "json" }).$type<unknown>(),
    sampleRate: real("sample_rate").notNull(),
    maxLogs: integer("max_logs").notNull(),
    /** The logs the filters matched so far, and those sampled and queued for judging (at most max_logs). */
    matched: integer("matched").notNull().default(0),
    enqueued: integer("enqueued").notNull().default(0),
    /** Judgements the budget turned away. */
    skipped: integer("skipped").notNull().default(0),
    cursor: text("cursor", { mode: "json" }).$type<BackfillCursor | null>(),
    /** Set once every matching log was read: what is left is the judging of what was queued. */
    pagedAt: integer("paged_at"),
    error: text("error"),
    redrives: integer("redrives").notNull().default(0),
    createdBy: integer("created_by"),
    createdAt: integer("created_at").notNull().default(now),
    /** The job's heartbeat (the sweeper re-queues a backfill whose heartbeat went stale). */
    updatedAt: integer("updated_at").notNull().default(now),
    finishedAt: integer("finished_at"),
  },
  (t) => [
    index("signal_backfills_signal").on(t.signalId, t.id),
    index("signal_backfills_open").on(t.updatedAt).where(sql`status IN ('queued', 'running')`),
  ],
);

export type SignalRow = typeof signals.$inferSelect;
export type SignalHookRow = typeof signalHooks.$inferSelect;
export type SignalBackfillRow = typeof signalBackfills.$inferSelect;
