// Opaque keyset cursors for list endpoints: base64url of a small JSON position. A cursor names the
// last item a page showed, so the next page starts right after it whatever was added meanwhile.
// Anything that does not decode to a position of the expected shape is a 400, and so is a cursor used
// with another order (or, for lists that say so, other filters).
import { ApiError } from "./errors";

export interface CursorPosition {
  /** The list's order when the cursor was issued. */
  o: "asc" | "desc";
  /** The sort key of the last item shown (and a tie-breaker, when the key is not unique). */
  k: number;
  t?: number;
  /** A text tie-breaker (a trace id), for lists whose items are keyed by text. */
  s?: string;
  /** A fingerprint of the filters the cursor was issued for, for lists that take filters in the body. */
  f?: string;
}

export interface CursorRules {
  /** The sort key may be a fraction (epoch milliseconds with sub-millisecond digits). */
  fractional?: boolean;
  /** The fingerprint of the request's filters: a cursor issued for others is a 400. */
  filter?: string;
}

function toBase64Url(s: string): string {
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function encodeCursor(p: CursorPosition): string {
  return toBase64Url(JSON.stringify(p));
}

const invalid = () => new ApiError("validation_error", "cursor: is not a cursor from a previous response", { details: [{ field: "cursor", rule: "is not a cursor from a previous response" }] });

export function decodeCursor(raw: string, order: "asc" | "desc", rules: CursorRules = {}): CursorPosition {
  if (raw.length > 200 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid();
  let p: unknown;
  try {
    p = JSON.parse(atob(raw.replace(/-/g, "+").replace(/_/g, "/")));
  } catch {
    throw invalid();
  }
  const c = p as Partial<CursorPosition>;
  const isInt = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
  const isKey = (v: unknown) => (rules.fractional ? typeof v === "number" && Number.isFinite(v) && v >= 0 : isInt(v));
  const isText = (v: unknown) => v === undefined || (typeof v === "string" && v.length <= 64);
  if (!c || typeof c !== "object" || (c.o !== "asc" && c.o !== "desc") || !isKey(c.k) || (c.t !== undefined && !isInt(c.t)) || !isText(c.s) || !isText(c.f)) {
    throw invalid();
  }
  if (c.o !== order) {
    throw new ApiError("validation_error", `cursor: was issued for order=${c.o}, not order=${order}`, {
      details: [{ field: "cursor", rule: `was issued for order=${c.o}` }],
    });
  }
  if (rules.filter !== undefined && c.f !== rules.filter) {
    throw new ApiError("validation_error", "cursor: was issued for other filters; send the filters it was issued with, or no cursor", {
      details: [{ field: "cursor", rule: "was issued for other filters" }],
    });
  }
  return c as CursorPosition;
}
