// Request logs and what search, suggestions and analytics read beside them: index rows, facet counts, daily rollups, groups.
// These tables (and traces.ts's) live in the log databases (migrations-logs/, one per shard), apart
// from the control database that holds the workspaces: so no foreign key names a workspace.
import { sql } from "drizzle-orm";
import { customType, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { nowMs as now } from "../sql";

export const REQUEST_STATUSES = ["SUCCESS", "WARNING", "ERROR"] as const;

export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** error_type → the statuses it may be logged with (the interface's table). */
export const ERROR_TYPE_STATUSES = {
  PROVIDER_RATE_LIMIT: ["WARNING", "ERROR"],
  PROVIDER_QUOTA_LIMIT: ["WARNING", "ERROR"],
  PROVIDER_PARTIAL_RESPONSE: ["WARNING"],
  VARIABLE_MISSING_OR_EMPTY: ["WARNING"],
  PROVIDER_TIMEOUT: ["ERROR"],
  PROVIDER_AUTH_ERROR: ["ERROR"],
  PROVIDER_ERROR: ["ERROR"],
  TEMPLATE_RENDER_ERROR: ["ERROR"],
  UNKNOWN_ERROR: ["WARNING", "ERROR"],
} as const satisfies Record<string, readonly (typeof REQUEST_STATUSES)[number][]>;

export type ErrorType = keyof typeof ERROR_TYPE_STATUSES;

/** Kinds of a log's keyed search values (request_logs' tags, metadata and extra_values); tag and tool values have key ''. */
export const INDEX_KINDS = ["tag", "tool", "metadata", "input_variable", "output"] as const;

export type IndexKind = (typeof INDEX_KINDS)[number];

/** How a log's A/B variant is known (request_logs.ab_assignment). */
export const AB_ASSIGNMENTS = ["sticky", "inferred"] as const;

/** One keyed search value of a log: its kind, key ('' for tags and tools) and value, as indexed. */
export type SearchValue = [kind: IndexKind, key: string, value: string];

/** What a log's output is, derived when it is logged (the is_json / is_tool_call / is_plain_text filters). */
export const OUTPUT_FORMATS = ["json", "tool_call", "text", "empty"] as const;

export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The virtual intent fields of the filter group (PromptLayer's vocabulary). */
export const USER_INTENTS = ["frustrated", "satisfied", "curious"] as const;

export const AGENT_INTENTS = ["apologetic", "refusal", "uncertain"] as const;

/** Fields whose values the suggestions endpoint serves from request_log_facets. */
export const FACET_FIELDS = [
  "engine",
  "provider_type",
  "prompt_id",
  "prompt",
  "tags",
  "metadata_keys",
  "status",
  "tool_names",
  "output_keys",
  "input_variable_keys",
  "metadata_values",
  "output_values",
  "input_variable_values",
  "trace_id",
  "span_name",
] as const;

export type FacetField = (typeof FACET_FIELDS)[number];

/** A BLOB as bytes: D1 hands BLOBs back as arrays of byte values. */
const bytes = customType<{ data: Uint8Array; driverData: Uint8Array | ArrayBuffer | number[] }>({
  dataType: () => "blob",
  fromDriver: (v) => (v instanceof Uint8Array ? v : v instanceof ArrayBuffer ? new Uint8Array(v) : Uint8Array.from(v)),
});

export const requestLogs = sqliteTable(
  "request_logs",
  {
    // AUTOINCREMENT: ids are never reused, so the newest row of a write batch is max(id).
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull(),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    apiType: text("api_type"),
    // The blueprints as JSON text, or '' each when `body` holds them (src/logs/row-codec.ts, the one
    // module that writes and reads these four columns).
    input: text("input").notNull(),
    output: text("output").notNull(),
    parameters: text("parameters").notNull(),
    /** input, output and parameters compressed with input_text and output_text as the dictionary; NULL: the JSON columns hold them. */
    body: bytes("body"),
    tags: text("tags", { mode: "json" }).notNull().$type<string[]>(),
    metadata: text("metadata", { mode: "json" }).notNull().$type<Record<string, string>>(),
    promptName: text("prompt_name"),
    promptId: integer("prompt_id"),
    promptVersionNumber: integer("prompt_version_number"),
    promptVersionId: integer("prompt_version_id"),
    promptInputVariables: text("prompt_input_variables", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    price: real("price").notNull().default(0),
    functionName: text("function_name").notNull().default(""),
    score: integer("score").notNull().default(0),
    scoreName: text("score_name"),
    /** Every named score of the log, name → 0..100; `score` stays the one named "default" (or logged unnamed). */
    scores: text("scores", { mode: "json" }).notNull().default(sql`'{}'`).$type<Record<string, number>>(),
    /** The request group (request_groups) the log belongs to. */
    groupId: integer("group_id"),
    status: text("status", { enum: REQUEST_STATUSES }).notNull().default("SUCCESS"),
    errorType: text("error_type"),
    errorMessage: text("error_message"),
    requestStartTime: integer("request_start_time").notNull(),
    requestEndTime: integer("request_end_time").notNull(),
    createdBy: integer("created_by"),
    /** The key that wrote the log; a trigger refuses the insert when that key is revoked. */
    apiKeyId: integer("api_key_id"),
    createdAt: integer("created_at").notNull().default(now),
    // Derived at log time for search (see index-rows.ts); request_logs_fts indexes the texts. Never
    // rewritten: they are the dictionary `body` was compressed with.
    inputText: text("input_text").notNull().default(""),
    outputText: text("output_text").notNull().default(""),
    outputFormat: text("output_format", { enum: OUTPUT_FORMATS }).notNull().default("empty"),
    userIntent: text("user_intent", { enum: USER_INTENTS }),
    agentIntent: text("agent_intent", { enum: AGENT_INTENTS }),
    /**
     * The log's keyed search values ([kind, key, value] each, as indexed: src/logs/index-rows.ts) that
     * its tags and metadata columns do not give as they are: its input variables, tool names and the
     * keys of a JSON answer, and a tag, metadata key or value of more than DERIVED_VALUE_MAX characters.
     * With those columns, every value filters and suggestions see (src/filters/compile.ts,
     * logValuesSql); written with the log and moved by every call that changes what they are made of.
     * NULL for a log written before this column (or by a Worker older than it): the indexer makes them.
     */
    extraValues: text("extra_values", { mode: "json" }).$type<SearchValue[]>(),
    /** The span the log was made from or for (spans-bulk, OTLP, or track-request's span_id). */
    traceId: text("trace_id"),
    spanId: text("span_id"),
    /**
     * How many values each redaction detector replaced in the log (`{"email": 2}`), by the workspace's
     * policy (src/redaction/); NULL when nothing was (no policy, or nothing found).
     */
    redactions: text("redactions", { mode: "json" }).$type<Record<string, number>>(),
    /**
     * Bumped by a trigger on every update of the row: the archive job deletes a log only if the row it
     * copied to R2 is still this revision, so an update landing meanwhile is never lost (archive.ts).
     */
    revision: integer("revision").notNull().default(0),
    /**
     * The A/B release (control database's ab_tests.id) and variant the log was served, and how that is
     * known (sticky: its unit's assignment served its version; inferred: only its version tells), set
     * when the log is written (src/prompts/ab-split.ts variantOfLog). Null for every other log.
     */
    abTestId: integer("ab_test_id"),
    abVariant: text("ab_variant"),
    abAssignment: text("ab_assignment", { enum: AB_ASSIGNMENTS }),
  },
  (t) => [
    // Newest-first listing and a covering scan for filters on the scalar fields: counting matches
    // reads this index, never the wide rows (which hold the input and output JSON).
    index("request_logs_workspace_scan").on(
      t.workspaceId,
      t.requestStartTime,
      t.requestEndTime,
      t.model,
      t.provider,
      t.status,
      t.price,
      t.inputTokens,
      t.outputTokens,
      t.promptId,
      t.promptVersionNumber,
      t.outputFormat,
    ),
    // A prompt's logs (prompt filters, analytics by prompt): only logs that link one have an entry.
    index("request_logs_workspace_prompt").on(t.workspaceId, t.promptId, t.promptVersionNumber).where(sql`${t.promptId} IS NOT NULL`),
    // Engine filters, with the status after it: "engine in [...] AND status is X" is one index range.
    index("request_logs_workspace_model_status").on(t.workspaceId, t.model, t.status),
    // Provider and latency (an expression: latency_ms filters compile to end - start), so an OR
    // branch on them is an index range too and the OR never falls back to scanning the workspace.
    index("request_logs_workspace_provider_latency").on(t.workspaceId, t.provider, sql`(${t.requestEndTime} - ${t.requestStartTime})`),
    index("request_logs_workspace_price_start").on(t.workspaceId, t.price, t.requestStartTime),
    // Only logs in a group have an entry (a group_id filter implies group_id IS NOT NULL).
    index("request_logs_workspace_group").on(t.workspaceId, t.groupId).where(sql`${t.groupId} IS NOT NULL`),
    // One log per span (NULLs are distinct, so logs without a span are not constrained); also the
    // trace_id filter's index and the span id lookups of span ingestion. Only logs with a span or a
    // trace have an entry: `trace_id = ?` and `span_id IN (…)` each imply the index's condition.
    uniqueIndex("request_logs_workspace_trace_span").on(t.workspaceId, t.traceId, t.spanId).where(sql`${t.traceId} IS NOT NULL OR ${t.spanId} IS NOT NULL`),
    // Search on ab_test_id / ab_variant; partial, so only the logs served through a release pay for it.
    index("request_logs_workspace_ab").on(t.workspaceId, t.abTestId, t.abVariant).where(sql`${t.abTestId} IS NOT NULL`),
    // Logs with redaction counts (partial: a log without any costs no entry), for the redaction chart.
    index("request_logs_workspace_redacted")
      .on(t.workspaceId, t.requestStartTime)
      .where(sql`${t.redactions} IS NOT NULL`),
  ],
);

/**
 * The search index of request logs, an FTS5 table keyed by rowid = request_logs.id: the free text of
 * `q` (input_text, output_text) and the log's keyed search values (`keys`: a token per value, the id
 * of its request_log_facets row, "v" + id). Contentless (content=''), so it keeps no copy of the text,
 * with contentless_delete=1 so an entry is deleted or replaced by rowid alone; detail=column (no
 * positions: no query here needs them). A virtual table drizzle cannot declare: the migrations create
 * it (migrations-logs/0010, migrations/0034), the indexer fills it (src/logs/indexing.ts) and triggers
 * keep it in step with the row. Its name in SQL comes from here.
 */
export const REQUEST_LOGS_FTS = "request_log_search";

/**
 * The FTS table's columns (rowid is its key, the log's id), named once here since drizzle does not know
 * them.
 */
export const REQUEST_LOGS_FTS_COLUMNS = { rowid: "rowid", inputText: "input_text", outputText: "output_text", keys: "keys" } as const;

/**
 * Where this database's indexer stands (one row, id 1): every log with an id up to `indexed_to` has its
 * search entry and facet counts, and every one up to `counted_to` (never past indexed_to) its daily
 * totals too (but, for both, the few listed in request_log_unindexed); every later one has none.
 * `next_facet_id` numbers the next request_log_facets row. A log's writer writes nothing for its
 * indexing: ids grow in commit order on D1's single writer, so the logs past a watermark are exactly
 * those waiting (src/logs/indexing.ts). `ab_rolled_to` is the A/B rollup step's watermark the same
 * way: every log served through a release with an id up to it is counted in its variant's rows
 * (src/logs/ab-rollups.ts). `moved_to`: every log up to it that was indexed before the search index
 * layout of issue 37 (but the ones listed in request_log_unindexed) still waits to be moved into it
 * (its search entry and extra_values: src/logs/layout-move.ts); 0 once none does.
 */
export const logIndexState = sqliteTable("log_index_state", {
  id: integer("id").primaryKey(),
  indexedTo: integer("indexed_to").notNull(),
  countedTo: integer("counted_to").notNull(),
  nextFacetId: integer("next_facet_id").notNull(),
  abRolledTo: integer("ab_rolled_to").notNull().default(0),
  movedTo: integer("moved_to").notNull().default(0),
});

/**
 * Logs from before log_index_state that were still unindexed when it came (migrations-logs/0010,
 * migrations/0034), or that a Worker of the version before wrote during an upgrade: indexed like the
 * logs past the watermark, then deleted (src/logs/indexing.ts). Empty otherwise; nothing new writes it.
 * `tools` are the tool names those versions recorded for the indexer.
 */
export const requestLogUnindexed = sqliteTable("request_log_unindexed", {
  requestId: integer("request_id").primaryKey(),
  tools: text("tools", { mode: "json" }).notNull().$type<string[]>(),
  createdAt: integer("created_at").notNull().default(now),
});

/** The dimensions request_log_daily keeps totals by; the key of `all` is ''. */
export const ROLLUP_DIMS = ["all", "model", "provider", "prompt", "status"] as const;

/**
 * Request-log totals per workspace, UTC day and one dimension's value: all logs, each model, each
 * provider, each prompt (key: its id), each status with its error type (key: "STATUS|error_type").
 * `all`, `model` and `provider` rows are split by latency bucket (src/analytics/latency-buckets.ts)
 * for percentiles; `prompt` and `status` rows have bucket -1. Written by the indexer with the log's
 * other index rows (src/logs/indexing.ts), a batch of logs at a time: analytics over weeks read these
 * rows, never the logs.
 */
export const requestLogDaily = sqliteTable(
  "request_log_daily",
  {
    workspaceId: integer("workspace_id").notNull(),
    dim: text("dim", { enum: ROLLUP_DIMS }).notNull(),
    /** Start of the UTC day, epoch ms. */
    day: integer("day").notNull(),
    key: text("key").notNull(),
    bucket: integer("bucket").notNull(),
    requests: integer("requests").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    cost: real("cost").notNull(),
    /** Sum of the latencies, ms: averages stay exact. */
    latencyMs: integer("latency_ms").notNull(),
  },
  // Clustered by this key (the migration makes the table WITHOUT ROWID): analytics reads a window of
  // days of one dimension, every value of it, as one range (by value first, it read every day of each
  // value to find the window's).
  (t) => [primaryKey({ columns: [t.workspaceId, t.dim, t.day, t.key, t.bucket] })],
);

/**
 * The database's own id range (src/logs/id-ranges.ts): one row, written when the database's
 * AUTOINCREMENT counters of request_logs and request_groups were first moved to `base`. The shard map
 * (log_shards.id_range in the control database) says the same; a database bound under another
 * binding's name is caught by the two disagreeing.
 */
export const logIdRange = sqliteTable("log_id_range", {
  id: integer("id").primaryKey(),
  base: integer("base").notNull(),
  createdAt: integer("created_at").notNull().default(now),
});

/** Request groups (the SDK's group.create / track.group): ids that tie logs of one flow together. */
export const requestGroups = sqliteTable("request_groups", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  workspaceId: integer("workspace_id").notNull(),
  createdBy: integer("created_by"),
  createdAt: integer("created_at").notNull().default(now),
});

/**
 * Autocomplete counts: one row per (workspace, suggestion field, key, value) with the number of indexed
 * logs that carry it, kept by the indexer and the tracking calls, so suggestions without a
 * filter_group read one key range instead of a GROUP BY over every log. Clustered by that key (the
 * migration makes the table WITHOUT ROWID: a new value is one entry, a count moved is one rewrite).
 * `key` is '' for fields without one, the metadata/output/input-variable key for *_values, and the
 * prompt id for `prompt`. `id` numbers the row for the search index: a log's keyed values are the
 * tokens "v" + id in request_log_search, so a filter on tags or metadata is a full-text lookup.
 * `value_fold` is the value lower-cased (full Unicode, in JS) when that differs from the value, NULL
 * when not: the case-insensitive prefix reads the key's range for the NULLs and the fold index for the rest.
 */
export const requestLogFacets = sqliteTable(
  "request_log_facets",
  {
    workspaceId: integer("workspace_id").notNull(),
    field: text("field", { enum: FACET_FIELDS }).notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    valueFold: text("value_fold"),
    count: integer("count").notNull().default(0),
    id: integer("id").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.field, t.key, t.value] }),
    index("request_log_facets_fold").on(t.workspaceId, t.field, t.key, t.valueFold).where(sql`${t.valueFold} IS NOT NULL`),
  ],
);

