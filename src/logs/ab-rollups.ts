// The A/B scorecard's rollups (db/schema/ab-rollups.ts): a step of its own that the index consumer
// and the cron's sweeper run on each log database after indexing. It counts each log served through a
// release once: request_logs' insert trigger marks such a log pending, and the batch that adds it to
// its variant's rows deletes the mark, only while the log is still at the revision read (a tracking
// call that lands meanwhile makes the batch write nothing and the log is read again), as the indexer
// does. A score tracked after its log was counted moves the metric rows in the tracking call's batch.
import { sql, type SQL } from "drizzle-orm";
import { runBatch, type Statement } from "../db/batch";
import type { Db } from "../db/client";
import { abRollupPending, abUnits, abVariantDaily, abVariantMetrics, requestLogs } from "../db/schema";
import { col, columnList } from "../db/sql";
import { bucketOf } from "../analytics/latency-buckets";
import { sha256Hex } from "../lib/crypto";
import { chunkIndexRows } from "./indexing";
import { eachPeriod, type WorkspaceLogs } from "./periods";

const DAY = 86_400_000;

/** Pending logs rolled up in one batch at most. */
const ROLLUP_BATCH_LOGS = 100;

/** Pending logs one run takes at most (the rest wait for the next run). */
export const ROLLUP_MAX_LOGS = 2_000;

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

async function readPending(logs: Db, limit: number): Promise<{ pending: number[]; rows: PendingLog[] }> {
  const pending = (await logs.select({ id: abRollupPending.requestId }).from(abRollupPending).orderBy(abRollupPending.requestId).limit(limit)).map((r) => r.id);
  if (pending.length === 0) return { pending, rows: [] };
  const r = requestLogs;
  const rows = await logs.all<PendingLog>(sql`
    SELECT r.${col(r.id)}, r.${col(r.workspaceId)} AS ws, r.${col(r.revision)}, r.${col(r.abTestId)}, r.${col(r.abVariant)}, r.${col(r.status)}, r.${col(r.price)},
           r.${col(r.requestStartTime)} AS start, max(r.${col(r.requestEndTime)} - r.${col(r.requestStartTime)}, 0) AS latency, r.${col(r.scores)}, r.${col(r.metadata)}
    FROM json_each(${JSON.stringify(pending)}) AS j CROSS JOIN ${r} AS r ON r.${col(r.id)} = j.value
    WHERE r.${col(r.abTestId)} IS NOT NULL`);
  return { pending, rows };
}

const unitHash = async (unit: string) => (await sha256Hex(unit)).slice(0, 32);

async function rollupStatements(logs: Db, pending: number[], rows: PendingLog[], keys: Map<number, string | null>): Promise<Statement[]> {
  const read = JSON.stringify(rows.map((r) => [r.id, r.revision]));
  // Every log read is still pending at the revision read: else the batch writes nothing (and is read again).
  const unchanged = sql`(SELECT count(*) FROM json_each(${read}) AS g
    CROSS JOIN ${abRollupPending} AS gp ON gp.${col(abRollupPending.requestId)} = g.value ->> 0
    CROSS JOIN ${requestLogs} AS gr ON gr.${col(requestLogs.id)} = gp.${col(abRollupPending.requestId)} AND gr.${col(requestLogs.revision)} = g.value ->> 1) = ${rows.length}`;
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
  // Last: its count says whether the batch wrote. Marks of logs gone meanwhile (archived) go too.
  statements.push(sql`DELETE FROM ${abRollupPending} WHERE ${abRollupPending.requestId} IN (SELECT value FROM json_each(${JSON.stringify(pending)})) AND ${unchanged}`);
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
 * Rolls up this log database's pending A/B logs (any workspace's), oldest first, at most `max`;
 * returns how many it counted. Harmless to repeat: a log is counted once.
 */
export async function rollupAbLogs(logs: Db, keysOf: AssignmentKeys, max = ROLLUP_MAX_LOGS): Promise<number> {
  let counted = 0;
  while (counted < max) {
    let done = false;
    for (let attempt = 1; attempt <= ROLLUP_ATTEMPTS && !done; attempt++) {
      const { pending, rows } = await readPending(logs, Math.min(ROLLUP_BATCH_LOGS, max - counted));
      if (pending.length === 0) return counted;
      const keys = await keysOf([...new Set(rows.map((r) => r.ab_test_id))]);
      const results = await runBatch(logs, await rollupStatements(logs, pending, rows, keys));
      if ((results[results.length - 1].meta.changes ?? 0) > 0) {
        counted += rows.length;
        done = true;
      }
    }
    if (!done) throw new Error(`A/B rollup: the pending logs changed during each of ${ROLLUP_ATTEMPTS} attempts`);
  }
  return counted;
}

/**
 * For a tracking call setting score `name` of log `requestId` to `score`: moves the log's metric row
 * from its old value (if it had one) to the new, only when the log was served through a release and
 * is counted already (a pending log is counted with the score it then has). Put it before the
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
      AND NOT EXISTS (SELECT 1 FROM ${abRollupPending} AS p WHERE p.${col(abRollupPending.requestId)} = r.${col(r.id)})
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
    metrics: parts.flatMap((p) => p.metrics),
    units: parts.flatMap((p) => p.units),
  };
}
