// Seeding request logs straight into a local D1 for the benchmarks: generated inside SQLite
// (recursive CTEs) with realistic cardinalities, a chunk of ids per statement file, indexed as the
// indexer would have indexed them (keyed values, facet counts, search entries, daily totals, the
// watermark).

/** Logs per seeding file. */
export const CHUNK = 100_000;
/** Log i starts at START_MS + i × 30 s. */
export const START_MS = Date.UTC(2025, 0, 1);

/**
 * The SQL that inserts logs from..to (ids) of workspace ws with their extra keyed values (input
 * variables, a tool on tool calls, output keys on JSON answers: src/logs/index-rows.ts). Their facet
 * counts, search entries and the watermark come after every chunk (facetsSql).
 */
export function logsSql(ws, from, to) {
  return `WITH RECURSIVE seq(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM seq WHERE i < ${to})
INSERT INTO request_logs (id, workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_name, prompt_id,
  prompt_version_number, prompt_input_variables, input_tokens, output_tokens, price, status, error_type,
  request_start_time, request_end_time, input_text, output_text, output_format, user_intent, agent_intent, extra_values)
SELECT i, ${ws},
  CASE WHEN (i * 7) % 40 < 12 THEN 'anthropic' WHEN (i * 7) % 40 < 16 THEN 'google' ELSE 'openai' END,
  'model-' || ((i * 7) % 40),
  '{"type":"chat","messages":[]}', '{"type":"chat","messages":[]}', '{}',
  json_array('tag-' || ((i * 7) % 300), 'tag-' || ((i * 13 + 5) % 300)),
  json_object('key-' || (i % 200), 'val-' || ((i * 17) % 5000), 'key-' || ((i * 3 + 1) % 200), 'val-' || ((i * 31) % 5000),
              'env', CASE i % 3 WHEN 0 THEN 'prod' WHEN 1 THEN 'staging' ELSE 'dev' END),
  'prompt-' || ((i * 11) % 500), ((i * 11) % 500) + 1, (i % 5) + 1,
  json_object('var-' || (i % 50), 'v' || ((i * 19) % 3000), 'topic', 'topic-' || (i % 100)),
  100 + ((i * 13) % 900), 20 + ((i * 7) % 500), ((i * 37) % 10000) / 10000.0,
  CASE WHEN i % 50 = 0 THEN 'ERROR' WHEN i % 20 = 0 THEN 'WARNING' ELSE 'SUCCESS' END,
  CASE WHEN i % 50 = 0 THEN 'PROVIDER_ERROR' WHEN i % 20 = 0 THEN 'UNKNOWN_ERROR' END,
  ${START_MS} + i * 30000, ${START_MS} + i * 30000 + 200 + ((i * 37) % 5000),
  'Summarise topic ' || (i % 100) || ' report number ' || i || ' for the weekly review',
  'The main finding of report ' || i || ' concerns word' || (i % 1000),
  CASE WHEN i % 5 = 0 THEN 'json' WHEN i % 10 = 1 THEN 'tool_call' ELSE 'text' END,
  CASE i % 7 WHEN 0 THEN 'curious' WHEN 1 THEN 'satisfied' WHEN 2 THEN 'frustrated' END,
  CASE i % 11 WHEN 0 THEN 'apologetic' WHEN 1 THEN 'uncertain' WHEN 2 THEN 'refusal' END,
  CASE WHEN i % 5 = 0 THEN json_array(json_array('input_variable', 'var-' || (i % 50), 'v' || ((i * 19) % 3000)), json_array('input_variable', 'topic', 'topic-' || (i % 100)),
                                      json_array('output', 'answer', 'answer-' || (i % 700)), json_array('output', 'confidence', CAST(i % 10 AS TEXT)))
       WHEN i % 10 = 1 THEN json_array(json_array('input_variable', 'var-' || (i % 50), 'v' || ((i * 19) % 3000)), json_array('input_variable', 'topic', 'topic-' || (i % 100)),
                                       json_array('tool', '', 'tool-' || (i % 30)))
       ELSE json_array(json_array('input_variable', 'var-' || (i % 50), 'v' || ((i * 19) % 3000)), json_array('input_variable', 'topic', 'topic-' || (i % 100))) END
FROM seq;
`;
}

/**
 * The daily totals of analytics, as the indexer keeps them (src/logs/indexing.ts, dailyTotals):
 * per day and dimension, split by latency bucket for all, model and provider. `bucketSql` is the
 * Worker's own (src/analytics/latency-buckets.ts; workerModule loads it in Node).
 */
