// The edge cache's rules on their own (src/prompts/cache.ts), with a clock the test moves and the
// runtime's real caches.default (it works in the local runtime, as deployed on a custom domain). Each
// test keys its entries under an origin of its own.
import { describe, expect, it } from "vitest";
import { asksForFresh, PromptCache, type BookmarkPort, type ReadKey, type ReadSource } from "../../src/prompts/cache";

const TTL = 5_000;

function setup(opts: { ttlMs?: number; sent?: string | null; cache?: Cache | null } = {}) {
  let now = 1_000_000;
  let bookmark = "00000000-00000001";
  const adopted: string[] = [];
  const bookmarks: BookmarkPort = { sent: () => opts.sent ?? null, current: () => bookmark, adopt: (b) => void adopted.push(b) };
  const cache = new PromptCache({ cache: opts.cache === undefined ? caches.default : opts.cache, ttlMs: opts.ttlMs ?? TTL, now: () => now, bookmarks });
  const origin = `https://unit-${crypto.randomUUID()}.test`;
  let data = "v1";
  let holds = true;
  let loads = 0;
  const source: ReadSource<{ text: string }, { at: string }> = {
    format: "unit-1",
    load: async () => (loads++, { text: data }),
    pin: (v) => ({ at: v.text }),
    holds: async (pin) => holds && pin.at === data,
  };
  const read = (key: Partial<ReadKey> = {}, fresh = false, defer?: (work: Promise<unknown>) => void) =>
    cache.read({ workspaceId: 1, identifier: "t", ...key }, { origin, fresh, defer }, source);
  return {
    cache,
    origin,
    read,
    adopted,
    loads: () => loads,
    tick: (ms: number) => void (now += ms),
    write: (text: string) => void (data = text),
    setHolds: (h: boolean) => void (holds = h),
    setBookmark: (b: string) => void (bookmark = b),
  };
}

describe("reads by label or latest", () => {
  it("are answered from the cache up to PROMPT_CACHE_TTL_MS old, and read again one millisecond later", async () => {
    const t = setup();
    expect(await t.read()).toEqual({ value: { text: "v1" }, state: "miss" });
    t.write("v2");
    t.tick(TTL);
    expect(await t.read()).toEqual({ value: { text: "v1" }, state: "hit" });
    t.tick(1);
    expect(await t.read()).toEqual({ value: { text: "v2" }, state: "miss" });
    expect(t.loads()).toBe(2);
  });

  it("are not answered after a purge of their workspace, and are again once read after it", async () => {
    const t = setup();
    await t.read({ label: "prod" });
    t.tick(10);
    t.write("v2");
    await t.cache.purge(1, t.origin);
    // Read in the purge's own millisecond: it may predate the write, so it is refused once more.
    expect(await t.read({ label: "prod" })).toEqual({ value: { text: "v2" }, state: "miss" });
    expect((await t.read({ label: "prod" })).state).toBe("miss");
    t.tick(1);
    expect((await t.read({ label: "prod" })).state).toBe("miss");
    expect(await t.read({ label: "prod" })).toEqual({ value: { text: "v2" }, state: "hit" });
  });

  it("a purge of another workspace changes nothing", async () => {
    const t = setup();
    await t.read();
    t.tick(10);
    await t.cache.purge(2, t.origin);
    expect((await t.read()).state).toBe("hit");
  });

  it("keys on workspace, identifier, label and version: none answers for another", async () => {
    const t = setup();
    await t.read({ label: "prod" });
    t.tick(1);
    expect((await t.read({ label: "staging" })).state).toBe("miss");
    expect((await t.read({ label: "prod", workspaceId: 2 })).state).toBe("miss");
    expect((await t.read({ label: "prod", identifier: "u" })).state).toBe("miss");
    expect((await t.read({ label: "prod" })).state).toBe("hit");
    expect((await t.read()).state).toBe("miss");
    expect((await t.read({ version: 1 })).state).toBe("miss");
  });

  it("PROMPT_CACHE_TTL_MS = 0 keeps none (pinned reads are still kept)", async () => {
    const t = setup({ ttlMs: 0 });
    await t.read();
    expect((await t.read()).state).toBe("miss");
    await t.read({ version: 3 });
    expect((await t.read({ version: 3 })).state).toBe("hit");
  });
});

