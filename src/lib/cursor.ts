// Opaque keyset cursors for list endpoints: base64url of a small JSON position. A cursor names the
// last item a page showed, so the next page starts right after it whatever was added meanwhile.
// Anything that does not decode to a position of the expected shape is a 400.
import { ApiError } from "./errors";

export interface CursorPosition {
  /** The list's order when the cursor was issued. */
  o: "asc" | "desc";
  /** The sort key of the last item shown (and a tie-breaker, when the key is not unique). */
  k: number;
  t?: number;
}

function toBase64Url(s: string): string {
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function encodeCursor(p: CursorPosition): string {
  return toBase64Url(JSON.stringify(p));
}

const invalid = () => new ApiError("validation_error", "cursor: is not a cursor from a previous response", { details: [{ field: "cursor", rule: "is not a cursor from a previous response" }] });

export function decodeCursor(raw: string, order: "asc" | "desc"): CursorPosition {
  if (raw.length > 200 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid();
  let p: unknown;
  try {
    p = JSON.parse(atob(raw.replace(/-/g, "+").replace(/_/g, "/")));
  } catch {
    throw invalid();
  }
  const c = p as Partial<CursorPosition>;
  const isInt = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
  if (!c || typeof c !== "object" || (c.o !== "asc" && c.o !== "desc") || !isInt(c.k) || (c.t !== undefined && !isInt(c.t))) {
    throw invalid();
  }
  if (c.o !== order) {
    throw new ApiError("validation_error", `cursor: was issued for order=${c.o}, not order=${order}`, {
      details: [{ field: "cursor", rule: `was issued for order=${c.o}` }],
    });
  }
  return c as CursorPosition;
}
