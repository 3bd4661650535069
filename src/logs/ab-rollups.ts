// The A/B scorecard's rollups (db/schema/ab-rollups.ts): a step of its own that the index consumer
// and the cron's sweeper run on each log database after indexing. It counts each log served through a
// release once, behind a watermark (log_index_state.ab_rolled_to, as the indexer's: ids grow in commit
// order on D1's single writer, so the A/B logs past it are exactly those not counted; no row is
// written with a log only to be deleted again). It reads the logs past the watermark in id order, a
// window at a time, and the batch that adds the A/B ones to their variant's rows moves the watermark,
// only while it is where it was read and every A/B log is still at the revision read (a tracking call
// that lands meanwhile makes the batch write nothing and the logs are read again), as the indexer
// does. A score tracked after its log was counted moves the metric rows in the tracking call's batch.
import { sql, type SQL } from "drizzle-orm";
import { runBatch, type Statement } from "../db/batch";
import type { Db } from "../db/client";
import { abUnits, abVariantDaily, abVariantMetrics, logIndexState, requestLogs } from "../db/schema";
import { col, columnList } from "../db/sql";
import { bucketOf } from "../analytics/latency-buckets";
import { sha256Hex } from "../lib/crypto";
import { chunkIndexRows } from "./indexing";
import { eachPeriod, type WorkspaceLogs } from "./periods";
import { signalNamesOf } from "./signal-names";

const DAY = 86_400_000;

/** A/B logs rolled up in one batch at most. */
const ROLLUP_BATCH_LOGS = 100;

/** Logs (of any kind) past the watermark read in one batch at most: the A/B ones among them are counted. */
const ROLLUP_WINDOW_LOGS = 1_000;

/**
 * A window without A/B logs moves the watermark only once it holds this many logs: a run that finds
 * a few new logs and none served through a release writes nothing (the next run reads them again).
 */
const MOVE_AFTER_LOGS = 200;

/** A/B logs one run takes at most (the rest wait for the next run). */
export const ROLLUP_MAX_LOGS = 2_000;

/** Batches one run writes at most (windows without A/B logs included). */
const ROLLUP_MAX_BATCHES = 40;

interface PendingLog {
  id: number;
  ws: number;
  revision: number;
  ab_test_id: number;
  ab_variant: string;
  status: string;
  price: number;
  start: number;
  latency: number;
  scores: string;
  metadata: string;
}

/** The assignment key of each release (its unit is metadata[key]); a release without one counts no units. */
export type AssignmentKeys = (releaseIds: number[]) => Promise<Map<number, string | null>>;

const st = logIndexState;
const ROLLED_TO = sql`(SELECT ${col(st.abRolledTo)} FROM ${st} WHERE ${st.id} = 1)`;

/**
 * The watermark, how far the next batch reaches (`to`: the last log of the window, or of the
 * ROLLUP_BATCH_LOGS-th A/B log in it) and the A/B logs up to there, oldest first.
 */
async function readPending(logs: Db, limit: number): Promise<{ at: number; to: number; window: number; rows: PendingLog[] }> {
  const r = requestLogs;
  const [state, window] = await runBatch(logs, [
    sql`SELECT ${col(st.abRolledTo)} AS at FROM ${st} WHERE ${st.id} = 1`,
    sql`
      SELECT w.id, r.${col(r.workspaceId)} AS ws, r.${col(r.revision)}, r.${col(r.abTestId)}, r.${col(r.abVariant)}, r.${col(r.status)}, r.${col(r.price)},
             r.${col(r.requestStartTime)} AS start, max(r.${col(r.requestEndTime)} - r.${col(r.requestStartTime)}, 0) AS latency, r.${col(r.scores)}, r.${col(r.metadata)}
      FROM (SELECT ${col(r.id)} AS id FROM ${r} WHERE ${r.id} > ${ROLLED_TO} ORDER BY ${r.id} LIMIT ${ROLLUP_WINDOW_LOGS}) AS w
      LEFT JOIN ${r} AS r ON r.${col(r.id)} = w.id AND r.${col(r.abTestId)} IS NOT NULL
      ORDER BY w.id`,
  ]);
  const at = (state.results[0] as { at: number } | undefined)?.at;
  if (at === undefined) throw new Error("log_index_state has no row: are the log database's migrations applied?");
  const all = window.results as unknown as (PendingLog & { ab_test_id: number | null })[];
  const rows: PendingLog[] = [];
  let to = at;
  let seen = 0;
  for (const w of all) {
    if (w.ab_test_id !== null) {
      if (rows.length === limit) break;
      rows.push(w);
    }
    to = w.id;
    seen++;
  }
  return { at, to, window: seen, rows };
}