export function dailySql(ws, bucketSql) {
  const latency = "max(request_end_time - request_start_time, 0)";
  const dims = [
    ["all", "''", true],
    ["model", "model", true],
    ["provider", "provider", true],
    ["prompt", "CAST(prompt_id AS TEXT)", false],
    ["status", "status || '|' || coalesce(error_type, '')", false],
  ];
  return dims
    .map(
      ([dim, key, buckets]) => `INSERT INTO request_log_daily (workspace_id, dim, day, key, bucket, requests, input_tokens, output_tokens, cost, latency_ms)
  SELECT ${ws}, '${dim}', request_start_time - (request_start_time % 86400000) AS d, ${key} AS k, ${buckets ? bucketSql(latency) : "-1"} AS b,
         count(*), sum(input_tokens), sum(output_tokens), sum(price), sum(${latency})
  FROM request_logs WHERE workspace_id = ${ws} AND ${key} IS NOT NULL GROUP BY d, k, b;`,
    )
    .join("\n");
}

/** SQL: the keyed values of log r as (kind, key, value) rows (src/filters/compile.ts, logValuesSql; seeded values are all short). */
const VALUES = `(SELECT 'tag' AS kind, '' AS key, v.value AS value FROM json_each(r.tags) AS v
    UNION SELECT 'metadata', v.key, v.value FROM json_each(r.metadata) AS v
    UNION SELECT v.value ->> 0, v.value ->> 1, v.value ->> 2 FROM json_each(r.extra_values) AS v)`;

/**
 * The facet counts, as the indexer would have kept them (each value counted once a log, numbered), the
 * logs' search entries (their texts and their values' tokens, src/logs/search-index.ts) and the
 * watermark past them; then ANALYZE.
 */
export function facetsSql(ws) {
  const insert = (select) =>
    `INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count, id)
     SELECT ${ws}, field, key, value, nullif(lower(value), value), n, (SELECT coalesce(max(id), 0) FROM request_log_facets) + row_number() OVER () FROM (${select});`;
  const scalar = (field, expr, key = "''") =>
    insert(`SELECT '${field}' AS field, ${key} AS key, ${expr} AS value, count(*) AS n FROM request_logs WHERE workspace_id = ${ws} AND ${expr} IS NOT NULL GROUP BY ${key}, ${expr}`);
  // Each kind's values straight from the column that holds them (a tag listed twice in a log counts once).
  const from = (kind) =>
    kind === "tag"
      ? { rows: `request_logs AS r, json_each(r.tags) AS v WHERE r.workspace_id = ${ws}`, key: "v.key", value: "v.value" }
      : kind === "metadata"
        ? { rows: `request_logs AS r, json_each(r.metadata) AS v WHERE r.workspace_id = ${ws}`, key: "v.key", value: "v.value" }
        : { rows: `request_logs AS r, json_each(r.extra_values) AS v WHERE r.workspace_id = ${ws} AND v.value ->> 0 = '${kind}'`, key: "v.value ->> 1", value: "v.value ->> 2" };
  const keyed = (kind, field, byKey) => {
    const f = from(kind);
    const [key, value] = byKey ? ["''", f.key] : kind === "tag" || kind === "tool" ? ["''", f.value] : [f.key, f.value];
    return insert(`SELECT '${field}' AS field, ${key} AS key, ${value} AS value, count(DISTINCT r.id) AS n FROM ${f.rows} GROUP BY 2, 3`);
  };
  return [
    scalar("engine", "model"),
    scalar("provider_type", "provider"),
    scalar("status", "status"),
    scalar("prompt_id", "CAST(prompt_id AS TEXT)"),
    scalar("prompt", "prompt_name", "CAST(prompt_id AS TEXT)"),
    keyed("tag", "tags", false),
    keyed("tool", "tool_names", false),
    ...["metadata", "output", "input_variable"].flatMap((kind) => [keyed(kind, `${kind}_keys`, true), keyed(kind, `${kind}_values`, false)]),
    `INSERT INTO request_log_search (rowid, input_text, output_text, keys)
     SELECT r.id, r.input_text, r.output_text, (
       SELECT group_concat('v' || f.id, ' ') FROM (
         SELECT CASE e.kind WHEN 'tag' THEN 'tags' WHEN 'tool' THEN 'tool_names' ELSE e.kind || '_values' END AS field,
                CASE WHEN e.kind IN ('tag', 'tool') THEN '' ELSE e.key END AS key, e.value AS value FROM ${VALUES} AS e
         UNION SELECT e.kind || '_keys', '', e.key FROM ${VALUES} AS e WHERE e.kind NOT IN ('tag', 'tool')
       ) AS kv CROSS JOIN request_log_facets AS f ON f.workspace_id = r.workspace_id AND f.field = kv.field AND f.key = kv.key AND f.value = kv.value)
     FROM request_logs AS r WHERE r.workspace_id = ${ws};`,
    `UPDATE log_index_state SET indexed_to = max(indexed_to, (SELECT max(id) FROM request_logs WHERE workspace_id = ${ws})),
       counted_to = max(counted_to, (SELECT max(id) FROM request_logs WHERE workspace_id = ${ws})),
       next_facet_id = (SELECT coalesce(max(id), 0) + 1 FROM request_log_facets) WHERE id = 1;`,
    "ANALYZE;",
  ].join("\n");
}
