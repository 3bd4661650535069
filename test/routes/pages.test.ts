// /docs (the Scalar reference) and /console: served from the Worker's static assets, each answer under
// a Content-Security-Policy that allows scripts from this origin only, and nothing from another host.
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/api";

function directives(res: Response): Map<string, string[]> {
  const csp = res.headers.get("Content-Security-Policy") ?? "";
  return new Map(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name, values]),
  );
}

function expectStrictScripts(res: Response) {
  const csp = directives(res);
  expect(csp.get("default-src")).toEqual(["'none'"]);
  expect(csp.get("script-src")).toEqual(["'self'"]);
  expect(csp.get("connect-src")).toEqual(["'self'"]);
  expect(csp.get("frame-ancestors")).toEqual(["'none'"]);
  expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
}

/** Every <script> of a page has a src on this origin: no inline script, no other host. */
function expectOnlyOwnScripts(html: string) {
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  expect(scripts.length).toBeGreaterThan(0);
  for (const [, attrs, body] of scripts) {
    expect(attrs).toMatch(/\bsrc="\/(docs|console)\//);
    expect(body.trim()).toBe("");
  }
  expect(html).not.toMatch(/https?:\/\//);
}

describe("GET /docs", () => {
  it("is the Scalar page: its two scripts from this origin, under a strict CSP", async () => {
    const res = await call("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/text\/html/);
    expectStrictScripts(res);
    const html = await res.text();
    expectOnlyOwnScripts(html);
    expect(html).toContain('<script src="/docs/scalar.js"></script>');
    expect(html).toContain('<script src="/docs/init.js"></script>');
  });

  it("serves the Scalar bundle and its settings from the static assets", async () => {
    const bundle = await call("/docs/scalar.js");
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("Content-Type")).toMatch(/javascript/);
    expectStrictScripts(bundle);
    expect(await bundle.text()).toContain("createApiReference");
    const init = await call("/docs/init.js");
    expect(init.status).toBe(200);
    const settings = await init.text();
    // The document of this origin, the key sent as X-API-KEY (the ApiKeyAuth scheme), no web fonts.
    expect(settings).toContain('url: "/openapi.json"');
    expect(settings).toContain('preferredSecurityScheme: "ApiKeyAuth"');
    expect(settings).toContain("withDefaultFonts: false");
    expect(settings).toContain("telemetry: false");
  });

  it("answers HEAD for a file, 404 in the error shape for a missing one, and leaves other methods to the API's 404", async () => {
    const head = await call("/docs/init.js", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const missing = await call("/docs/nope.js");
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({ success: false, error: "not_found", message: expect.stringContaining("npm run build:assets") });
    const post = await call("/docs/init.js", { method: "POST" });
    expect(post.status).toBe(404);
    expect(await json(post)).toMatchObject({ error: "not_found" });
    expect((await call("/docs", { method: "POST" })).status).toBe(405);
  });

  it("does not reach a file outside public/docs/ through the path", async () => {
    for (const path of ["/docs/..%2fwrangler.toml", "/docs/%2e%2e%2f..%2fwrangler.toml", "/docs/..%5cinit.js"]) {
      const res = await call(path);
      expect(res.status, path).toBe(404);
    }
  });
});

describe("GET /console", () => {
  it("is the built console: scripts and styles from /console/ only, under a CSP with nothing inline", async () => {
    const res = await call("/console");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/text\/html/);
    expectStrictScripts(res);
    expect(directives(res).get("style-src")).toEqual(["'self'"]);
    const html = await res.text();
    expectOnlyOwnScripts(html);
    expect(html).not.toMatch(/<style|style="/);
    const script = html.match(/<script[^>]*src="(\/console\/[^"]+\.js)"/)![1];
    const file = await call(script);
    expect(file.status).toBe(200);
    expect(file.headers.get("Content-Type")).toMatch(/javascript/);
    expectStrictScripts(file);
  });

  it("needs no key, and a missing file is a 404 in the error shape", async () => {
    expect((await call("/console")).status).toBe(200);
    const missing = await call("/console/assets/none.js");
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({ error: "not_found", message: expect.stringContaining("npm run build:console") });
  });
});
