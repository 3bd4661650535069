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
