import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, logsDb, shareLogsDb, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { LONG_VALUE, seedLogs } from "../helpers/logs";

let ws: TestKey;
let other: TestKey;
let L: number[];
let otherIds: number[];

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
  // One log database: other's log ids are then not ws's, and only the workspace condition keeps them out.
  await shareLogsDb(other, ws);
  L = await seedLogs(ws.key);
  otherIds = await seedLogs(other.key);
});

const search = (body: unknown, key = ws.key) => call("/api/public/v2/requests/search", { method: "POST", key, json: body });

/** Which of the seeded logs (by SEED index) a filter group matches. */
async function matches(filter_group: unknown, extra: Record<string, unknown> = {}): Promise<number[]> {
  const res = await search({ filter_group, per_page: 100, ...extra });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.items.map((i: { id: number }) => L.indexOf(i.id)).sort();
}
const where = (field: string, operator: string, value?: unknown, nested_key?: string) =>
  matches({ logic: "AND", filters: [{ field, operator, value, nested_key }] });

describe("search: every operator of every field type against D1", () => {
  it.each([
    ["engine", "is", "gpt-4o", [0, 3]],
    ["engine", "is_not", "gpt-4o", [1, 2]],
    ["engine", "in", ["claude-3", "gpt-4o-mini"], [1, 2]],
    ["engine", "not_in", ["gpt-4o"], [1, 2]],
    ["engine", "contains", "GPT-4O", [0, 2, 3]],
    ["engine", "not_contains", "mini", [0, 1, 3]],
    ["engine", "starts_with", "claude", [1]],
    ["engine", "ends_with", "mini", [2]],
    ["engine", "contains", "%", []],
    ["provider_type", "is", "anthropic", [1]],
  ])("string: %s %s %j", async (field, op, value, expected) => {
    expect(await where(field, op, value)).toEqual(expected);
  });

  it.each([
    ["status", "is", "ERROR", [2]],
    ["status", "is_not", "SUCCESS", [1, 2]],
    ["status", "in", ["WARNING", "ERROR"], [1, 2]],
    ["status", "not_in", ["SUCCESS"], [1, 2]],
    ["user_intent", "is", "curious", [0, 3]],
    ["user_intent", "is", "frustrated", [1]],
    ["user_intent", "is", "satisfied", [2]],
    ["agent_intent", "is", "refusal", [1]],
    ["agent_intent", "not_in", ["refusal"], [0, 2, 3]],
    ["agent_intent", "is_null", undefined, [0, 2, 3]],
    ["agent_intent", "is_not_null", undefined, [1]],
  ])("enum: %s %s %j", async (field, op, value, expected) => {
    expect(await where(field, op, value)).toEqual(expected);
  });

  it.each([
    ["input_text", "contains", "SKY", [0]],
    ["input_text", "not_contains", "sky", [1, 2, 3]],
    ["input_text", "starts_with", "you are", [0, 1, 2, 3]],
    ["input_text", "ends_with", "!!", [1]],
    ["input_text", "is", "You are helpful.\nthanks, great", [2]],
    ["input_text", "is_not", "You are helpful.\nthanks, great", [0, 1, 3]],
    ["input_text", "is_empty", undefined, []],
    ["input_text", "is_not_empty", undefined, [0, 1, 2, 3]],
    ["output_text", "contains", "scatters", [3]],
    ["output_text", "is_empty", undefined, [2]],
  ])("text: %s %s %j", async (field, op, value, expected) => {
    expect(await where(field, op, value)).toEqual(expected);
  });

  it.each([
    ["input_tokens", "eq", 100, [1]],
    ["input_tokens", "is", 0, [2]],
    ["input_tokens", "neq", 100, [0, 2, 3]],
    ["input_tokens", "is_not", 0, [0, 1, 3]],
    ["input_tokens", "gt", 10, [1, 3]],
    ["input_tokens", "gte", 10, [0, 1, 3]],
    ["input_tokens", "lt", 10, [2]],
    ["input_tokens", "lte", 10, [0, 2]],
    ["input_tokens", "between", [10, 50], [0, 3]],
    ["input_tokens", "in", [0, 100], [1, 2]],
    ["input_tokens", "not_in", [0], [0, 1, 3]],
    ["output_tokens", "gte", 20, [0, 3]],
    ["cost", "gt", 0.4, [0, 3]],
    ["cost", "between", [0.005, 0.6], [0, 1]],
    ["latency_ms", "gte", 2000, [1, 3]],
    ["latency_ms", "lt", 1000, [2]],
    ["prompt_id", "is_null", undefined, [1]],
    ["prompt_id", "is_not_null", undefined, [0, 2, 3]],
    ["prompt_id", "is_not", 11, [1, 2]],
    ["prompt_id", "not_in", [12], [0, 1, 3]],
    ["prompt_version_number", "between", [2, 3], [0, 3]],
    ["prompt_version_number", "is_null", undefined, [1, 2]],
  ])("numeric: %s %s %j", async (field, op, value, expected) => {
    expect(await where(field, op, value)).toEqual(expected);
  });

  it("numeric: pl_id picks logs by id", async () => {
    expect(await where("pl_id", "in", [L[0], L[2], otherIds[1]])).toEqual([0, 2]);
    expect(await where("pl_id", "eq", L[3])).toEqual([3]);
  });

  it.each([
    ["request_start_time", "before", "2024-02-01T00:00:00Z", [0]],
    ["request_start_time", "after", "2024-02-01T00:00:00Z", [2, 3]],
    ["request_start_time", "between", ["2024-02-01", "2024-03-01T00:00:00Z"], [1, 2]],
    ["request_start_time", "gt", "2024-02-01T00:00:00Z", [2, 3]],
    ["request_start_time", "gte", "2024-02-01T00:00:00Z", [1, 2, 3]],
    ["request_start_time", "lt", "2024-02-01T00:00:00+00:00", [0]],
    ["request_start_time", "lte", "2024-02-01T01:00:00+01:00", [0, 1]],
    ["request_start_time", "is", "2024-02-01T00:00:00Z", [1]],
    ["request_start_time", "is_not", "2024-02-01T00:00:00Z", [0, 2, 3]],
    ["request_end_time", "gte", 1709251200.5, [2, 3]],
    ["request_end_time", "gt", 1709251200.5, [3]],
    ["request_end_time", "after", 1706745602000, [1, 2, 3]],
  ])("datetime: %s %s %j", async (field, op, value, expected) => {
    expect(await where(field, op, value)).toEqual(expected);
  });

  it.each([
    ["is_json", "is_true", undefined, [0]],
    ["is_json", "is_false", undefined, [1, 2, 3]],
    ["is_tool_call", "is", true, [2]],
    ["is_tool_call", "is_not", true, [0, 1, 3]],
    ["is_plain_text", "is_true", undefined, [1, 3]],
    ["is_plain_text", "is", false, [0, 2]],
  ])("boolean: %s %s %j", async (field, op, value, expected) => {
    expect(await where(field, op, value)).toEqual(expected);
  });

  it.each([
    ["tags", "contains", "prod", [0, 3]],
    ["tags", "not_contains", "prod", [1, 2]],
    ["tags", "in", ["eu", "staging"], [0, 1]],
    ["tags", "not_in", ["prod", "staging"], [2]],
    ["tags", "starts_with", "STA", [1]],
    ["tags", "is_empty", undefined, [2]],
    ["tags", "is_not_empty", undefined, [0, 1, 3]],
    ["metadata_keys", "contains", "env", [0, 3]],
    ["metadata_keys", "not_contains", "user_id", [2, 3]],
    ["metadata_keys", "is_empty", undefined, [2]],
    ["tool_names", "contains", "get_weather", [2]],
    ["tool_names", "is_empty", undefined, [0, 1, 3]],
    ["output_keys", "in", ["answer", "nope"], [0]],
    ["output_keys", "starts_with", "sc", [0]],
    ["input_variable_keys", "contains", "n", [0]],
    ["input_variable_keys", "not_in", ["topic"], [2, 3]],
  ])("array: %s %s %j", async (field, op, value, expected) => {
    expect(await where(field, op, value)).toEqual(expected);
  });

  it.each([
    ["metadata", "key_equals", "u1", "user_id", [0]],
    ["metadata", "key_not_equals", "u1", "user_id", [1, 2, 3]],
    ["metadata", "key_contains", "PR", "env", [0]],
    ["metadata", "in", ["u1", "u2"], "user_id", [0, 1]],
    ["metadata", "not_in", ["u1"], "user_id", [1, 2, 3]],
    ["metadata", "is_null", undefined, "user_id", [2, 3]],
    ["metadata", "is_empty", undefined, "user_id", [2, 3]],
    ["metadata", "is_not_null", undefined, "user_id", [0, 1]],
    ["metadata", "is_not_empty", undefined, "env", [0, 3]],
    ["output", "key_equals", "yes", "answer", [0]],
    ["output", "key_equals", 1, "score", [0]],
    ["input_variables", "key_equals", 3, "n", [0]],
    ["input_variables", "key_equals", "dogs", "topic", [1]],
    ["input_variables", "key_not_equals", "dogs", "topic", [0, 2, 3]],
  ])("nested: %s %s %j (key %s)", async (field, op, value, key, expected) => {
    expect(await where(field, op, value, key)).toEqual(expected);
  });

  it("nested: values longer than the index keeps match exactly, and by substring", async () => {
    expect(await where("metadata", "key_equals", LONG_VALUE, "long")).toEqual([3]);
    expect(await where("metadata", "key_equals", LONG_VALUE.slice(1), "long")).toEqual([]);
    expect(await where("metadata", "key_equals", `${LONG_VALUE}z`, "long")).toEqual([]);
    expect(await where("metadata", "key_not_equals", LONG_VALUE, "long")).toEqual([0, 1, 2]);
    expect(await where("metadata", "key_contains", "zzz", "long")).toEqual([3]);
  });

  it("nested groups combine with AND and OR", async () => {
    const group = {
      logic: "OR",
      filters: [
        { logic: "AND", filters: [{ field: "engine", operator: "is", value: "gpt-4o" }, { field: "tags", operator: "contains", value: "eu" }] },
        { field: "status", operator: "is", value: "ERROR" },
        { logic: "AND", filters: [] },
      ],
    };
    // The empty group is no constraint, so within OR it matches every log.
    expect(await matches(group)).toEqual([0, 1, 2, 3]);
    group.filters.pop();
    expect(await matches(group)).toEqual([0, 2]);
    expect(await matches({ logic: "AND", filters: [{ logic: "OR", filters: [{ field: "cost", operator: "gt", value: 1 }, { field: "cost", operator: "lt", value: 0.001 }] }, { field: "engine", operator: "starts_with", value: "gpt" }] })).toEqual([2, 3]);
  });

  it("injection attempts in values and nested keys are inert", async () => {
    const evil = ["x' OR '1'='1", "'); DROP TABLE request_logs; --", "%", "_", "\\", '" OR 1=1 --'];
    for (const value of evil) {
      expect(await where("engine", "is", value)).toEqual([]);
      expect(await where("engine", "contains", value)).toEqual([]);
      expect(await where("tags", "in", [value])).toEqual([]);
      expect(await where("metadata", "key_equals", value, value)).toEqual([]);
      expect(await where("metadata", "is_not_null", undefined, value)).toEqual([]);
    }
    expect(await matches({ filters: [] })).toEqual([0, 1, 2, 3]);
    const tables = await (await logsDb(ws)).prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'request_logs'").first<{ n: number }>();
    expect(tables!.n).toBe(1);
  });
});

