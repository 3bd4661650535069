// The tracking calls: the SDK's /library-track-*, /create-group, /track-group (key in the body) and
// the REST twins /rest/track-*: what a log gains, bad bodies, missing and foreign ids, key rules.
import { beforeAll, describe, expect, it } from "vitest";
import { addKey, call, createWorkspace, json, logsDb, shareLogsDb, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { indexNow } from "../helpers/logs";
import { logValuesSql } from "../../src/filters";

let ws: TestKey;
let other: TestKey;
let n = 0;
const uniq = (p: string) => `${p}-${Date.now()}-${++n}`;

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
  // One log database: other's log and group ids are then not ws's, and only the workspace condition keeps them out.
  await shareLogsDb(other, ws);
});

/** A log, indexed (test/logs/indexing.test.ts tracks logs before indexing too). */
async function logOne(key: string, overrides: Record<string, unknown> = {}): Promise<number> {
  const res = await call("/log-request", { method: "POST", key, json: logBody(overrides) });
  expect(res.status).toBe(201);
  await indexNow();
  return (await json(res)).id;
}

async function detail(id: number, key = ws.key) {
  const res = await call(`/api/public/v2/requests/${id}`, { key });
  expect(res.status).toBe(200);
  return json(res);
}

/** A POST with the key only in the body, as the SDK sends it. */
const sdkPost = (path: string, body: Record<string, unknown>, key = ws.key) => call(path, { method: "POST", json: { ...body, api_key: key } });
const restPost = (path: string, body: unknown, key = ws.key) => call(path, { method: "POST", key, json: body });

async function publishPrompt(key: string, name: string, labels: string[] = []) {
  const body = (t: string) => ({
    prompt_template: { prompt_name: name },
    prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: t }] }] }, metadata: { model: { provider: "openai", name: "gpt-4o", parameters: {} } } },
    release_labels: labels,
  });
  const v1 = await call("/rest/prompt-templates", { method: "POST", key, json: body("one") });
  expect(v1.status).toBe(200);
  const v2 = await call("/rest/prompt-templates", { method: "POST", key, json: body("two") });
  expect(v2.status).toBe(200);
  return (await json(v1)).id as number;
}

async function search(filters: unknown[], key = ws.key): Promise<number[]> {
  const res = await call("/api/public/v2/requests/search", { method: "POST", key, json: { filter_group: { logic: "AND", filters }, per_page: 25 } });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.items.map((i: { id: number }) => i.id);
}

async function suggest(params: Record<string, string>, who: TestKey = ws): Promise<Record<string, number>> {
  const res = await call(`/api/public/v2/requests/suggestions?${new URLSearchParams({ ...params, include_counts: "true" })}`, { key: await addKey(who) });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.counts;
}

