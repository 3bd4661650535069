// The webhooks domain: the event outbox, webhook registrations and signed delivery with retries.
// Route folder: webhooks. Every domain that reports a change writes its outbox row (eventStatement) in
// the same db.batch() as the change; dispatch and delivery run from the queue and the cron.
// Rule: imports no other domain; every domain that emits events imports this face.
export { deliverWebhook, dispatchQuietly, sweepWebhooks } from "./delivery";
export { EVENT_TYPES, eventStatement, inEventScope, type EventSpec, type EventType } from "./events";
export {
  createWebhook,
  DEFAULT_ROTATION_OVERLAP_SECONDS,
  deleteWebhook,
  listWebhooks,
  MAX_DESCRIPTION_LENGTH,
  MAX_ROTATION_OVERLAP_SECONDS,
  MAX_URL_LENGTH,
  MAX_WEBHOOKS_PER_WORKSPACE,
  rotateWebhookSecret,
  webhookDeliveriesPage,
} from "./webhooks";
export { sealPlainSecrets } from "./secrets";