const unitHash = async (unit: string) => (await sha256Hex(unit)).slice(0, 32);

async function rollupStatements(at: number, to: number, rows: PendingLog[], keys: Map<number, string | null>): Promise<Statement[]> {
  const read = JSON.stringify(rows.map((r) => [r.id, r.revision]));
  // The watermark is where it was read and every log read is at the revision read: else the batch
  // writes nothing (and is read again).
  const unchanged = sql`${ROLLED_TO} = ${at} AND (SELECT count(*) FROM json_each(${read}) AS g
    CROSS JOIN ${requestLogs} AS gr ON gr.${col(requestLogs.id)} = g.value ->> 0 AND gr.${col(requestLogs.revision)} = g.value ->> 1) = ${rows.length}`;
  const daily = new Map<string, [number, number, string, number, number, number, number, number, number]>();
  const metrics = new Map<string, [number, number, string, number, string, string, number, number, number]>();
  const units = new Map<string, [number, number, string, string]>();
  for (const r of rows) {
    const day = r.start - (r.start % DAY);
    const bucket = bucketOf(r.latency);
    const dk = JSON.stringify([r.ws, r.ab_test_id, r.ab_variant, day, bucket]);
    const d = daily.get(dk) ?? [r.ws, r.ab_test_id, r.ab_variant, day, bucket, 0, 0, 0, 0];
    d[5] += 1;
    d[6] += r.status === "ERROR" ? 1 : 0;
    d[7] += r.price;
    d[8] += r.latency;
    daily.set(dk, d);
    for (const [name, value] of Object.entries(JSON.parse(r.scores) as Record<string, number>)) {
      if (typeof value !== "number") continue;
      const mk = JSON.stringify([r.ws, r.ab_test_id, r.ab_variant, day, name]);
      const m = metrics.get(mk) ?? [r.ws, r.ab_test_id, r.ab_variant, day, "score", name, 0, 0, 0];
      m[6] += 1;
      m[7] += value;
      m[8] += value * value;
      metrics.set(mk, m);
    }
    const key = keys.get(r.ab_test_id);
    const raw = key ? (JSON.parse(r.metadata) as Record<string, unknown>)[key] : undefined;
    if (raw !== undefined && raw !== null && raw !== "") {
      const unit = await unitHash(typeof raw === "string" ? raw : JSON.stringify(raw));
      units.set(JSON.stringify([r.ws, r.ab_test_id, r.ab_variant, unit]), [r.ws, r.ab_test_id, r.ab_variant, unit]);
    }
  }
  const D = abVariantDaily;
  const statements: Statement[] = [];
  for (const json of chunkIndexRows([...daily.values()])) {
    statements.push(sql`
      INSERT INTO ${D} (${columnList(D, ["workspaceId", "abTestId", "variant", "day", "bucket", "requests", "errors", "cost", "latencyMs"])})
      SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, j.value ->> 6, j.value ->> 7, j.value ->> 8
      FROM json_each(${json}) AS j WHERE ${unchanged}
      ON CONFLICT DO UPDATE SET ${sql.join(
        [D.requests, D.errors, D.cost, D.latencyMs].map((c) => sql`${col(c)} = ${col(c)} + excluded.${col(c)}`),
        sql`, `,
      )}`);
  }
  for (const json of chunkIndexRows([...metrics.values()])) statements.push(addMetricRows(json, unchanged));
  for (const json of chunkIndexRows([...units.values()])) {
    statements.push(sql`
      INSERT INTO ${abUnits} (${columnList(abUnits, ["workspaceId", "abTestId", "variant", "unit"])})
      SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3 FROM json_each(${json}) AS j WHERE ${unchanged}
      ON CONFLICT DO NOTHING`);
  }
  // Last: its count says whether the batch wrote.
  statements.push(sql`UPDATE ${st} SET ${col(st.abRolledTo)} = ${to} WHERE ${st.id} = 1 AND ${unchanged}`);
  return statements;
}