describe("search: q, sorting, pages and the response", () => {
  it("q matches every word as a prefix, over input and output text", async () => {
    expect(await matches(null, { q: "sky" })).toEqual([0]);
    expect(await matches(null, { q: "SCATT" })).toEqual([3]);
    expect(await matches(null, { q: "blue" })).toEqual([0, 3]);
    expect(await matches(null, { q: "blu sky" })).toEqual([0]);
    expect(await matches(null, { q: "helpful" })).toEqual([0, 1, 2, 3]);
    expect(await matches({ filters: [{ field: "engine", operator: "is", value: "gpt-4o" }] }, { q: "light" })).toEqual([3]);
    expect(await matches(null, { q: "zebra" })).toEqual([]);
    expect(await matches(null, { q: '"' })).toEqual([0, 1, 2, 3]);
  });

  it("sorts by each sort_by, newest first by default", async () => {
    const order = async (extra: Record<string, unknown>) => {
      const body = await json(await search({ per_page: 100, ...extra }));
      return body.items.map((i: { id: number }) => L.indexOf(i.id));
    };
    expect(await order({})).toEqual([3, 2, 1, 0]);
    expect(await order({ sort_by: "request_start_time", sort_order: "asc" })).toEqual([0, 1, 2, 3]);
    expect(await order({ sort_by: "cost", sort_order: "asc" })).toEqual([2, 1, 0, 3]);
    expect(await order({ sort_by: "cost" })).toEqual([3, 0, 1, 2]);
    expect(await order({ sort_by: "input_tokens", sort_order: "desc" })).toEqual([1, 3, 0, 2]);
    expect(await order({ sort_by: "output_tokens", sort_order: "asc" })).toEqual([2, 1, 0, 3]);
    expect(await order({ sort_by: "latency_ms", sort_order: "desc" })).toEqual([1, 3, 0, 2]);
    expect(await order({ sort_by: "status", sort_order: "asc" })).toEqual([2, 0, 3, 1]);
  });

  it("pages through results with PromptLayer's pagination fields", async () => {
    const page = async (n: number) => json(await search({ page: n, per_page: 3 }));
    const p1 = await page(1);
    expect(p1).toMatchObject({ success: true, page: 1, pages: 2, per_page: 3, total: 4, has_next: true, has_prev: false, next_num: 2, prev_num: null });
    expect(p1.items).toHaveLength(3);
    const p2 = await page(2);
    expect(p2).toMatchObject({ page: 2, pages: 2, total: 4, has_next: false, has_prev: true, next_num: null, prev_num: 1 });
    expect(p2.items.map((i: { id: number }) => i.id)).toEqual([L[0]]);
    const p3 = await page(3);
    expect(p3).toMatchObject({ page: 3, pages: 2, total: 4, has_next: false, has_prev: true, items: [] });
    const defaults = await json(await search({}));
    expect(defaults).toMatchObject({ page: 1, per_page: 10, total: 4 });
  });

  it("answers each item with the document's fields", async () => {
    const body = await json(await search({ filter_group: { filters: [{ field: "pl_id", operator: "is", value: L[0] }] }, include_prompt_name: true }));
    expect(body.items[0]).toEqual({
      id: L[0],
      engine: "gpt-4o",
      provider_type: "openai",
      api_type: null,
      input_tokens: 10,
      output_tokens: 20,
      tokens: 30,
      price: 0.5,
      request_start_time: "2024-01-01T00:00:00.000Z",
      request_end_time: "2024-01-01T00:00:01.000Z",
      latency: 1,
      latency_ms: 1000,
      status: "SUCCESS",
      error_type: null,
      tags_array: ["prod", "eu"],
      metadata: [{ user_id: "u1", env: "prod" }],
      scores: [],
      group_id: null,
      prompt_id: 11,
      prompt_version_number: 2,
      prompt_version_id: null,
      created_at: expect.any(String),
      trace_id: null,
      prompt_name: "support",
    });
    const without = await json(await search({ filter_group: { filters: [{ field: "pl_id", operator: "is", value: L[0] }] } }));
    expect(without.items[0]).not.toHaveProperty("prompt_name");
  });

  it("takes per_page 1..100 and page >= 1", async () => {
    expect((await search({ per_page: 100 })).status).toBe(200);
    expect((await search({ per_page: 1 })).status).toBe(200);
    for (const body of [{ per_page: 101 }, { per_page: 0 }, { page: 0 }, { page: 1.5 }, { per_page: "10" }]) {
      const res = await search(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await json(res)).toMatchObject({ success: false, error: "validation_error" });
    }
  });

  it("refuses sort_order without sort_by, an unknown sort_by and a bad filter group, naming the field and rule", async () => {
    const cases: [unknown, string][] = [
      [{ sort_order: "asc" }, "sort_order: requires sort_by"],
      [{ sort_by: "price" }, "sort_by: "],
      [{ filter_group: { filters: [{ field: "cost", operator: "contains", value: "1" }] } }, "filter_group.filters[0].operator: contains does not apply to cost (numeric)"],
      [{ filter_group: { filters: [{ field: "metadata", operator: "key_equals", value: "1" }] } }, "filter_group.filters[0].nested_key: is required for metadata"],
      [{ filter_group: { filters: [{ field: "cost", operator: "gt", value: "1" }] } }, "filter_group.filters[0].value: must be a number for cost"],
      [{ filter_group: "engine=gpt" }, "filter_group: must be a filter group object"],
      [{ q: 5 }, "q: must be string"],
    ];
    for (const [body, message] of cases) {
      const res = await search(body);
      const out = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(out.message).toContain(message);
    }
  });

  it("never shows another workspace's logs", async () => {
    const mine = await json(await search({ per_page: 100 }, other.key));
    expect(mine.total).toBe(4);
    expect(mine.items.map((i: { id: number }) => i.id).sort()).toEqual([...otherIds].sort());
    const byId = await json(await search({ filter_group: { filters: [{ field: "pl_id", operator: "in", value: L } ] } }, other.key));
    expect(byId).toMatchObject({ total: 0, items: [] });
    const byText = await json(await search({ q: "sky" }, other.key));
    expect(byText.items.map((i: { id: number }) => i.id)).toEqual([otherIds[0]]);
  });

  it("needs an API key", async () => {
    const res = await call("/api/public/v2/requests/search", { method: "POST", json: {} });
    expect(res.status).toBe(401);
  });
});

