// Seeding request logs straight into a local D1 for the benchmarks: generated inside SQLite
// (recursive CTEs) with realistic cardinalities, a chunk of ids per statement file, indexed as the
// indexer would have indexed them (side rows, full-text entries, facet counts, daily totals).

/** Logs per seeding file. */
export const CHUNK = 100_000;
/** Log i starts at START_MS + i × 30 s. */
export const START_MS = Date.UTC(2025, 0, 1);

/** The SQL that inserts logs from..to (ids) of workspace ws, their search side rows and full-text entries. */
export function logsSql(ws, from, to) {
  return `WITH RECURSIVE seq(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM seq WHERE i < ${to})
INSERT INTO request_logs (id, workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_name, prompt_id,
  prompt_version_number, prompt_input_variables, input_tokens, output_tokens, price, status, error_type,
  request_start_time, request_end_time, input_text, output_text, output_format, user_intent, agent_intent)
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
  CASE i % 11 WHEN 0 THEN 'apologetic' WHEN 1 THEN 'uncertain' WHEN 2 THEN 'refusal' END
FROM seq;
INSERT INTO request_log_values (workspace_id, request_id, kind, key, value)
  SELECT ${ws}, r.id, 'tag', '', t.value FROM request_logs r, json_each(r.tags) t WHERE r.id BETWEEN ${from} AND ${to};
INSERT INTO request_log_values (workspace_id, request_id, kind, key, value)
  SELECT ${ws}, r.id, 'metadata', m.key, m.value FROM request_logs r, json_each(r.metadata) m WHERE r.id BETWEEN ${from} AND ${to};
INSERT INTO request_log_values (workspace_id, request_id, kind, key, value)
  SELECT ${ws}, r.id, 'input_variable', v.key, v.value FROM request_logs r, json_each(r.prompt_input_variables) v WHERE r.id BETWEEN ${from} AND ${to};
INSERT INTO request_log_values (workspace_id, request_id, kind, key, value)
  SELECT ${ws}, r.id, 'tool', '', 'tool-' || (r.id % 30) FROM request_logs r WHERE r.id BETWEEN ${from} AND ${to} AND r.output_format = 'tool_call';
INSERT INTO request_log_values (workspace_id, request_id, kind, key, value)
  SELECT ${ws}, r.id, 'output', 'answer', 'answer-' || (r.id % 700) FROM request_logs r WHERE r.id BETWEEN ${from} AND ${to} AND r.output_format = 'json';
INSERT INTO request_log_values (workspace_id, request_id, kind, key, value)
  SELECT ${ws}, r.id, 'output', 'confidence', CAST(r.id % 10 AS TEXT) FROM request_logs r WHERE r.id BETWEEN ${from} AND ${to} AND r.output_format = 'json';
INSERT INTO request_logs_fts (rowid, input_text, output_text)
  SELECT id, input_text, output_text FROM request_logs WHERE id BETWEEN ${from} AND ${to};
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

/** The facet counts, as POST /log-request would have kept them. */
export function facetsSql(ws) {
  const scalar = (field, expr, key = "''") =>
    `INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count)
     SELECT ${ws}, '${field}', ${key}, ${expr}, lower(${expr}), count(*) FROM request_logs WHERE workspace_id = ${ws} AND ${expr} IS NOT NULL GROUP BY ${key}, ${expr};`;
  const side = (kind, keysField, valuesField) =>
    `INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count)
     SELECT ${ws}, '${keysField}', '', key, lower(key), count(DISTINCT request_id) FROM request_log_values WHERE workspace_id = ${ws} AND kind = '${kind}' GROUP BY key;
     INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count)
     SELECT ${ws}, '${valuesField}', key, value, lower(value), count(*) FROM request_log_values WHERE workspace_id = ${ws} AND kind = '${kind}' GROUP BY key, value;`;
  const list = (kind, field) =>
    `INSERT INTO request_log_facets (workspace_id, field, key, value, value_fold, count)
     SELECT ${ws}, '${field}', '', value, lower(value), count(*) FROM request_log_values WHERE workspace_id = ${ws} AND kind = '${kind}' GROUP BY value;`;
  return [
    scalar("engine", "model"),
    scalar("provider_type", "provider"),
    scalar("status", "status"),
    scalar("prompt_id", "CAST(prompt_id AS TEXT)"),
    scalar("prompt", "prompt_name", "CAST(prompt_id AS TEXT)"),
    list("tag", "tags"),
    list("tool", "tool_names"),
    side("metadata", "metadata_keys", "metadata_values"),
    side("output", "output_keys", "output_values"),
    side("input_variable", "input_variable_keys", "input_variable_values"),
    "ANALYZE;",
  ].join("\n");
}
