// Test helpers: workspaces with keys, and calls into the Worker through its real fetch handler.
import { env, exports } from "cloudflare:workers";
import { sha256Hex, toHex } from "../../src/lib/crypto";

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

export function call(path: string, init: RequestInit & { key?: string; json?: unknown } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.key) headers.set("X-API-KEY", init.key);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(init.json);
  }
  return exports.default.fetch(new Request(`http://api.test${path}`, { ...init, headers, body }));
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
