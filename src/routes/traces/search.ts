// POST /api/public/v2/traces/search: traces by the trace filter group (AND / OR across spans,
// SPAN_AND / SPAN_OR within one span), newest first, by page or by cursor, each with its summary.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { searchTraces, TRACE_SEARCH_LIMITS, TRACE_SEARCH_PAGE } from "../../logs";
import { TraceFilterGroupSchema } from "./analytics";
import { TraceSummary } from "./schemas";

const { windowSpans, maxScanSpans } = TRACE_SEARCH_LIMITS;
const PageSize = z.int("must be a whole number").min(1, `must be 1 to ${TRACE_SEARCH_PAGE.max}`).max(TRACE_SEARCH_PAGE.max, `must be 1 to ${TRACE_SEARCH_PAGE.max}`);

const Body = z
  .object({
    filter_group: TraceFilterGroupSchema.nullable().optional(),
    sort_order: z.enum(["asc", "desc"], { error: "must be asc or desc" }).nullish().openapi({ description: "By trace_start (ties by trace_id): desc, newest first (default), or asc." }),
    page: z.int("must be a whole number").min(1, "must be at least 1").max(1_000_000, "must be at most 1000000").nullish().openapi({ description: "Page mode: the page (default 1)." }),
    per_page: PageSize.nullish().openapi({ description: `Page mode: traces a page, default ${TRACE_SEARCH_PAGE.default}, at most ${TRACE_SEARCH_PAGE.max}.` }),
    cursor: z.string().max(200, "is not a cursor from a previous response").nullish().openapi({ description: "Cursor mode: next_cursor of the previous answer (with the same filter_group and sort_order); none for the first page." }),
    limit: PageSize.nullish().openapi({ description: `Cursor mode: traces a page, default ${TRACE_SEARCH_PAGE.default}, at most ${TRACE_SEARCH_PAGE.max}.` }),
  })
  .superRefine((b, ctx) => {
    const paged = b.page != null || b.per_page != null;
    const cursored = b.cursor != null || b.limit != null;
    if (paged && cursored) {
      ctx.addIssue({ code: "custom", path: [b.cursor != null ? "cursor" : "limit"], message: "cannot be combined with page or per_page: page by number or by cursor, not both", input: b.cursor ?? b.limit });
    }
  })
  .openapi("SearchTracesRequest");

const PageAnswer = z
  .object({
    success: z.literal(true),
    items: z.array(TraceSummary),
    page: z.int(),
    per_page: z.int(),
    pages: z.int(),
    total: z.int().openapi({ description: "The matching traces counted, exact unless total_is_estimate." }),
    total_is_estimate: z.boolean().openapi({ description: `True when the request's bound (${maxScanSpans} spans read) stopped the count: total is then a lower bound and pages counts one page past it.` }),
    has_next: z.boolean(),
    has_prev: z.boolean(),
    next_num: z.int().nullable(),
    prev_num: z.int().nullable(),
    next_cursor: z.string().nullable().openapi({ description: "Continues after this page in cursor mode." }),
  })
  .openapi("SearchTracesPageResponse");

const CursorAnswer = z
  .object({
    success: z.literal(true),
    items: z.array(TraceSummary),
    next_cursor: z.string().nullable(),
    has_more: z.boolean(),
    limit: z.int(),
  })
  .openapi("SearchTracesCursorResponse");

const route = defineRoute({
  method: "post",
  path: "/api/public/v2/traces/search",
  scope: "logs:read",
  tags: ["traces"],
  summary: "Search traces",
  description:
    "The workspace's traces that match filter_group (the filter group of trace analytics: trace_* and span_* fields, AND / OR across a trace's spans, SPAN_AND / SPAN_OR " +
    "within one span), by trace_start, newest first by default, each with its summary: name, start and end, duration, status, span count, LLM calls, error spans, tokens, cost and models. " +
    "Two ways to page, one per request: by number (page, per_page; the answer counts pages like request-log search) or by cursor (limit, then cursor = next_cursor; " +
    "the answer says has_more). PromptLayer documents no shape for this operation: the page answer is request-log search's, the cursor answer its table lists' (items, next_cursor, has_more, limit). " +
    "A cursor holds its filter group and order: used with others, or altered, it is a 400, as is sending page or per_page with cursor or limit. " +
    `Bounded: a request reads at most ${maxScanSpans} spans (in windows of ${windowSpans}), from the newest (oldest with asc) past the cursor, within the top-level trace_start range; ` +
    "when the bound stops it, a cursor page may hold fewer items than asked with has_more true (follow next_cursor), and a numbered page's total is a flagged lower bound. " +
    "Traces appear once their spans are stored; a trace's values are those of trace analytics. Only the key's workspace's spans are read.",
  request: { body: { required: true, content: { "application/json": { schema: Body } } } },
  responses: {
    200: {
      description: "A page of traces: SearchTracesPageResponse by number, SearchTracesCursorResponse by cursor",
      content: { "application/json": { schema: z.union([PageAnswer, CursorAnswer]) } },
    },
  },
});

export function registerTraceSearchRoute(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const b = c.req.valid("json");
    const common = { filter_group: b.filter_group ?? null, sort_order: b.sort_order ?? ("desc" as const) };
    const byCursor = b.cursor != null || b.limit != null;
    const input = byCursor
      ? { ...common, mode: "cursor" as const, cursor: b.cursor ?? undefined, limit: b.limit ?? TRACE_SEARCH_PAGE.default }
      : { ...common, mode: "page" as const, page: b.page ?? 1, per_page: b.per_page ?? TRACE_SEARCH_PAGE.default };
    const ws = c.get("auth").workspaceId;
    return c.json(await searchTraces(await c.var.deps.logs(ws), ws, input), 200);
  });
}
