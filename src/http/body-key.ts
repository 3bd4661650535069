// The API key of the SDK's tracking calls: the official SDK sends it as `api_key` in the JSON body
// (no X-API-KEY header) on /library-track-*, /create-group, /track-group and /track-request.
// Routes that opt in read the body once here, before auth; the key itself is never logged or echoed.
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/errors";

export const KEY_MISMATCH = "X-API-KEY and the body's api_key name different keys";

/** Takes `api_key` from a JSON object body, if there is one; a body that does not parse is left to validation. */
export const captureBodyApiKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("acceptsBodyKey", true);
  if (/^application\/([a-z-.]+\+)?json/i.test(c.req.header("content-type") ?? "")) {
    try {
      const body: unknown = await c.req.json();
      if (body && typeof body === "object" && !Array.isArray(body)) {
        const key = (body as Record<string, unknown>).api_key;
        if (typeof key === "string" && key.length > 0) c.set("bodyApiKey", key);
      }
    } catch {
      // Malformed JSON: the route's validation answers it (after auth, like any other route).
    }
  }
  await next();
};

/**
 * The key a request presents: the X-API-KEY header, else the body's api_key (on routes that read it).
 * Both present and different is a 401: one request speaks for one key.
 */
export function presentedKey(c: Context<AppEnv>): string {
  const header = c.req.header("x-api-key");
  const body = c.get("bodyApiKey");
  if (header && body && header !== body) throw new ApiError("unauthorized", KEY_MISMATCH);
  const key = header || body;
  if (!key && /^bearer\s/i.test(c.req.header("authorization") ?? "")) {
    throw new ApiError("unauthorized", "send the API key in the X-API-KEY header; an Authorization: Bearer header is not read");
  }
  if (!key) throw new ApiError("unauthorized", c.get("acceptsBodyKey") ? "X-API-KEY header (or api_key in the body) is missing" : "X-API-KEY header is missing");
  return key;
}
