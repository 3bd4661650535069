// Request logs: one stored log (by path, or by query as request-payload), search over them, and
// autocomplete suggestions for the search UI.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { REQUEST_STATUSES } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import { defineRoute } from "../../http/openapi";
import { QueryInt } from "../../lib/query";
import { IdParam, Timestamp } from "../../lib/schemas";
import { exportFilter, exportLogs, exportMatchingLogs, readRequestLog } from "../../logs";
import { searchRequestLogs, suggestRequestValues, SUGGESTION_LIMIT } from "../../logs";
import { SUGGESTIONS_RATE_LIMIT } from "../../http/rate-limit";
import { FilterGroupSchema, StructuredFilterDoc } from "../../filters";
import { SEARCH_PER_PAGE, SearchBody, SearchResponse, SuggestionsQuery, SuggestionsResponse } from "./schemas";

const RequestLogDetail = z
  .object({
    success: z.literal(true),
    request_id: z.int(),
    prompt_blueprint: z.record(z.string(), z.unknown()),
    provider: z.string(),
    model: z.string(),
    api_type: z.string().nullable(),
    input: z.record(z.string(), z.unknown()),
    output: z.record(z.string(), z.unknown()),
    parameters: z.record(z.string(), z.unknown()),
    tags: z.array(z.string()),
    metadata: z.record(z.string(), z.string()),
    prompt_name: z.string().nullable(),
    prompt_id: z.int().nullable(),
    prompt_version_number: z.int().nullable(),
    prompt_version_id: z.int().nullable(),
    prompt_input_variables: z.record(z.string(), z.unknown()),
    input_tokens: z.int(),
    output_tokens: z.int(),
    tokens: z.int(),
    price: z.number(),
    function_name: z.string(),
    score: z.int().openapi({ description: "The default score (tracked unnamed or named `default`, or logged with the request)." }),
    score_name: z.string().nullable(),
    scores: z.record(z.string(), z.int()).openapi({ description: "Every named score of the log, name → 0..100 (POST /rest/track-score adds them)." }),
    group_id: z.int().nullable().openapi({ description: "The request group the log belongs to (POST /rest/track-group)." }),
    status: z.enum(REQUEST_STATUSES),
    error_type: z.string().nullable(),
    error_message: z.string().nullable(),
    request_start_time: z.string(),
    request_end_time: z.string(),
    latency_ms: z.number(),
    trace_id: z.string().nullable(),
    span_id: z.string().nullable(),
    ab_test_id: z.int().nullable().openapi({ description: "The A/B release (GET /api/public/v2/ab-tests/{id}) that served the log's version, recomputed when it was logged from its metadata and version." }),
    ab_variant: z.string().nullable().openapi({ description: "That release's variant (its key)." }),
    ab_assignment: z
      .enum(["sticky", "inferred"])
      .nullable()
      .openapi({ description: "How the variant is known: sticky, the unit's assignment (metadata[assignment_key]) served this version; inferred, only the version tells (one variant has it)." }),
    created_at: z.string(),
    signals: z
      .array(
        z
          .object({
            signal_id: z.int(),
            name: z.string().openapi({ description: "The signal's current name." }),
            result: z.boolean().nullable().openapi({ description: "The verdict; null when judging failed (status error)." }),
            reasoning: z.string().nullable(),
            quote: z.string().nullable(),
            quote_verified: z.boolean().openapi({ description: "The quote occurs in the text the judge read." }),
            status: z.enum(["ok", "error"]),
            error: z.string().nullable(),
            revision: z.int().openapi({ description: "The signal's revision this result is of." }),
            judged_at: z.string(),
          })
          .openapi("SignalVerdict"),
      )
      .openapi({
        description:
          "The log's Signals results (docs/signals.md), one per signal that judged it and still exists, each under the signal's current name, ordered by name; " +
          "empty for a log never judged. A deleted signal's results are not listed. An archived log answers the verdicts it had when archived (of the signals that still exist, under their current names).",
      }),
  })
  .openapi("RequestLogDetail");

const getRequest = defineRoute({
  method: "get",
  path: "/api/public/v2/requests/{request_id}",
  scope: "logs:read",
  tags: ["request logs"],
  summary: "Get a logged request",
  description:
    "PromptLayer's request-detail fields (prompt_blueprint, tokens, latency_ms, trace_id…) and every stored field with its defaults, including named scores and group_id. " +
    "A log the archive job moved to R2 (PUT /api/public/v2/workspace/log-retention) is answered the same, from its archive file. Another workspace's id is a 404.",
  errors: [404],
  request: { params: z.object({ request_id: IdParam("request_id") }) },
  responses: {
    200: { description: "The stored log", content: { "application/json": { schema: RequestLogDetail } } },
  },
});

