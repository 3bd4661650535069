import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ERROR_TYPE_STATUSES, STATUSES } from "../../src/routes/log-request/schemas";
import { priceOf, pricedAs, PRICES_AS_OF } from "../../src/converters/pricing";
import { call, createWorkspace, json, logsDb, type TestKey } from "../helpers/api";
import { logBody, text } from "../helpers/fixtures";
import { indexNow } from "../helpers/logs";
import { logValuesSql } from "../../src/filters";

let ws: TestKey;
beforeAll(async () => {
  ws = await createWorkspace();
});

const log = (body: unknown, key = ws.key) => call("/log-request", { method: "POST", key, json: body });

async function expect400(body: unknown, field: RegExp | string) {
  const res = await log(body);
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(400);
  expect(b.success).toBe(false);
  expect(b.error).toBe("validation_error");
  expect(b.message).toMatch(field);
  return b;
}

async function expect201(body: unknown) {
  const res = await log(body);
  const b = await json(res);
  expect(res.status, JSON.stringify(b)).toBe(201);
  return b;
}

async function stored(id: number, key = ws.key) {
  const res = await call(`/api/public/v2/requests/${id}`, { key });
  expect(res.status).toBe(200);
  return json(res);
}

describe("POST /log-request: the minimal body", () => {
  it("answers 201 with the Log-request response and stores every default", async () => {
    const b = await expect201(logBody());
    expect(b).toEqual({ id: expect.any(Number), prompt_version: null, status: "SUCCESS", error_type: null, error_message: null });
    const s = await stored(b.id);
    expect(s).toMatchObject({
      success: true,
      request_id: b.id,
      provider: "openai",
      model: "gpt-4o",
      parameters: {},
      tags: [],
      metadata: {},
      prompt_name: null,
      prompt_id: null,
      prompt_version_number: null,
      prompt_input_variables: {},
      input_tokens: 0,
      output_tokens: 0,
      tokens: 0,
      price: 0,
      function_name: "",
      score: 0,
      api_type: null,
      status: "SUCCESS",
      error_type: null,
      error_message: null,
      request_start_time: "2024-01-15T10:30:00.000Z",
      request_end_time: "2024-01-15T10:30:05.000Z",
      latency_ms: 5000,
      trace_id: null,
    });
    expect(s.prompt_blueprint).toEqual({
      prompt_template: logBody().input,
      metadata: { model: { provider: "openai", name: "gpt-4o", parameters: {} } },
      inference_client_name: null,
    });
  });

  it("reads back every field it was given", async () => {
    const body = logBody({
      api_type: "chat-completions",
      parameters: { temperature: 0.2, response_format: { json_schema: { name: "x" } } },
      tags: ["prod", "eu"],
      metadata: { user_id: "u-1", session: "abc" },
      prompt_name: "no-such-prompt",
      prompt_version_number: 3,
      prompt_input_variables: { topic: "cats", n: 2 },
      input_tokens: 120,
      output_tokens: 48,
      price: 0.0012,
      function_name: "openai.chat.completions.create",
      score: 87,
      score_name: "quality",
      status: "WARNING",
      error_type: "PROVIDER_RATE_LIMIT",
      error_message: "retried twice",
    });
    const b = await expect201(body);
    expect(b).toMatchObject({ status: "WARNING", error_type: "PROVIDER_RATE_LIMIT", error_message: "retried twice", prompt_version: null });
    const s = await stored(b.id);
    for (const k of ["api_type", "parameters", "tags", "metadata", "prompt_name", "prompt_version_number", "prompt_input_variables", "input_tokens", "output_tokens", "price", "function_name", "score", "score_name", "status", "error_type", "error_message"]) {
      expect(s[k], k).toEqual(body[k]);
    }
    expect(s.tokens).toBe(168);
    expect(s.input).toEqual(body.input);
    expect(s.output).toEqual(body.output);
  });

  it("treats null for a defaulted field as the default", async () => {
    const b = await expect201(logBody({ tags: null, metadata: null, parameters: null, input_tokens: null, price: null, score: null, status: null, function_name: null, prompt_input_variables: null }));
    const s = await stored(b.id);
    expect(s).toMatchObject({ tags: [], metadata: {}, parameters: {}, input_tokens: 0, price: 0, score: 0, status: "SUCCESS", function_name: "", prompt_input_variables: {} });
  });

  it("ignores fields it does not know (as PromptLayer does)", async () => {
    await expect201(logBody({ group_id: 5, span_id: "abc", something_new: { x: 1 } }));
  });
});

