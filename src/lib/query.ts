// Query-string parsers shared by list endpoints: integers, booleans and repeatable values arrive as text.
import { z } from "@hono/zod-openapi";
import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Timestamp } from "./schemas";

/**
 * The one integer query (and path) parameter: plain decimal, no sign, no leading zeros, a safe
 * integer within [min, max] (min ≥ 0). Messages: "must be a positive integer" (or "a whole number"
 * when 0 is allowed) for anything else, "must be {min} to {max}" over the top; `overMax` words the
 * last one differently where a route has always said it another way.
 */
export const QueryInt = (min: number, max = Number.MAX_SAFE_INTEGER, opts: { overMax?: string } = {}) => {
  const notInt = min >= 1 ? "must be a positive integer" : "must be a whole number";
  const unbounded = max === Number.MAX_SAFE_INTEGER;
  return z
    .string()
    .regex(/^(0|[1-9][0-9]{0,15})$/, notInt)
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n) && n >= min, min <= 1 ? notInt : `must be at least ${min}`)
    .refine((n) => n <= max, opts.overMax ?? `must be ${min} to ${max}`)
    .openapi({ type: "integer", minimum: min, ...(unbounded ? {} : { maximum: max }) });
};

/**
 * A boolean as a query string spells it: true/false in any case (Python's requests sends `True` and
 * `False`, other clients `true`, `TRUE`), or 1/0. Null for anything else.
 */
export function readQueryBool(text: string): boolean | null {
  const v = text.trim().toLowerCase();
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0") return false;
  return null;
}

/** The one boolean query parameter (see readQueryBool). */
export const QueryBool = z
  .string()
  .transform((v, ctx) => {
    const b = readQueryBool(v);
    if (b === null) {
      ctx.addIssue({ code: "custom", message: "must be true or false", input: v });
      return z.NEVER;
    }
    return b;
  })
  .openapi({ type: "boolean", description: "true or false in any case (True, FALSE …), or 1 or 0." });

/** A value given once, repeated (?tags=a&tags=b) or comma-separated (?tags=a,b). */
export const QueryList = (item: z.ZodType<string, string> = z.string().min(1)) =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(",")).map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(item))
    .openapi({ type: "array", items: { type: "string" } });

export const SortBy = z.enum(["created_at", "updated_at", "name", "id"], { error: "must be created_at, updated_at, name or id" }).optional();
export const SortOrder = z.enum(["asc", "desc"], { error: "must be asc or desc" }).default("desc");

const BOUND = "ISO 8601 or epoch seconds/milliseconds";

/**
 * Who made a resource and when it was made or last changed: the filters every resource list takes
 * (src/services/registry/resource-list.ts applies them). Spread into a list's query schema, beside the
 * external-ID lookup (routes/external-ids/schemas.ts) where its resources carry external IDs.
 */
export const ResourceFilterShape = {
  created_by_email: z.string().min(1, "must not be empty").max(320, "must be at most 320 characters").optional().openapi({ description: "Only those created by this user (the e-mail of the key that created them), without regard to case." }),
  created_after: Timestamp.optional().openapi({ description: `Only those created at or after this time (${BOUND}).` }),
  created_before: Timestamp.optional().openapi({ description: `Only those created at or before this time (${BOUND}).` }),
  updated_after: Timestamp.optional().openapi({ description: `Only those last changed at or after this time (${BOUND}).` }),
  updated_before: Timestamp.optional().openapi({ description: `Only those last changed at or before this time (${BOUND}).` }),
};

/**
 * The paged-resource filters PromptLayer's list endpoints share (datasets, evaluations): name contains,
 * active/deleted/all, page and per_page, creator, created/updated bounds, sort. Spread into a query schema.
 */
export const ResourceListShape = {
  name: z.string().max(255).optional(),
  status: z.enum(["active", "deleted", "all"], { error: "must be active, deleted or all" }).default("active"),
  page: QueryInt(1, Number.MAX_SAFE_INTEGER).default(1),
  per_page: QueryInt(1, 100).default(10),
  ...ResourceFilterShape,
  sort_by: SortBy,
  sort_order: SortOrder,
};

export type TextMatch = "contains" | "starts_with" | "ends_with";

/** D1 refuses LIKE patterns over 50 bytes ("LIKE or GLOB pattern too complex"). */
export const LIKE_PATTERN_MAX_BYTES = 50;

/**
 * The LIKE pattern for a match, or null when it would be over D1's limit (escapes count): then the
 * match is written with instr/substr, which take any length and fold case the same way (ASCII).
 */
/** The text with LIKE's wildcards and its escape character escaped (ESCAPE '\\'). */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export function likePattern(text: string, mode: TextMatch): string | null {
  const escaped = escapeLike(text);
  const pattern = mode === "contains" ? `%${escaped}%` : mode === "starts_with" ? `${escaped}%` : `%${escaped}`;
  return new TextEncoder().encode(pattern).length <= LIKE_PATTERN_MAX_BYTES ? pattern : null;
}

/** The same match without LIKE, for text too long for a pattern (`column` and `value` are SQL). */
export function longTextMatch(column: string, value: string, mode: TextMatch): string {
  if (mode === "contains") return `instr(lower(${column}), lower(${value})) > 0`;
  if (mode === "starts_with") return `substr(lower(${column}), 1, length(${value})) = lower(${value})`;
  return `substr(lower(${column}), -length(${value})) = lower(${value})`;
}

/** Case-insensitive (ASCII) "contains" match of any length; % and _ in the text match themselves. */
export function containsText(column: SQLiteColumn, text: string): SQL {
  const pattern = likePattern(text, "contains");
  if (pattern !== null) return sql`${column} LIKE ${pattern} ESCAPE '\\'`;
  return sql`instr(lower(${column}), lower(${text})) > 0`;
}
