// X-PromptEdge-Ignored-Fields: the body fields a request carried that the API ignored, named from the
// route's own zod schema (lib/ignored-fields.ts), so the answer keeps PromptLayer's shape and a caller
// still learns that a field it sent did nothing. defineRoute adds it to every route with a validated
// JSON body; the header is set on a 2xx answer only (a refusal already names what was wrong).
import type { MiddlewareHandler } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../env";
import { ignoredFields } from "../lib/ignored-fields";

export const IGNORED_FIELDS_HEADER = "X-PromptEdge-Ignored-Fields";

export function nameIgnoredFields(schema: z.ZodType): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    // The validator read the body as text (Hono keeps it): parsed again here, never read twice.
    const text = c.req.bodyCache.text;
    if (c.res.status < 200 || c.res.status >= 300 || !text) return;
    let value: unknown;
    try {
      value = JSON.parse(await text);
    } catch {
      return;
    }
    const fields = ignoredFields(schema, value);
    if (fields.length > 0) c.res.headers.set(IGNORED_FIELDS_HEADER, fields.join(", "));
  };
}
