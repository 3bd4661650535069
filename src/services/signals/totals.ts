// A signal's running totals, as its list and detail show them: judgements made (true, false, errors)
// and their cost from the daily totals beside the results (every log database of the workspace), and
// what the budget skipped from the control database's spend rows.
import type { Deps } from "../../env";
import { signalSeries, signalTotals } from "../../logs";
import { skippedTotals } from "./budget";
import type { SignalView } from "./definitions";

export interface Totals {
  processed: number;
  true: number;
  false: number;
  errors: number;
  skipped: number;
  /** true / (true + false); null before any verdict. */
  true_rate: number | null;
  cost_usd: number;
}

const rate = (t: number, f: number) => (t + f > 0 ? Math.round((t / (t + f)) * 1e4) / 1e4 : null);

export async function withTotals(deps: Deps, ws: number, views: SignalView[]): Promise<(SignalView & { totals: Totals })[]> {
  const ids = views.map((v) => v.id);
  const [judged, skipped] = await Promise.all([signalTotals(await deps.logs(ws), ws, ids), skippedTotals(deps.db, ids)]);
  return views.map((v) => {
    const t = judged.get(v.id) ?? { true: 0, false: 0, errors: 0, cost: 0 };
    return {
      ...v,
      totals: {
        processed: t.true + t.false + t.errors,
        true: t.true,
        false: t.false,
        errors: t.errors,
        skipped: skipped.get(v.id) ?? 0,
        true_rate: rate(t.true, t.false),
        cost_usd: Math.round(t.cost * 1e9) / 1e9,
      },
    };
  });
}

/** A signal's true-rate per UTC day of the judged logs in [from, to): the Signals page's chart. */
export async function trueRateSeries(deps: Deps, ws: number, signalId: number, from: number, to: number) {
  const days = await signalSeries(await deps.logs(ws), ws, signalId, from, to);
  return days.map((d) => ({ day: new Date(d.day).toISOString().slice(0, 10), true: d.true, false: d.false, errors: d.errors, true_rate: rate(d.true, d.false), cost_usd: Math.round(d.cost * 1e9) / 1e9 }));
}
