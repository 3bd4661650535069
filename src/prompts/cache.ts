// The edge cache of template reads (GET|POST /prompt-templates/{identifier}): the read before
// input variables and run()'s overrides, kept in the data centre's Cache API (caches.default), so a
// fetch costs a cache lookup instead of four or more D1 round trips. Rendering stays per request.
//
// The Cache API is per data centre and cannot list its keys, so nothing is purged key by key:
// - A read pinned to a version number is kept until what it was read from changes, anywhere. Every
//   hit proves it first with one small D1 query: the generations it was read at (its template's and
//   those of every snippet name it looked up, found or not) must still hold. Migration 0028's triggers
//   move a template's generation on with any change to it, its versions, labels or external IDs.
// - A read by label, or of the latest version, is answered without D1 for at most PROMPT_CACHE_TTL_MS.
//   A registry write stamps its workspace's purge time in the data centre that took it, before it
//   answers; an entry read before that stamp is not answered there. Other data centres answer theirs
//   until the TTL runs out: that is the staleness bound.
// - `Cache-Control: no-cache` (or no-store) reads fresh; so does a request whose control-database
//   bookmark is newer than the entry's (its own publish, say). D1 bookmarks sort oldest to newest.
// Authorization runs before any of this: a hit never answers a request its key could not make.

/** The response header that says how a read was answered: hit, miss or bypass. */
export const CACHE_STATE_HEADER = "X-PromptEdge-Cache";

/** hit: from the cache; miss: read from D1 (and kept); bypass: read fresh because the request asked. */
export type CacheState = "hit" | "miss" | "bypass";

/** The default of PROMPT_CACHE_TTL_MS. */
export const DEFAULT_PROMPT_CACHE_TTL_MS = 5_000;

/** How long a pinned entry may sit in a data centre: each hit proves it anyway. */
const PINNED_MAX_AGE_S = 86_400;

/** Where entries live under the Worker's own origin (the Cache API's advice: keys on the zone's host). */
const KEY_PATH = "/.promptedge/prompt-cache";

/** Everything that changes a read before rendering. */
export interface ReadKey {
  workspaceId: number;
  identifier: string;
  version?: number | null;
  label?: string | null;
}

/** What the request says about how fresh its answer must be. */
export interface ReadRequest {
  /** The origin the Worker was reached at (https://host). */
  origin: string;
  /** `Cache-Control: no-cache` or `no-store`. */
  fresh: boolean;
  /**
   * Where the request's work after its answer goes (ctx.waitUntil): a read is kept there, so a miss
   * answers without waiting for the cache. Without it the keeping is awaited.
   */
  defer?(work: Promise<unknown>): void;
}

/** How a read is made, and how a pinned one is proven still true. */
export interface ReadSource<T, P> {
  /** Names the shape of `T`: a new shape never meets entries of the old one. */
  format: string;
  load(): Promise<T>;
  /** What the read rests on, as the read itself recorded it. */
  pin(value: T): P;
  /** Whether the database still holds `pin` (one round trip). */
  holds(pin: P): Promise<boolean>;
}

/** The control database's bookmarks as the request knows them (src/db/sessions.ts). */
export interface BookmarkPort {
  /** The bookmark the client sent, if any. */
  sent(): string | null;
  /** The bookmark of what this request has read so far. */
  current(): string | null;
  /** A cached answer's bookmark, handed back to the client with the answer. */
  adopt(bookmark: string): void;
}

export interface PromptCacheOptions {
  /** caches.default; null where there is none (every read is then a miss). */
  cache: Cache | null;
  ttlMs: number;
  now(): number;
  bookmarks: BookmarkPort;
}

interface Entry<T, P> {
  loadedAt: number;
  bookmark: string | null;
  pin?: P;
  value: T;
}

export class PromptCache {
  constructor(private readonly opts: PromptCacheOptions) {}

