// The MCP server's one way into the API: a request to the REST app in-process (its own fetch, with
// the request's env and execution context), as a given key. Every call passes the same middleware,
// auth, rate limits, validation, errors and log line as an HTTP request to that route, and no
// network hop. The D1 bookmark of each answer is handed to the next call, so a tool call reads
// what an earlier call of the same MCP request wrote, from any read replica.
import { BOOKMARK_HEADER } from "../db/sessions";

export interface ApiDoor {
  /** `method pathAndQuery` as `key`, with `body` as JSON when given; the answer as REST gives it. */
  send(method: string, pathAndQuery: string, key: string, body?: unknown): Promise<Response>;
}

interface DoorOptions {
  /** The REST app's fetch, bound to the request's env and execution context. */
  fetch: (request: Request) => Promise<Response>;
  /** The origin the MCP request came to (the edge cache keys template reads by it). */
  origin: string;
  /** The MCP request's id: each call's X-Request-Id is it and a sequence number, so their log lines tie to it. */
  requestId: string;
  /** The X-PromptEdge-Bookmark the MCP request carried. */
  bookmark?: string | null;
}

export function inProcessDoor(options: DoorOptions): ApiDoor & { bookmark(): string | null } {
  let bookmark = options.bookmark ?? null;
  let calls = 0;
  return {
    bookmark: () => bookmark,
    async send(method, pathAndQuery, key, body) {
      const headers = new Headers({ "X-API-KEY": key, Accept: "application/json", "X-Request-Id": `${options.requestId.slice(0, 120)}.${++calls}` });
      if (bookmark) headers.set(BOOKMARK_HEADER, bookmark);
      let text: string | undefined;
      if (body !== undefined) {
        text = JSON.stringify(body);
        headers.set("Content-Type", "application/json");
        // What the runtime adds to a request that arrives over HTTP; the body limits read it first.
        headers.set("Content-Length", String(new TextEncoder().encode(text).byteLength));
      }
      const res = await options.fetch(new Request(options.origin + pathAndQuery, { method, headers, body: text }));
      bookmark = res.headers.get(BOOKMARK_HEADER) ?? bookmark;
      return res;
    },
  };
}
