// Wiring only: the HTTP app, the queue consumer and the Durable Object classes.
import { createApp } from "./app";
import type { Env } from "./env";
import { handleQueue } from "./queue/consumer";
import { sweepWebhooks } from "./services/webhook-delivery";

export { SheetObject } from "./sheets/sheet-object";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: (batch: MessageBatch<unknown>, env: Env) => handleQueue(batch, env),
  // The cron trigger: webhook events and deliveries whose queue message was lost still go out.
  scheduled: async (_controller: ScheduledController, env: Env, ctx: ExecutionContext) => {
    ctx.waitUntil(sweepWebhooks(env).then(() => undefined));
  },
} satisfies ExportedHandler<Env, unknown>;
