// GET's `metadata_filters[<key>]=<value>` query parameters: the POST body's metadata_filters as a
// query (a template fetch by label through an A/B release, and a release's assignment).
import { ApiError } from "../../lib/errors";

const METADATA_FILTER_PARAM = /^metadata_filters\[(.+)\]$/;
const METADATA_FILTERS_MAX = 50;

/**
 * GET's metadata_filters (the POST body's, as a query): `metadata_filters[<key>]=<value>` parameters,
 * or one `metadata_filters` holding a JSON object (what an MCP tool call sends); null when none.
 */
export function metadataFiltersQuery(params: URLSearchParams): Record<string, string> | null {
  const out: Record<string, string> = {};
  let n = 0;
  const whole = params.get("metadata_filters");
  if (whole !== null) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(whole);
    } catch {
      parsed = null;
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ApiError("validation_error", "metadata_filters: must be a JSON object of key → value (or use metadata_filters[<key>]=<value>)");
    for (const [key, value] of Object.entries(parsed)) params.append(`metadata_filters[${key}]`, typeof value === "string" ? value : JSON.stringify(value));
  }
  for (const [name, value] of params) {
    const key = METADATA_FILTER_PARAM.exec(name)?.[1];
    if (key === undefined) continue;
    if (++n > METADATA_FILTERS_MAX) throw new ApiError("validation_error", `metadata_filters: at most ${METADATA_FILTERS_MAX} keys`);
    if (key.length > 255) throw new ApiError("validation_error", "metadata_filters: a key is at most 255 characters");
    if (value.length > 1024) throw new ApiError("validation_error", `metadata_filters[${key.slice(0, 40)}]: at most 1024 characters`);
    out[key] = value;
  }
  return n > 0 ? out : null;
}