describe("POST /log-request: prices", () => {
  it("prices a log sent with tokens and no price (or the SDKs' default 0) from the one price table; a given price is kept; an unknown model stays unpriced", async () => {
    // gpt-4o: $2.50 in and $10 out per million tokens (src/converters/pricing.ts).
    const want = (1000 * 2.5 + 500 * 10) / 1e6;
    for (const price of [undefined, null, 0]) {
      const b = await expect201(logBody({ input_tokens: 1000, output_tokens: 500, ...(price === undefined ? {} : { price }) }));
      expect((await stored(b.id)).price, `price ${price}`).toBeCloseTo(want, 9);
    }
    // The same table as the SDK's track-request path.
    expect(priceOf("gpt-4o-2024-08-06", 1000, 500)).toBeCloseTo(want, 9);
    expect((await stored((await expect201(logBody({ input_tokens: 1000, output_tokens: 500, price: 0.5 }))).id)).price).toBe(0.5);
    expect((await stored((await expect201(logBody({ model: "my-own-model", input_tokens: 1000, output_tokens: 500 }))).id)).price).toBe(0);
    expect(pricedAs("my-own-model")).toBeNull();
    expect(PRICES_AS_OF).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe("POST /log-request: required fields", () => {
  for (const field of ["provider", "model", "input", "output", "request_start_time", "request_end_time"]) {
    it(`400 without ${field}`, async () => {
      const body = logBody();
      delete body[field];
      await expect400(body, new RegExp(`${field}: is required`));
    });
  }
  it("400 for an empty provider or model", async () => {
    await expect400(logBody({ provider: "" }), /provider: must not be empty/);
    await expect400(logBody({ model: "" }), /model: must not be empty/);
  });
});

describe("POST /log-request: limits, both sides", () => {
  const cases: [string, unknown, unknown, RegExp][] = [
    ["score", 100, 101, /score: must be from 0 to 100/],
    ["score", 0, -1, /score: must be from 0 to 100/],
    ["prompt_version_number", 1, 0, /prompt_version_number: must be > 0/],
    ["input_tokens", 0, -1, /input_tokens: input_tokens must be >= 0/],
    ["output_tokens", 0, -1, /output_tokens: output_tokens must be >= 0/],
    ["price", 0, -0.01, /price: must be >= 0/],
    ["error_message", "x".repeat(1024), "x".repeat(1025), /error_message: must be at most 1024 characters/],
    ["tags", ["t".repeat(512)], ["ok", "t".repeat(513)], /tags\[1\]: each tag must be at most 512 characters/],
    ["metadata", { ["k".repeat(1024)]: "v" }, { ["k".repeat(1025)]: "v" }, /metadata keys must be at most 1024 characters/],
  ];
  for (const [field, ok, bad, message] of cases) {
    it(`${field}: ${JSON.stringify(ok).slice(0, 20)} passes, ${JSON.stringify(bad).slice(0, 20)} is refused`, async () => {
      const b = await expect201(logBody({ [field]: ok }));
      expect((await stored(b.id))[field]).toEqual(ok);
      await expect400(logBody({ [field]: bad }), message);
    });
  }

  it("wants whole numbers for score and tokens", async () => {
    await expect400(logBody({ score: 50.5 }), /score: must be a whole number/);
    await expect400(logBody({ input_tokens: 1.5 }), /input_tokens: must be a whole number/);
    await expect400(logBody({ output_tokens: "3" }), /output_tokens: must be a whole number/);
    await expect400(logBody({ input_tokens: 2 ** 60 }), /input_tokens: must be at most 9007199254740991/);
  });

  it("refuses wrong types", async () => {
    await expect400(logBody({ tags: "prod" }), /tags:/);
    await expect400(logBody({ tags: [1] }), /tags\[0\]:/);
    await expect400(logBody({ metadata: { a: 1 } }), /metadata\.a: metadata values must be strings/);
    await expect400(logBody({ metadata: { "": "v" } }), /metadata keys must not be empty/);
    await expect400(logBody({ metadata: ["a"] }), /metadata:/);
    await expect400(logBody({ parameters: "hot" }), /parameters:/);
    await expect400(logBody({ prompt_id: "abc" }), /prompt_id:/);
    await expect400(logBody({ prompt_id: 0 }), /prompt_id: must be >= 1/);
    await expect400(logBody({ price: "free" }), /price:/);
    await expect400(logBody({ status: "OK" }), /status: must be one of SUCCESS, WARNING, ERROR/);
    await expect400(logBody({ error_type: "OOPS", status: "ERROR" }), /error_type: must be one of/);
  });
});

describe("POST /log-request: blueprints", () => {
  it("refuses message content given as a plain string", async () => {
    const b = await expect400(
      logBody({ input: { type: "chat", messages: [{ role: "user", content: "Hello!" }] } }),
      /input\.messages\[0\]\.content: must be an array of content blocks, not a plain string/,
    );
    expect(b.details[0].field).toBe("input.messages[0].content");
    await expect400(logBody({ output: { type: "completion", content: "done" } }), /output\.content: must be an array of content blocks, not a plain string/);
  });

  it("accepts completion blueprints and every message role", async () => {
    const b = await expect201(
      logBody({
        input: { type: "completion", content: text("Once upon a time") },
        output: { type: "completion", content: text(", the end.") },
      }),
    );
    expect((await stored(b.id)).output).toEqual({ type: "completion", content: text(", the end.") });
    await expect201(
      logBody({
        input: {
          type: "chat",
          messages: [
            { role: "system", content: text("Be brief.") },
            { role: "developer", content: text("JSON only.") },
            { role: "user", content: [{ type: "text", text: "Weather?" }, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] },
            { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
            { role: "tool", tool_call_id: "c1", content: text("sunny") },
            { role: "function", name: "legacy", content: null },
            { role: "placeholder", name: "history" },
          ],
          tools: [{ type: "function", function: { name: "get_weather", parameters: {} } }],
        },
        output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "Sunny." }] }] },
      }),
    );
  });

  it("accepts an output with no messages (a failed call)", async () => {
    await expect201(logBody({ output: { type: "chat", messages: [] }, status: "ERROR", error_type: "PROVIDER_TIMEOUT" }));
  });

  it("refuses malformed blueprints", async () => {
    await expect400(logBody({ input: { type: "image", messages: [] } }), /input\.type: must be "chat" or "completion"/);
    await expect400(logBody({ input: { messages: [] } }), /input\.type: is required/);
    await expect400(logBody({ input: "Hello" }), /input:/);
    await expect400(logBody({ input: { type: "chat" } }), /input\.messages: is required/);
    await expect400(logBody({ input: { type: "chat", messages: [{ role: "robot", content: text("x") }] } }), /input\.messages\[0\]\.role: must be one of/);
    await expect400(logBody({ input: { type: "chat", messages: [{ role: "user" }] } }), /input\.messages\[0\]\.content: is required for a user message/);
    await expect400(logBody({ input: { type: "chat", messages: [{ role: "user", content: [{ type: "text" }] }] } }), /input\.messages\[0\]\.content\[0\]\.text: must be a string in a text block/);
    await expect400(logBody({ input: { type: "chat", messages: [{ role: "user", content: [{ text: "no type" }] }] } }), /content\[0\]\.type: is required/);
    await expect400(logBody({ input: { type: "chat", messages: [{ role: "user", content: ["hi"] }] } }), /content\[0\]:/);
  });
});