  /** The read for `key`: from the cache when it may answer, else from `source` (and kept). */
  async read<T, P>(key: ReadKey, request: ReadRequest, source: ReadSource<T, P>): Promise<{ value: T; state: CacheState }> {
    const pinned = key.version != null;
    const { cache, ttlMs } = this.opts;
    if (!cache || (!pinned && ttlMs <= 0)) return { value: await source.load(), state: "miss" };
    const url = entryUrl(request.origin, source.format, key);
    if (request.fresh) return { value: await this.loadAndKeep(cache, url, pinned, source, request), state: "bypass" };
    const [entry, purgedAt] = await Promise.all([
      this.guarded(() => cache.match(url).then((r) => (r ? (r.json() as Promise<Entry<T, P>>) : null)), null),
      pinned ? null : this.guarded(() => cache.match(stampUrl(request.origin, key.workspaceId)).then((r) => (r ? r.json().then((s) => (s as { purgedAt: number }).purgedAt) : null)), null),
    ]);
    if (entry && this.answers(entry, pinned, purgedAt) && (!pinned || (entry.pin !== undefined && (await source.holds(entry.pin))))) {
      if (entry.bookmark) this.opts.bookmarks.adopt(entry.bookmark);
      return { value: entry.value, state: "hit" };
    }
    return { value: await this.loadAndKeep(cache, url, pinned, source, request), state: "miss" };
  }

  /**
   * Label and latest reads of the workspace read before now are not answered in this data centre
   * any more. Called after a registry write commits and before it answers.
   */
  async purge(workspaceId: number, origin: string): Promise<void> {
    const { cache, ttlMs, now } = this.opts;
    if (!cache || ttlMs <= 0) return;
    // The stamp only has to outlive the entries it refuses: those are at most ttlMs old.
    const body = JSON.stringify({ purgedAt: now() });
    await this.guarded(() => cache.put(stampUrl(origin, workspaceId), keepFor(body, Math.ceil(ttlMs / 1000) + 1)), undefined);
  }

  private answers(entry: Entry<unknown, unknown>, pinned: boolean, purgedAt: number | null): boolean {
    const sent = this.opts.bookmarks.sent();
    if (sent && !(entry.bookmark && entry.bookmark >= sent)) return false;
    if (pinned) return true;
    const age = this.opts.now() - entry.loadedAt;
    // Read at the stamp's millisecond or before: it may predate the write (the clock moves in steps).
    return age >= 0 && age <= this.opts.ttlMs && (purgedAt === null || entry.loadedAt > purgedAt);
  }

  private async loadAndKeep<T, P>(cache: Cache, url: string, pinned: boolean, source: ReadSource<T, P>, request: ReadRequest): Promise<T> {
    // Taken before the read: a write that lands during it is after loadedAt, so its stamp refuses the
    // entry, however late the entry is put.
    const loadedAt = this.opts.now();
    const value = await source.load();
    const entry: Entry<T, P> = { loadedAt, bookmark: this.opts.bookmarks.current(), value };
    if (pinned) entry.pin = source.pin(value);
    const maxAge = pinned ? PINNED_MAX_AGE_S : Math.ceil(this.opts.ttlMs / 1000);
    const kept = this.guarded(() => cache.put(url, keepFor(JSON.stringify(entry), maxAge)), undefined);
    if (request.defer) request.defer(kept);
    else await kept;
    return value;
  }

  /** A cache that fails costs the read its speed, never its answer. */
  private async guarded<R>(op: () => Promise<R>, fallback: R): Promise<R> {
    try {
      return await op();
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "prompt cache operation failed", error: String(err) }));
      return fallback;
    }
  }
}

function keepFor(body: string, seconds: number): Response {
  return new Response(body, { headers: { "Content-Type": "application/json", "Cache-Control": `max-age=${Math.max(1, seconds)}` } });
}

function entryUrl(origin: string, format: string, key: ReadKey): string {
  const q = new URLSearchParams({ f: format, id: key.identifier });
  if (key.version != null) q.set("version", String(key.version));
  if (key.label != null) q.set("label", key.label);
  return `${origin}${KEY_PATH}/${key.workspaceId}/read?${q}`;
}

function stampUrl(origin: string, workspaceId: number): string {
  return `${origin}${KEY_PATH}/${workspaceId}/purged`;
}

/** Whether the request asks for an answer read now (`Cache-Control: no-cache` or `no-store`). */
export function asksForFresh(cacheControl: string | null | undefined): boolean {
  return /(^|,)\s*no-(cache|store)\s*(=|,|$)/i.test(cacheControl ?? "");
}
