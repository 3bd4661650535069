// Test helpers: workspaces with keys, and calls into the Worker through its real fetch handler.
import { createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import worker from "../../src/index";
import { buildBaseDeps } from "../../src/base-deps";
import { getDb } from "../../src/db/client";
import { sha256Hex, toHex } from "../../src/lib/crypto";
import { CONTROL_SHARD, placeWorkspace, shardBinding } from "../../src/logs/shards";

let counter = 0;

export interface TestKey {
  key: string;
  workspaceId: number;
  userId: number;
  email: string;
}

/** A fresh workspace with one user and one API key, written the way the keys CLI writes them. */
export async function createWorkspace(name = `ws-${Date.now()}-${++counter}-${Math.random().toString(36).slice(2, 8)}`): Promise<TestKey> {
  const email = `${name}@example.test`;
  const key = `pe_${toHex(crypto.getRandomValues(new Uint8Array(24)))}`;
  const ws = await env.DB.prepare("INSERT INTO workspaces (name) VALUES (?) RETURNING id").bind(name).first<{ id: number }>();
  const user = await env.DB.prepare("INSERT INTO users (workspace_id, email) VALUES (?, ?) RETURNING id")
    .bind(ws!.id, email)
    .first<{ id: number }>();
  await env.DB.prepare("INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix) VALUES (?, ?, ?, ?)")
    .bind(ws!.id, user!.id, await sha256Hex(key), key.slice(0, 11))
    .run();
  return { key, workspaceId: ws!.id, userId: user!.id, email };
}

/** The log database holding the workspace's request logs and spans (placing the workspace now when it was not yet). */
export async function logsDb(ws: TestKey | number): Promise<D1Database> {
  const shard = await placeWorkspace(getDb(env.DB), env, typeof ws === "number" ? ws : ws.workspaceId);
  return shard === CONTROL_SHARD ? env.DB : shardBinding(env, shard);
}

/**
 * Keeps the workspace's logs in the control database, as for a workspace that logged before log
 * databases existed (log_shard 'DB'): for the tests of that path. Before the workspace's first log.
 */
export function logInControlDb(ws: TestKey): Promise<void> {
  return placeOn(ws, CONTROL_SHARD);
}

/**
 * Places `ws` on the log database `peer` is on (before ws's first log). An isolation test whose
 * foreign id must be kept out by the workspace condition (not by the id being in another database's
 * range, src/logs/id-ranges.ts) puts both workspaces on one database.
 */
export async function shareLogsDb(ws: TestKey, peer: TestKey): Promise<void> {
  await placeOn(ws, await placeWorkspace(getDb(env.DB), env, peer.workspaceId));
}

/** Places `ws` on the log database bound as `shard` ("LOGS_0", "LOGS_1"; "DB" for the control database), before its first log. */
export async function placeOn(ws: TestKey, shard: string): Promise<void> {
  const res = await env.DB.prepare("UPDATE workspaces SET log_shard = ? WHERE id = ? AND log_shard IS NULL").bind(shard, ws.workspaceId).run();
  if (res.meta.changes !== 1) throw new Error(`workspace ${ws.workspaceId} is already placed`);
}

/** The workspace's logs as the services take them (runDatasetFill's `logsOf`): every period, through the Worker's own door. */
export const logsOf = (ws: TestKey | number) => buildBaseDeps(env).logs(typeof ws === "number" ? ws : ws.workspaceId);

/** The workspace's current log database as a handle, for the log store's functions over one database. */
export const logsDbOf = (ws: TestKey | number) => logsDb(ws).then(getDb);

type CallInit = RequestInit & { key?: string; json?: unknown };

function requestFor(path: string, init: CallInit): Request {
  const headers = new Headers(init.headers);
  if (init.key) headers.set("X-API-KEY", init.key);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(init.json);
  }
  return new Request(`http://api.test${path}`, { ...init, headers, body });
}

/** A request to the Worker, through its real entrypoint (a request of its own, as deployed). */
export function call(path: string, init: CallInit = {}): Promise<Response> {
  return exports.default.fetch(requestFor(path, init));
}

/**
 * The same request handed straight to the Worker's fetch handler, for a file that sends a thousand or
 * more and checks only the answers (the fuzz pass). Through the entrypoint, the test runtime builds a
 * wrapper for each request that costs more with every request the file made before it: a thousand
 * requests take minutes that way, a second this way. What the runtime adds on the way in is added here
 * (the Content-Length of a string body, which the size limits read first). The request runs in the
 * test's own I/O context, not one of its own: work it leaves running after the answer (an import, a
 * job) does not always finish there, so every other test goes through call().
 */
export async function callHandler(path: string, init: CallInit = {}): Promise<Response> {
  const request = requestFor(path, init);
  const body = init.json !== undefined ? JSON.stringify(init.json) : init.body;
  if (typeof body === "string" && !request.headers.has("Content-Length")) {
    request.headers.set("Content-Length", String(new TextEncoder().encode(body).byteLength));
  }
  return worker.fetch(request, env, createExecutionContext());
}

export async function json<T = any>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** Another API key for an existing workspace (each key has its own rate-limit budget). */
export async function addKey(ws: TestKey): Promise<string> {
  const key = `pe_${toHex(crypto.getRandomValues(new Uint8Array(24)))}`;
  await env.DB.prepare("INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix) VALUES (?, ?, ?, ?)")
    .bind(ws.workspaceId, ws.userId, await sha256Hex(key), key.slice(0, 11))
    .run();
  return key;
}

/** A key of `ws` with these scopes, written as the keys CLI writes one. */
export async function scopedKey(ws: TestKey, scopes: string[]): Promise<string> {
  const key = `pe_${toHex(crypto.getRandomValues(new Uint8Array(24)))}`;
  await env.DB.prepare("INSERT INTO api_keys (workspace_id, user_id, key_hash, prefix, scopes) VALUES (?, ?, ?, ?, ?)")
    .bind(ws.workspaceId, ws.userId, await sha256Hex(key), key.slice(0, 11), JSON.stringify(scopes))
    .run();
  return key;
}