/**
 * The manifest of archived request logs (src/logs/archive.ts): one row per gzip NDJSON object in R2,
 * holding every log of one workspace and UTC day whose id is in [first_id, last_id]. A log-side table:
 * it lives beside request_logs, and the row is written in the same batch that deletes those logs, so a
 * log is either covered by a row here or still in request_logs. An R2 object without a row is the
 * leftover of a crash and is never read.
 */
export const requestLogArchives = sqliteTable(
  "request_log_archives",
  {
    // AUTOINCREMENT: an export orders manifest rows by when they were written (see exportLogs).
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: integer("workspace_id").notNull(),
    /** Start of the UTC day of the logs' request_start_time, epoch ms. */
    day: integer("day").notNull(),
    objectKey: text("object_key").notNull(),
    firstId: integer("first_id").notNull(),
    lastId: integer("last_id").notNull(),
    logCount: integer("log_count").notNull(),
    /** Size of the gzip object. */
    bytes: integer("bytes").notNull(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("request_log_archives_object_key").on(t.objectKey),
    // An export reads a workspace's files day by day; a live log is checked against its day's ranges.
    index("request_log_archives_workspace_day").on(t.workspaceId, t.day, t.firstId, t.lastId),
    // GET by id: the files whose range may hold an id.
    index("request_log_archives_workspace_range").on(t.workspaceId, t.firstId, t.lastId),
  ],
);

export type RequestLogRow = typeof requestLogs.$inferSelect;
