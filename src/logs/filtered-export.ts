// The export of the logs a filter group matches (POST /requests/export): the logs that exist when it is
// asked for, each once, read through the snapshot-ready reader (readers.ts), so a log written a moment
// before is in it however recently. Streamed a page at a time: a Worker has 128 MB for everything.
import type { FilterGroup } from "../filters";
import { readRequestLog } from "./archive";
import type { WorkspaceLogs } from "./periods";
import { logMark, markFilter, matchingLogPages } from "./readers";
import { verdictsByLog } from "./signal-results";
import { getRequestLogs, requestLogView } from "./write";

/** What an export selects: a filter group and a request_start_time range, each optional. */
export interface ExportSelection {
  filter_group?: FilterGroup | null;
  /** The first request_start_time included (epoch ms). */
  from?: number;
  /** The first request_start_time no longer included (epoch ms). */
  to?: number;
}

export interface ExportMatchingOptions {
  /** Logs read per page (200). */
  pageSize?: number;
  /** Called with each page's ids before their rows are read (tests run the archive job there). */
  beforeRows?: (ids: number[]) => Promise<void>;
}

/**
 * The selection and the logs that exist now, as one filter group: the logs written after this are not
 * in the export, so it ends however busy the workspace.
 */
export async function exportFilter(logs: WorkspaceLogs, ws: number, selection: ExportSelection): Promise<FilterGroup> {
  const filters: FilterGroup["filters"] = [markFilter(await logMark(logs, ws))];
  if (selection.filter_group && selection.filter_group.filters.length > 0) filters.push(selection.filter_group);
  if (selection.from !== undefined) filters.push({ field: "request_start_time", operator: "gte", value: selection.from });
  if (selection.to !== undefined) filters.push({ field: "request_start_time", operator: "lt", value: selection.to });
  return { logic: "AND", filters };
}

/**
 * The logs `filter` matches as NDJSON lines (each ending in a newline, each as GET /requests/{id}
 * answers it), in id order, period by period. The filter is compiled before this resolves (its 400
 * comes before any line); the reading starts with the first line pulled. A log the archive job moves
 * to R2 between a page's ids and its rows is read from its file, so every log a page selected is sent.
 */
export async function exportMatchingLogs(logs: WorkspaceLogs, blobs: R2Bucket, ws: number, filter: FilterGroup, options: ExportMatchingOptions = {}): Promise<AsyncGenerator<string>> {
  const pages = matchingLogPages<{ id: number }>(logs, ws, filter, options.pageSize ?? 200, "r.id");
  await pages.compile();
  return (async function* () {
    for await (const { db, rows } of pages.databasePages()) {
      const ids = rows.map((r) => r.id);
      await options.beforeRows?.(ids);
      const [read, verdicts] = await Promise.all([getRequestLogs(db, ws, ids), verdictsByLog(db, logs.control, ws, ids)]);
      const byId = new Map(read.map((r) => [r.id, r]));
      for (const id of ids) {
        const row = byId.get(id);
        if (row) yield `${JSON.stringify({ ...requestLogView(row), signals: verdicts.get(id) ?? [] })}\n`;
        else {
          // Gone from D1 since the page selected it: the archive job moved it (read by id, from its file).
          const moved = await readRequestLog(logs, blobs, ws, id);
          if (moved) yield `${JSON.stringify(moved)}\n`;
        }
      }
    }
  })();
}
