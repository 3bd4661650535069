// The requests the benchmarks send: realistic log bodies, the 21 suggestion queries and the three
// searches over the seeded logs (scripts/lib/seed-logs.mjs), shared by bench:log, bench:search and
// bench:targets.
import { START_MS } from "./seed-logs.mjs";

const TOPICS = ["quarterly revenue", "the incident report", "a support ticket", "the release notes", "a contract clause", "user feedback"];
const MODELS = [
  ["openai", "gpt-4o"],
  ["openai", "gpt-4o-mini"],
  ["anthropic", "claude-3-5-sonnet-latest"],
];

/** A realistic chat log, different for every i (text, model, tokens, price, times, metadata). */
export function logBody(i) {
  const [provider, model] = MODELS[i % MODELS.length];
  const topic = TOPICS[i % TOPICS.length];
  const start = Date.UTC(2024, 0, 15, 10, 30, 0) + i * 1_000;
  const durationMs = 800 + ((i * 37) % 2400);
  const inputTokens = 100 + ((i * 13) % 400);
  const outputTokens = 20 + ((i * 7) % 200);
  return JSON.stringify({
    provider,
    model,
    input: {
      type: "chat",
      messages: [
        { role: "system", content: [{ type: "text", text: "You are helpful. Answer concisely and cite the document when you can." }] },
        {
          role: "user",
          content: [{ type: "text", text: `Summarise ${topic} #${i} in three bullet points for an executive audience, keeping numbers exact.` }],
        },
      ],
    },
    output: {
      type: "chat",
      messages: [
        {
          role: "assistant",
          content: [
            {
              type: "text",
              text: `- ${topic} #${i}: the main change is a ${i % 17}% increase over the previous period.\n- Risks: two open items, both owned.\n- Next step: review on Friday.`,
            },
          ],
        },
      ],
    },
    request_start_time: new Date(start).toISOString(),
    request_end_time: new Date(start + durationMs).toISOString(),
    tags: ["bench", i % 2 === 0 ? "prod" : "staging"],
    metadata: { user_id: `u-${i}`, session: `s-${i % 50}` },
    prompt_input_variables: { topic, n: String(i) },
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    price: Math.round((inputTokens * 2.5e-6 + outputTokens * 1e-5) * 1e6) / 1e6,
    parameters: { temperature: (i % 10) / 10, max_tokens: 512 },
  });
}


export const LOG_BODY = logBody;

export const SUGGESTIONS = [
  { field: "engine" },
  { field: "engine", prefix: "MODEL-1" },
  { field: "provider_type" },
  { field: "prompt_id" },
  { field: "prompt" },
  { field: "prompt", prompt_id: "42" },
  { field: "prompt", prefix: "prompt-4" },
  { field: "tags" },
  { field: "tags", prefix: "tag-2" },
  { field: "metadata_keys" },
  { field: "metadata_keys", prefix: "key-1" },
  { field: "status" },
  { field: "tool_names" },
  { field: "output_keys" },
  { field: "input_variable_keys" },
  { field: "metadata_values", metadata_key: "key-7" },
  { field: "metadata_values", metadata_key: "env", prefix: "pr" },
  { field: "output_values", metadata_key: "answer" },
  { field: "output_values", metadata_key: "answer", prefix: "answer-1" },
  { field: "input_variable_values", metadata_key: "topic" },
  { field: "input_variable_values", metadata_key: "var-3", prefix: "v1" },
];

/** The three searches over `logs` seeded logs: search 1's date is the same share of the seeded span (day 200 of 347 at 1M). */
export const searchesFor = (logs) => ({
  "expensive and recent, by cost desc": {
    filter_group: {
      logic: "AND",
      filters: [
        { field: "cost", operator: "gte", value: 0.9 },
        { field: "request_start_time", operator: "after", value: new Date(START_MS + Math.round(logs * 30_000 * (200 / 347.22))).toISOString() },
      ],
    },
    sort_by: "cost",
    sort_order: "desc",
    per_page: 25,
  },
  "metadata key and tag, newest first": {
    filter_group: {
      logic: "AND",
      filters: [
        { field: "metadata", operator: "key_equals", nested_key: "env", value: "prod" },
        { field: "tags", operator: "contains", value: "tag-42" },
      ],
    },
    per_page: 25,
  },
  "nested OR of engines, errors and latency, page 3": {
    filter_group: {
      logic: "OR",
      filters: [
        { logic: "AND", filters: [{ field: "engine", operator: "in", value: ["model-3", "model-17"] }, { field: "status", operator: "is", value: "ERROR" }] },
        { logic: "AND", filters: [{ field: "provider_type", operator: "is", value: "google" }, { field: "latency_ms", operator: "gt", value: 5000 }] },
      ],
    },
    page: 3,
    per_page: 25,
  },
});

export const SEARCHES = searchesFor(1_000_000);

/** Search 3's shape with values no seeded log carries: zero matches (a search's page plan depends on its matches). */
export const MATCHING_NOTHING = {
  filter_group: {
    logic: "OR",
    filters: [
      { logic: "AND", filters: [{ field: "engine", operator: "in", value: ["model-x", "model-y"] }, { field: "status", operator: "is", value: "ERROR" }] },
      { logic: "AND", filters: [{ field: "provider_type", operator: "is", value: "nobody" }, { field: "latency_ms", operator: "gt", value: 5000 }] },
    ],
  },
  per_page: 25,
};

