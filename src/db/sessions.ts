// D1's Sessions API on the request path. Each database a request touches is opened as a session:
// reads (GET, HEAD) may be served by a nearby read replica, anything else starts at the primary. The
// response carries a bookmark per database touched (X-PromptEdge-Bookmark); a client that sends the
// header back is served data at least as new as what it saw or wrote, from whichever replica.
// Pure but for the sessions themselves: the header's format and how bookmarks carry over live here.

export const BOOKMARK_HEADER = "X-PromptEdge-Bookmark";

/** What a database's session starts from when the client sent no bookmark for it. */
export type SessionStart = "first-primary" | "first-unconstrained";

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
// D1 bookmarks are hex groups joined by hyphens; anything else is refused before it reaches D1.
const BOOKMARK = /^[0-9A-Fa-f]{1,64}(-[0-9A-Fa-f]{1,64}){0,7}$/;
const MAX_ENTRIES = 64;

/** The bookmarks a header carries, by database binding; a string says what is wrong with it. */
export function parseBookmarks(value: string | undefined | null): Map<string, string> | string {
  const out = new Map<string, string>();
  if (value === undefined || value === null || value.trim() === "") return out;
  const entries = value.split(",");
  if (entries.length > MAX_ENTRIES) return `at most ${MAX_ENTRIES} bookmarks`;
  for (const raw of entries) {
    const entry = raw.trim();
    const eq = entry.indexOf("=");
    const name = eq > 0 ? entry.slice(0, eq) : "";
    const bookmark = eq > 0 ? entry.slice(eq + 1) : "";
    if (!NAME.test(name) || !BOOKMARK.test(bookmark)) return `"${entry.slice(0, 80)}" is not database=bookmark, as a response's ${BOOKMARK_HEADER} gives it`;
    out.set(name, bookmark);
  }
  return out;
}

/** The header's value: every bookmark, the ones the client sent and did not advance included. */
export function formatBookmarks(bookmarks: ReadonlyMap<string, string>): string | null {
  if (bookmarks.size === 0) return null;
  return [...bookmarks].map(([name, bookmark]) => `${name}=${bookmark}`).join(",");
}

/** The newer of two bookmarks of one database (D1 bookmarks sort oldest to newest). */
const newer = (a: string | null | undefined, b: string | null | undefined): string | null => (a && b ? (a >= b ? a : b) : (a ?? b ?? null));

/** The sessions of one request: one per database, opened on first use. */
export class RequestSessions {
  private readonly opened = new Map<string, D1DatabaseSession>();
  /** Bookmarks of answers this request took from a cache instead of a database (src/prompts/cache.ts). */
  private readonly adopted = new Map<string, string>();

  constructor(
    private readonly start: SessionStart,
    private readonly sent: ReadonlyMap<string, string>,
  ) {}

  /** The database as this request's session of it (a session is used where the binding was). */
  open(name: string, d1: D1Database): D1Database {
    let session = this.opened.get(name);
    if (!session) {
      session = d1.withSession(this.sent.get(name) ?? this.start);
      this.opened.set(name, session);
    }
    // A session prepares and batches statements as the binding does, which is all drizzle and the
    // services ask of it.
    return session as unknown as D1Database;
  }

  /** The bookmark the client sent for a database. */
  sentFor(name: string): string | null {
    return this.sent.get(name) ?? null;
  }

  /** The newest bookmark the request knows for a database: its session's, an adopted one, or the sent one. */
  latest(name: string): string | null {
    return newer(newer(this.sent.get(name), this.adopted.get(name)), this.opened.get(name)?.getBookmark());
  }

  /**
   * A bookmark of data the request answers from a cache: the response hands it back (when newer), so
   * the client's next request reads at least what this answer showed.
   */
  adopt(name: string, bookmark: string): void {
    this.adopted.set(name, newer(this.adopted.get(name), bookmark)!);
  }

  /** The response's header value: the sent bookmarks, advanced by the databases this request used. */
  header(): string | null {
    const all = new Map(this.sent);
    for (const name of new Set([...this.opened.keys(), ...this.adopted.keys()])) {
      const bookmark = this.latest(name);
      if (bookmark) all.set(name, bookmark);
    }
    return formatBookmarks(all);
  }
}
