// The log databases in tests: which one a workspace writes to, their sizes, and growing one past
// another (a table of its own, so no log is touched) to make it the fuller or a full one.
import { env } from "cloudflare:workers";
import type { TestKey } from "./api";

/** The workspace's current log database as the shard map records it (null: not placed). */
export const shardOf = async (ws: TestKey) =>
  (await env.DB.prepare("SELECT log_shard AS s FROM workspaces WHERE id = ?").bind(ws.workspaceId).first<{ s: string | null }>())!.s;

/** A database's size as D1 reports it (what the shard map measures). */
export const sizeOf = async (d1: D1Database) => (await d1.prepare("SELECT 1").run()).meta.size_after as number;

/** Grows a database by about `bytes`. */
export const grow = async (d1: D1Database, bytes: number) => {
  await d1.prepare("CREATE TABLE IF NOT EXISTS ballast (b BLOB)").run();
  for (let left = bytes; left > 0; left -= 500_000) await d1.prepare("INSERT INTO ballast VALUES (zeroblob(?))").bind(Math.min(left, 500_000)).run();
};

/** Makes `d1` larger than `than` (by a megabyte or more): state carries over from test to test. */
export const fuller = async (d1: D1Database, than: D1Database) => grow(d1, Math.max(0, (await sizeOf(than)) - (await sizeOf(d1))) + 1_000_000);
