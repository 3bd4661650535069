// The browser pages (/docs, /console) and their files, served from the Worker's static assets (the
// ASSETS binding, wrangler.toml [assets]) with a strict Content-Security-Policy: scripts only from
// this origin, no inline script, no request to any other host.
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/errors";

/** The reference (Scalar) injects its stylesheet as <style> elements, so only its styles may be inline. */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The console's own bundle: nothing inline at all. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers every page and file of /docs and /console carries. */
export function securePage(res: Response, csp: string): Response {
  const out = new Response(res.body, res);
  out.headers.set("Content-Security-Policy", csp);
  out.headers.set("X-Content-Type-Options", "nosniff");
  out.headers.set("Referrer-Policy", "no-referrer");
  out.headers.set("X-Frame-Options", "DENY");
  return out;
}

/** One file of the static assets, or a 404 in the error shape naming the build step when it is missing. */
export async function fetchAsset(c: Context<AppEnv>, path: string, csp: string, missing: string): Promise<Response> {
  const assets = c.env.ASSETS;
  if (!assets) throw new ApiError("not_found", missing);
  const url = new URL(path, c.req.url);
  const res = await assets.fetch(new Request(url, { method: c.req.method === "HEAD" ? "HEAD" : "GET", headers: c.req.raw.headers }));
  // A 304 (the browser's copy is current) is passed on as it is.
  if (res.status === 404) throw new ApiError("not_found", missing);
  return securePage(res, csp);
}

/** The path, decoded, when it names a file under `prefix` without stepping out of it. */
function fileUnder(prefix: string, path: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return false;
  }
  return decoded.startsWith(prefix) && decoded !== prefix && !decoded.split("/").includes("..") && !decoded.includes("\\");
}

/**
 * GET and HEAD under `prefix` (e.g. /console/) are answered from the static assets; anything else
 * falls through to the API routes (and so to their 404 and 405).
 */
export function assetFiles(prefix: string, csp: string, missing: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if ((c.req.method !== "GET" && c.req.method !== "HEAD") || !fileUnder(prefix, c.req.path)) return next();
    return fetchAsset(c, c.req.path, csp, missing);
  };
}
