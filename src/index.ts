// Wiring only: the HTTP app, the queue consumer and the Durable Object classes.
import { createApp } from "./app";
import type { Env } from "./env";
import { handleQueue } from "./queue/consumer";
import { runScheduled } from "./queue/scheduled";
import { buildDeps } from "./deps";
import { realtimeGate } from "./realtime/gate";

export { SheetObject } from "./sheets/sheet-object";
export { RealtimeHub } from "./realtime/hub-object";

const app = createApp();

export default {
  fetch: (request: Request, env: Env, ctx: ExecutionContext) => {
    // The realtime WebSocket goes to its gate, outside the app: a 101 answer's headers cannot be
    // changed by the app's middleware. Everything else, a plain GET included, goes through the app.
    if (request.headers.get("Upgrade")?.toLowerCase() === "websocket" && new URL(request.url).pathname === "/connection/websocket") {
      return realtimeGate(env);
    }
    return app.fetch(request, env, ctx);
  },
  queue: (batch: MessageBatch<unknown>, env: Env) => handleQueue(batch, env),
  // The cron trigger: webhook events and deliveries whose queue message was lost still go out, and
  // jobs whose heartbeat went stale (a crash, a lost message) are re-queued or given up.
  // Its work is timed by the run's scheduled time (now, but for a run triggered by hand).
  scheduled: async (controller: ScheduledController, env: Env, ctx: ExecutionContext) => {
    ctx.waitUntil(runScheduled(buildDeps(env), controller.scheduledTime));
  },
} satisfies ExportedHandler<Env, unknown>;
