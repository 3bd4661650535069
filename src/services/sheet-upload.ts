// Reads the body of POST /tables/{id}/sheets without ever holding a file in memory: the JSON is
// parsed as it streams in, `source.file_content_base64` is decoded in chunks and written to R2 one
// part at a time; every other field is small and kept. A file over the limit is refused (413) while
// streaming, and its partial upload is aborted, so nothing is stored.
import { Base64Error, Base64StreamDecoder } from "../lib/base64-stream";
import { ApiError } from "../lib/errors";
import { JsonStreamError, JsonStreamReader, type JsonPath } from "../lib/json-stream";
import { R2MultipartWriter } from "../lib/r2-multipart";

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
  /** Why the file content cannot be imported (bad base64), reported on the operation. */
  error: string | null;
}

export interface ReceivedBody {
  /** Top-level fields other than `source`. */
  fields: Record<string, unknown>;
  /** `source` as sent; when it is an object, file_content_base64 is replaced by "" (its bytes are in `file`). */
  source: unknown;
  file: ReceivedFile | null;
}

const FILE_PATH = ["source", "file_content_base64"];
const isFilePath = (p: JsonPath) => p.length === 2 && p[0] === FILE_PATH[0] && p[1] === FILE_PATH[1];

/** Largest body worth reading for a file of maxFileBytes: its base64 (with line breaks) plus the other fields. */
export function maxBodyBytes(limits: UploadLimits): number {
  return Math.ceil((Math.ceil(limits.maxFileBytes / 3) * 4 * 105) / 100) + limits.maxFieldChars + 1024;
}

const tooLarge = (limits: UploadLimits) =>
  new ApiError("payload_too_large", `source.file_content_base64: the file is larger than ${limits.maxFileBytes} bytes`);

export async function receiveSheetBody(
  body: ReadableStream<Uint8Array> | null,
  bucket: R2Bucket,
  blobKey: string,
  limits: UploadLimits,
): Promise<ReceivedBody> {
  const fields: Record<string, unknown> = {};
  let source: unknown = undefined;
  let sourceFields: Record<string, unknown> | null = null;
  let file: ReceivedFile | null = null;
  const decoder = new Base64StreamDecoder();
  const writer = new R2MultipartWriter(bucket, blobKey, limits.partBytes);
  const pending: Uint8Array[] = [];
  let fileDone = false;

  const take = (bytes: Uint8Array) => {
    if (bytes.length > 0) pending.push(bytes);
  };
  const json = new JsonStreamReader(
    {
      descend: (path, kind) => {
        if (path.length === 0) {
          if (kind !== "object") throw new ApiError("validation_error", "body: must be a JSON object");
          return true;
        }
        return path.length === 1 && path[0] === "source" && kind === "object";
      },
      streamString: (path) => isFilePath(path),
      onContainerStart: (path) => {
        if (path.length === 1) {
          sourceFields = {};
          source = sourceFields;
        }
      },
      onValue: (path, value) => {
        if (path.length === 0) throw new ApiError("validation_error", "body: must be a JSON object");
        if (path.length === 1) {
          if (path[0] === "source") source = value;
          else fields[path[0] as string] = value;
        } else if (sourceFields) {
          sourceFields[path[1] as string] = value;
        }
      },
      onStringChunk: (_path, chunk) => {
        if (fileDone) throw new ApiError("validation_error", "source.file_content_base64: appears more than once");
        file ??= { blobKey: null, bytes: 0, error: null };
        if (file.error) return;
        try {
          take(decoder.push(chunk));
        } catch (err) {
          if (!(err instanceof Base64Error)) throw err;
          file.error = `file_content_base64 is not valid base64: ${err.message}`;
        }
      },
      onStringEnd: () => {
        if (fileDone) throw new ApiError("validation_error", "source.file_content_base64: appears more than once");
        fileDone = true;
        file ??= { blobKey: null, bytes: 0, error: null };
        if (sourceFields) sourceFields.file_content_base64 = "";
        if (file.error) return;
        try {
          take(decoder.end());
        } catch (err) {
          if (!(err instanceof Base64Error)) throw err;
          file.error = `file_content_base64 is not valid base64: ${err.message}`;
        }
      },
    },
    limits.maxFieldChars,
  );

  const flush = async () => {
    const f = file as ReceivedFile | null;
    for (const bytes of pending) {
      if (!f || f.error) break;
      if (writer.bytesWritten + bytes.length > limits.maxFileBytes) throw tooLarge(limits);
      await writer.write(bytes);
    }
    pending.length = 0;
    // Raw characters, escapes as written: a base64 field with \r\n line breaks is all file, not other fields.
    if (json.position - json.streamedChars > limits.maxFieldChars) {
      throw new ApiError("payload_too_large", `body: the fields other than file_content_base64 are larger than ${limits.maxFieldChars} characters`);
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
    // An empty body is an empty object: a blank sheet with the defaults.
    if (sawData) json.end();
    await flush();
    const f = file as ReceivedFile | null;
    if (f && !f.error && writer.bytesWritten > 0) {
      f.bytes = await writer.finish();
      f.blobKey = blobKey;
    } else {
      await writer.abort();
    }
    return { fields, source, file: f };
  } catch (err) {
    await writer.abort();
    await reader?.cancel().catch(() => undefined);
    if (err instanceof JsonStreamError) {
      throw new ApiError("validation_error", `body: malformed JSON (${err.message})`);
    }
    if (err instanceof TypeError && /UTF-8|decode/i.test(err.message)) throw new ApiError("validation_error", "body: is not valid UTF-8");
    throw err;
  }
}
