// A streaming multipart/form-data reader: parts are handed to sinks chunk by chunk as the body
// arrives, so an uploaded archive is never held whole in memory (Request.formData() would buffer it).
import { drainBody } from "./drain";
import { ApiError } from "./errors";

export interface PartInfo {
  name: string;
  filename?: string;
  contentType?: string;
}

/** Receives one part's bytes in order; write() may throw to abort the whole read. */
export interface PartSink {
  write(chunk: Uint8Array): void;
  end(): void;
}

export interface ReadMultipartOptions {
  /** Bytes the whole body may have; more is a 413 (checked as bytes arrive, not only on Content-Length). */
  maxBytes: number;
  onPart(info: PartInfo): PartSink;
}

const MAX_HEADER_BYTES = 16 * 1024;
const encoder = new TextEncoder();
const CRLF = encoder.encode("\r\n");
const HEADER_END = encoder.encode("\r\n\r\n");

/** The boundary of a multipart/form-data Content-Type, or null when it is not one. */
export function boundaryOf(contentType: string | undefined | null): string | null {
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType)) return null;
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : null;
}

export function isMultipart(contentType: string | undefined | null): boolean {
  return !!contentType && /^multipart\/form-data\s*(;|$)/i.test(contentType);
}

function indexOf(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0];
  const last = hay.length - needle.length;
  for (let i = hay.indexOf(first, from); i !== -1 && i <= last; i = hay.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function malformed(why: string): ApiError {
  return new ApiError("validation_error", `body: malformed multipart/form-data (${why})`);
}

/** Content-Disposition parameters: quoted strings (with \" escapes) or bare tokens. */
function dispositionParams(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /;\s*([A-Za-z0-9_*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    out[m[1].toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3];
  }
  return out;
}

function parseHeaders(block: Uint8Array): PartInfo {
  const headers: Record<string, string> = {};
  for (const line of new TextDecoder().decode(block).split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const disposition = headers["content-disposition"];
  if (!disposition || !/^form-data\b/i.test(disposition)) throw malformed("a part has no Content-Disposition: form-data");
  const params = dispositionParams(disposition);
  if (!params.name) throw malformed("a part has no name");
  return { name: params.name, filename: params.filename, contentType: headers["content-type"] };
}

type State = "preamble" | "after-boundary" | "headers" | "body" | "done";

/**
 * Reads the whole body, calling onPart for each part and feeding its sink. Throws ApiError 400 for a
 * malformed body and 413 past maxBytes; errors thrown by sinks propagate unchanged.
 */
export async function readMultipart(body: ReadableStream<Uint8Array> | null, boundary: string, opts: ReadMultipartOptions): Promise<void> {
  if (!body) throw malformed("the body is empty");
  const delimiter = encoder.encode(`\r\n--${boundary}`);
  const reader = body.getReader();
  // The first boundary has no CRLF before it; a virtual one makes every delimiter look alike.
  let buf: Uint8Array = CRLF;
  let state: State = "preamble";
  let sink: PartSink | null = null;
  let total = 0;
  let eof = false;
  try {
    while (state !== "done") {
      if (!eof) {
        const { done, value } = await reader.read();
        if (done) eof = true;
        else {
          total += value.byteLength;
          if (total > opts.maxBytes) throw new ApiError("payload_too_large", `request body is larger than ${opts.maxBytes} bytes`);
          buf = concat(buf, value);
        }
      }
      // Consume as much of the buffer as the current bytes allow.
      for (;;) {
        if (state === "preamble" || state === "body") {
          const at = indexOf(buf, delimiter);
          if (at === -1) {
            // Keep a tail that could be the start of a delimiter split across reads.
            const keep = Math.min(buf.length, delimiter.length - 1);
            if (state === "body" && buf.length > keep) sink!.write(buf.subarray(0, buf.length - keep));
            buf = buf.subarray(buf.length - keep);
            break;
          }
          if (state === "body") {
            if (at > 0) sink!.write(buf.subarray(0, at));
            sink!.end();
            sink = null;
          }
          buf = buf.subarray(at + delimiter.length);
          state = "after-boundary";
        } else if (state === "after-boundary") {
          if (buf.length < 2) break;
          if (buf[0] === 0x2d && buf[1] === 0x2d) {
            state = "done";
            break;
          }
          if (buf[0] !== 0x0d || buf[1] !== 0x0a) throw malformed("a boundary is not followed by a line break");
          buf = buf.subarray(2);
          state = "headers";
        } else if (state === "headers") {
          let end: number;
          let skip: number;
          if (buf.length >= 2 && buf[0] === 0x0d && buf[1] === 0x0a) {
            end = 0;
            skip = 2;
          } else {
            end = indexOf(buf, HEADER_END);
            skip = 4;
          }
          if (end === -1) {
            if (buf.length > MAX_HEADER_BYTES) throw malformed("part headers are too long");
            break;
          }
          const info = parseHeaders(buf.subarray(0, end));
          buf = buf.subarray(end + skip);
          sink = opts.onPart(info);
          state = "body";
        } else break;
      }
      if (eof && state !== "done") throw malformed("the body ends before the closing boundary");
    }
  } catch (err) {
    // A refused upload (too large, a bomb, malformed) is drained before it is answered.
    await drainBody(reader);
    throw err;
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** A sink that keeps a small text field (a JSON string), refusing more than maxBytes. */
export class TextFieldSink implements PartSink {
  private chunks: Uint8Array[] = [];
  private size = 0;
  value: string | null = null;

  constructor(
    private readonly field: string,
    private readonly maxBytes: number,
  ) {}

  write(chunk: Uint8Array): void {
    this.size += chunk.byteLength;
    if (this.size > this.maxBytes) throw new ApiError("payload_too_large", `${this.field}: is larger than ${this.maxBytes} bytes`);
    this.chunks.push(chunk);
  }

  end(): void {
    const all = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      all.set(c, at);
      at += c.byteLength;
    }
    this.value = new TextDecoder().decode(all);
    this.chunks = [];
  }
}

/** Drops the bytes of a part nobody asked for (they still count toward the body limit). */
export const DISCARD: PartSink = { write() {}, end() {} };