describe("API key from the body", () => {
  it("takes api_key from the body when no header is sent, the header when it is, and both only when equal", async () => {
    const id = await logOne(ws.key);
    expect((await sdkPost("/library-track-score", { request_id: id, score: 10 })).status).toBe(200);
    expect((await restPost("/library-track-score", { request_id: id, score: 11 })).status).toBe(200);
    const same = await call("/library-track-score", { method: "POST", key: ws.key, json: { request_id: id, score: 12, api_key: ws.key } });
    expect(same.status).toBe(200);
    const mismatch = await call("/library-track-score", { method: "POST", key: ws.key, json: { request_id: id, score: 99, api_key: other.key } });
    expect(mismatch.status).toBe(401);
    const body = await json(mismatch);
    expect(body).toMatchObject({ success: false, error: "unauthorized" });
    // The key is never echoed.
    expect(JSON.stringify(body)).not.toContain(other.key);
    expect(JSON.stringify(body)).not.toContain(ws.key);
    expect((await detail(id)).score).toBe(12);
  });

  it("401 without any key, with an unknown body key, and with a body key on a REST twin (header only there)", async () => {
    const id = await logOne(ws.key);
    const none = await call("/library-track-score", { method: "POST", json: { request_id: id, score: 50 } });
    expect(none.status).toBe(401);
    expect((await json(none)).message).toMatch(/api_key/);
    const unknown = await sdkPost("/library-track-score", { request_id: id, score: 50 }, "pe_" + "0".repeat(48));
    expect(unknown.status).toBe(401);
    expect(JSON.stringify(await json(unknown))).not.toContain("pe_000");
    expect((await sdkPost("/rest/track-score", { request_id: id, score: 50 })).status).toBe(401);
    const notString = await call("/library-track-score", { method: "POST", json: { request_id: id, score: 50, api_key: 12345 } });
    expect(notString.status).toBe(401);
    expect((await detail(id)).score).toBe(0);
  });

  it("caps the body before reading the key from it: 413 for an oversized body", async () => {
    const id = await logOne(ws.key);
    const big = JSON.stringify({ request_id: id, metadata: { big: "x".repeat(1_100_000) }, api_key: ws.key });
    const res = await call("/library-track-metadata", { method: "POST", body: big, headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(413);
    expect((await detail(id)).metadata).toEqual({});
  });

  it("401 comes before validation, and malformed JSON with a header key is a 400", async () => {
    const res = await call("/library-track-metadata", { method: "POST", body: "{not json", headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(401);
    const bad = await call("/library-track-metadata", { method: "POST", key: ws.key, body: "{not json", headers: { "Content-Type": "application/json" } });
    expect(bad.status).toBe(400);
  });
});

describe("scores", () => {
  it("keeps every named score; unnamed and `default` are the log's score; both path families agree", async () => {
    const id = await logOne(ws.key);
    expect(await json(await sdkPost("/library-track-score", { request_id: id, score: 80, name: "accuracy" }))).toEqual({ success: true, message: expect.any(String) });
    expect((await restPost("/rest/track-score", { request_id: id, score: 40 })).status).toBe(200);
    expect((await restPost("/rest/track-score", { request_id: String(id), score: 55, name: "tone" })).status).toBe(200);
    expect((await restPost("/rest/track-score", { request_id: id, score: 90, name: "accuracy" })).status).toBe(200);
    const d = await detail(id);
    expect(d.score).toBe(40);
    expect(d.scores).toEqual({ default: 40, accuracy: 90, tone: 55 });
    const found = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { filters: [{ field: "pl_id", operator: "is", value: id }] } } });
    expect((await json(found)).items[0].scores).toEqual([
      { name: "accuracy", score: 90 },
      { name: "default", score: 40 },
      { name: "tone", score: 55 },
    ]);
  });

  it("search filters on a named score (scores with nested_key) through the filter compiler", async () => {
    const a = await logOne(ws.key, { tags: ["score-filter"] });
    const b = await logOne(ws.key, { tags: ["score-filter"] });
    const c = await logOne(ws.key, { tags: ["score-filter"] });
    await restPost("/rest/track-score", { request_id: a, score: 95, name: "helpfulness" });
    await restPost("/rest/track-score", { request_id: b, score: 30, name: "helpfulness" });
    const tag = { field: "tags", operator: "contains", value: "score-filter" };
    expect(await search([tag, { field: "scores", nested_key: "helpfulness", operator: "gte", value: 90 }])).toEqual([a]);
    expect((await search([tag, { field: "scores", nested_key: "helpfulness", operator: "lt", value: 90 }])).sort()).toEqual([b]);
    expect((await search([tag, { field: "scores", nested_key: "helpfulness", operator: "is_null" }]))).toEqual([c]);
    expect((await search([tag, { field: "scores", nested_key: "helpfulness", operator: "between", value: [30, 95] }])).sort((x, y) => x - y)).toEqual([a, b]);
    const noKey = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: { filters: [{ field: "scores", operator: "gt", value: 1 }] } } });
    expect(noKey.status).toBe(400);
    expect((await json(noKey)).message).toMatch(/nested_key/);
  });

  it("refuses bad bodies with 400 and changes nothing", async () => {
    const id = await logOne(ws.key);
    const cases: [unknown, RegExp][] = [
      [{ request_id: id, score: 101 }, /score: must be from 0 to 100/],
      [{ request_id: id, score: -1 }, /score: must be from 0 to 100/],
      [{ request_id: id, score: 50.5 }, /score: must be a whole number/],
      [{ request_id: id }, /score: is required/],
      [{ score: 5 }, /request_id: is required/],
      [{ request_id: "abc", score: 5 }, /request_id: must be a positive integer/],
      [{ request_id: 0, score: 5 }, /request_id: must be a positive integer/],
      [{ request_id: id, score: 5, name: "" }, /name: must not be empty/],
    ];
    for (const [body, message] of cases) {
      const res = await restPost("/rest/track-score", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    // Both ends of the range are accepted.
    expect((await restPost("/rest/track-score", { request_id: id, score: 0, name: "low" })).status).toBe(200);
    expect((await restPost("/rest/track-score", { request_id: id, score: 100, name: "high" })).status).toBe(200);
    expect((await detail(id)).scores).toEqual({ low: 0, high: 100 });
  });

  it("404 for a missing request and for another workspace's, which stays unchanged", async () => {
    const foreign = await logOne(other.key);
    expect((await restPost("/rest/track-score", { request_id: 99_999_999, score: 5 })).status).toBe(404);
    const res = await sdkPost("/library-track-score", { request_id: foreign, score: 77, name: "x" });
    expect(res.status).toBe(404);
    expect((await json(res)).error).toBe("not_found");
    const d = await detail(foreign, other.key);
    expect(d.scores).toEqual({});
    expect(d.score).toBe(0);
  });
});

