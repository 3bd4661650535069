// Schemas of request-log search and suggestions (PromptLayer's shapes; per_page up to 100).
import { z } from "@hono/zod-openapi";
import { FilterGroupQuery, FilterGroupSchema } from "../../filters";
import { SORT_COLUMNS, SUGGESTION_FIELDS, SUGGESTION_LIMIT, KEYED_FIELDS, type SortBy } from "../../logs";
import { QueryBool, QueryInt } from "../../lib/query";

export const SEARCH_PER_PAGE = { default: 10, max: 100 } as const;

export const SearchBody = z
  .object({
    filter_group: FilterGroupSchema.nullable().optional(),
    q: z.string().max(1000).nullable().optional().openapi({ description: "Free text over input and output text: every word, prefix-matched." }),
    sort_by: z.enum(Object.keys(SORT_COLUMNS) as [SortBy, ...SortBy[]]).nullable().optional(),
    sort_order: z.enum(["asc", "desc"]).nullable().optional().openapi({ description: "Requires sort_by. Default desc." }),
    page: z.int().min(1).max(1_000_000).nullable().optional().openapi({ description: "Default 1." }),
    per_page: z.int().min(1).max(SEARCH_PER_PAGE.max).nullable().optional().openapi({ description: `Default ${SEARCH_PER_PAGE.default}, at most ${SEARCH_PER_PAGE.max}.` }),
    include_prompt_name: z.boolean().nullable().optional(),
    include_previews: z.boolean().nullable().optional().openapi({ description: "Adds input_preview and output_preview to each item: the first 160 characters of its input and output text." }),
    metadata_cost_breakdown_key: z.string().nullable().optional().openapi({ description: "Accepted for compatibility (an analytics option); search ignores it." }),
  })
  .superRefine((b, ctx) => {
    if (b.sort_order && !b.sort_by) ctx.addIssue({ code: "custom", path: ["sort_order"], message: "requires sort_by", input: b.sort_order });
  })
  .openapi("SearchRequestLogsRequest");

export const SearchResult = z
  .object({
    id: z.int(),
    engine: z.string(),
    provider_type: z.string(),
    input_tokens: z.int(),
    output_tokens: z.int(),
    price: z.number(),
    request_start_time: z.string(),
    request_end_time: z.string(),
    latency: z.number().openapi({ description: "Seconds." }),
    latency_ms: z.number(),
    status: z.string(),
    tags_array: z.array(z.string()),
    metadata: z.array(z.record(z.string(), z.string())),
    scores: z.array(z.object({ name: z.string(), score: z.number() })).openapi({ description: "Every named score of the log, by name." }),
    group_id: z.int().nullable(),
    trace_id: z.string().nullable().openapi({ description: "The trace of a log made from a span (GET /api/public/v2/traces/{trace_id})." }),
    prompt_name: z.string().nullable().optional().openapi({ description: "With include_prompt_name." }),
    input_preview: z.string().optional().openapi({ description: "With include_previews: the first 160 characters of the input's text." }),
    output_preview: z.string().optional().openapi({ description: "With include_previews: the first 160 characters of the output's text." }),
  })
  .passthrough()
  .openapi("RequestLogSearchResult");

export const SearchResponse = z
  .object({
    success: z.literal(true),
    items: z.array(SearchResult),
    page: z.int(),
    pages: z.int(),
    per_page: z.int(),
    total: z.int().openapi({
      description:
        "Matching logs, counted exactly up to 10,000 (or up to the end of the page asked for, when further). Past that the count stops: total is that lower bound and total_is_estimate is true.",
    }),
    total_is_estimate: z.boolean().openapi({
      description: "True when total is a lower bound (the count stopped); pages then counts one page past it, and has_next stays exact.",
    }),
    has_next: z.boolean(),
    has_prev: z.boolean(),
    next_num: z.int().nullable(),
    prev_num: z.int().nullable(),
    index_incomplete: z.boolean().openapi({
      description:
        "True when the search reads the search index (free text q, or a filter on tags, tool names, metadata, input variables or output keys) " +
        "while logs written before an upgrade of the deployment are still being moved into it (newest first, in the background): those logs " +
        "are not found by such a search until moved (a negated filter does not exclude them either), so items and total may be short. " +
        "Filters on a log's own fields (model, status, times, cost, tokens, prompt, trace) find every log. Always false once the move is over.",
    }),
  })
  .openapi("SearchRequestLogsResponse");

const PositiveInt = (max: number) => QueryInt(1, max, { overMax: `must be at most ${max}` });

export const SuggestionsQuery = z
  .object({
    field: z.enum(SUGGESTION_FIELDS),
    prefix: z.string().max(1024).optional().openapi({ description: "Case-insensitive prefix (full Unicode)." }),
    metadata_key: z.string().min(1).max(1024).optional().openapi({ description: "Required for metadata_values, output_values and input_variable_values." }),
    prompt_id: PositiveInt(Number.MAX_SAFE_INTEGER).optional().openapi({ type: "integer", minimum: 1, description: "Used only with field=prompt." }),
    filter_group: FilterGroupQuery.optional(),
    limit: PositiveInt(SUGGESTION_LIMIT.max)
      .optional()
      .openapi({ type: "integer", minimum: 1, maximum: SUGGESTION_LIMIT.max, description: `Default ${SUGGESTION_LIMIT.default}.` }),
    include_counts: QueryBool.default(false).openapi({ type: "boolean", description: "Adds `counts`: value → number of logs carrying it." }),
  })
  .superRefine((q, ctx) => {
    if (KEYED_FIELDS.has(q.field) && q.metadata_key === undefined) {
      ctx.addIssue({ code: "custom", path: ["metadata_key"], message: `is required when field is ${q.field}`, input: undefined });
    }
  });

export const SuggestionsResponse = z
  .object({
    success: z.literal(true),
    values: z.array(z.string()),
    counts: z.record(z.string(), z.int()).optional().openapi({ description: "With include_counts=true." }),
    index_incomplete: z.literal(true).optional().openapi({
      description:
        "Present (true) when a filter_group was given and logs written before an upgrade of the deployment are still being moved into the " +
        "search index: the matching logs among them may be left out of values and counts until moved. Absent otherwise.",
    }),
  })
  .openapi("SearchRequestSuggestionsResponse");
