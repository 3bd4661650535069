// The shard map: which D1 database holds a workspace's request logs, their side rows and spans.
// The control database (binding DB) holds everything else. Log databases are the D1 bindings named in
// LOG_SHARDS; each workspace is placed on one when it first needs it (the least-full open shard) and
// stays there, so adding a shard is a binding, a LOG_SHARDS entry and its migrations: nothing moves.
// Workspaces that logged before log databases existed keep theirs in the control database ("DB").
import { and, eq, isNull } from "drizzle-orm";
import { runBatch } from "../db/batch";
import { d1Of, type Db } from "../db/client";
import { logShards, workspaces } from "../db/schema";
import { idRangeFor } from "./id-ranges";

/** The shard name of the control database (its binding): where pre-shard workspaces keep their logs. */
export const CONTROL_SHARD = "DB";

/**
 * A log database is full (closed to new workspaces) at this size unless LOG_SHARD_MAX_BYTES says
 * otherwise: D1 stops a database at 10 GB, and the workspaces already there keep growing.
 */
export const DEFAULT_SHARD_MAX_BYTES = 6 * 1024 ** 3;

export interface LogShardEnv {
  DB: D1Database;
  /** Comma-separated D1 binding names of the log databases, in placement order (ties go to the first). */
  LOG_SHARDS?: string;
  LOG_SHARD_MAX_BYTES?: string;
}

const BINDING = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The log databases LOG_SHARDS lists (empty: logs stay in the control database). */
export function configuredShards(env: LogShardEnv): string[] {
  const names = (env.LOG_SHARDS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!BINDING.test(name) || name === CONTROL_SHARD) throw new Error(`LOG_SHARDS: ${JSON.stringify(name)} is not a log database binding`);
  }
  return [...new Set(names)];
}

/** The D1 binding of a shard; a workspace placed on a binding the Worker no longer has is a deployment error. */
export function shardBinding(env: LogShardEnv, shard: string): D1Database {
  const d1 = (env as unknown as Record<string, unknown>)[shard] as D1Database | undefined;
  if (!d1 || typeof d1.prepare !== "function") throw new Error(`log database ${JSON.stringify(shard)} is not bound to this Worker (wrangler.toml d1_databases)`);
  return d1;
}

function maxBytes(env: LogShardEnv): number {
  const n = Number(env.LOG_SHARD_MAX_BYTES);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_SHARD_MAX_BYTES;
}

/** The database's size in bytes, as D1 reports it with every statement's result. */
async function sizeOf(d1: D1Database): Promise<number> {
  const res = await d1.prepare("SELECT 1").run();
  return (res.meta as { size_after?: number }).size_after ?? 0;
}

/** The workspace's shard as the map records it (null: not placed yet). */
export async function recordedShard(control: Db, workspaceId: number): Promise<string | null> {
  const [row] = await control.select({ shard: workspaces.logShard }).from(workspaces).where(eq(workspaces.id, workspaceId)).limit(1);
  return row?.shard ?? null;
}

/**
 * Places a workspace on the least-full open log database, or finds where it already is. Every
 * configured shard is measured (and one past its size closed) first. With no open shard left the
 * least-full one is used anyway: refusing logs would lose them, and a full shard's workspaces write on.
 * Two first requests of one workspace may race: the conditional UPDATE lets one placement win and
 * both read it back.
 */
export async function placeWorkspace(control: Db, env: LogShardEnv, workspaceId: number): Promise<string> {
  const recorded = await recordedShard(control, workspaceId);
  if (recorded) return recorded;
  const names = configuredShards(env);
  let chosen = CONTROL_SHARD;
  if (names.length > 0) {
    // First sight of a database gives it its id range, in LOG_SHARDS order.
    for (const binding of names) await idRangeFor(d1Of(control), binding);
    const rows = await control.select().from(logShards);
    const open = new Map(rows.map((r) => [r.binding, r.open]));
    const sizes = await Promise.all(names.map((n) => sizeOf(shardBinding(env, n))));
    const limit = maxBytes(env);
    const now = Date.now();
    const measured = names.map((binding, i) => ({ binding, size: sizes[i], open: open.get(binding) !== false && sizes[i] < limit }));
    const candidates = measured.filter((m) => m.open);
    const pool = candidates.length > 0 ? candidates : measured;
    chosen = pool.reduce((best, m) => (m.size < best.size ? m : best)).binding;
    if (candidates.length === 0) console.warn(JSON.stringify({ level: "warn", msg: "every log database is closed or full; placing on the least full", shard: chosen }));
    await runBatch(control, [
      ...measured.map((m) =>
        control
          .update(logShards)
          .set({ sizeBytes: m.size, measuredAt: now, ...(m.size >= limit ? { open: false } : {}) })
          .where(eq(logShards.binding, m.binding)),
      ),
      control.update(workspaces).set({ logShard: chosen }).where(and(eq(workspaces.id, workspaceId), isNull(workspaces.logShard))),
    ]);
  } else {
    await control.update(workspaces).set({ logShard: chosen }).where(and(eq(workspaces.id, workspaceId), isNull(workspaces.logShard)));
  }
  return (await recordedShard(control, workspaceId)) ?? chosen;
}
