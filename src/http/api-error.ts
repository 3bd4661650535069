// What any thrown value answers as: one mapping for the app's error handler and for a stream that has
// already sent its status (its error event carries the same body).
import { HTTPException } from "hono/http-exception";
import { ApiError, codeForStatus } from "../lib/errors";
import { chainForLog, chainIncludes } from "../lib/error-text";

/** Any thrown value → ApiError. Unknown errors are bugs: logged with the request id, answered generically. */
export function toApiError(err: unknown, requestId: string, bodyTypes?: string[]): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 415 && bodyTypes?.length) {
      return new ApiError("unsupported_media_type", `send the body as ${bodyTypes.join(" or ")} (with that Content-Type header)`);
    }
    const code = codeForStatus(err.status);
    if (code) return new ApiError(code, err.message || code);
  }
  // D1 refuses a value over its size limit (2 MB): that is the caller's payload, not our bug.
  if (chainIncludes(err, /SQLITE_TOOBIG|string or blob too big/i)) {
    return new ApiError("payload_too_large", "a value in the request is larger than the database accepts");
  }
  console.error(
    JSON.stringify({
      level: "error",
      msg: "unhandled error",
      request_id: requestId,
      error: chainForLog(err),
      // Frames only: the stack's first line repeats the message, parameters and all.
      stack: err instanceof Error ? err.stack?.split("\n").slice(1, 9).join("\n") : undefined,
    }),
  );
  return new ApiError("internal_error", "internal error; quote the request id when reporting it");
}
