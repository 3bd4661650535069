// The door of the realtime WebSocket: the Worker accepts the client's socket itself and lets it reach
// a hub object only once its first frame's `connect` carries a genuine, unexpired token of a key that
// is not revoked (the SDKs send the token in that frame, after the upgrade, never in the URL). Then
// the connection is placed on the object of its channel (one per channel of one workspace, named by
// hubName), and the gate relays frames both ways. So an unauthenticated socket never reaches an
// object, is closed after REALTIME_CONNECT_TIMEOUT_MS, a frame carries at most MAX_COMMANDS_PER_FRAME
// commands, and a flood on one channel holds only that channel's object.
import { and, eq, isNull } from "drizzle-orm";
import { getDb } from "../db/client";
import { inJsonList } from "../db/sql";
import { apiKeys } from "../db/schema";
import { msSetting } from "../lib/time";
import { ERRORS, errorReply, hubName, parseFrame, verifyToken } from "./protocol";

/** How long a socket may stay open without a valid connect. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** Frames held while the connect is checked (the SDKs send at most a subscribe meanwhile). */
const MAX_QUEUED_FRAMES = 8;

/** Close codes the Centrifuge clients read: 3500 and up end the connection for good (no reconnect). */
const CLOSE = { invalidToken: 3500, badRequest: 3501, stale: 3502 } as const;

/** The bindings the gate reads (a floor below env.ts: named here, not imported). */
interface GateEnv {
  DB: D1Database;
  REALTIME: DurableObjectNamespace;
  ENV_VARS_KEY?: string;
  REALTIME_CONNECT_TIMEOUT_MS?: string;
}

const textOf = (data: string | ArrayBuffer) => (typeof data === "string" ? data : new TextDecoder().decode(data));

/** True while the key is not revoked: read from D1 at connect, so a revoked key's tokens stop at once. */
export async function keyIsLive(db: D1Database, keyId: number, workspaceId: number): Promise<boolean> {
  const [row] = await getDb(db)
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.workspaceId, workspaceId), isNull(apiKeys.revokedAt)))
    .limit(1);
  return Boolean(row);
}

function closeQuietly(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}

/** Answers a WebSocket upgrade to /connection/websocket (src/index.ts routes it here). */
export function realtimeGate(env: GateEnv): Response {
  const pair = new WebSocketPair();
  const [client, socket] = [pair[0], pair[1]];
  socket.accept();
  let upstream: WebSocket | null = null;
  let state: "waiting" | "checking" | "open" | "closed" = "waiting";
  const queued: string[] = [];

  const end = (code: number, reason: string) => {
    if (state === "closed") return;
    state = "closed";
    clearTimeout(timer);
    closeQuietly(socket, code, reason);
    if (upstream) closeQuietly(upstream, 1000, "client gone");
  };
  const timer = setTimeout(() => {
    if (state === "waiting" || state === "checking") end(CLOSE.stale, "no valid connect in time");
  }, msSetting(env.REALTIME_CONNECT_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS));

  const open = async (first: string, claims: { workspaceId: number; channel: string }) => {
    const hub = env.REALTIME.get(env.REALTIME.idFromName(hubName(claims.workspaceId, claims.channel)));
    const res = await hub.fetch("https://realtime.internal/connection/websocket", { headers: { Upgrade: "websocket" } });
    const ws = res.webSocket;
    if (!ws) throw new Error(`the channel's object answered ${res.status} instead of a WebSocket`);
    ws.accept();
    upstream = ws;
    ws.addEventListener("message", (e) => {
      if (state === "open") socket.send(e.data as string);
    });
    ws.addEventListener("close", (e) => end(e.code === 1005 || e.code === 1006 ? 1000 : e.code, e.reason || "closed"));
    ws.addEventListener("error", () => end(1011, "the channel's object failed"));
    if ((state as string) === "closed") return closeQuietly(ws, 1000, "client gone");
    state = "open";
    clearTimeout(timer);
    ws.send(first);
    for (const frame of queued.splice(0)) ws.send(frame);
  };

  const firstFrame = async (text: string) => {
    const frame = parseFrame(text);
    if (!frame.ok) return end(CLOSE.badRequest, frame.reason);
    const connect = frame.commands.find((c) => c.connect || c.id !== undefined);
    if (!connect?.connect) {
      socket.send(errorReply(connect?.id, ERRORS.unauthorized));
      return end(CLOSE.invalidToken, "connect first");
    }
    state = "checking";
    const claims = await verifyToken(env.ENV_VARS_KEY ?? "", connect.connect.token, Date.now());
    if (claims === "expired") {
      socket.send(errorReply(connect.id, ERRORS.tokenExpired));
      return end(CLOSE.invalidToken, "token expired");
    }
    if (claims === "invalid" || !(await keyIsLive(env.DB, claims.keyId, claims.workspaceId))) {
      socket.send(errorReply(connect.id, ERRORS.unauthorized));
      return end(CLOSE.invalidToken, "invalid token");
    }
    if ((state as string) === "closed") return;
    await open(text, claims);
  };

  socket.addEventListener("message", (e) => {
    const text = textOf(e.data as string | ArrayBuffer);
    if (state === "waiting") {
      firstFrame(text).catch((err) => {
        console.error(JSON.stringify({ level: "error", msg: "realtime connect failed", error: String((err as Error)?.message ?? err) }));
        end(1011, "internal error");
      });
    } else if (state === "checking" || state === "open") {
      // Every frame is held to the same bounds before it reaches the object.
      const frame = parseFrame(text);
      if (!frame.ok) return end(CLOSE.badRequest, frame.reason);
      if (state === "open") upstream!.send(text);
      else if (queued.length < MAX_QUEUED_FRAMES) queued.push(text);
      else end(CLOSE.badRequest, "too many frames before the connect was answered");
    }
  });
  socket.addEventListener("close", () => end(1000, "closed"));
  socket.addEventListener("error", () => end(1011, "error"));
  return new Response(null, { status: 101, webSocket: client });
}

/**
 * The keys of the workspace, of those given, that are not revoked (read now). Any number of them: the
 * list is bound as one JSON parameter, so a channel's hundredth socket is looked up like its first.
 */
export async function liveKeyIds(db: D1Database, workspaceId: number, keyIds: readonly number[]): Promise<Set<number>> {
  const ids = [...new Set(keyIds)];
  if (ids.length === 0) return new Set();
  const rows = await getDb(db)
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(inJsonList(apiKeys.id, ids), eq(apiKeys.workspaceId, workspaceId), isNull(apiKeys.revokedAt)));
  return new Set(rows.map((r) => r.id));
}
