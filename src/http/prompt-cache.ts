// The registry writes' side of the edge cache of template reads (src/prompts/cache.ts): a write that
// may change what a template read answers purges the workspace's label and latest reads in this data
// centre after it ran and before its answer leaves.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";

/**
 * For every route that changes prompt templates, their versions, labels, external IDs or folders. A
 * 4xx changed nothing and purges nothing; a 5xx may come after a committed write, so it purges too.
 */
export const purgesPromptCache: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const auth = c.get("auth");
  if (auth && (c.res.status < 400 || c.res.status >= 500)) await c.var.deps.prompts.purge(auth.workspaceId, new URL(c.req.url).origin);
};