describe("metadata", () => {
  it("merges into the log's metadata; search and suggestions see the new keys and values at once", async () => {
    const key = uniq("plan");
    const id = await logOne(ws.key, { metadata: { env: "prod", [key]: "free" } });
    const res = await sdkPost("/library-track-metadata", { request_id: id, metadata: { [key]: "pro", session: "s-1" } });
    expect(res.status).toBe(200);
    expect((await detail(id)).metadata).toEqual({ env: "prod", [key]: "pro", session: "s-1" });
    expect(await search([{ field: "metadata", nested_key: key, operator: "key_equals", value: "pro" }])).toEqual([id]);
    expect(await search([{ field: "metadata", nested_key: key, operator: "key_equals", value: "free" }])).toEqual([]);
    const values = await suggest({ field: "metadata_values", metadata_key: key });
    expect(values).toEqual({ pro: 1 });
    const keys = await suggest({ field: "metadata_keys", prefix: key });
    expect(keys).toEqual({ [key]: 1 });
    // The same value again changes no count.
    expect((await restPost("/rest/track-metadata", { request_id: String(id), metadata: { [key]: "pro" } })).status).toBe(200);
    expect(await suggest({ field: "metadata_values", metadata_key: key })).toEqual({ pro: 1 });
    // The log's keyed values (what filters and suggestions read) hold each key once, with its new value.
    const rows = await (await logsDb(ws))
      .prepare(`SELECT e.key, e.value FROM ${logValuesSql("lr", undefined, { from: "request_logs AS lr", where: "lr.id = ?1" })} AS e WHERE e.kind = 'metadata' ORDER BY e.key`)
      .bind(id)
      .all();
    expect(rows.results).toEqual([
      { key: "env", value: "prod" },
      { key, value: "pro" },
      { key: "session", value: "s-1" },
    ].sort((a, b) => (a.key < b.key ? -1 : 1)));
  });

  it("refuses non-string values, empty keys and a missing object with 400, changing nothing", async () => {
    const id = await logOne(ws.key, { metadata: { a: "1" } });
    for (const [body, message] of [
      [{ request_id: id, metadata: { a: 2 } }, /metadata values must be strings/],
      [{ request_id: id, metadata: { "": "x" } }, /metadata keys must not be empty/],
      [{ request_id: id }, /metadata: is required/],
      [{ request_id: id, metadata: "a=1" }, /metadata/],
    ] as [unknown, RegExp][]) {
      const res = await restPost("/rest/track-metadata", body);
      expect(res.status).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    expect((await detail(id)).metadata).toEqual({ a: "1" });
  });

  it("another workspace's log is a 404 and keeps its metadata and suggestions", async () => {
    const key = uniq("foreign");
    const foreign = await logOne(other.key, { metadata: { [key]: "kept" } });
    expect((await sdkPost("/library-track-metadata", { request_id: foreign, metadata: { [key]: "changed" } })).status).toBe(404);
    expect((await detail(foreign, other.key)).metadata).toEqual({ [key]: "kept" });
    expect(await suggest({ field: "metadata_values", metadata_key: key }, other)).toEqual({ kept: 1 });
    expect(await suggest({ field: "metadata_values", metadata_key: key })).toEqual({});
  });
});

describe("prompt links", () => {
  it("links by name and version or label; prompt_version resolves; input variables replace the log's", async () => {
    const name = uniq("support");
    const promptId = await publishPrompt(ws.key, name, ["prod"]);
    const oldKey = uniq("oldvar");
    const id = await logOne(ws.key, { prompt_input_variables: { [oldKey]: "x" } });
    expect(await suggest({ field: "input_variable_keys", prefix: oldKey })).toEqual({ [oldKey]: 1 });
    const res = await sdkPost("/library-track-prompt", { request_id: id, prompt_name: name, prompt_input_variables: { topic: "cats" }, version: 1 });
    expect(res.status).toBe(200);
    let d = await detail(id);
    expect(d).toMatchObject({ prompt_id: promptId, prompt_name: name, prompt_version_number: 1, prompt_input_variables: { topic: "cats" } });
    expect(d.prompt_version_id).toEqual(expect.any(Number));
    expect(await search([{ field: "input_variables", nested_key: "topic", operator: "key_equals", value: "cats" }])).toContain(id);
    expect(await search([{ field: "input_variables", nested_key: oldKey, operator: "is_not_null" }])).not.toContain(id);
    // The replaced variable no longer counts in suggestions.
    expect(await suggest({ field: "input_variable_keys", prefix: oldKey })).toEqual({});
    expect(await suggest({ field: "prompt_id", prefix: String(promptId) })).toEqual({ [String(promptId)]: 1 });

    // By label ("prod" is on version 2, the latest publish moved it), then the latest version.
    expect((await restPost("/rest/track-prompt", { request_id: id, prompt_name: name, label: "prod" })).status).toBe(200);
    d = await detail(id);
    expect(d.prompt_version_number).toBe(2);
    expect(d.prompt_input_variables).toEqual({ topic: "cats" });
    expect((await restPost("/rest/track-prompt", { request_id: id, prompt_name: name, version: "1" })).status).toBe(200);
    expect((await detail(id)).prompt_version_number).toBe(1);
    expect((await restPost("/rest/track-prompt", { request_id: id, prompt_name: name })).status).toBe(200);
    expect((await detail(id)).prompt_version_number).toBe(2);
    // Re-linking the same prompt keeps its suggestion count at one log.
    expect(await suggest({ field: "prompt_id", prefix: String(promptId) })).toEqual({ [String(promptId)]: 1 });
    expect(await search([{ field: "prompt_id", operator: "is", value: promptId }])).toEqual([id]);
  });

  it("400 for bad bodies, 404 for an unknown version, label or name, and another workspace's prompt", async () => {
    const name = uniq("p");
    await publishPrompt(ws.key, name);
    const hidden = uniq("hidden");
    await publishPrompt(other.key, hidden);
    const id = await logOne(ws.key);
    const bad: [unknown, RegExp][] = [
      [{ request_id: id }, /prompt_name: is required/],
      [{ request_id: id, prompt_name: "" }, /prompt_name: must not be empty/],
      [{ request_id: id, prompt_name: name, version: 1, label: "prod" }, /either version or label/],
      [{ request_id: id, prompt_name: name, version: 0 }, /version: must be a positive integer/],
      [{ request_id: id, prompt_name: name, prompt_input_variables: ["x"] }, /prompt_input_variables/],
    ];
    for (const [body, message] of bad) {
      const res = await restPost("/rest/track-prompt", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    for (const body of [
      { request_id: id, prompt_name: name, version: 9 },
      { request_id: id, prompt_name: name, label: "nope" },
      { request_id: id, prompt_name: hidden },
      { request_id: 99_999_999, prompt_name: name },
    ]) {
      const res = await restPost("/rest/track-prompt", body);
      expect(res.status, JSON.stringify(body)).toBe(404);
    }
    const foreign = await logOne(other.key);
    expect((await sdkPost("/library-track-prompt", { request_id: foreign, prompt_name: name, prompt_input_variables: {} })).status).toBe(404);
    expect((await detail(foreign, other.key)).prompt_id).toBeNull();
    expect((await detail(id)).prompt_id).toBeNull();
  });
});

describe("groups", () => {
  it("create-group answers 200 {success, id}; track-group puts the log in it; search filters on group_id", async () => {
    const created = await sdkPost("/create-group", {});
    expect(created.status).toBe(200);
    const { success, id: groupId } = await json(created);
    expect(success).toBe(true);
    expect(groupId).toEqual(expect.any(Number));
    // With the header and no body at all.
    const second = await call("/create-group", { method: "POST", key: ws.key });
    expect(second.status).toBe(200);
    expect((await json(second)).id).toBeGreaterThan(groupId);

    const a = await logOne(ws.key);
    const b = await logOne(ws.key);
    expect((await sdkPost("/track-group", { request_id: a, group_id: groupId })).status).toBe(200);
    expect((await restPost("/rest/track-group", { request_id: b, group_id: groupId })).status).toBe(200);
    expect((await detail(a)).group_id).toBe(groupId);
    expect((await search([{ field: "group_id", operator: "is", value: groupId }])).sort((x, y) => x - y)).toEqual([a, b]);
  });

  it("404 for a missing or foreign group or log, changing nothing; 400 for bad ids", async () => {
    const mine = (await json(await restPost("/create-group", {}))).id;
    const theirs = (await json(await restPost("/create-group", {}, other.key))).id;
    const id = await logOne(ws.key);
    const foreignLog = await logOne(other.key);
    for (const body of [
      { request_id: id, group_id: theirs },
      { request_id: id, group_id: 99_999_999 },
      { request_id: foreignLog, group_id: mine },
      { request_id: 99_999_999, group_id: mine },
    ]) {
      const res = await restPost("/rest/track-group", body);
      expect(res.status, JSON.stringify(body)).toBe(404);
    }
    expect((await detail(id)).group_id).toBeNull();
    expect((await detail(foreignLog, other.key)).group_id).toBeNull();
    for (const body of [{ request_id: id }, { request_id: id, group_id: "g1" }, { request_id: id, group_id: -3 }]) {
      expect((await restPost("/rest/track-group", body)).status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe("/openapi.json", () => {
  it("documents the REST twins and the SDK paths with 200 answers", async () => {
    const doc = await json(await call("/openapi.json"));
    for (const path of ["/rest/track-score", "/rest/track-metadata", "/rest/track-prompt", "/rest/track-group", "/library-track-score", "/library-track-metadata", "/library-track-prompt", "/track-group", "/create-group"]) {
      expect(doc.paths[path]?.post?.responses?.["200"], path).toBeDefined();
    }
    expect(doc.components.schemas.Error.properties).not.toHaveProperty("request_id");
  });
});