/** Adds metric rows [ws, test, variant, day, kind, name, n, sum, sum_sq] (JSON) to ab_variant_metrics, only `when` holds. */
function addMetricRows(json: string, when: SQL): SQL {
  const M = abVariantMetrics;
  return sql`
    INSERT INTO ${M} (${columnList(M, ["workspaceId", "abTestId", "variant", "day", "kind", "name", "n", "sum", "sumSq"])})
    SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, j.value ->> 6, j.value ->> 7, j.value ->> 8
    FROM json_each(${json}) AS j WHERE ${when}
    ON CONFLICT DO UPDATE SET ${sql.join(
      [M.n, M.sum, M.sumSq].map((c) => sql`${col(c)} = ${col(c)} + excluded.${col(c)}`),
      sql`, `,
    )}`;
}

/** How often a batch of logs is read again when tracking calls keep changing it, before waiting for the next run. */
const ROLLUP_ATTEMPTS = 3;

/**
 * Rolls up this log database's A/B logs past the watermark (any workspace's), oldest first, at most
 * `max`; returns how many it counted. Harmless to repeat: a log is counted once.
 */
export async function rollupAbLogs(logs: Db, keysOf: AssignmentKeys, max = ROLLUP_MAX_LOGS): Promise<number> {
  let counted = 0;
  for (let batch = 0; counted < max && batch < ROLLUP_MAX_BATCHES; batch++) {
    let done = false;
    for (let attempt = 1; attempt <= ROLLUP_ATTEMPTS && !done; attempt++) {
      const { at, to, window, rows } = await readPending(logs, Math.min(ROLLUP_BATCH_LOGS, max - counted));
      if (rows.length === 0 && window < MOVE_AFTER_LOGS) return counted;
      const keys = rows.length === 0 ? new Map<number, string | null>() : await keysOf([...new Set(rows.map((r) => r.ab_test_id))]);
      const results = await runBatch(logs, await rollupStatements(at, to, rows, keys));
      if ((results[results.length - 1].meta.changes ?? 0) > 0) {
        counted += rows.length;
        done = true;
      }
    }
    if (!done) throw new Error(`A/B rollup: the logs read changed during each of ${ROLLUP_ATTEMPTS} attempts`);
  }
  return counted;
}

/**
 * For a tracking call setting score `name` of log `requestId` to `score`: moves the log's metric row
 * from its old value (if it had one) to the new, only when the log was served through a release and
 * is counted already (a log past the watermark is counted with the score it then has). Put it before the
 * score's update in the same batch: it reads the old value.
 */
export function scoreChangeStatement(workspaceId: number, requestId: number, name: string, score: number): SQL {
  const r = requestLogs;
  const old = sql`(SELECT value FROM json_each(r.${col(r.scores)}) WHERE key = ${name})`;
  return sql`
    INSERT INTO ${abVariantMetrics} (${columnList(abVariantMetrics, ["workspaceId", "abTestId", "variant", "day", "kind", "name", "n", "sum", "sumSq"])})
    SELECT r.${col(r.workspaceId)}, r.${col(r.abTestId)}, r.${col(r.abVariant)}, r.${col(r.requestStartTime)} - (r.${col(r.requestStartTime)} % ${DAY}), 'score', ${name},
           CASE WHEN ${old} IS NULL THEN 1 ELSE 0 END, ${score} - coalesce(${old}, 0), ${score * score} - coalesce(${old} * ${old}, 0)
    FROM ${r} AS r
    WHERE r.${col(r.id)} = ${requestId} AND r.${col(r.workspaceId)} = ${workspaceId} AND r.${col(r.abTestId)} IS NOT NULL
      AND r.${col(r.id)} <= ${ROLLED_TO}
    ON CONFLICT DO UPDATE SET ${sql.join(
      [abVariantMetrics.n, abVariantMetrics.sum, abVariantMetrics.sumSq].map((c) => sql`${col(c)} = ${col(c)} + excluded.${col(c)}`),
      sql`, `,
    )}`;
}

