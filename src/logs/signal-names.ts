// The names of the workspace's signals, read from the control database where signals are defined. A
// result beside a log is its signal's by id only: whatever finds verdicts by a signal's name (search's
// `signals` filter) resolves the name to its id here first, and whatever shows verdicts (a log's
// detail, the export, the archive's lines, the A/B scorecard) names them by the signal's current name
// from here, leaving out the verdicts of a signal that no longer exists. So a deleted signal's results
// show nowhere though its purge job has not run yet, a new signal given the same name inherits none of
// them, and a rename shows at once.
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { signals } from "../db/schema";
import { inJsonList } from "../db/sql";
import { isGroup, type FilterGroup } from "../filters";

/** Name → id of the workspace's signals of these names (a name of no signal is not in the map). */
export async function signalIdsOf(control: Db, ws: number, names: Iterable<string>): Promise<Map<string, number>> {
  const wanted = [...new Set(names)];
  const out = new Map<string, number>();
  if (wanted.length === 0) return out;
  const rows = await control
    .select({ id: signals.id, name: signals.name })
    .from(signals)
    .where(and(eq(signals.workspaceId, ws), inJsonList(signals.name, wanted)));
  for (const r of rows) out.set(r.name, r.id);
  return out;
}

/** Id → current name of the workspace's signals of these ids, or of all its signals (`ids` omitted); an id of no signal is not in the map. */
export async function signalNamesOf(control: Db, ws: number, ids?: Iterable<number>): Promise<Map<number, string>> {
  const wanted = ids === undefined ? null : [...new Set(ids)];
  const out = new Map<number, string>();
  if (wanted?.length === 0) return out;
  const rows = await control
    .select({ id: signals.id, name: signals.name })
    .from(signals)
    .where(and(eq(signals.workspaceId, ws), wanted ? inJsonList(signals.id, wanted) : undefined));
  for (const r of rows) out.set(r.id, r.name);
  return out;
}

/** The signal names a filter group's `signals` filters name (nested_key), once each. */
export function signalNamesIn(group: FilterGroup | null | undefined): Set<string> {
  const out = new Set<string>();
  const walk = (g: FilterGroup) => {
    for (const f of g.filters) {
      if (isGroup(f)) walk(f);
      else if (f.field === "signals" && f.nested_key !== undefined) out.add(f.nested_key);
    }
  };
  if (group) walk(group);
  return out;
}

/** What the filter compiler needs of a group's `signals` filters (CompileContext.signals): the ids of the signals it names. */
export function filterSignalIds(control: Db, ws: number, group: FilterGroup | null | undefined): Promise<Map<string, number>> {
  return signalIdsOf(control, ws, signalNamesIn(group));
}
