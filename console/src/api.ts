// The console's only way to the API: same-origin fetch with the key as X-API-KEY. The key lives in
// this tab's sessionStorage (never in a URL, never in localStorage), entered once per tab.

const KEY_SLOT = "promptedge.console.key";

export function savedKey(): string | null {
  return sessionStorage.getItem(KEY_SLOT);
}

export function saveKey(key: string) {
  sessionStorage.setItem(KEY_SLOT, key);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_SLOT);
}

/** An answer that was not 2xx, with the service's message (the error shape) when it sent one. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

type Query = Record<string, string | number | boolean | null | undefined>;

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

let onUnauthorized: () => void = () => {};
/** What to do when the key stops working (revoked, or mistyped): ask for it again. */
export function whenUnauthorized(fn: () => void) {
  onUnauthorized = fn;
}

export async function api<T = any>(method: string, path: string, opts: { query?: Query; body?: unknown; key?: string } = {}): Promise<T> {
  const key = opts.key ?? savedKey();
  const headers: Record<string, string> = { Accept: "application/json" };
  if (key) headers["X-API-KEY"] = key;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(withQuery(path, opts.query), {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    credentials: "omit",
    cache: "no-store",
  });
  const text = await res.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    if (res.status === 401 && !opts.key) onUnauthorized();
    throw new ApiFailure(res.status, data?.message ?? `${res.status} ${res.statusText}`, data?.error);
  }
  return data as T;
}

export const get = <T = any>(path: string, query?: Query) => api<T>("GET", path, { query });
export const post = <T = any>(path: string, body?: unknown) => api<T>("POST", path, { body: body ?? {} });
export const patch = <T = any>(path: string, body?: unknown) => api<T>("PATCH", path, { body: body ?? {} });
export const del = <T = any>(path: string) => api<T>("DELETE", path);
