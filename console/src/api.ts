// The console's only way to the API: same-origin fetch with the key as X-API-KEY. The key lives in
// this tab's sessionStorage (never in a URL, never in localStorage), entered once per tab.
import { createParser } from "eventsource-parser";

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
    /** A validation error's fields and the rule each broke (`prompt_version.prompt_template.messages[0].role`). */
    readonly details: { field: string; rule: string }[] = [],
  ) {
    super(message);
  }

  /** The fields and rules: the details, or else the message's own "field: rule" parts (errors the services raise). */
  get rules(): { field: string; rule: string }[] {
    if (this.details.length || this.code !== "validation_error") return this.details;
    return this.message.split("; ").flatMap((part) => {
      const m = /^([A-Za-z_][\w.[\]]*): (.+)$/s.exec(part);
      return m ? [{ field: m[1], rule: m[2] }] : [];
    });
  }

  /** The rules broken at `field` or inside it. */
  at(field: string): string[] {
    return this.rules.filter((d) => d.field === field || d.field.startsWith(`${field}.`) || d.field.startsWith(`${field}[`)).map((d) => d.rule);
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

function headersFor(key: string | null, hasBody: boolean, accept = "application/json"): Record<string, string> {
  const headers: Record<string, string> = { Accept: accept };
  if (key) headers["X-API-KEY"] = key;
  if (hasBody) headers["Content-Type"] = "application/json";
  return headers;
}

/** The failure an answer that is not 2xx stands for, with the error shape's message, code and details. */
async function failureOf(res: Response, own: boolean): Promise<ApiFailure> {
  const text = await res.text();
  let data: { message?: unknown; error?: unknown; details?: unknown } | null = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (res.status === 401 && !own) onUnauthorized();
  const message = typeof data?.message === "string" ? data.message : `${res.status} ${res.statusText}`;
  const details = Array.isArray(data?.details) ? (data.details as { field: string; rule: string }[]) : [];
  return new ApiFailure(res.status, message, typeof data?.error === "string" ? data.error : undefined, details);
}

let onUnauthorized: () => void = () => {};
/** What to do when the key stops working (revoked, or mistyped): ask for it again. */
export function whenUnauthorized(fn: () => void) {
  onUnauthorized = fn;
}

export async function api<T = any>(method: string, path: string, opts: { query?: Query; body?: unknown; key?: string } = {}): Promise<T> {
  const res = await fetch(withQuery(path, opts.query), {
    method,
    headers: headersFor(opts.key ?? savedKey(), opts.body !== undefined),
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    credentials: "omit",
    cache: "no-store",
  });
  if (!res.ok) throw await failureOf(res, Boolean(opts.key));
  const text = await res.text();
  return (text ? JSON.parse(text) : null) as T;
}

/**
 * POSTs `body` and reads the answer as server-sent events (POST /api/public/v2/prompt-runs with
 * stream: true): each event's name and parsed data go to `onEvent` as they arrive. A refusal
 * (not 2xx) throws its ApiFailure before any event.
 */
export async function postEvents(path: string, body: unknown, onEvent: (event: string, data: unknown) => void): Promise<void> {
  const res = await fetch(path, {
    method: "POST",
    headers: headersFor(savedKey(), true, "text/event-stream"),
    body: JSON.stringify(body),
    credentials: "omit",
    cache: "no-store",
  });
  if (!res.ok) throw await failureOf(res, false);
  if (!res.body) throw new ApiFailure(res.status, "the answer has no body");
  const parser = createParser({ onEvent: (ev) => onEvent(ev.event ?? "message", JSON.parse(ev.data)) });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
}

export const get = <T = any>(path: string, query?: Query) => api<T>("GET", path, { query });
export const post = <T = any>(path: string, body?: unknown) => api<T>("POST", path, { body: body ?? {} });
export const patch = <T = any>(path: string, body?: unknown) => api<T>("PATCH", path, { body: body ?? {} });
export const del = <T = any>(path: string) => api<T>("DELETE", path);