/** A release's rollups over the workspace's log databases, summed: what its scorecard and guardrails read. */
export interface AbTotals {
  /** Per variant and latency bucket. */
  daily: { variant: string; bucket: number; requests: number; errors: number; cost: number; latency_ms: number }[];
  metrics: { variant: string; kind: string; name: string; n: number; sum: number; sum_sq: number }[];
  /** Distinct units per variant (a unit logged in two log databases counts in each). */
  units: { variant: string; units: number }[];
}

/** The release's rollups, for days in [from, to] (epoch ms; either open), from every log database of the workspace. */
export async function abTotals(store: WorkspaceLogs, workspaceId: number, abTestId: number, range: { from?: number | null; to?: number | null } = {}): Promise<AbTotals> {
  const D = abVariantDaily;
  const M = abVariantMetrics;
  const from = range.from == null ? null : range.from - (range.from % DAY);
  const to = range.to ?? null;
  const days = (day: SQL) => sql`${from === null ? sql`1` : sql`${day} >= ${from}`} AND ${to === null ? sql`1` : sql`${day} <= ${to}`}`;
  const parts = await eachPeriod(store, async (db) => {
    const [daily, metrics, units] = await Promise.all([
      db.all<AbTotals["daily"][number]>(sql`
        SELECT ${D.variant} AS variant, ${D.bucket} AS bucket, sum(${D.requests}) AS requests, sum(${D.errors}) AS errors, sum(${D.cost}) AS cost, sum(${D.latencyMs}) AS latency_ms
        FROM ${D} WHERE ${D.workspaceId} = ${workspaceId} AND ${D.abTestId} = ${abTestId} AND ${days(sql`${D.day}`)} GROUP BY 1, 2`),
      db.all<AbTotals["metrics"][number]>(sql`
        SELECT ${M.variant} AS variant, ${M.kind} AS kind, ${M.name} AS name, sum(${M.n}) AS n, sum(${M.sum}) AS sum, sum(${M.sumSq}) AS sum_sq
        FROM ${M} WHERE ${M.workspaceId} = ${workspaceId} AND ${M.abTestId} = ${abTestId} AND ${days(sql`${M.day}`)} GROUP BY 1, 2, 3`),
      db.all<AbTotals["units"][number]>(sql`
        SELECT ${abUnits.variant} AS variant, count(*) AS units FROM ${abUnits} WHERE ${abUnits.workspaceId} = ${workspaceId} AND ${abUnits.abTestId} = ${abTestId} GROUP BY 1`),
    ]);
    return { daily, metrics, units };
  });
  return {
    daily: parts.flatMap((p) => p.daily),
    metrics: await namedMetrics(store, workspaceId, parts.flatMap((p) => p.metrics)),
    units: parts.flatMap((p) => p.units),
  };
}

/**
 * The metric rows as the scorecard and the guardrails read them: a signal's rows (named by its id,
 * abSignalMetricName) under its current name, those of a signal that no longer exists left out, and
 * rows of no kind read today (the signal rows an earlier version named by name and the upgrade could
 * not attribute: migrations-logs/0015) left out.
 */
async function namedMetrics(store: WorkspaceLogs, workspaceId: number, metrics: AbTotals["metrics"]): Promise<AbTotals["metrics"]> {
  const signalIds = metrics.filter((m) => m.kind === "signal").map((m) => Number(m.name));
  const names = signalIds.length > 0 ? await signalNamesOf(store.control, workspaceId, signalIds) : new Map<number, string>();
  return metrics.flatMap((m) => {
    if (m.kind === "score") return [m];
    const name = m.kind === "signal" ? names.get(Number(m.name)) : undefined;
    return name === undefined ? [] : [{ ...m, name }];
  });
}