describe("reads pinned to a version", () => {
  it("are kept past the TTL while the database still holds what they were read from", async () => {
    const t = setup();
    await t.read({ version: 1 });
    t.tick(10 * TTL);
    expect(await t.read({ version: 1 })).toEqual({ value: { text: "v1" }, state: "hit" });
  });

  it("are read again as soon as the proof fails, whatever the time, and purges do not touch them", async () => {
    const t = setup();
    await t.read({ version: 1 });
    t.tick(1);
    await t.cache.purge(1, t.origin);
    t.tick(1);
    expect((await t.read({ version: 1 })).state).toBe("hit");
    t.write("v1 relabelled");
    expect(await t.read({ version: 1 })).toEqual({ value: { text: "v1 relabelled" }, state: "miss" });
    expect((await t.read({ version: 1 })).state).toBe("hit");
    t.setHolds(false);
    expect((await t.read({ version: 1 })).state).toBe("miss");
  });
});

describe("freshness the request asks for", () => {
  it("Cache-Control: no-cache reads fresh (bypass) and refreshes the entry", async () => {
    const t = setup();
    await t.read();
    t.write("v2");
    t.tick(1);
    expect(await t.read({}, true)).toEqual({ value: { text: "v2" }, state: "bypass" });
    t.tick(1);
    expect(await t.read()).toEqual({ value: { text: "v2" }, state: "hit" });
  });

  it("a bookmark newer than the entry's reads fresh; one no newer is answered, and the entry's bookmark handed back", async () => {
    const entryBookmark = "00000000-00000005";
    const first = setup();
    first.setBookmark(entryBookmark);
    await first.read();
    // Same origin and cache, another request: one sent the bookmark of a later write.
    const later = new PromptCache({
      cache: caches.default,
      ttlMs: TTL,
      now: () => 1_000_001,
      bookmarks: { sent: () => "00000000-00000006", current: () => "00000000-00000006", adopt: () => {} },
    });
    const source: ReadSource<{ text: string }, null> = { format: "unit-1", load: async () => ({ text: "fresh" }), pin: () => null, holds: async () => true };
    const key = { workspaceId: 1, identifier: "t" };
    expect(await later.read(key, { origin: first.origin, fresh: false }, source)).toEqual({ value: { text: "fresh" }, state: "miss" });

    const again = setup({ sent: "00000000-00000005" });
    again.setBookmark(entryBookmark);
    await again.read();
    again.tick(1);
    again.adopted.length = 0;
    expect((await again.read()).state).toBe("hit");
    expect(again.adopted).toEqual([entryBookmark]);
  });

  it("reads Cache-Control's no-cache and no-store, in any case and place", () => {
    for (const v of ["no-cache", "No-Cache", "max-age=0, no-cache", "no-store", 'no-cache="Set-Cookie"', " private ,no-store "]) expect(asksForFresh(v), v).toBe(true);
    for (const v of [undefined, "", "max-age=60", "no-transform", "x-no-cache", "no-cacheable"]) expect(asksForFresh(v), String(v)).toBe(false);
  });
});

describe("keeping a read", () => {
  it("hands the put to defer (the request's waitUntil) when there is one: the answer does not wait for it", async () => {
    const t = setup();
    const deferred: Promise<unknown>[] = [];
    expect(await t.read({}, false, (work) => void deferred.push(work))).toEqual({ value: { text: "v1" }, state: "miss" });
    expect(deferred).toHaveLength(1);
    await Promise.all(deferred);
    t.tick(1);
    expect((await t.read()).state).toBe("hit");
  });

  it("a read kept after a purge it began before is not answered, however late it lands", async () => {
    const t = setup();
    const deferred: Promise<unknown>[] = [];
    const late = t.read({}, false, (work) => void deferred.push(work));
    await late;
    t.tick(5);
    await t.cache.purge(1, t.origin);
    await Promise.all(deferred);
    t.tick(1);
    expect((await t.read()).state).toBe("miss");
  });
});

describe("without a working cache", () => {
  it("reads every time when there is none, and answers when the cache throws", async () => {
    const none = setup({ cache: null });
    await none.read();
    expect((await none.read()).state).toBe("miss");
    const failing = { match: () => Promise.reject(new Error("down")), put: () => Promise.reject(new Error("down")) } as unknown as Cache;
    const broken = setup({ cache: failing });
    expect(await broken.read()).toEqual({ value: { text: "v1" }, state: "miss" });
    await expect(broken.cache.purge(1, broken.origin)).resolves.toBeUndefined();
  });
});
