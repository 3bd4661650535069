// How a key or value is kept in the search side table (logs/index-rows.ts writes it, the compiler
// looks it up): one spelling, so a filter value always meets the stored one.

/**
 * Keys and values are indexed up to this many characters. A longer one is stored as its first
 * INDEX_VALUE_MAX characters followed by "…", so it can never equal a value of at most
 * INDEX_VALUE_MAX characters; the full text stays in the log row (the compiler falls back
 * to it for longer filter values). Keeps the side table and its index from growing with documents.
 */
export const INDEX_VALUE_MAX = 1024;

export function indexed(v: string): string {
  return v.length > INDEX_VALUE_MAX ? `${v.slice(0, INDEX_VALUE_MAX)}\u2026` : v;
}

/**
 * A tag, metadata key or value of at most this many characters is a keyed search value as it stands
 * in the log's tags or metadata column (it is never shortened: each character is at most two UTF-16
 * units); the others are kept, as indexed, in request_logs.extra_values. Characters are code points,
 * as SQLite's length() counts them.
 */
export const DERIVED_VALUE_MAX = 512;

/** Whether a keyed value is read from the log's tags or metadata column as it stands (else it is kept in extra_values). */
export function isDerived(kind: string, key: string, value: unknown): boolean {
  const short = (s: unknown) => typeof s === "string" && codePoints(s) <= DERIVED_VALUE_MAX;
  if (kind === "tag") return short(value);
  if (kind === "metadata") return short(key) && short(value);
  return false;
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
