// Reads the body of a create/version request, JSON or multipart/form-data (metadata as a JSON string
// in `metadata` or `json`, the ZIP in `archive`, `zip` or `files`), into one shape. The archive is
// inflated while it streams in, under the zip-bomb limits.
import type { Context } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../../env";
import { ApiError } from "../../lib/errors";
import { maxBytesOf } from "../../http/middleware";
import { boundaryOf, DISCARD, isMultipart, readMultipart, TextFieldSink, type PartSink } from "../../lib/multipart";
import { validationError } from "../../lib/validation";
import { ZipCollector, type UnzippedFile } from "../../lib/zip";
import { SKILL_MAX_FILE_BYTES, SKILL_MAX_FILES } from "../../services/registry";

const METADATA_PARTS = new Set(["metadata", "json"]);
const ARCHIVE_PARTS = new Set(["archive", "zip", "files"]);
/** Overall compression ratio above which an archive is taken for a bomb, once 1 MiB has been inflated. */
export const ZIP_MAX_RATIO = 100;

export interface Upload<T> {
  body: T;
  archive: UnzippedFile[] | null;
}

function isJson(contentType: string | undefined): boolean {
  return !!contentType && /^application\/([a-z-.]+\+)?json\b/i.test(contentType);
}

/**
 * The validated body and, for multipart, the inflated archive. `json` is what the route's JSON
 * validator produced (used when the request is JSON); `schema` validates multipart metadata.
 */
export async function readUpload<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S,
  json: z.output<S>,
  opts: { metadataRequired: boolean },
): Promise<Upload<z.output<S>>> {
  const contentType = c.req.header("content-type");
  if (isJson(contentType)) return { body: json, archive: null };
  if (!isMultipart(contentType)) {
    if (!contentType) throw new ApiError("validation_error", "body: is required (application/json or multipart/form-data)");
    throw new ApiError("unsupported_media_type", "send application/json or multipart/form-data");
  }
  const boundary = boundaryOf(contentType);
  if (!boundary) throw new ApiError("validation_error", "Content-Type: multipart/form-data needs a boundary");

  let metadata: TextFieldSink | null = null;
  let archive: ZipCollector | null = null;
  await readMultipart(c.req.raw.body, boundary, {
    maxBytes: maxBytesOf(c.var.deps.env, "SKILL_UPLOAD_MAX_BYTES"),
    onPart(part): PartSink {
      if (METADATA_PARTS.has(part.name)) {
        if (metadata) throw new ApiError("validation_error", "metadata: give the metadata once (in `metadata` or `json`)");
        metadata = new TextFieldSink(part.name, maxBytesOf(c.var.deps.env, "JSON_MAX_BYTES"));
        return metadata;
      }
      if (ARCHIVE_PARTS.has(part.name)) {
        if (archive) throw new ApiError("validation_error", "archive: send one ZIP archive (in `archive`, `zip` or `files`)");
        const collector = new ZipCollector("archive", {
          maxFiles: SKILL_MAX_FILES,
          maxFileBytes: SKILL_MAX_FILE_BYTES,
          maxTotalBytes: maxBytesOf(c.var.deps.env, "SKILL_VERSION_MAX_BYTES"),
          maxRatio: ZIP_MAX_RATIO,
          maxRatioAfterBytes: 1024 * 1024,
        });
        archive = collector;
        return { write: (chunk) => collector.push(chunk), end: () => collector.push(new Uint8Array(0), true) };
      }
      return DISCARD;
    },
  });

  const text = (metadata as TextFieldSink | null)?.value ?? null;
  if (text === null && opts.metadataRequired) {
    throw new ApiError("validation_error", "metadata: is required (the fields as a JSON string in the part `metadata` or `json`)");
  }
  let data: unknown = {};
  if (text !== null) {
    try {
      data = JSON.parse(text);
    } catch {
      throw new ApiError("validation_error", "metadata: is not valid JSON");
    }
    if (data === null || typeof data !== "object" || Array.isArray(data)) throw new ApiError("validation_error", "metadata: must be a JSON object");
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ ...i, path: ["metadata", ...i.path] }));
    throw validationError(issues, { target: "metadata", data: { metadata: data } });
  }
  return { body: parsed.data, archive: (archive as ZipCollector | null)?.files ?? null };
}
