// Reads a JSON body that carries a base64 file (a sheet import's `source.file_content_base64`, a
// dataset version's `file_content_base64`) without ever holding the file in memory: the JSON is
// parsed as it streams in, the file field is decoded in chunks and written to R2 one part at a time;
// every other field is small and kept. A file over the limit is refused (413) while streaming, and
// its partial upload is aborted, so nothing is stored.
import { Base64Error, Base64StreamDecoder } from "./base64-stream";
import { drainBody } from "./drain";
import { ApiError } from "./errors";
import { JsonStreamError, JsonStreamReader, type JsonPath } from "./json-stream";
import { R2MultipartWriter } from "./r2-multipart";

export interface UploadLimits {
  /** Largest decoded file. */
  maxFileBytes: number;
  /** Largest total of the body's other fields, in characters. */
  maxFieldChars: number;
  partBytes: number;
}

export interface ReceivedFile {
  /** Where the file was stored; null when nothing was stored (an empty or undecodable file). */
  blobKey: string | null;
  bytes: number;
  /** Why the file content cannot be used (bad base64). */
  error: string | null;
}

export interface ReceivedBody {
  /** The body as sent, except that the file field holds "" (its bytes are in `file`). */
  fields: Record<string, unknown>;
  /** null when the body had no file field. */
  file: ReceivedFile | null;
}

/** Largest body worth reading for a file of maxFileBytes: its base64 (with line breaks) plus the other fields. */
export function maxBodyBytes(limits: UploadLimits): number {
  return Math.ceil((Math.ceil(limits.maxFileBytes / 3) * 4 * 105) / 100) + limits.maxFieldChars + 1024;
}

/** The 413 of a file over the limit; `field` names the file field as the client wrote it. */
export const fileTooLarge = (field: string, limits: UploadLimits) => new ApiError("payload_too_large", `${field}: the file is larger than ${limits.maxFileBytes} bytes`);

const samePath = (a: JsonPath, b: readonly string[]) => a.length === b.length && a.every((k, i) => k === b[i]);

/**
 * Streams `body` (JSON) into R2 under `blobKey`: the string at `filePath` is the base64 file; objects on
 * the way to it are walked, every other value is captured whole (within limits.maxFieldChars in all).
 */
export async function receiveFileBody(
  body: ReadableStream<Uint8Array> | null,
  bucket: R2Bucket,
  blobKey: string,
  limits: UploadLimits,
  filePath: readonly string[],
): Promise<ReceivedBody> {
  const field = filePath.join(".");
  const fields: Record<string, unknown> = {};
  /** The objects walked so far, by their path: where captured values and the "" placeholder go. */
  const containers = new Map<string, Record<string, unknown>>([["", fields]]);
  const parentOf = (path: JsonPath) => containers.get(path.slice(0, -1).join("\u0000"));
  let file: ReceivedFile | null = null;
  const decoder = new Base64StreamDecoder();
  const writer = new R2MultipartWriter(bucket, blobKey, limits.partBytes);
  const pending: Uint8Array[] = [];
  let fileDone = false;
  const twice = () => new ApiError("validation_error", `${field}: appears more than once`);

  const take = (bytes: Uint8Array) => {
    if (bytes.length > 0) pending.push(bytes);
  };
  const decodeInto = (f: ReceivedFile, step: () => Uint8Array) => {
    if (f.error) return;
    try {
      take(step());
    } catch (err) {
      if (!(err instanceof Base64Error)) throw err;
      f.error = `${field} is not valid base64: ${err.message}`;
    }
  };
  const json = new JsonStreamReader(
    {
      descend: (path, kind) => {
        if (path.length === 0) {
          if (kind !== "object") throw new ApiError("validation_error", "body: must be a JSON object");
          return true;
        }
        return kind === "object" && path.length < filePath.length && samePath(path, filePath.slice(0, path.length));
      },
      streamString: (path) => samePath(path, filePath),
      onContainerStart: (path) => {
        if (path.length === 0) return;
        const obj: Record<string, unknown> = {};
        parentOf(path)![path[path.length - 1] as string] = obj;
        containers.set(path.join("\u0000"), obj);
      },
      onValue: (path, value) => {
        if (path.length === 0) throw new ApiError("validation_error", "body: must be a JSON object");
        parentOf(path)![path[path.length - 1] as string] = value;
      },
      onStringChunk: (_path, chunk) => {
        if (fileDone) throw twice();
        file ??= { blobKey: null, bytes: 0, error: null };
        decodeInto(file, () => decoder.push(chunk));
      },
      onStringEnd: (path) => {
        if (fileDone) throw twice();
        fileDone = true;
        file ??= { blobKey: null, bytes: 0, error: null };
        parentOf(path)![path[path.length - 1] as string] = "";
        decodeInto(file, () => decoder.end());
      },
    },
    limits.maxFieldChars,
  );
  const flush = async () => {
    const f = file as ReceivedFile | null;
    for (const bytes of pending) {
      if (!f || f.error) break;
      if (writer.bytesWritten + bytes.length > limits.maxFileBytes) throw fileTooLarge(field, limits);
      await writer.write(bytes);
    }
    pending.length = 0;
    // Raw characters, escapes as written: a base64 field with \r\n line breaks is all file, not other fields.
    if (json.position - json.streamedChars > limits.maxFieldChars) {
      throw new ApiError("payload_too_large", `body: the fields other than ${field} are larger than ${limits.maxFieldChars} characters`);
    }
  };

  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  const reader = body?.getReader();
  let sawData = false;
  try {
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        let chunk: string;
        try {
          chunk = text.decode(value, { stream: true });
        } catch {
          throw new ApiError("validation_error", "body: is not valid UTF-8");
        }
        if (!sawData && chunk.trim() !== "") sawData = true;
        json.write(chunk);
        await flush();
      }
    }
    const rest = text.decode();
    if (rest) json.write(rest);
    // An empty body is an empty object (the route's schema says what is then missing).
    if (sawData) json.end();
    await flush();
    const f = file as ReceivedFile | null;
    if (f && !f.error && writer.bytesWritten > 0) {
      f.bytes = await writer.finish();
      f.blobKey = blobKey;
    } else {
      await writer.abort();
    }
    return { fields, file: f };
  } catch (err) {
    await writer.abort();
    // Refused before it all arrived: read to its end and dropped, so the connection stays clean.
    if (reader) await drainBody(reader);
    if (err instanceof JsonStreamError) {
      throw new ApiError("validation_error", `body: malformed JSON (${err.message})`);
    }
    if (err instanceof TypeError && /UTF-8|decode/i.test(err.message)) throw new ApiError("validation_error", "body: is not valid UTF-8");
    throw err;
  }
}