describe("POST /log-request: status × error_type", () => {
  const allowed = ERROR_TYPE_STATUSES as Record<string, readonly string[]>;
  for (const [errorType, statuses] of Object.entries(allowed)) {
    for (const status of STATUSES) {
      const ok = statuses.includes(status);
      it(`${status} with ${errorType}: ${ok ? "201" : "400"}`, async () => {
        const body = logBody({ status, error_type: errorType, error_message: "detail" });
        if (ok) {
          const b = await expect201(body);
          expect(b).toMatchObject({ status, error_type: errorType, error_message: "detail" });
        } else {
          await expect400(body, new RegExp(`error_type: ${errorType} is allowed only with status`));
        }
      });
    }
  }
  it("allows every status without an error_type", async () => {
    for (const status of STATUSES) {
      const b = await expect201(logBody({ status, error_type: null }));
      expect(b.status).toBe(status);
    }
  });
});

describe("POST /log-request: timestamps", () => {
  it("takes ISO 8601 with an offset or no zone, and epoch seconds or milliseconds", async () => {
    const variants: [unknown, unknown][] = [
      ["2024-01-15T12:30:00+02:00", "2024-01-15T10:30:05"],
      [1705314600, 1705314605],
      [1705314600000, 1705314605000],
      [1705314600.5, "2024-01-15T10:30:05Z"],
    ];
    for (const [start, end] of variants) {
      const b = await expect201(logBody({ request_start_time: start, request_end_time: end }));
      const s = await stored(b.id);
      expect(s.request_start_time).toMatch(/^2024-01-15T10:30:00\.(000|500)Z$/);
      expect(s.request_end_time).toBe("2024-01-15T10:30:05.000Z");
    }
  });

  it("refuses times that are not times, and an end before the start", async () => {
    await expect400(logBody({ request_start_time: "yesterday" }), /request_start_time: must be an ISO 8601 date-time string or an epoch number/);
    await expect400(logBody({ request_end_time: "2024-02-30T00:00:00Z" }), /request_end_time: is not a valid calendar date-time/);
    await expect400(logBody({ request_start_time: -5 }), /request_start_time: must be a non-negative epoch number/);
    await expect400(logBody({ request_start_time: true }), /request_start_time:/);
    await expect400(logBody({ request_start_time: "0099-06-01T00:00:00Z" }), /request_start_time: is out of range \(1970 to 9999\)/);
    await expect400(logBody({ request_start_time: "1969-12-31T23:59:59Z" }), /request_start_time: is out of range/);
    await expect400(logBody({ request_end_time: "2024-01-15T10:29:59Z" }), /request_end_time: must not be before request_start_time/);
  });
});

