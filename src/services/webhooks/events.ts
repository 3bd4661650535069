// The events service: every webhook event is a row of the outbox (webhook_events) written by the
// SAME db.batch() as the change it reports, so an event is never lost and never exists for a change
// that did not commit. Callers add eventStatement(...) to their batch; the emission scope notes the
// workspace so that, once the request or job is over, its undispatched events are fanned out to
// deliveries (delivery.ts). Whatever that misses, the scheduled sweeper picks up.
import { AsyncLocalStorage } from "node:async_hooks";
import { sql, type SQL } from "drizzle-orm";
import { webhookEvents } from "../../db/schema";
import { col, columnList, nowMs } from "../../db/sql";

/** Event types; PromptLayer's names where PromptLayer has the event. Details shapes: docs/webhooks.md. */
export const EVENT_TYPES = [
  "dataset_version_created_from_filter_params",
  "prompt_template_version_created",
  "prompt_template_label_created",
  "prompt_template_label_moved",
  "prompt_template_label_deleted",
  "prompt_template_label_change_requested",
  "prompt_template_label_change_approved",
  "prompt_template_label_change_denied",
  "ab_test_created",
  "ab_test_updated",
  "ab_test_deleted",
  "ab_test_promoted",
  "ab_test_rolled_back",
  "sheet_created_from_file",
  "sheet_created_from_file_failed",
  "sheet_created_from_request_logs",
  "sheet_created_from_request_logs_failed",
  "skill_collection_files_changed",
  "report_finished",
  "signal_triggered",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Workspaces that emitted events in the current request or job (null outside any scope). */
const scope = new AsyncLocalStorage<Set<number>>();

/** Runs fn in an emission scope: `emitted` collects the workspaces whose events want dispatching (even if fn throws). */
export function inEventScope<T>(emitted: Set<number>, fn: () => Promise<T>): Promise<T> {
  return scope.run(emitted, fn);
}

export interface EventSpec {
  workspaceId: number;
  type: EventType;
  /** Who caused the change (null: nobody in particular); SQL when only the database knows. */
  userId: number | null | SQL;
  /** A plain object, or a SQL expression building the JSON (json_object(...)) from the rows at hand. */
  details: Record<string, unknown> | SQL;
  /** A deterministic id makes the event once-only (a job's end); default: random, one per row. */
  id?: string;
  /** FROM clause: one event per row it yields (details may then name its columns). */
  from?: SQL;
  /** The change happened: only then is the event written (checked inside the same batch). */
  when?: SQL;
}

/** The outbox INSERT for one event (or one per row of `from`); put it in the change's own batch. */
const EVENT_COLUMNS = columnList(webhookEvents, ["id", "workspaceId", "userId", "eventType", "details", "createdAt"]);

export function eventStatement(e: EventSpec): SQL {
  scope.getStore()?.add(e.workspaceId);
  const id = e.id !== undefined ? sql`${e.id}` : sql`'evt_' || lower(hex(randomblob(16)))`;
  const details = isSql(e.details) ? sql`json(${e.details})` : sql`${JSON.stringify(e.details)}`;
  const userId = e.userId === null ? sql`NULL` : isSql(e.userId) ? e.userId : sql`${e.userId}`;
  // The WHERE is always there: SQLite needs it to read ON CONFLICT after INSERT … SELECT.
  return sql`INSERT INTO ${webhookEvents} (${EVENT_COLUMNS})
    SELECT ${id}, ${e.workspaceId}, ${userId}, ${e.type}, ${details}, ${nowMs}
    ${e.from ? sql`FROM ${e.from}` : sql``}
    WHERE ${e.when ?? sql`1`}
    ON CONFLICT (${col(webhookEvents.id)}) DO NOTHING`;
}


function isSql(v: unknown): v is SQL {
  return typeof v === "object" && v !== null && "queryChunks" in v;
}