describe("search: AND of several side-row filters", () => {
  it("gives the same answer whichever filter drives", async () => {
    const a = { field: "metadata", operator: "key_equals", nested_key: "env", value: "prod" };
    const b = { field: "tags", operator: "in", value: ["prod", "eu"] };
    const c = { field: "input_variables", operator: "is_not_null", nested_key: "topic" };
    const d = { field: "metadata_keys", operator: "contains", value: "user_id" };
    expect(await matches({ filters: [a, b, c, d] })).toEqual([0]);
    expect(await matches({ filters: [d, c, b, a] })).toEqual([0]);
    expect(await matches({ filters: [b, { field: "metadata", operator: "key_equals", nested_key: "env", value: "nope" }] })).toEqual([]);
    expect(await matches({ filters: [b, { field: "output", operator: "key_equals", nested_key: "answer", value: "yes" }] })).toEqual([0]);
  });
});

describe("POST /api/public/v2/requests/search: include_prompt_name", () => {
  it("names a linked log by its template's name (read from the control database), an unlinked one by the name it was logged with", async () => {
    const w = await createWorkspace();
    const name = `tmpl-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const published = await call("/rest/prompt-templates", {
      method: "POST",
      key: w.key,
      json: {
        prompt_template: { prompt_name: name },
        prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }, metadata: { model: { provider: "openai", name: "gpt-4o", parameters: {} } } },
      },
    });
    expect(published.status).toBe(200);
    const templateId = (await json(published)).id;
    const log = async (extra: Record<string, unknown>) => (await json(await call("/log-request", { method: "POST", key: w.key, json: logBody(extra) }))).id;
    // Linked by id while logged under another name: the template's own name wins.
    const linked = await log({ prompt_id: templateId, prompt_name: "logged-under-this" });
    const unlinked = await log({ prompt_name: "no-such-template" });
    const plain = await log({});
    const items = (await json(await call("/api/public/v2/requests/search", { method: "POST", key: w.key, json: { include_prompt_name: true } }))).items;
    const byId = new Map(items.map((i: { id: number; prompt_name: string | null }) => [i.id, i.prompt_name]));
    expect(byId.get(linked)).toBe(name);
    expect(byId.get(unlinked)).toBe("no-such-template");
    expect(byId.get(plain)).toBeNull();
    // Another workspace's log naming the same prompt id is not given this workspace's template name.
    const x = await createWorkspace();
    const theirs = await call("/log-request", { method: "POST", key: x.key, json: logBody({ prompt_id: templateId, prompt_name: "theirs" }) });
    expect(theirs.status).toBe(201);
    const xItems = (await json(await call("/api/public/v2/requests/search", { method: "POST", key: x.key, json: { include_prompt_name: true } }))).items;
    expect(xItems.map((i: { prompt_name: string }) => i.prompt_name)).toEqual(["theirs"]);
    // Without the flag the field is not there.
    const bare = (await json(await call("/api/public/v2/requests/search", { method: "POST", key: w.key, json: {} }))).items;
    expect(bare.every((i: Record<string, unknown>) => !("prompt_name" in i))).toBe(true);
  });
});

describe("POST /api/public/v2/requests/search: include_previews", () => {
  it("adds the first 160 characters of each item's input and output text, only when asked", async () => {
    const w = await createWorkspace();
    const long = `Tell me ${"everything ".repeat(40)}`;
    const id = (
      await json(
        await call("/log-request", {
          method: "POST",
          key: w.key,
          json: logBody({ input: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: long }] }] } }),
        }),
      )
    ).id;
    const [item] = (await json(await call("/api/public/v2/requests/search", { method: "POST", key: w.key, json: { include_previews: true } }))).items;
    expect(item.id).toBe(id);
    expect(item.input_preview).toHaveLength(160);
    expect(long.startsWith(item.input_preview.trim()) || item.input_preview.includes("Tell me everything")).toBe(true);
    expect(item.output_preview).toContain("Hi there!");
    const [plain] = (await json(await call("/api/public/v2/requests/search", { method: "POST", key: w.key, json: {} }))).items;
    expect(plain).not.toHaveProperty("input_preview");
  });
});
