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

/** Kinds of rows in the search side table; tag and tool rows have key ''. */
export const INDEX_KINDS = ["tag", "tool", "metadata", "input_variable", "output"] as const;

export type IndexKind = (typeof INDEX_KINDS)[number];

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
    index("request_logs_workspace_prompt").on(t.workspaceId, t.promptId, t.promptVersionNumber),
    // Engine filters, with the status after it: "engine in [...] AND status is X" is one index range.
    index("request_logs_workspace_model_status").on(t.workspaceId, t.model, t.status),
    // Provider and latency (an expression: latency_ms filters compile to end - start), so an OR
    // branch on them is an index range too and the OR never falls back to scanning the workspace.
    index("request_logs_workspace_provider_latency").on(t.workspaceId, t.provider, sql`(${t.requestEndTime} - ${t.requestStartTime})`),
    index("request_logs_workspace_price_start").on(t.workspaceId, t.price, t.requestStartTime),
    index("request_logs_workspace_group").on(t.workspaceId, t.groupId),
    // One log per span (NULLs are distinct, so logs without a span are not constrained); also the
    // trace_id filter's index.
    uniqueIndex("request_logs_workspace_trace_span").on(t.workspaceId, t.traceId, t.spanId),
    // Logs with redaction counts (partial: a log without any costs no entry), for the redaction chart.
    index("request_logs_workspace_redacted")
      .on(t.workspaceId, t.requestStartTime)
      .where(sql`${t.redactions} IS NOT NULL`),
  ],
);

/**
 * The FTS5 index of request logs' text, keyed by rowid = request_logs.id. A virtual table drizzle cannot
 * declare: migrations/0004_request_logs_fts.sql and migrations-logs/0001_search_triggers.sql create it,
 * the indexer fills it (src/logs/indexing.ts). Its name in SQL comes from here.
 */
export const REQUEST_LOGS_FTS = "request_logs_fts";

/**
 * The FTS table's columns (rowid is its key, the log's id), named once here since drizzle does not know
 * them: migrations/0004_request_logs_fts.sql and migrations-logs/0001_search_triggers.sql declare them.
 */
export const REQUEST_LOGS_FTS_COLUMNS = { rowid: "rowid", inputText: "input_text", outputText: "output_text" } as const;

/**
 * Logs whose search side rows, full-text entry, facet counts and daily totals are not written yet
 * (src/logs/indexing.ts). The log's writer adds its row in the batch that writes the log, the indexer
 * deletes it in the batch that writes those, so a log is indexed exactly once. `tools` carries the
 * tool names its blueprints declare or call (reading them back would mean decoding the stored body;
 * the one write that changes a log's blueprints, a span's log records joining its log, updates them
 * here too: src/logs/log-records.ts); everything else the indexer reads from the log row as it is then.
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
  // Clustered by this key (the migration makes the table WITHOUT ROWID): a dimension's busiest values
  // are read as one short range each, and totals by value stream in key order.
  (t) => [primaryKey({ columns: [t.workspaceId, t.dim, t.key, t.day, t.bucket] })],
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
 * The search side table: one row per (log, kind, key, value) so that filters and autocomplete are
 * index lookups instead of JSON scans. One table for every kind (rather than a table per kind) so a
 * log's side rows are one insert and the filter compiler has one shape to join.
 */
export const requestLogValues = sqliteTable(
  "request_log_values",
  {
    id: integer("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull(),
    requestId: integer("request_id")
      .notNull()
      .references(() => requestLogs.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: INDEX_KINDS }).notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
  },
  (t) => [
    // request_id last: a lookup reads log ids from the index alone, and a probe for one log is a seek.
    index("request_log_values_probe").on(t.workspaceId, t.kind, t.key, t.value, t.requestId),
    index("request_log_values_request").on(t.requestId),
  ],
);

/**
 * Autocomplete counts: one row per (workspace, suggestion field, key, value) with the number of logs
 * that carry it, kept up to date by the indexer and the tracking calls, so suggestions without a filter_group are
 * an index range read instead of a GROUP BY over every log. `value_fold` is the value lower-cased
 * (full Unicode, in JS) for the case-insensitive prefix; `key` is '' for fields without one, the
 * metadata/output/input-variable key for *_values, and the prompt id for `prompt`.
 */
export const requestLogFacets = sqliteTable(
  "request_log_facets",
  {
    id: integer("id").primaryKey(),
    workspaceId: integer("workspace_id").notNull(),
    field: text("field", { enum: FACET_FIELDS }).notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    valueFold: text("value_fold").notNull(),
    count: integer("count").notNull().default(0),
  },
  (t) => [
    uniqueIndex("request_log_facets_value").on(t.workspaceId, t.field, t.key, t.value),
    index("request_log_facets_fold").on(t.workspaceId, t.field, t.key, t.valueFold),
    index("request_log_facets_count").on(t.workspaceId, t.field, t.key, t.count),
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
