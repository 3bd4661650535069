// POST /track-request: the provider's own call (run() and the SDK's provider wrappers) becomes a log.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, shareLogsDb, type TestKey } from "../helpers/api";

let ws: TestKey;
let other: TestKey;

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
  // One log database: other's group ids are then not ws's, and only the workspace condition keeps them out.
  await shareLogsDb(other, ws);
});

const openaiCall = (extra: Record<string, unknown> = {}) => ({
  function_name: "openai.chat.completions.create",
  provider_type: "openai",
  args: [],
  kwargs: { model: "gpt-4o", messages: [{ role: "user", content: "Hello there" }], temperature: 0.2 },
  request_response: {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-4o-2024-08-06",
    choices: [{ index: 0, message: { role: "assistant", content: "General Kenobi." }, finish_reason: "stop" }],
    usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 },
  },
  request_start_time: "2024-05-01T10:00:00.000Z",
  request_end_time: "2024-05-01T10:00:01.500Z",
  ...extra,
});

const track = (body: unknown, key = ws.key) => call("/track-request", { method: "POST", json: { ...(body as object), api_key: key } });

async function detail(id: number, key = ws.key) {
  const res = await call(`/api/public/v2/requests/${id}`, { key });
  expect(res.status).toBe(200);
  return json(res);
}

async function publish(key: string, name: string): Promise<number> {
  const res = await call("/rest/prompt-templates", {
    method: "POST",
    key,
    json: {
      prompt_template: { prompt_name: name },
      prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "Hello {x}" }] }] }, metadata: { model: { provider: "openai", name: "gpt-4o", parameters: {} } } },
    },
  });
  expect(res.status).toBe(200);
  return (await json(res)).id;
}

describe("POST /track-request", () => {
  it("logs an OpenAI chat call with tokens, latency, tags, metadata, score, prompt link and group; answers 200 {success, request_id, prompt_blueprint}", async () => {
    const promptId = await publish(ws.key, `tr-${Date.now()}`);
    const group = (await json(await call("/create-group", { method: "POST", key: ws.key }))).id;
    const res = await track(openaiCall({ tags: ["t1"], metadata: { user: "u1" }, score: 70, prompt_id: promptId, prompt_version: 1, prompt_input_variables: { x: "there" }, group_id: group, return_pl_id: true }));
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ success: true, request_id: expect.any(Number), prompt_blueprint: { prompt_template: expect.any(Object) } });
    const d = await detail(body.request_id);
    expect(d).toMatchObject({
      provider: "openai",
      input_tokens: 11,
      output_tokens: 4,
      latency_ms: 1500,
      tags: ["t1"],
      metadata: { user: "u1" },
      score: 70,
      scores: { default: 70 },
      prompt_id: promptId,
      prompt_version_number: 1,
      prompt_version_id: expect.any(Number),
      prompt_input_variables: { x: "there" },
      group_id: group,
      function_name: "openai.chat.completions.create",
      status: "SUCCESS",
    });
    expect(JSON.stringify(d.input)).toContain("Hello there");
    expect(JSON.stringify(d.output)).toContain("General Kenobi.");
  });

  it("reads the Python SDK's wrapper calls: the client class in function_name, epoch-float times, metadata null, span_id null", async () => {
    const wrapper = (function_name: string) => ({
      ...openaiCall({ function_name, request_start_time: 1_714_557_600.25, request_end_time: 1_714_557_601.5, metadata: null, tags: null, span_id: null }),
    });
    for (const [fn, provider] of [
      ["openai.OpenAI.chat.completions.create", "openai"],
      ["openai.AsyncOpenAI.chat.completions.create", "openai"],
      ["openai.AsyncAzureOpenAI.chat.completions.create", "openai.azure"],
    ] as const) {
      const res = await track(wrapper(fn));
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(await detail(body.request_id)).toMatchObject({ provider, function_name: fn, latency_ms: 1250, input_tokens: 11, output_tokens: 4, metadata: {}, tags: [] });
    }
  });

  it("logs a failed call that run() reports with an empty response", async () => {
    const res = await track(openaiCall({ request_response: {}, status: "ERROR", error_type: "PROVIDER_RATE_LIMIT", error_message: "429 Too Many Requests" }));
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    const d = await detail(body.request_id);
    expect(d).toMatchObject({ status: "ERROR", error_type: "PROVIDER_RATE_LIMIT", error_message: "429 Too Many Requests" });
  });

  it("400 for bad bodies, naming the field; nothing is logged", async () => {
    const before = (await json(await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: {} }))).total;
    const cases: [unknown, RegExp][] = [
      [{ ...openaiCall(), function_name: "" }, /function_name: must not be empty/],
      [{ ...openaiCall(), kwargs: "x" }, /kwargs/],
      [{ ...openaiCall(), score: 101 }, /score: must be from 0 to 100/],
      [{ ...openaiCall(), metadata: { a: 1 } }, /metadata values must be strings/],
      [{ ...openaiCall(), request_start_time: "yesterday" }, /request_start_time/],
      [{ ...openaiCall(), function_name: "nobody.knows.this" }, /^function_name: "nobody.knows.this" is not a provider call/],
      // A class the providers' modules do not export, and a method the service does not read.
      [{ ...openaiCall(), function_name: "openai.Other.chat.completions.create" }, /^function_name: /],
      [{ ...openaiCall(), function_name: "openai.OpenAI.embeddings.create" }, /^function_name: /],
    ];
    for (const [body, message] of cases) {
      const res = await track(body);
      const b = await json(res);
      expect(res.status, JSON.stringify(b)).toBe(400);
      expect(b.message).toMatch(message);
      expect(b).not.toHaveProperty("request_id");
    }
    expect((await json(await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: {} }))).total).toBe(before);
  });

  it("404 for another workspace's prompt or group, or a missing version; nothing is logged", async () => {
    const foreignPrompt = await publish(other.key, `tr-other-${Date.now()}`);
    const mine = await publish(ws.key, `tr-mine-${Date.now()}`);
    const foreignGroup = (await json(await call("/create-group", { method: "POST", key: other.key }))).id;
    const before = (await json(await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: {} }))).total;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ prompt_id: foreignPrompt }, /prompt template/],
      // Another workspace's template with a version it has: the template's 404, not the version's.
      [{ prompt_id: foreignPrompt, prompt_version: 1 }, /^prompt template/],
      [{ group_id: foreignGroup }, /group/],
      [{ prompt_id: mine, prompt_version: 7 }, /no version 7/],
      [{ group_id: 99_999_999 }, /group/],
    ];
    for (const [extra, message] of cases) {
      const res = await track(openaiCall(extra));
      expect(res.status, JSON.stringify(extra)).toBe(404);
      expect((await json(res)).message, JSON.stringify(extra)).toMatch(message);
    }
    expect((await json(await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: {} }))).total).toBe(before);
  });

  it("takes the key from the body or the header; different keys are a 401", async () => {
    expect((await call("/track-request", { method: "POST", key: ws.key, json: openaiCall() })).status).toBe(200);
    expect((await call("/track-request", { method: "POST", key: ws.key, json: { ...openaiCall(), api_key: other.key } })).status).toBe(401);
    expect((await call("/track-request", { method: "POST", json: openaiCall() })).status).toBe(401);
  });
});
