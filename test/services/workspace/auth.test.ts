import { describe, expect, it } from "vitest";
import { AuthCache } from "../../../src/services/workspace/auth";

const auth = (n: number) => ({ workspaceId: n, userId: n, userEmail: `${n}@x`, apiKeyId: n });

describe("AuthCache", () => {
  it("serves an entry until its time is up", () => {
    let now = 1_000;
    const cache = new AuthCache(10, () => now);
    cache.set("h1", auth(1), 500);
    expect(cache.get("h1")).toEqual(auth(1));
    now = 1_499;
    expect(cache.get("h1")).toEqual(auth(1));
    now = 1_500;
    expect(cache.get("h1")).toBeNull();
    expect(cache.size).toBe(0);
  });

  it("serves a reader only an entry younger than the age it asks for, and keeps it for the others", () => {
    let now = 0;
    const cache = new AuthCache(10, () => now);
    cache.set("h", auth(1), 60_000);
    now = 4_999;
    expect(cache.get("h", 5_000)).toEqual(auth(1));
    now = 5_000;
    expect(cache.get("h", 5_000)).toBeNull();
    expect(cache.get("h", 60_000)).toEqual(auth(1));
    // Verified again: young for every reader.
    cache.set("h", auth(1), 60_000);
    expect(cache.get("h", 5_000)).toEqual(auth(1));
    expect(cache.size).toBe(1);
  });

  it("keeps nothing with a TTL of 0, and forgets a deleted key", () => {
    const cache = new AuthCache();
    cache.set("h", auth(1), 0);
    expect(cache.get("h")).toBeNull();
    cache.set("h", auth(1), 1000);
    cache.delete("h");
    expect(cache.get("h")).toBeNull();
  });

  it("drops the oldest entry when full", () => {
    const cache = new AuthCache(2);
    cache.set("a", auth(1), 1000);
    cache.set("b", auth(2), 1000);
    cache.set("c", auth(3), 1000);
    expect(cache.size).toBe(2);
    expect(cache.get("a")).toBeNull();
    expect(cache.get("c")).toEqual(auth(3));
  });
});
