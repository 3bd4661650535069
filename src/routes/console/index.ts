// GET /console: the browser console (a Preact app built from console/ into public/console/ by
// `npm run build:console`), and its files under /console/. It talks to the public API with the key
// the person enters, like any other client; the Worker only serves its files.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { assetFiles, CONSOLE_CSP, fetchAsset } from "../../http/static-assets";

const NOT_BUILT = "the console is not built: run `npm run build:console`";

const consolePage = defineRoute({
  method: "get",
  path: "/console",
  tags: ["meta"],
  summary: "Browser console",
  description:
    "A browser console over this API (requests, prompts, tables, datasets, evaluations, analytics). It asks for an API key once " +
    "(kept in the tab's sessionStorage, never in a URL) and calls the public API with it as X-API-KEY. Served under a " +
    "Content-Security-Policy with no inline script or style and no other host. 404 when the console was not built.",
  public: true,
  errors: [404],
  responses: { 200: { description: "HTML", content: { "text/html": { schema: z.string() } } } },
});

export function registerConsoleRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(consolePage, (c) => fetchAsset(c, "/console/index.html", CONSOLE_CSP, NOT_BUILT) as never);
  app.use("/console/*", assetFiles("/console/", CONSOLE_CSP, NOT_BUILT));
}
