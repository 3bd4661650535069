// A small, varied set of logged requests for search and suggestion tests.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { getDb } from "../../src/db/client";
import { CONTROL_SHARD, configuredShards, indexLeftBehind, SWEEP_MAX_LOGS } from "../../src/logs";
import { shardBinding } from "../../src/logs/shards";
import { call, json } from "./api";
import { logBody, text } from "./fixtures";

export const LONG_VALUE = "z".repeat(1100);

const chat = (user: string, assistant: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  input: { type: "chat", messages: [{ role: "system", content: text("You are helpful.") }, { role: "user", content: text(user) }], ...extra },
  output: { type: "chat", messages: [{ role: "assistant", ...assistant }] },
});

export const SEED = [
  logBody({
    model: "gpt-4o",
    provider: "openai",
    ...chat("Why is the sky blue?", { content: text('{"answer": "yes", "score": 1}') }),
    tags: ["prod", "eu"],
    metadata: { user_id: "u1", env: "prod" },
    prompt_input_variables: { topic: "cats", n: 3 },
    input_tokens: 10,
    output_tokens: 20,
    price: 0.5,
    request_start_time: "2024-01-01T00:00:00Z",
    request_end_time: "2024-01-01T00:00:01Z",
    prompt_id: 11,
    prompt_version_number: 2,
    prompt_name: "support",
  }),
  logBody({
    model: "claude-3",
    provider: "anthropic",
    ...chat("This is not working!!", { content: text("Sorry, I can't help with that.") }),
    tags: ["staging"],
    metadata: { user_id: "u2" },
    prompt_input_variables: { topic: "dogs" },
    input_tokens: 100,
    output_tokens: 5,
    price: 0.01,
    request_start_time: "2024-02-01T00:00:00Z",
    request_end_time: "2024-02-01T00:00:03Z",
    status: "WARNING",
    error_type: "VARIABLE_MISSING_OR_EMPTY",
  }),
  logBody({
    model: "gpt-4o-mini",
    provider: "openai",
    ...chat(
      "thanks, great",
      { content: [], tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
      { tools: [{ type: "function", function: { name: "get_weather", parameters: {} } }] },
    ),
    input_tokens: 0,
    output_tokens: 0,
    price: 0,
    request_start_time: "2024-03-01T00:00:00Z",
    request_end_time: "2024-03-01T00:00:00.500Z",
    status: "ERROR",
    error_type: "PROVIDER_ERROR",
    prompt_id: 12,
    prompt_name: "router",
  }),
  logBody({
    model: "gpt-4o",
    provider: "openai",
    ...chat("Tell me about Rayleigh scattering", { content: text("Blue light scatters more.") }),
    tags: ["prod"],
    metadata: { env: "dev", long: LONG_VALUE },
    input_tokens: 50,
    output_tokens: 60,
    price: 1.25,
    request_start_time: "2024-04-01T00:00:00Z",
    request_end_time: "2024-04-01T00:00:02Z",
    prompt_id: 11,
    prompt_version_number: 3,
    prompt_name: "support",
  }),
];

/**
 * Indexes every log still waiting for the indexer, in every log database, at once: what search,
 * suggestions and analytics see a few seconds after a write (src/logs/indexing.ts). The one way
 * tests wait for indexing: call it between writing logs and reading them through those.
 */
export async function indexNow(): Promise<void> {
  // The sweeper's own pass over the databases it sweeps (a workspace's periods may be on any of
  // them), with every log old enough.
  for (const shard of [CONTROL_SHARD, ...configuredShards(env)]) {
    const logs = getDb(shardBinding(env, shard));
    while ((await indexLeftBehind(logs, Number.MAX_SAFE_INTEGER)) >= SWEEP_MAX_LOGS);
  }
}

/** Logs SEED into a workspace and indexes them; returns the four ids in SEED order. */
export async function seedLogs(key: string): Promise<number[]> {
  const ids: number[] = [];
  for (const body of SEED) {
    const res = await call("/log-request", { method: "POST", key, json: body });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
    ids.push((await json(res)).id);
  }
  await indexNow();
  return ids;
}
