// The shard map: which D1 databases hold a workspace's request logs, their side rows and spans.
// The control database (binding DB) holds everything else. Log databases are the D1 bindings named in
// LOG_SHARDS; each workspace is placed on one when it first needs it (the least-full open shard) and
// writes there until that database is full; then its new logs go to another (a new period) and the
// older ones stay where they are (periods.ts reads them all). Adding a shard is a binding, a
// LOG_SHARDS entry and its migrations: nothing moves. Workspaces that logged before log databases
// existed started in the control database ("DB").
import { and, eq, getTableName, isNull, sql } from "drizzle-orm";
import { runBatch } from "../db/batch";
import { d1Of, type Db } from "../db/client";
import { logShards, requestGroups, requestLogs, workspaces } from "../db/schema";
import { idRangeFor, nearRangeEnd } from "./id-ranges";

/** The shard name of the control database (its binding): where pre-shard workspaces keep their logs. */
export const CONTROL_SHARD = "DB";

/**
 * A log database is full (closed to new workspaces) at this size unless LOG_SHARD_MAX_BYTES says
 * otherwise: D1 stops a database at 10 GB, and the workspaces already there keep growing.
 */
const DEFAULT_SHARD_MAX_BYTES = 6 * 1024 ** 3;

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

/** Where a workspace's logs are. */
export interface Placement {
  /** The current period's database: new logs, groups and spans go there. */
  shard: string;
  /** Every database the workspace has had, oldest first, `shard` last (its periods). */
  periods: string[];
  /** The current database was measured full: the workspace's next request opens a new period. */
  full: boolean;
}

/** A placement from its stored columns (log_periods NULL, or not ending in log_shard, is read as ending there). */
export function placementOf(row: { shard: string; periods?: string[] | null; full?: boolean | null }): Placement {
  return { shard: row.shard, periods: [...(row.periods ?? []).filter((p) => p !== row.shard), row.shard], full: Boolean(row.full) };
}

/** The workspace's placement as the map records it (null: not placed yet). */
export async function recordedPlacement(control: Db, workspaceId: number): Promise<Placement | null> {
  const [row] = await control
    .select({ shard: workspaces.logShard, periods: workspaces.logPeriods, full: logShards.full })
    .from(workspaces)
    .leftJoin(logShards, eq(logShards.binding, workspaces.logShard))
    .where(eq(workspaces.id, workspaceId))
    .limit(1);
  return row?.shard ? placementOf({ ...row, shard: row.shard }) : null;
}

/** A database as measured: its size, and whether it is full (LOG_SHARD_MAX_BYTES, or near the end of its id range). */
interface Measured {
  binding: string;
  size: number;
  full: boolean;
}

/** The highest id a database has handed out to a log or a group (both count against its id range). */
const USED_IDS = `SELECT max(coalesce((SELECT max(${requestLogs.id.name}) FROM ${getTableName(requestLogs)}), 0), coalesce((SELECT max(${requestGroups.id.name}) FROM ${getTableName(requestGroups)}), 0)) AS used`;

/**
 * Measures every log database LOG_SHARDS lists, and the control database (the workspaces that log
 * there move on too when it fills), and records sizes and full flags in the shard map; a full log
 * database is also closed to new workspaces. The cron runs it every minute, placement before it
 * chooses. Without LOG_SHARDS there is nowhere else to go: nothing is measured.
 */
export async function measureLogDatabases(control: Db, env: LogShardEnv): Promise<Measured[]> {
  const names = configuredShards(env);
  if (names.length === 0) return [];
  const all = [...names, CONTROL_SHARD];
  // First sight of a database gives it its id range, in LOG_SHARDS order.
  const ranges: number[] = [];
  for (const binding of all) ranges.push(await idRangeFor(d1Of(control), binding));
  const limit = maxBytes(env);
  const measured = await Promise.all(
    all.map(async (binding, i): Promise<Measured> => {
      const d1 = binding === CONTROL_SHARD ? env.DB : shardBinding(env, binding);
      const res = await d1.prepare(USED_IDS).all<{ used: number }>();
      const size = (res.meta as { size_after?: number }).size_after ?? 0;
      return { binding, size, full: size >= limit || nearRangeEnd(ranges[i], res.results[0].used) };
    }),
  );
  const now = Date.now();
  await runBatch(
    control,
    measured.map((m) =>
      control
        .update(logShards)
        .set({ sizeBytes: m.size, measuredAt: now, full: m.full, ...(m.full && m.binding !== CONTROL_SHARD ? { open: false } : {}) })
        .where(eq(logShards.binding, m.binding)),
    ),
  );
  return measured;
}