const requestPayload = defineRoute({
  method: "get",
  path: "/api/public/v2/request-payload",
  scope: "logs:read",
  tags: ["request logs"],
  summary: "Get a logged request's payload",
  description:
    "PromptLayer's first name for the request detail (its changelog of 2026-02-28: a logged request's prompt blueprint, tokens, pricing and timing), " +
    "which documents no shape of its own: it answers exactly what GET /api/public/v2/requests/{request_id} answers, the id given as the query parameter request_id. " +
    "Another workspace's id, or an unknown one, is a 404; an archived log is answered from its archive file.",
  errors: [404],
  request: { query: z.object({ request_id: QueryInt(1).openapi({ description: "The request log's id." }) }) },
  responses: {
    200: { description: "The stored log", content: { "application/json": { schema: RequestLogDetail } } },
  },
});

const TIME_IN = "ISO 8601 (Z, an offset, or none meaning UTC) or an epoch number (seconds below 1e11, milliseconds otherwise).";

const ExportQuery = z
  .object({
    from: Timestamp.openapi({ param: { name: "from", in: "query" }, description: `The first request_start_time included: ${TIME_IN}` }),
    to: Timestamp.openapi({ param: { name: "to", in: "query" }, description: `The first request_start_time no longer included, after from: ${TIME_IN}` }),
  })
  .superRefine((q, ctx) => {
    if (q.to <= q.from) ctx.addIssue({ code: "custom", path: ["to"], message: "must be after from", input: q.to });
  });

const exportRequests = defineRoute({
  method: "get",
  path: "/api/public/v2/requests/export",
  scope: "logs:read",
  tags: ["request logs"],
  summary: "Export request logs as NDJSON",
  description:
    "Every log of the workspace whose request_start_time is in [from, to), streamed as NDJSON (one log a line, each exactly as GET /api/public/v2/requests/{request_id} answers it), " +
    "from both tiers: first the logs the archive job moved to R2, day by day, then the logs still in the database in request_start_time order. " +
    "Each log appears once, also while the archive job runs. A workspace whose logs fill more than one log database is exported database by database, " +
    "the one it wrote to first first, each as above. from and to take ISO 8601 (Z, an offset, or none meaning UTC) or epoch numbers " +
    "(seconds below 1e11, milliseconds otherwise); to must be after from. The answer is streamed: any range fits. " +
    "POST to the same path exports the logs a filter group matches.",
  request: { query: ExportQuery },
  responses: {
    200: {
      description: "NDJSON: one RequestLogDetail per line",
      content: { "application/x-ndjson": { schema: z.string().openapi({ description: "Lines of RequestLogDetail JSON, each ending in a newline." }) } },
    },
  },
});

const ExportBody = z
  .object({
    from: Timestamp.optional().openapi({ description: `The first request_start_time included: ${TIME_IN} None: from the oldest log.` }),
    to: Timestamp.optional().openapi({ description: `The first request_start_time no longer included, after from: ${TIME_IN} None: up to the newest log.` }),
    filter_group: FilterGroupSchema.nullable()
      .optional()
      .openapi({ description: "The logs to export, the same structured filter group as POST /api/public/v2/requests/search takes. None: every log of the range." }),
  })
  .superRefine((b, ctx) => {
    if (b.from !== undefined && b.to !== undefined && b.to <= b.from) ctx.addIssue({ code: "custom", path: ["to"], message: "must be after from", input: b.to });
  })
  .openapi("ExportRequestLogsRequest");

const exportMatching = defineRoute({
  method: "post",
  path: "/api/public/v2/requests/export",
  scope: "logs:read",
  tags: ["request logs"],
  summary: "Export the request logs a filter matches as NDJSON",
  description:
    "The logs of the workspace that a structured filter group (the same as POST /api/public/v2/requests/search takes) and an optional request_start_time range [from, to) select, " +
    "streamed as NDJSON (one log a line, each exactly as GET /api/public/v2/requests/{request_id} answers it), in id order (the order they were logged), each once. " +
    "The export holds every matching log written before it was asked for, however recently: it first indexes what its workspace still waits to index " +
    "(a search may find a new log only seconds after its write; an export misses none); logs written after it was asked for are not in it. " +
    "It reads what search reads: logs the archive job already moved to R2 are outside filters (GET /api/public/v2/requests/export reads both tiers); " +
    "a log the job moves while the export reads its page is read from its archive file. A workspace whose logs fill more than one log database is exported " +
    "database by database, the one it wrote to first first. A bad filter or range is a 400 before anything is sent. The answer is streamed: any number of logs fits.",
  request: { body: { required: true, content: { "application/json": { schema: ExportBody } } } },
  responses: {
    200: {
      description: "NDJSON: one RequestLogDetail per line",
      content: { "application/x-ndjson": { schema: z.string().openapi({ description: "Lines of RequestLogDetail JSON, each ending in a newline." }) } },
    },
  },
});

/** An NDJSON body pulled line by line from the log store, so an export of any size streams. */
function ndjsonBody(lines: AsyncGenerator<string>, requestId: string): ReadableStream<Uint8Array> {
  const utf8 = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await lines.next();
        if (next.done) controller.close();
        else controller.enqueue(utf8.encode(next.value));
      } catch (err) {
        // The status is sent already: the body ends short, and the log says why.
        console.error(JSON.stringify({ level: "error", msg: "export failed", request_id: requestId, error: err instanceof Error ? err.message : String(err) }));
        controller.error(err);
      }
    },
    async cancel() {
      await lines.return(undefined);
    },
  });
}

