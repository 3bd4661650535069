// The OTLP/HTTP requests' body and answer, shared by POST /v1/traces and POST /v1/logs: the encodings
// they take, the body read under one cap before and after gunzip and decoded (bad bodies the same 4xx),
// the answer in the request's encoding.
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { maxBytesOf } from "../../http/middleware";
import { drainBody } from "../../lib/drain";
import { ApiError } from "../../lib/errors";
import { readBodyCapped } from "../../lib/read-body";
import { OtlpFormatError, OtlpTooManyRecords, type OtlpEncoding } from "../../traces";

/** The encoding a Content-Type names, or null (then 415). */
function encodingOf(contentType: string | undefined): OtlpEncoding | null {
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (type === "application/x-protobuf" || type === "application/protobuf") return "protobuf";
  if (type === "application/json") return "json";
  return null;
}

/**
 * An OTLP/HTTP request's body and encoding: 415 for another content type or Content-Encoding (the
 * body drained), 413 for a Content-Length past TRACES_MAX_BYTES before anything is read, else the body
 * read under TRACES_MAX_BYTES as received and again once gunzipped (413 as soon as it passes, never
 * read whole past the cap). Checks run first, `before` (the query) among them.
 */
async function readOtlpBody(c: Context<AppEnv>, before: () => void = () => {}): Promise<{ encoding: OtlpEncoding; body: Uint8Array }> {
  const encoding = encodingOf(c.req.header("content-type"));
  if (!encoding) {
    if (c.req.raw.body) await drainBody(c.req.raw.body.getReader());
    throw new ApiError("unsupported_media_type", "send the body as application/x-protobuf or application/json (with that Content-Type header)");
  }
  const contentEncoding = (c.req.header("content-encoding") ?? "identity").trim().toLowerCase();
  if (contentEncoding !== "gzip" && contentEncoding !== "identity") {
    if (c.req.raw.body) await drainBody(c.req.raw.body.getReader());
    throw new ApiError("unsupported_media_type", `Content-Encoding: only gzip (or none) is taken, not ${contentEncoding}`);
  }
  before();
  const maxBytes = maxBytesOf(c.env, "TRACES_MAX_BYTES");
  // A declared length past the cap is refused before a byte is kept (the body is drained, not read into memory).
  if (Number(c.req.header("content-length") ?? 0) > maxBytes) {
    if (c.req.raw.body) await drainBody(c.req.raw.body.getReader());
    throw new ApiError("payload_too_large", `request body is larger than ${maxBytes} bytes`);
  }
  return { encoding, body: await readBodyCapped(c.req.raw.body, maxBytes, contentEncoding === "gzip") };
}

/**
 * An OTLP/HTTP request's export, read by readOtlpBody and decoded by `decode`: a body that is not an
 * export is a 400, one holding more items than an export may a 413; nothing is stored either way.
 */
export async function readOtlpExport<T>(
  c: Context<AppEnv>,
  decode: (body: Uint8Array, encoding: OtlpEncoding) => Promise<T>,
  before?: () => void,
): Promise<{ encoding: OtlpEncoding; decoded: T }> {
  const { encoding, body } = await readOtlpBody(c, before);
  try {
    return { encoding, decoded: await decode(body, encoding) };
  } catch (err) {
    if (err instanceof OtlpFormatError) throw new ApiError("validation_error", `body: ${err.message}`);
    if (err instanceof OtlpTooManyRecords) throw new ApiError("payload_too_large", err.message);
    throw err;
  }
}

/** An OTLP answer in the request's encoding. */
export function otlpAnswer(c: Context<AppEnv>, answer: Uint8Array | Record<string, unknown>): Response {
  if (answer instanceof Uint8Array) return new Response(answer, { status: 200, headers: { "Content-Type": "application/x-protobuf" } });
  return c.json(answer, 200);
}


/** The OpenAPI request body of an OTLP/HTTP export (`message`: ExportTraceServiceRequest, …), both encodings. */
export function otlpRequestBody(message: string) {
  return {
    required: true,
    content: {
      "application/x-protobuf": { schema: z.string().openapi({ format: "binary", description: `A protobuf ${message}.` }) },
      "application/json": { schema: z.record(z.string(), z.unknown()).openapi({ description: `An ${message} in OTLP's JSON mapping.` }) },
    },
  };
}

/**
 * The OpenAPI 200 of an OTLP/HTTP export, in the request's encoding: its answer `message`
 * (ExportTraceServiceResponse, …) whose partialSuccess counts the items refused under `countField`.
 */
export function otlpResponses(message: string, countField: string) {
  const json = z
    .object({ partialSuccess: z.object({ [countField]: z.string(), errorMessage: z.string() }).nullable() })
    .openapi(`Otlp${message}`);
  return {
    200: {
      description: "Stored (in the request's encoding)",
      content: { "application/json": { schema: json }, "application/x-protobuf": { schema: z.string().openapi({ format: "binary" }) } },
    },
  };
}