describe("POST /log-request: linking the prompt version", () => {
  let promptId: number;
  let versionId: number;
  beforeAll(async () => {
    const t = await env.DB.prepare("INSERT INTO prompt_templates (workspace_id, name) VALUES (?, ?) RETURNING id").bind(ws.workspaceId, "greeter").first<{ id: number }>();
    promptId = t!.id;
    const v = await env.DB.prepare("INSERT INTO prompt_versions (workspace_id, prompt_id, version, prompt_template, metadata, commit_message) VALUES (?, ?, 2, ?, ?, 'v2') RETURNING id")
      .bind(ws.workspaceId, promptId, JSON.stringify({ type: "chat", messages: [] }), JSON.stringify({ model: { provider: "openai", name: "gpt-4o" } }))
      .first<{ id: number }>();
    versionId = v!.id;
  });

  it("links by prompt_id and by prompt_name", async () => {
    for (const ref of [{ prompt_id: promptId }, { prompt_name: "greeter" }]) {
      const b = await expect201(logBody({ ...ref, prompt_version_number: 2 }));
      expect(b.prompt_version).toEqual({
        id: versionId,
        prompt_id: promptId,
        prompt_name: "greeter",
        version: 2,
        prompt_template: { type: "chat", messages: [] },
        metadata: { model: { provider: "openai", name: "gpt-4o" } },
        commit_message: "v2",
        created_at: expect.stringMatching(/Z$/),
      });
      const s = await stored(b.id);
      expect(s).toMatchObject({ prompt_id: promptId, prompt_name: "greeter", prompt_version_number: 2, prompt_version_id: versionId });
    }
  });

  it("goes by prompt_id when both prompt_id and prompt_name are given", async () => {
    const b = await expect201(logBody({ prompt_id: promptId, prompt_name: "some-other-name", prompt_version_number: 2 }));
    expect(b.prompt_version).toMatchObject({ id: versionId, prompt_name: "greeter" });
    const s = await stored(b.id);
    expect(s).toMatchObject({ prompt_id: promptId, prompt_name: "some-other-name", prompt_version_id: versionId });
    const missing = await expect201(logBody({ prompt_id: promptId + 100000, prompt_name: "greeter", prompt_version_number: 2 }));
    expect(missing.prompt_version).toBeNull();
  });

  it("is null when the version, the prompt or the version number is missing", async () => {
    expect((await expect201(logBody({ prompt_id: promptId, prompt_version_number: 9 }))).prompt_version).toBeNull();
    expect((await expect201(logBody({ prompt_name: "nobody", prompt_version_number: 2 }))).prompt_version).toBeNull();
    expect((await expect201(logBody({ prompt_id: promptId }))).prompt_version).toBeNull();
  });

  it("never links another workspace's prompt", async () => {
    const other = await createWorkspace();
    const b = await expect201(logBody({ prompt_id: promptId, prompt_version_number: 2 }));
    expect(b.prompt_version).not.toBeNull();
    const res = await log(logBody({ prompt_id: promptId, prompt_version_number: 2 }), other.key);
    expect(res.status).toBe(201);
    expect((await json(res)).prompt_version).toBeNull();
    const res2 = await log(logBody({ prompt_name: "greeter", prompt_version_number: 2 }), other.key);
    expect((await json(res2)).prompt_version).toBeNull();
  });
});

