// Signals' part of indexing: where new logs become searchable (the index consumer and the cron's index
// sweep, src/queue/), each batch is matched against its workspaces' enabled signals. Sampling is drawn
// here (a hash of signal, hook and log); scope and filters are checked in SQL, inside the index batch's
// transaction, where the logs' search rows of that batch are already visible to the filters. The
// judgements owed commit with the index rows or not at all; once committed they are announced on the
// signals queue (a failed send is sent again by the cron). A redelivered index message finds its logs
// indexed and matches nothing again.
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonList } from "../../db/sql";
import { signalHooks, signals } from "../../db/schema";
import type { Deps } from "../../env";
import type { FilterGroup } from "../../filters";
import { chainForLog } from "../../lib/error-text";
import { sendJudgements } from "../../lib/jobs";
import { matchStatement, type HookCoverage, type IndexExtension } from "../../logs";
import { coverageOf } from "./coverage";
import { isSampled } from "./sampling";

interface LiveHook {
  signalId: number;
  workspaceId: number;
  delaySeconds: number;
  hook: typeof signalHooks.$inferSelect;
}

/** The enabled signals' hooks of these workspaces, each signal's in id order (one parameter for the workspaces, however many). */
export function liveHooksQuery(db: Db, workspaces: number[]) {
  return db
    .select({ signalId: signals.id, workspaceId: signals.workspaceId, delaySeconds: signals.delaySeconds, hook: signalHooks })
    .from(signals)
    .innerJoin(signalHooks, eq(signalHooks.signalId, signals.id))
    .where(and(inJsonList(signals.workspaceId, workspaces), eq(signals.enabled, true)))
    .orderBy(signals.id, signalHooks.id);
}

async function liveHooks(db: Db, workspaces: number[]): Promise<LiveHook[]> {
  return liveHooksQuery(db, workspaces);
}

/** The index extension that owes Signals' judgements of new logs (deps: the control database, the clock, the signals queue). */
export function signalMatcher(deps: Pick<Deps, "db" | "now" | "signalsQueue">): IndexExtension {
  return {
    async batch(logs, batch, indexedTo) {
      const workspaces = [...new Set(batch.map((l) => l.workspaceId))];
      const hooks = await liveHooks(deps.db, workspaces);
      if (hooks.length === 0) return null;
      const now = deps.now();
      const coverages = new Map<number, Promise<HookCoverage>>();
      const statements: D1PreparedStatement[] = [];
      for (const h of hooks) {
        const sampled = batch.filter((l) => l.workspaceId === h.workspaceId && isSampled(h.signalId, { hook: h.hook.id }, l.id, h.hook.sampleRate));
        if (sampled.length === 0) continue;
        // Cheap before SQL: a template hook only looks at its template's logs.
        const candidates = h.hook.scope === "prompt_template" ? sampled.filter((l) => l.promptId === h.hook.promptTemplateId) : sampled;
        if (candidates.length === 0) continue;
        let coverage = coverages.get(h.hook.id);
        if (!coverage) coverages.set(h.hook.id, (coverage = coverageOf(deps.db, h.workspaceId, hookInput(h.hook))));
        let statement: D1PreparedStatement;
        try {
          statement = matchStatement(logs, { workspaceId: h.workspaceId, signalId: h.signalId, hookId: h.hook.id, notBefore: now + h.delaySeconds * 1000, indexedTo, coverage: await coverage, logs: candidates }, now);
        } catch (err) {
          // A hook that cannot be compiled (its create is checked; one stored before that check was not)
          // is skipped: one hook must never fail the index batch of every workspace in this database.
          console.error(JSON.stringify({ level: "error", msg: "signal hook skipped: its match could not be compiled", signal_id: h.signalId, hook_id: h.hook.id, error: chainForLog(err) }));
          continue;
        }
        statements.push(statement);
      }
      if (statements.length === 0) return null;
      return {
        statements,
        async committed(results) {
          const owed = results.flatMap((r) => r.results as { request_id: number; signal_id: number; workspace_id: number; not_before: number }[]);
          try {
            await sendJudgements(
              deps.signalsQueue,
              owed.map((o) => ({ workspaceId: o.workspace_id, requestId: o.request_id, signalId: o.signal_id, delaySeconds: Math.max(0, (o.not_before - now) / 1000) })),
            );
          } catch (err) {
            console.error(JSON.stringify({ level: "warn", msg: "signals queue send failed; the cron sends these judgements again", judgements: owed.length, error: chainForLog(err) }));
          }
        },
      };
    },
  };
}

const hookInput = (h: typeof signalHooks.$inferSelect) => ({
  scope: h.scope,
  prompt_template_id: h.promptTemplateId,
  prompt_version_number: h.promptVersionNumber,
  release_label: h.releaseLabel,
  ab_variant: h.abVariant,
  filters: (h.filters ?? null) as FilterGroup | null,
});
