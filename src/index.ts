// Wiring only: the HTTP app, the queue consumer and the Durable Object classes.
import { createApp } from "./app";
import type { Env } from "./env";
import { handleQueue } from "./queue/consumer";

export { SheetObject } from "./sheets/sheet-object";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: (batch: MessageBatch<unknown>, env: Env) => handleQueue(batch, env),
} satisfies ExportedHandler<Env, unknown>;
