// After each request: the workspaces whose webhook events the request's batches wrote (if any) get
// them dispatched, after the response, in waitUntil. Requests that emit nothing cost nothing here.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { inEventScope } from "../services/events";
import { dispatchQuietly } from "../services/webhook-delivery";

export const dispatchEmittedEvents: MiddlewareHandler<AppEnv> = async (c, next) => {
  const emitted = new Set<number>();
  try {
    await inEventScope(emitted, next);
  } finally {
    if (emitted.size > 0) {
      const done = dispatchQuietly(c.var.deps, [...emitted]);
      let ctx: ExecutionContext | undefined;
      try {
        ctx = c.executionCtx;
      } catch {
        // No execution context (a bare app.fetch in a test): dispatch before answering.
      }
      if (ctx) ctx.waitUntil(done);
      else await done;
    }
  }
};