/**
 * The least-full log database a workspace may go to, measured now: open, not full, and none it has
 * been on (`been`). Null when there is none.
 */
async function roomiest(control: Db, env: LogShardEnv, been: readonly string[]): Promise<{ chosen: string | null; measured: Measured[] }> {
  const measured = (await measureLogDatabases(control, env)).filter((m) => m.binding !== CONTROL_SHARD);
  const rows = await control.select({ binding: logShards.binding, open: logShards.open }).from(logShards);
  const open = new Map(rows.map((r) => [r.binding, r.open]));
  const candidates = measured.filter((m) => open.get(m.binding) !== false && !m.full && !been.includes(m.binding));
  const chosen = candidates.length > 0 ? candidates.reduce((best, m) => (m.size < best.size ? m : best)).binding : null;
  return { chosen, measured };
}

/**
 * Places a workspace on the least-full open log database, or finds where it already is (the current
 * period's database). Every configured shard is measured (and one past its size closed) first. With no
 * open shard left the least-full one is used anyway: refusing logs would lose them, and a full shard's
 * workspaces write on. Two first requests of one workspace may race: the conditional UPDATE lets one
 * placement win and both read it back.
 */
export async function placeWorkspace(control: Db, env: LogShardEnv, workspaceId: number): Promise<string> {
  return (await workspacePlacement(control, env, workspaceId)).shard;
}

/** placeWorkspace's placement: where the workspace is, placing it first when it is new. */
export async function workspacePlacement(control: Db, env: LogShardEnv, workspaceId: number): Promise<Placement> {
  const recorded = await recordedPlacement(control, workspaceId);
  if (recorded) return recorded;
  let chosen = CONTROL_SHARD;
  if (configuredShards(env).length > 0) {
    const room = await roomiest(control, env, []);
    chosen = room.chosen ?? room.measured.reduce((best, m) => (m.size < best.size ? m : best)).binding;
    if (!room.chosen) console.warn(JSON.stringify({ level: "warn", msg: "every log database is closed or full; placing on the least full", shard: chosen }));
  }
  await control
    .update(workspaces)
    .set({ logShard: chosen, logPeriods: [chosen] })
    .where(and(eq(workspaces.id, workspaceId), isNull(workspaces.logShard)));
  return (await recordedPlacement(control, workspaceId)) ?? { shard: chosen, periods: [chosen], full: false };
}

/** Workspaces this isolate found no room for, and until when it does not look again (ms). */
const noRoomUntil = new Map<number, number>();
const NO_ROOM_RETRY_MS = 60_000;

/**
 * A new period for a workspace whose current database is full: its new logs go to the least-full
 * log database it has not been on, and nothing moves. Concurrent requests agree (the UPDATE is
 * conditional on the database they left). With no such database the workspace stays where it is,
 * with a warning, and this isolate looks again after a minute: logs are never refused for room.
 */
export async function openPeriod(control: Db, env: LogShardEnv, workspaceId: number, from: Placement): Promise<Placement> {
  const now = Date.now();
  if ((noRoomUntil.get(workspaceId) ?? 0) > now) return from;
  const { chosen } = await roomiest(control, env, from.periods);
  if (!chosen) {
    noRoomUntil.set(workspaceId, now + NO_ROOM_RETRY_MS);
    console.warn(JSON.stringify({ level: "warn", msg: "log database full and no other has room; the workspace stays on it", workspace_id: workspaceId, shard: from.shard }));
    return from;
  }
  await control
    .update(workspaces)
    .set({ logShard: chosen, logPeriods: sql`json_insert(coalesce(${workspaces.logPeriods}, json_array(${workspaces.logShard})), '$[#]', ${chosen})` })
    .where(and(eq(workspaces.id, workspaceId), eq(workspaces.logShard, from.shard)));
  const placed = (await recordedPlacement(control, workspaceId)) ?? from;
  console.log(JSON.stringify({ level: "info", msg: "new log period", workspace_id: workspaceId, from: from.shard, to: placed.shard }));
  return placed;
}
