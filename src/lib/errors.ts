// The one error type of the service and the error shape every failure is answered with.
// Throw ApiError anywhere; the app's single onError turns it into JSON with the matching status.

export const ErrorCode = {
  validation_error: 400,
  unauthorized: 401,
  /** The key is valid but lacks the scope the route needs (lib/scopes.ts); the message names it. */
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  /** The workspace lacks what the call needs from its settings (a provider key to run a prompt). */
  provider_not_configured: 422,
  rate_limited: 429,
  internal_error: 500,
  // Not a failure of the service: "recalculate" found nothing to do, which is answered 200.
  no_cells_to_recalculate: 200,
} as const;

export type ErrorCode = keyof typeof ErrorCode;

/** The error code a failure status stands for (the first code with that status). */
export function codeForStatus(status: number): ErrorCode | undefined {
  if (status < 400) return undefined;
  return (Object.keys(ErrorCode) as ErrorCode[]).find((code) => ErrorCode[code] === status);
}

/** The 401 of a key that is unknown or revoked (the auth middleware, and the log writes below it). */
export const UNKNOWN_KEY = "X-API-KEY is unknown or revoked";

/** What the request_logs_key_guard trigger (migrations/0002) raises for a revoked key. */
export const REVOKED_KEY_ABORT = "api key revoked";

export interface ErrorDetail {
  field: string;
  rule: string;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, opts: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = ErrorCode[code];
    this.details = opts.details;
    this.headers = opts.headers;
  }

  static notFound(what: string): ApiError {
    return new ApiError("not_found", `${what} not found`);
  }
}

export interface ErrorBody {
  success: false;
  message: string;
  error: ErrorCode;
  details?: ErrorDetail[];
}

/**
 * The body of an error answer. The correlation id travels only in the X-Request-Id header: PromptLayer
 * clients read a body's `request_id` as a request log's id (the SDK does after a failed
 * /track-request), so an error body never carries one.
 */
export function errorBody(err: ApiError): ErrorBody {
  const body: ErrorBody = { success: false, message: err.message, error: err.code };
  if (err.details && err.details.length > 0) body.details = err.details;
  return body;
}
