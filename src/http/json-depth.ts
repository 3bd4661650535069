// The depth rule (lib/json-depth.ts) on every JSON body a route validates: a body nested deeper than
// MAX_JSON_DEPTH is a 400 naming where, before any handler or database sees it. The body is parsed
// (bodies are capped at a few MiB first); one that does not parse is left to the validator.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { depthRule, MAX_JSON_DEPTH, tooDeepAt } from "../lib/json-depth";
import { validationError } from "../lib/validation";

const JSON_TYPE = /^application\/([a-z-.]+\+)?json/i;
/** Levels of the path an error names before "…". */
const SHOWN_LEVELS = 12;

export const limitJsonDepth: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (JSON_TYPE.test(c.req.header("content-type") ?? "")) {
    let body: unknown;
    let parsed = false;
    try {
      // Read once through the request's cache, which the validator then reads from. A handler that reads
      // the raw request itself (the MCP transport) gets it again, with the same text as its body. (A
      // clone's tee left connections broken after an early 413 on a chunked body.)
      const text = await c.req.text();
      c.req.raw = new Request(c.req.raw, { body: text });
      body = JSON.parse(text);
      parsed = true;
    } catch {
      // Malformed JSON, or a body past its cap (limitBody answers 413): the validator answers it.
    }
    const at = parsed ? tooDeepAt(body, MAX_JSON_DEPTH) : null;
    // The path names where the nesting goes past the rule: its first levels are enough to find it.
    const path = at && at.length > SHOWN_LEVELS ? [...at.slice(0, SHOWN_LEVELS), "…"] : at;
    if (path) throw validationError([{ code: "custom", path, message: depthRule(MAX_JSON_DEPTH), input: undefined }], { target: "json" });
  }
  await next();
};
