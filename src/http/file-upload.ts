// The request side of a JSON body carrying a base64 file (sheet imports, dataset versions from a file):
// the content type, the limits from the env, a refusal on Content-Length before anything is read, and
// the streamed receive into R2 (src/lib/file-upload.ts).
import type { Context } from "hono";
import type { AppEnv, Env } from "../env";
import { ApiError } from "../lib/errors";
import { fileTooLarge, maxBodyBytes, receiveFileBody, type ReceivedBody, type UploadLimits } from "../lib/file-upload";
import { maxBytesOf } from "./middleware";

const MIB = 1024 * 1024;

/** IMPORT_MAX_FILE_BYTES (100 MiB) decoded, JSON_MAX_BYTES for the other fields, IMPORT_PART_BYTES parts. */
export function uploadLimits(env: Env): UploadLimits {
  const num = (v: string | undefined, dflt: number, min: number) => {
    const n = Number(v);
    return Number.isSafeInteger(n) && n >= min ? n : dflt;
  };
  return {
    maxFileBytes: num(env.IMPORT_MAX_FILE_BYTES, 100 * MIB, 1),
    maxFieldChars: maxBytesOf(env, "JSON_MAX_BYTES"),
    partBytes: num(env.IMPORT_PART_BYTES, 8 * MIB, 5 * MIB),
  };
}

function isJson(contentType: string): boolean {
  return /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(contentType.trim());
}

/**
 * Reads the request's JSON body, storing the base64 file at `filePath` under `blobKey` in R2. A body
 * that is not JSON is a 415; one declared (Content-Length) or found larger than the file limit a 413.
 */
export async function receiveUpload(c: Context<AppEnv>, blobKey: string, filePath: readonly string[]): Promise<ReceivedBody> {
  const contentType = c.req.header("content-type");
  if (contentType ? !isJson(contentType) : c.req.raw.body !== null) {
    throw new ApiError("unsupported_media_type", "the body must be application/json");
  }
  const limits = uploadLimits(c.var.deps.env);
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && declared > maxBodyBytes(limits)) throw fileTooLarge(filePath.join("."), limits);
  return receiveFileBody(c.req.raw.body, c.var.deps.blobs, blobKey, limits, filePath);
}
