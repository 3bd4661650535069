// The realtime channels of workflow runs: one Durable Object holds every client's WebSocket (with
// the hibernation API, so idle connections cost nothing) and each socket remembers, in its
// attachment, the one channel its token admits. A client learns which run it follows only from its
// first message, after the socket is open, so sockets cannot be spread over one object per channel.
import { DurableObject } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { getDb } from "../db/client";
import { workflowExecutions } from "../db/schema";
import { channelOf, ERRORS, errorReply, parseFrame, publication, reply, RUN_DONE, verifyToken } from "./protocol";

/** The bindings the hub reads: runs' state, and the key its tokens are signed with. */
interface HubEnv {
  DB: D1Database;
  ENV_VARS_KEY?: string;
}

interface Attachment {
  workspaceId?: number;
  executionId?: number;
  subscribed?: boolean;
}

/** How long a finished run's message is kept for clients that subscribe late. */
const KEEP_DONE_MS = 60 * 60 * 1000;

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
    if (!frame.ok) return ws.close(3501, "bad request");
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
        att.executionId = claims.executionId;
        ws.serializeAttachment(att);
        ws.send(reply(cmd.id, { connect: { client: crypto.randomUUID(), version: "promptedge" } }));
      } else if (cmd.subscribe) {
        if (att.executionId === undefined) {
          ws.send(errorReply(cmd.id, ERRORS.unauthorized));
          continue;
        }
        const channel = channelOf(att.executionId);
        if (cmd.subscribe.channel !== channel) {
          ws.send(errorReply(cmd.id, ERRORS.permissionDenied));
          continue;
        }
        att.subscribed = true;
        ws.serializeAttachment(att);
        ws.send(reply(cmd.id, { subscribe: {} }));
        if (await this.finished(att.workspaceId!, att.executionId)) ws.send(publication(channel, RUN_DONE));
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

  /** A run ended: its channel's subscribers are told, and late ones will be for an hour. */
  async publishDone(executionId: number): Promise<number> {
    await this.ctx.storage.put(`done:${executionId}`, Date.now());
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + KEEP_DONE_MS);
    let sent = 0;
    for (const ws of this.ctx.getWebSockets()) {
      const att = (ws.deserializeAttachment() ?? {}) as Attachment;
      if (att.subscribed && att.executionId === executionId) {
        ws.send(publication(channelOf(executionId), RUN_DONE));
        sent++;
      }
    }
    return sent;
  }

  async alarm(): Promise<void> {
    const cutoff = Date.now() - KEEP_DONE_MS;
    const done = await this.ctx.storage.list<number>({ prefix: "done:" });
    const old = [...done].filter(([, at]) => at < cutoff).map(([k]) => k);
    for (let i = 0; i < old.length; i += 128) await this.ctx.storage.delete(old.slice(i, i + 128));
    if (done.size > old.length) await this.ctx.storage.setAlarm(Date.now() + KEEP_DONE_MS);
  }

  /** Whether the run is over: told by publishDone, or read from D1 when that message was lost. */
  private async finished(workspaceId: number, executionId: number): Promise<boolean> {
    if ((await this.ctx.storage.get(`done:${executionId}`)) !== undefined) return true;
    const [row] = await getDb(this.env.DB)
      .select({ status: workflowExecutions.status })
      .from(workflowExecutions)
      .where(and(eq(workflowExecutions.id, executionId), eq(workflowExecutions.workspaceId, workspaceId)))
      .limit(1);
    return row?.status === "COMPLETED" || row?.status === "FAILED";
  }
}
