// GET's `metadata_filters[<key>]=<value>` query parameters: the POST body's metadata_filters as a
// query (a template fetch by label through an A/B release, and a release's assignment).
import { ApiError } from "../../lib/errors";

const METADATA_FILTER_PARAM = /^metadata_filters\[(.+)\]$/;
const METADATA_FILTERS_MAX = 50;

/** GET's `metadata_filters[<key>]=<value>` parameters (the POST body's metadata_filters, as a query); null when none. */
export function metadataFiltersQuery(params: URLSearchParams): Record<string, string> | null {
  const out: Record<string, string> = {};
  let n = 0;
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

