// Which methods a path is served with, from the app's own route table: a request whose path is known
// but whose method is not gets a 405 naming them, instead of a 404 that reads as "no such path", or
// a 400 from a neighbouring route whose placeholder the path happens to fill (GET on
// /api/public/v2/requests/search is not GET /api/public/v2/requests/{request_id} with the id "search").

export interface RouteEntry {
  method: string;
  path: string;
}

function segmentsMatch(pattern: string, path: string): boolean {
  const want = pattern.split("/");
  const got = path.split("/");
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (w === "*") return true;
    const g = got[i];
    if (g === undefined) return w.startsWith(":") && w.endsWith("?");
    if (w.startsWith(":")) {
      if (g === "" && !w.endsWith("?")) return false;
      continue;
    }
    if (w !== g) return false;
  }
  return want.length === got.length;
}

/**
 * The methods (upper case, sorted) of the routes whose pattern matches `path`. Middleware entries
 * (method ALL) are not routes. HEAD is served wherever GET is, so it is listed with it.
 */
export function allowedMethods(routes: readonly RouteEntry[], path: string): string[] {
  const found = new Set<string>();
  for (const r of routes) {
    if (r.method === "ALL" || r.path === "*" || r.path === "/*") continue;
    if (segmentsMatch(r.path, path)) found.add(r.method.toUpperCase());
  }
  if (found.has("GET")) found.add("HEAD");
  return [...found].sort();
}

/** How many of a pattern's segments are literal: the more, the closer a pattern names a path. */
const literals = (pattern: string) => pattern.split("/").filter((s) => s !== "" && s !== "*" && !s.startsWith(":")).length;

/**
 * The methods of the most specific routes matching `path` (those with the most literal segments),
 * when `method` is not among them: the path names that route, so another method is a 405 for it even
 * where a less specific route (a placeholder in the literal's place) takes `method`. Null when the
 * most specific routes take `method`, or none matches.
 */
export function shadowingMethods(routes: readonly RouteEntry[], method: string, path: string): string[] | null {
  let best = -1;
  let found = new Set<string>();
  for (const r of routes) {
    if (r.method === "ALL" || r.path === "*" || r.path === "/*" || !segmentsMatch(r.path, path)) continue;
    const n = literals(r.path);
    if (n > best) [best, found] = [n, new Set()];
    if (n === best) found.add(r.method.toUpperCase());
  }
  const wanted = method === "HEAD" ? "GET" : method;
  if (best < 0 || found.has(wanted)) return null;
  if (found.has("GET")) found.add("HEAD");
  return [...found].sort();
}

/** A memo of `lookup` by key over one route table, which does not change once the app is built. */
function memoized<T>(lookup: (key: string) => T): (key: string) => T {
  const memo = new Map<string, T>();
  return (key) => {
    if (memo.has(key)) return memo.get(key)!;
    const hit = lookup(key);
    // Paths carry ids, so the memo is bounded rather than kept per path forever.
    if (memo.size > 1000) memo.clear();
    memo.set(key, hit);
    return hit;
  };
}

/** allowedMethods over one route table, memoized. */
export function allowedMethodsLookup(routes: () => readonly RouteEntry[]): (path: string) => string[] {
  return memoized((path) => allowedMethods(routes(), path));
}

/**
 * shadowingMethods over one route table, memoized. It runs before every request, so the table is cut
 * once into its distinct routes by segment count (an app registers each handler and middleware of a
 * route as an entry), and a path is matched only against routes of its length or with a wildcard.
 */
export function shadowingMethodsLookup(routes: () => readonly RouteEntry[]): (method: string, path: string) => string[] | null {
  let bySegments: Map<number, RouteEntry[]> | null = null;
  let wild: RouteEntry[] = [];
  const candidates = (path: string) => {
    if (!bySegments) {
      bySegments = new Map();
      const seen = new Set<string>();
      for (const r of routes()) {
        const id = `${r.method} ${r.path}`;
        if (r.method === "ALL" || seen.has(id)) continue;
        seen.add(id);
        if (r.path.includes("*") || r.path.includes("?")) wild.push(r);
        else {
          const n = r.path.split("/").length;
          bySegments.set(n, [...(bySegments.get(n) ?? []), r]);
        }
      }
    }
    return [...(bySegments.get(path.split("/").length) ?? []), ...wild];
  };
  const lookup = memoized((key) => {
    const at = key.indexOf(" ");
    const path = key.slice(at + 1);
    return shadowingMethods(candidates(path), key.slice(0, at), path);
  });
  return (method, path) => lookup(`${method} ${path}`);
}
