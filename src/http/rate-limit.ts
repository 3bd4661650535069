// Per-API-key rate limits on the Workers Rate Limiting binding. Keyed on the SHA-256 of the presented
// key, so the check runs before any database work (even before the key is looked up).
import type { MiddlewareHandler } from "hono";
import type { AppEnv, Env } from "../env";
import { hashKey } from "../services/workspace";
import { ApiError } from "../lib/errors";

export interface RateLimitRule {
  /** The binding from wrangler.toml ([[ratelimits]]). */
  binding: (env: Env) => RateLimit;
  /** The binding's period in seconds, sent back as Retry-After. */
  periodSeconds: number;
  /** Names the limit in the error message, e.g. "10 requests a minute". */
  describe: string;
}

export async function enforceRateLimit(limiter: RateLimit, key: string, rule: Pick<RateLimitRule, "periodSeconds" | "describe">): Promise<void> {
  const { success } = await limiter.limit({ key });
  if (!success) {
    throw new ApiError("rate_limited", `rate limit exceeded (${rule.describe} per API key); retry after ${rule.periodSeconds} seconds`, {
      headers: { "Retry-After": String(rule.periodSeconds) },
    });
  }
}

export function rateLimitByKey(rule: RateLimitRule): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const presented = c.req.header("x-api-key");
    // No key: let auth answer 401; there is nothing to count against.
    if (presented) await enforceRateLimit(rule.binding(c.env), await hashKey(presented), rule);
    await next();
  };
}

export const SUGGESTIONS_RATE_LIMIT: RateLimitRule = {
  binding: (env) => env.SUGGESTIONS_LIMITER,
  periodSeconds: 60,
  describe: "10 requests a minute",
};
