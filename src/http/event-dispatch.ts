// After each request: the workspaces whose webhook events the request's batches wrote (if any) get
// them dispatched, after the response, in waitUntil. Requests that emit nothing cost nothing here.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { dispatchQuietly, inEventScope } from "../services/webhooks";
import { afterAnswer } from "./after-answer";

export const dispatchEmittedEvents: MiddlewareHandler<AppEnv> = async (c, next) => {
  const emitted = new Set<number>();
  try {
    await inEventScope(emitted, next);
  } finally {
    if (emitted.size > 0) await afterAnswer(c, dispatchQuietly(c.var.deps, [...emitted]));
  }
};