const searchRequests = defineRoute({
  method: "post",
  path: "/api/public/v2/requests/search",
  scope: "logs:read",
  tags: ["request logs"],
  summary: "Search request logs",
  description:
    "Structured filters (nested AND/OR groups), free text over input and output text, sorting and pages. " +
    "Newest first by default; ties broken by id. The filter schema (StructuredFilter) lists the operators each field takes. " +
    "total is exact up to 10,000 matches; past that the count stops and total_is_estimate is true (has_next stays exact). " +
    "A new log becomes searchable within seconds of its write (within the index queue's batch wait of up to 4 s and its indexing; under 5 s at p99 in bench:log): its tags, metadata, tool names, input variables, " +
    "output keys and full text are indexed after the write answers. Filters on the log's own fields (model, status, times, cost, tokens, " +
    "prompt, trace) may match it sooner. After an upgrade from before the search index of issue 37, the logs written before it are moved into " +
    "the index in the background, newest first; until a log is moved, free text and keyed-value filters do not find it (and a negated one " +
    "does not exclude it), and such a search answers index_incomplete: true.",
  request: { body: { required: true, content: { "application/json": { schema: SearchBody } } } },
  responses: {
    200: { description: "One page of matching logs", content: { "application/json": { schema: SearchResponse } } },
  },
});

const suggestions = defineRoute({
  method: "get",
  path: "/api/public/v2/requests/suggestions",
  scope: "logs:read",
  tags: ["request logs"],
  summary: "Autocomplete suggestions for request-log fields",
  description:
    "Distinct values of a field, most frequent first (ties alphabetical). 10 requests a minute per API key, " +
    "checked before anything else. A new log's values count within seconds of its write. With a filter_group, a log from before an " +
    "upgrade still waiting for the layout move may be left out: the answer then has index_incomplete: true.",
  rateLimit: SUGGESTIONS_RATE_LIMIT,
  request: { query: SuggestionsQuery },
  responses: {
    200: { description: "Suggested values", content: { "application/json": { schema: SuggestionsResponse } } },
  },
});

export function registerRequestRoutes(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.register("StructuredFilter", StructuredFilterDoc);

  app.openapi(searchRequests, async (c) => {
    const body = c.req.valid("json");
    const result = await searchRequestLogs(c.var.deps.db, await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth").workspaceId, {
      ...body,
      page: body.page ?? 1,
      per_page: body.per_page ?? SEARCH_PER_PAGE.default,
    });
    return c.json(result, 200);
  });

  app.openapi(suggestions, async (c) => {
    const q = c.req.valid("query");
    const { values, counts, index_incomplete } = await suggestRequestValues(await c.var.deps.logs(c.get("auth").workspaceId), c.get("auth").workspaceId, {
      field: q.field,
      prefix: q.prefix,
      metadata_key: q.metadata_key,
      prompt_id: q.prompt_id,
      filter_group: q.filter_group,
      limit: q.limit ?? SUGGESTION_LIMIT.default,
    });
    // index_incomplete only when true: PromptLayer's shape otherwise.
    return c.json({ success: true as const, values, ...(q.include_counts ? { counts } : {}), ...(index_incomplete ? { index_incomplete } : {}) }, 200);
  });

  // Before /{request_id}, which would take "export" for an id.
  app.openapi(exportRequests, async (c) => {
    const { from, to } = c.req.valid("query");
    const { blobs } = c.var.deps;
    const ws = c.get("auth").workspaceId;
    const lines = exportLogs(await c.var.deps.logs(ws), blobs, ws, from, to);
    return c.body(ndjsonBody(lines, c.get("requestId")), 200, { "Content-Type": "application/x-ndjson; charset=utf-8" }) as never;
  });

  app.openapi(exportMatching, async (c) => {
    const body = c.req.valid("json");
    const ws = c.get("auth").workspaceId;
    const logs = await c.var.deps.logs(ws);
    const filter = await exportFilter(logs, ws, { filter_group: body.filter_group, from: body.from, to: body.to });
    // Compiled before the answer starts: a filter the compiler refuses is a 400, not a cut-short body.
    const lines = await exportMatchingLogs(logs, c.var.deps.blobs, ws, filter);
    return c.body(ndjsonBody(lines, c.get("requestId")), 200, { "Content-Type": "application/x-ndjson; charset=utf-8" }) as never;
  });

  const detail = async (c: Context<AppEnv>, id: number) => {
    const ws = c.get("auth").workspaceId;
    const log = await readRequestLog(await c.var.deps.logs(ws), c.var.deps.blobs, ws, id);
    if (!log) throw ApiError.notFound("request log");
    return log;
  };
  app.openapi(getRequest, async (c) => c.json(await detail(c, c.req.valid("param").request_id), 200));
  app.openapi(requestPayload, async (c) => c.json(await detail(c, c.req.valid("query").request_id), 200));
}
