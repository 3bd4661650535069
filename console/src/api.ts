// The console's only way to the API: same-origin fetch with the key as X-API-KEY. The key lives in
// this tab's sessionStorage (never in a URL, never in localStorage), entered once per tab.
//
// The helpers take a route as the API's OpenAPI document spells it ("/prompt-templates/{identifier}")
// with the values of its placeholders, and are typed by console/src/api.gen.ts, generated from that
// document (scripts/lib/api-types.mjs): a path the API does not answer, a wrong body or query name,
// or an answer read wrongly fails `tsc -p console`.
import { createParser } from "eventsource-parser";
import type { Answers, Bodies, Queries } from "./api.gen";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
/** The paths the API answers JSON to with `M`. */
export type PathOf<M extends Method> = { [K in keyof Answers]: K extends `${M} ${infer P}` ? P : never }[keyof Answers];
/** What "<METHOD> <path>" answers (its 2xx JSON; null for a 204). */
export type AnswerOf<K extends string> = K extends keyof Answers ? Answers[K] : never;
/** The JSON body "<METHOD> <path>" reads. */
export type BodyOf<K extends string> = K extends keyof Bodies ? Bodies[K] : never;
/** The values of a path's {placeholders}. */
type Params<P extends string> = P extends `${string}{${infer N}}${infer R}` ? { [k in N]: string | number } & Params<R> : unknown;
/** The query "<METHOD> <path>" reads: its parameters' names and types (one value for a list), null or undefined for none. */
type QueryOf<K extends string> = K extends keyof Queries ? { [N in keyof Queries[K]]: OneOf<Queries[K][N]> | null } : never;
type OneOf<V> = V extends readonly (infer E)[] ? E : V;
/** A path's placeholder values, when it has placeholders. */
type ParamArgs<P extends string> = P extends `${string}{${string}}${string}` ? [params: Params<P>] : [];
type GetArgs<P extends string> =
  Record<never, never> extends QueryOf<`GET ${P}`> ? [...ParamArgs<P>, query?: QueryOf<`GET ${P}`>] : [...ParamArgs<P>, query: QueryOf<`GET ${P}`>];
type WriteArgs<M extends Method, P extends string> = `${M} ${P}` extends keyof Bodies ? [...ParamArgs<P>, body: BodyOf<`${M} ${P}`>] : ParamArgs<P>;

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

type QueryValue = string | number | boolean | null | undefined;
type Query = Record<string, QueryValue>;

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

/** One call: the parsed JSON answer (null for an empty one), or the ApiFailure of a refusal. */
async function request(method: Method, path: string, opts: { query?: Query; body?: unknown; key?: string } = {}): Promise<unknown> {
  const res = await fetch(withQuery(path, opts.query), {
    method,
    headers: headersFor(opts.key ?? savedKey(), opts.body !== undefined),
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    credentials: "omit",
    cache: "no-store",
  });
  if (!res.ok) throw await failureOf(res, Boolean(opts.key));
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

/**
 * POSTs `body` and reads the answer as server-sent events (POST /api/public/v2/prompt-runs with
 * stream: true): each event's name and parsed data go to `onEvent` as they arrive. A refusal
 * (not 2xx) throws its ApiFailure before any event.
 */
export async function postEvents<P extends PathOf<"POST">>(path: P, body: BodyOf<`POST ${P}`>, onEvent: (event: string, data: unknown) => void): Promise<void> {
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

/** Whether `key` works: any call that needs a key tells. */
/** Whether the key is known: a key without the scope of this read (403) is a key all the same (its views say what it may not do). */
export const tryKey = (key: string) =>
  request("GET", "/prompt-templates" satisfies PathOf<"GET">, { query: { per_page: 1 }, key }).catch((err: unknown) => {
    if (!(err instanceof ApiFailure && err.status === 403)) throw err;
  });

const hasParams = (path: string) => path.includes("{");

/** The path with each {name} replaced by its value, encoded. */
function fill(path: string, params: unknown): string {
  const values = params as Record<string, string | number>;
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(values[name])));
}

/** GET `path` ({name} placeholders filled from `params`, when it has some) with `query`: its 2xx JSON. */
export function get<P extends PathOf<"GET">>(path: P, ...args: GetArgs<P>): Promise<AnswerOf<`GET ${P}`>> {
  const [params, query] = hasParams(path) ? args : [undefined, ...args];
  return request("GET", fill(path, params), { query: query as Query | undefined }) as Promise<AnswerOf<`GET ${P}`>>;
}

/** A write with `method`: `body` (an empty object when the route reads none) to `path`, placeholders filled from `params`. */
const write =
  <M extends "POST" | "PUT" | "PATCH">(method: M) =>
  <P extends PathOf<M>>(path: P, ...args: WriteArgs<M, P>): Promise<AnswerOf<`${M} ${P}`>> => {
    const [params, body] = hasParams(path) ? args : [undefined, ...args];
    return request(method, fill(path, params), { body: body ?? {} }) as Promise<AnswerOf<`${M} ${P}`>>;
  };
export const post = write("POST");
export const patch = write("PATCH");
export const put = write("PUT");

export function del<P extends PathOf<"DELETE">>(path: P, ...args: ParamArgs<P>): Promise<AnswerOf<`DELETE ${P}`>> {
  return request("DELETE", fill(path, args[0])) as Promise<AnswerOf<`DELETE ${P}`>>;
}
