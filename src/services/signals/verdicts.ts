// A log's signal results as the request detail shows them (GET /api/public/v2/requests/{id}): each live
// signal's result with its name and color from the control database. Results of a signal deleted and
// not yet purged are left out.
import { eq } from "drizzle-orm";
import { signals } from "../../db/schema";
import type { Deps } from "../../env";
import { toIso } from "../../lib/time";
import { resultsOfLog } from "../../logs";

export async function verdictsOfLog(deps: Pick<Deps, "db" | "logs">, ws: number, requestId: number) {
  const named = await deps.db.select({ id: signals.id, name: signals.name, color: signals.color }).from(signals).where(eq(signals.workspaceId, ws));
  if (named.length === 0) return [];
  const results = await resultsOfLog(await deps.logs(ws), ws, requestId, named.map((s) => s.id));
  const byId = new Map(named.map((s) => [s.id, s]));
  return results
    .filter((r) => byId.has(r.signalId))
    .map((r) => ({
      signal_id: r.signalId,
      name: byId.get(r.signalId)!.name,
      color: byId.get(r.signalId)!.color ?? null,
      result: r.result === null ? null : r.result === 1,
      reasoning: r.reasoning ?? null,
      quote: r.quote ?? null,
      quote_verified: r.quoteVerified,
      status: r.status,
      error: r.error ?? null,
      revision: r.revision,
      judged_at: toIso(r.createdAt),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}
