// Which methods a path is served with, from the app's own route table: a request whose path is known
// but whose method is not gets a 405 naming them, instead of a 404 that reads as "no such path".

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

/** A memo of allowedMethods over one route table, which does not change once the app is built. */
export function allowedMethodsLookup(routes: () => readonly RouteEntry[]): (path: string) => string[] {
  const memo = new Map<string, string[]>();
  return (path) => {
    let hit = memo.get(path);
    if (!hit) {
      hit = allowedMethods(routes(), path);
      // Paths carry ids, so the memo is bounded rather than kept per path forever.
      if (memo.size > 1000) memo.clear();
      memo.set(path, hit);
    }
    return hit;
  };
}
