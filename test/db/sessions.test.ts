import { describe, expect, it } from "vitest";
import { BOOKMARK_HEADER, formatBookmarks, parseBookmarks, RequestSessions } from "../../src/db/sessions";

const BM = "00000000-0000001a-00000000-00000000000000000000000000000000";

describe("bookmark header", () => {
  it("reads database=bookmark pairs and writes them back the same way", () => {
    const parsed = parseBookmarks(` DB=${BM}, LOGS_0=0000000a-0000000b `);
    expect(parsed).toEqual(new Map([["DB", BM], ["LOGS_0", "0000000a-0000000b"]]));
    expect(formatBookmarks(parsed as Map<string, string>)).toBe(`DB=${BM},LOGS_0=0000000a-0000000b`);
  });

  it("takes no header, or an empty one, as no bookmarks", () => {
    expect(parseBookmarks(undefined)).toEqual(new Map());
    expect(parseBookmarks("  ")).toEqual(new Map());
    expect(formatBookmarks(new Map())).toBeNull();
  });

  it.each([
    ["no name", `=${BM}`],
    ["no bookmark", "DB="],
    ["not hex", "DB=zz-11"],
    ["a quote", `DB="${BM}"`],
    ["a name that is not a binding", `1DB=${BM}`],
    ["SQL", "DB=1;DROP TABLE x"],
  ])("refuses %s", (_, value) => {
    expect(typeof parseBookmarks(value)).toBe("string");
  });

  it("takes 64 bookmarks and refuses 65", () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `D${i}=${BM}`).join(",");
    expect(parseBookmarks(many(64))).toBeInstanceOf(Map);
    expect(typeof parseBookmarks(many(65))).toBe("string");
  });
});

describe("RequestSessions", () => {
  /** A binding whose sessions remember how they started and hand out a fixed bookmark. */
  const fakeD1 = (bookmark: string | null, started: string[]) =>
    ({
      withSession(from: string) {
        started.push(from);
        return { getBookmark: () => bookmark, prepare: () => null, batch: async () => [] };
      },
    }) as unknown as D1Database;

  it("starts reads unconstrained, or from the client's bookmark, and opens each database once", () => {
    const started: string[] = [];
    const sessions = new RequestSessions("first-unconstrained", new Map([["LOGS_0", BM]]));
    const db = fakeD1("0000000f-00000001", started);
    sessions.open("DB", db);
    sessions.open("DB", db);
    sessions.open("LOGS_0", fakeD1("0000000f-00000002", started));
    expect(started).toEqual(["first-unconstrained", BM]);
    expect(sessions.header()).toBe("LOGS_0=0000000f-00000002,DB=0000000f-00000001");
  });

  it("hands back a cached answer's bookmark, or the newest it knows of a database", () => {
    const older = "0000000a-00000001";
    const newer = "0000000a-00000009";
    // Nothing opened: the adopted bookmark goes out, unless the client already sent a newer one.
    const cached = new RequestSessions("first-unconstrained", new Map([["DB", older]]));
    expect(cached.sentFor("DB")).toBe(older);
    cached.adopt("DB", newer);
    cached.adopt("DB", older);
    expect(cached.latest("DB")).toBe(newer);
    expect(cached.header()).toBe(`DB=${newer}`);
    const sentNewer = new RequestSessions("first-unconstrained", new Map([["DB", newer]]));
    sentNewer.adopt("DB", older);
    expect(sentNewer.header()).toBe(`DB=${newer}`);
    // A session that has read further wins over an adopted bookmark.
    const opened = new RequestSessions("first-unconstrained", new Map());
    opened.open("DB", fakeD1("0000000b-00000000", []));
    opened.adopt("DB", newer);
    expect(opened.header()).toBe("DB=0000000b-00000000");
    expect(opened.sentFor("DB")).toBeNull();
  });

  it("hands back the bookmarks it was sent for databases the request did not touch", () => {
    const sessions = new RequestSessions("first-primary", new Map([["LOGS_1", BM]]));
    sessions.open("DB", fakeD1(null, []));
    expect(sessions.header()).toBe(`LOGS_1=${BM}`);
    expect(BOOKMARK_HEADER).toBe("X-PromptEdge-Bookmark");
  });
});