describe("POST /log-request: the log's keyed search values", () => {
  /** The keyed values of a log as its row gives them (its tags and metadata as they stand, the rest in extra_values). */
  const valuesOf = async (id: number) =>
    (
      await (await logsDb(ws))
        .prepare(`SELECT r.workspace_id, e.kind, e.key, e.value FROM request_logs AS r, ${logValuesSql("lr", undefined, { from: "request_logs AS lr", where: "lr.id = ?1" })} AS e WHERE r.id = ?1 ORDER BY e.kind, e.key, e.value`)
        .bind(id)
        .all()
    ).results;
  /** The ids a search for one filter finds. */
  const found = async (filter: Record<string, unknown>) => {
    const res = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { logic: "AND", filters: [filter] }, per_page: 100 } });
    expect(res.status).toBe(200);
    return (await json(res)).items.map((i: { id: number }) => i.id);
  };

  it("are made from the stored log, and the indexer makes each one searchable", async () => {
    const b = await expect201(
      logBody({
        tags: ["prod", "eu", "prod"],
        metadata: { user_id: "u-9" },
        prompt_input_variables: { topic: "dogs", n: 2 },
        input: { type: "chat", messages: [{ role: "user", content: text("go") }], tools: [{ type: "function", function: { name: "fetch_page" } }] },
        output: { type: "chat", messages: [{ role: "assistant", content: text('{"label": "positive", "confidence": 0.8}') }] },
      }),
    );
    await indexNow();
    const expected = [
      ["tag", "", "prod"],
      ["tag", "", "eu"],
      ["metadata", "user_id", "u-9"],
      ["tool", "", "fetch_page"],
      ["input_variable", "topic", "dogs"],
      ["input_variable", "n", "2"],
      ["output", "label", "positive"],
      ["output", "confidence", "0.8"],
    ];
    expect(await valuesOf(b.id)).toEqual(
      expected.map(([kind, key, value]) => ({ workspace_id: ws.workspaceId, kind, key, value })).sort((x, y) => (`${x.kind}\0${x.key}\0${x.value}` < `${y.kind}\0${y.key}\0${y.value}` ? -1 : 1)),
    );
    for (const [filter] of [
      [{ field: "tags", operator: "contains", value: "eu" }],
      [{ field: "metadata", operator: "key_equals", nested_key: "user_id", value: "u-9" }],
      [{ field: "tool_names", operator: "contains", value: "fetch_page" }],
      [{ field: "input_variables", operator: "key_equals", nested_key: "n", value: "2" }],
      [{ field: "output", operator: "key_equals", nested_key: "confidence", value: "0.8" }],
      [{ field: "output_keys", operator: "contains", value: "label" }],
    ]) {
      expect(await found(filter), JSON.stringify(filter)).toContain(b.id);
    }
  });

  it("takes hundreds of tags and keys in one log (beyond D1's 100 bound parameters)", async () => {
    const tags = Array.from({ length: 300 }, (_, i) => `tag-${i}`);
    const metadata = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`key-${i}`, `value-${i}`]));
    const b = await expect201(logBody({ tags, metadata }));
    await indexNow();
    expect(await valuesOf(b.id)).toHaveLength(600);
    expect(await found({ field: "tags", operator: "contains", value: "tag-299" })).toEqual([b.id]);
    expect(await found({ field: "metadata", operator: "key_equals", nested_key: "key-299", value: "value-299" })).toEqual([b.id]);
  });

  it("takes 150,000 short tags in a body under the limit (their facet rows split across statements)", async () => {
    const tags = Array.from({ length: 150_000 }, (_, i) => i.toString(36));
    const body = logBody({ tags });
    expect(JSON.stringify(body).length).toBeLessThan(Number(env.LOG_REQUEST_MAX_BYTES));
    const b = await expect201(body);
    await indexNow();
    expect(await valuesOf(b.id)).toHaveLength(150_000);
    expect(await found({ field: "tags", operator: "contains", value: (149_999).toString(36) })).toEqual([b.id]);
  }, 180_000);

  it("writes nothing when the log is refused", async () => {
    await indexNow();
    const counts =
      "SELECT (SELECT count(*) FROM request_logs) AS logs, (SELECT count(*) FROM request_log_facets) AS facets, (SELECT indexed_to FROM log_index_state) AS indexed_to, (SELECT count(*) FROM request_log_unindexed) AS waiting";
    const before = await (await logsDb(ws)).prepare(counts).first();
    await expect400(logBody({ tags: ["a"], score: 101 }), /score/);
    const after = await (await logsDb(ws)).prepare(counts).first();
    expect(after).toEqual(before);
  });
});

describe("GET /api/public/v2/requests/{request_id}", () => {
  it("404 for an unknown id and for another workspace's log", async () => {
    const b = await expect201(logBody());
    const other = await createWorkspace();
    for (const [id, key] of [[b.id + 100000, ws.key], [b.id, other.key]] as const) {
      const res = await call(`/api/public/v2/requests/${id}`, { key });
      expect(res.status).toBe(404);
      expect(await json(res)).toMatchObject({ success: false, error: "not_found" });
    }
  });

  it("400 for an id that is not a positive integer", async () => {
    for (const id of ["abc", "0", "-3", "1.5", "99999999999999999999", "0x10", "1e3", "%201", "01", "9007199254740993"]) {
      const res = await call(`/api/public/v2/requests/${id}`, { key: ws.key });
      expect(res.status, id).toBe(400);
      expect(await json(res)).toMatchObject({ error: "validation_error", message: expect.stringMatching(/^request_id: /) });
    }
  });
});
