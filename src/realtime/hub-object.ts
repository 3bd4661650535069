// The realtime channel of one workflow run in one workspace: one Durable Object per channel (named by
// hubName), holding the WebSockets that follow it with the hibernation API (idle connections cost
// nothing), each remembering in its attachment the channel and key its token names. Sockets reach it
// only through the gate (gate.ts), which checked the token first; the object checks it again, tells
// subscribers when the run ends (sockets of a key revoked since are closed instead), and keeps the
// message an hour for clients that subscribe late.
import { DurableObject } from "cloudflare:workers";
import { and, desc, eq, inArray } from "drizzle-orm";
import { getDb } from "../db/client";
import { workflowExecutions } from "../db/schema";
import { liveKeyIds } from "./gate";
import { completionMessage, ERRORS, errorReply, parseCapability, parseFrame, publication, reply, verifyToken, type ChannelMessage, type CompletionMessage } from "./protocol";

/** The bindings the hub reads: runs' state, keys, and the key its tokens are signed with. */
interface HubEnv {
  DB: D1Database;
  ENV_VARS_KEY?: string;
}

interface Attachment {
  workspaceId?: number;
  channel?: string;
  keyId?: number;
  subscribed?: boolean;
}

/** How long a finished run's message is kept for clients that subscribe late. */
const KEEP_DONE_MS = 60 * 60 * 1000;

interface Kept {
  at: number;
  workspaceId: number;
  message: CompletionMessage;
}

export class RealtimeHub extends DurableObject<HubEnv> {
  async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    const pair = new WebSocketPair();
    this.ctx.acceptWebSocket(pair[1]);
    pair[1].serializeAttachment({} satisfies Attachment);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const frame = parseFrame(typeof message === "string" ? message : new TextDecoder().decode(message));
    if (!frame.ok) return ws.close(3501, frame.reason);
    const att = (ws.deserializeAttachment() ?? {}) as Attachment;
    for (const cmd of frame.commands) {
      if (cmd.connect) {
        const claims = await verifyToken(this.env.ENV_VARS_KEY ?? "", cmd.connect.token, Date.now());
        if (claims === "expired") {
          ws.send(errorReply(cmd.id, ERRORS.tokenExpired));
          return ws.close(3500, "token expired");
        }
        if (claims === "invalid") {
          ws.send(errorReply(cmd.id, ERRORS.unauthorized));
          return ws.close(3500, "invalid token");
        }
        att.workspaceId = claims.workspaceId;
        att.channel = claims.channel;
        att.keyId = claims.keyId;
        ws.serializeAttachment(att);
        ws.send(reply(cmd.id, { connect: { client: crypto.randomUUID(), version: "promptedge" } }));
      } else if (cmd.subscribe) {
        if (att.channel === undefined) {
          ws.send(errorReply(cmd.id, ERRORS.unauthorized));
          continue;
        }
        if (cmd.subscribe.channel !== att.channel) {
          ws.send(errorReply(cmd.id, ERRORS.permissionDenied));
          continue;
        }
        att.subscribed = true;
        ws.serializeAttachment(att);
        ws.send(reply(cmd.id, { subscribe: {} }));
        const done = await this.finished(att.workspaceId!, att.channel);
        if (done) ws.send(publication(att.channel, done));
      } else if (cmd.unsubscribe) {
        att.subscribed = false;
        ws.serializeAttachment(att);
        ws.send(reply(cmd.id, { unsubscribe: {} }));
      } else if (cmd.id !== undefined) {
        ws.send(errorReply(cmd.id, ERRORS.badRequest));
      }
      // An empty command is the client's pong: nothing to answer.
    }
  }

  async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    ws.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
  }

  /** A run of the workspace ended: each channel's subscribers are told, and late ones will be for an hour. */
  async publishDone(workspaceId: number, messages: ChannelMessage[]): Promise<number> {
    const at = Date.now();
    await this.ctx.storage.put(Object.fromEntries(messages.map((m) => [`done:${m.channel}`, { at, workspaceId, message: m.message } satisfies Kept])));
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(at + KEEP_DONE_MS);
    const byChannel = new Map(messages.map((m) => [m.channel, m.message]));
    const sockets = this.ctx.getWebSockets().map((ws) => ({ ws, att: (ws.deserializeAttachment() ?? {}) as Attachment }));
    const live = await this.liveKeys(sockets.map((s) => s.att.keyId).filter((k): k is number => k !== undefined), workspaceId);
    let sent = 0;
    for (const { ws, att } of sockets) {
      const message = att.subscribed && att.workspaceId === workspaceId && att.channel ? byChannel.get(att.channel) : undefined;
      if (!message) continue;
      if (att.keyId === undefined || !live.has(att.keyId)) {
        ws.send(errorReply(undefined, ERRORS.unauthorized));
        ws.close(3500, "the token's key was revoked");
        continue;
      }
      ws.send(publication(att.channel!, message));
      sent++;
    }
    return sent;
  }

  /** The keys, of those given, that are not revoked (read now: a revoked key's socket is told nothing). */
  private liveKeys(keyIds: number[], workspaceId: number): Promise<Set<number>> {
    return liveKeyIds(this.env.DB, workspaceId, keyIds);
  }

  async alarm(): Promise<void> {
    const cutoff = Date.now() - KEEP_DONE_MS;
    const done = await this.ctx.storage.list<Kept>({ prefix: "done:" });
    const old = [...done].filter(([, kept]) => kept.at < cutoff).map(([k]) => k);
    for (let i = 0; i < old.length; i += 128) await this.ctx.storage.delete(old.slice(i, i + 128));
    if (done.size > old.length) await this.ctx.storage.setAlarm(Date.now() + KEEP_DONE_MS);
    // A channel's object whose run ended an hour ago keeps nothing.
    else await this.ctx.storage.deleteAll();
  }

  /**
   * The message of a run on this channel that is over: as published, or, when that was lost (or is
   * over an hour old), made from the run's state in D1 without its outputs (the SDK fetches them).
   */
  private async finished(workspaceId: number, channel: string): Promise<CompletionMessage | null> {
    const kept = await this.ctx.storage.get<Kept>(`done:${channel}`);
    if (kept && kept.workspaceId === workspaceId) return kept.message;
    const cap = parseCapability(channel);
    if (!cap) return null;
    const e = workflowExecutions;
    const scope =
      cap.kind === "execution"
        ? and(eq(e.id, cap.executionId), eq(e.workspaceId, workspaceId))
        : and(eq(e.workflowId, cap.workflowId), eq(e.channelNameSuffix, cap.suffix), eq(e.workspaceId, workspaceId));
    const [row] = await getDb(this.env.DB)
      .select({ id: e.id })
      .from(e)
      .where(and(scope, inArray(e.status, ["COMPLETED", "FAILED"])))
      .orderBy(desc(e.id))
      .limit(1);
    return row ? completionMessage(row.id) : null;
  }
}
