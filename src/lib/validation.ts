// The one validation hook: every zod failure (body, query, path) becomes a 400 validation_error
// whose message names the field and the rule it broke.
import type { z } from "zod";
import { ApiError, type ErrorDetail } from "./errors";

const MAX_LISTED = 5;

function fieldName(path: PropertyKey[], target?: string): string {
  if (path.length === 0) return target === "json" || !target ? "body" : target;
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}

function ruleOf(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return issue.message.startsWith("Invalid input") ? `must be ${issue.expected}` : issue.message;
    case "unrecognized_keys":
      return `has unknown keys: ${issue.keys.join(", ")}`;
    default:
      return issue.message;
  }
}

export function zodIssuesToDetails(issues: readonly z.core.$ZodIssue[], target?: string): ErrorDetail[] {
  return issues.map((i) => ({ field: fieldName(i.path, target), rule: ruleOf(i) }));
}

export function validationError(issues: readonly z.core.$ZodIssue[], target?: string): ApiError {
  const details = zodIssuesToDetails(issues, target);
  const listed = details.slice(0, MAX_LISTED).map((d) => `${d.field}: ${d.rule}`);
  if (details.length > MAX_LISTED) listed.push(`and ${details.length - MAX_LISTED} more`);
  return new ApiError("validation_error", listed.join("; "), { details });
}

/** Passed to OpenAPIHono as its defaultHook: throws instead of answering, so onError shapes it. */
export function validationHook(result: { success: boolean; error?: unknown; target?: string }): void {
  if (!result.success) {
    const err = result.error as z.ZodError;
    throw validationError(err.issues, result.target);
  }
}
