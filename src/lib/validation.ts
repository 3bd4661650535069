// The one validation hook: every zod failure (body, query, path) becomes a 400 validation_error
// whose message names the field and the rule it broke.
import type { z } from "zod";
import { ApiError, type ErrorDetail } from "./errors";

const MAX_LISTED = 5;
const MISSING = Symbol("missing");

export interface IssueContext {
  /** Which part of the request failed: json, query, param… (named when the path is empty). */
  target?: string;
  /** The input that failed; when given, a missing field is reported as "is required". */
  data?: unknown;
}

function fieldName(path: PropertyKey[], target?: string): string {
  if (path.length === 0) return target === "json" || !target ? "body" : target;
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}

/** The input value at an issue's path, or MISSING when the path does not reach a value. */
function valueAt(data: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = data;
  for (const p of path) {
    if (cur === null || typeof cur !== "object" || !(p in (cur as object))) return MISSING;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

function ruleOf(issue: z.core.$ZodIssue, ctx: IssueContext): string {
  // Zod does not say "missing"; the input tells (an absent key, or undefined).
  if ((issue.code === "invalid_type" || issue.code === "invalid_union") && "data" in ctx) {
    const v = valueAt(ctx.data, issue.path);
    if (v === MISSING || v === undefined) return "is required";
  }
  switch (issue.code) {
    case "invalid_type":
      return issue.message.startsWith("Invalid input") ? `must be ${issue.expected}` : issue.message;
    case "invalid_key":
      return issue.issues[0]?.message ?? issue.message;
    case "unrecognized_keys":
      return `has unknown keys: ${issue.keys.join(", ")}`;
    default:
      return issue.message;
  }
}

export function zodIssuesToDetails(issues: readonly z.core.$ZodIssue[], ctx: IssueContext = {}): ErrorDetail[] {
  return issues.map((i) => ({ field: fieldName(i.path, ctx.target), rule: ruleOf(i, ctx) }));
}

export function validationError(issues: readonly z.core.$ZodIssue[], ctx: IssueContext = {}): ApiError {
  const details = zodIssuesToDetails(issues, ctx);
  const listed = details.slice(0, MAX_LISTED).map((d) => `${d.field}: ${d.rule}`);
  if (details.length > MAX_LISTED) listed.push(`and ${details.length - MAX_LISTED} more`);
  return new ApiError("validation_error", listed.join("; "), { details });
}

/** Passed to OpenAPIHono as its defaultHook: throws instead of answering, so onError shapes it. */
export function validationHook(result: { success: boolean; error?: unknown; target?: string; data?: unknown }): void {
  if (!result.success) {
    const err = result.error as z.ZodError;
    throw validationError(err.issues, { target: result.target, data: result.data });
  }
}
