import { beforeAll, describe, expect, it } from "vitest";
import { addKey, call, createWorkspace, json, logsDb, shareLogsDb, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { indexNow, LONG_VALUE, seedLogs } from "../helpers/logs";
import { SUGGESTION_FIELDS, suggestionQuery, type SuggestInput } from "../../src/logs/search";
import { parseFilterGroup, type FilterGroup } from "../../src/filters";
import { withinOneWindow } from "../helpers/rate-limit";

let ws: TestKey;
let other: TestKey;

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
  // One log database: only the workspace condition keeps other's values and counts out of ws's.
  await shareLogsDb(other, ws);
  await seedLogs(ws.key);
  // Another workspace with values of its own, and more of the shared ones than ws has.
  for (let i = 0; i < 3; i++) {
    const res = await call("/log-request", {
      method: "POST",
      key: other.key,
      json: logBody({ model: "secret-model", tags: ["prod", "other-tag"], metadata: { user_id: "u-other" }, prompt_id: 99, prompt_name: "hidden" }),
    });
    expect(res.status).toBe(201);
  }
});

/** Each call on a fresh key of the workspace, so the 10-a-minute budget never interferes. */
async function suggest(params: Record<string, string>, who: TestKey = ws): Promise<Response> {
  return call(`/api/public/v2/requests/suggestions?${new URLSearchParams(params)}`, { key: await addKey(who) });
}
async function values(params: Record<string, string>, who: TestKey = ws): Promise<string[]> {
  const res = await suggest(params, who);
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.values;
}

describe("suggestions: the 13 fields", () => {
  it.each([
    [{ field: "engine" }, ["gpt-4o", "claude-3", "gpt-4o-mini"]],
    [{ field: "provider_type" }, ["openai", "anthropic"]],
    [{ field: "prompt_id" }, ["11", "12"]],
    [{ field: "prompt" }, ["support", "router"]],
    [{ field: "prompt", prompt_id: "12" }, ["router"]],
    [{ field: "prompt", prompt_id: "404" }, []],
    [{ field: "engine", prompt_id: "12" }, ["gpt-4o", "claude-3", "gpt-4o-mini"]],
    [{ field: "tags" }, ["prod", "eu", "staging"]],
    [{ field: "metadata_keys" }, ["env", "user_id", "long"]],
    [{ field: "status" }, ["SUCCESS", "ERROR", "WARNING"]],
    [{ field: "tool_names" }, ["get_weather"]],
    [{ field: "output_keys" }, ["answer", "score"]],
    [{ field: "input_variable_keys" }, ["topic", "n"]],
    [{ field: "metadata_values", metadata_key: "user_id" }, ["u1", "u2"]],
    [{ field: "metadata_values", metadata_key: "long" }, [`${LONG_VALUE.slice(0, 1024)}\u2026`]],
    [{ field: "metadata_values", metadata_key: "nope" }, []],
    [{ field: "output_values", metadata_key: "score" }, ["1"]],
    [{ field: "input_variable_values", metadata_key: "topic" }, ["cats", "dogs"]],
    [{ field: "input_variable_values", metadata_key: "n" }, ["3"]],
  ])("%j → %j", async (params, expected) => {
    expect(await values(params as Record<string, string>)).toEqual(expected);
  });

  it("filters by a case-insensitive prefix, Unicode included", async () => {
    expect(await values({ field: "tags", prefix: "PR" })).toEqual(["prod"]);
    expect(await values({ field: "engine", prefix: "GPT-4O-" })).toEqual(["gpt-4o-mini"]);
    expect(await values({ field: "metadata_values", metadata_key: "user_id", prefix: "U" })).toEqual(["u1", "u2"]);
    expect(await values({ field: "tags", prefix: "x" })).toEqual([]);
    expect(await values({ field: "tags", prefix: "%" })).toEqual([]);
    const uni = await createWorkspace();
    await call("/log-request", { method: "POST", key: uni.key, json: logBody({ tags: ["Élan", "élite", "elk"] }) });
    await indexNow();
    expect(await values({ field: "tags", prefix: "ÉL" }, uni)).toEqual(["Élan", "élite"]);
  });

  it("narrows to the logs a filter_group matches, counting only those", async () => {
    const fg = (g: unknown) => JSON.stringify(g);
    const openai = fg({ filters: [{ field: "provider_type", operator: "is", value: "openai" }] });
    expect(await values({ field: "engine", filter_group: openai })).toEqual(["gpt-4o", "gpt-4o-mini"]);
    expect(await values({ field: "tags", filter_group: fg({ filters: [{ field: "engine", operator: "is", value: "gpt-4o" }] }) })).toEqual(["prod", "eu"]);
    expect(await values({ field: "metadata_values", metadata_key: "user_id", filter_group: fg({ filters: [{ field: "status", operator: "is", value: "WARNING" }] }) })).toEqual(["u2"]);
    expect(await values({ field: "prompt", prompt_id: "11", filter_group: openai })).toEqual(["support"]);
    expect(await values({ field: "metadata_keys", prefix: "E", filter_group: openai })).toEqual(["env"]);
    expect(await values({ field: "status", filter_group: fg({ logic: "OR", filters: [{ field: "cost", operator: "gt", value: 1 }, { field: "tags", operator: "contains", value: "staging" }] }) })).toEqual(["SUCCESS", "WARNING"]);
    expect(await values({ field: "tool_names", filter_group: fg({ filters: [] }) })).toEqual(["get_weather"]);
    const res = await suggest({ field: "tags", include_counts: "true", filter_group: fg({ filters: [{ field: "engine", operator: "starts_with", value: "gpt" }] }) });
    expect(await json(res)).toEqual({ success: true, values: ["prod", "eu"], counts: { prod: 2, eu: 1 } });
  });

  it("adds counts with include_counts=true, and only then", async () => {
    expect(await json(await suggest({ field: "provider_type", include_counts: "true" }))).toEqual({
      success: true,
      values: ["openai", "anthropic"],
      counts: { openai: 3, anthropic: 1 },
    });
    expect(await json(await suggest({ field: "provider_type", include_counts: "false" }))).toEqual({ success: true, values: ["openai", "anthropic"] });
  });

  it("returns at most limit values: default 50, 1..1000", async () => {
    const many = await createWorkspace();
    const tags = Array.from({ length: 60 }, (_, i) => `t${String(i).padStart(2, "0")}`);
    await call("/log-request", { method: "POST", key: many.key, json: logBody({ tags }) });
    await indexNow();
    expect(await values({ field: "tags" }, many)).toEqual(tags.slice(0, 50));
    expect(await values({ field: "tags", limit: "1" }, many)).toEqual(["t00"]);
    expect(await values({ field: "tags", limit: "1000" }, many)).toHaveLength(60);
    expect(await values({ field: "tags", limit: "2", filter_group: JSON.stringify({ filters: [] }) }, many)).toEqual(["t00", "t01"]);
  });

  it("never shows or counts another workspace's values", async () => {
    expect(await values({ field: "engine" })).not.toContain("secret-model");
    expect(await values({ field: "tags" })).not.toContain("other-tag");
    expect(await json(await suggest({ field: "tags", include_counts: "true" }))).toMatchObject({ counts: { prod: 2 } });
    expect(await values({ field: "prompt_id" })).not.toContain("99");
    expect(await values({ field: "metadata_values", metadata_key: "user_id", filter_group: JSON.stringify({ filters: [] }) })).toEqual(["u1", "u2"]);
    expect(await values({ field: "engine" }, other)).toEqual(["secret-model"]);
    expect(await json(await suggest({ field: "tags", include_counts: "true" }, other))).toEqual({
      success: true,
      values: ["other-tag", "prod"],
      counts: { "other-tag": 3, prod: 3 },
    });
  });
});

describe("suggestions: bad input", () => {
  it.each([
    [{}, "field: "],
    [{ field: "model" }, "field: "],
    [{ field: "metadata_values" }, "metadata_key: is required when field is metadata_values"],
    [{ field: "output_values" }, "metadata_key: is required when field is output_values"],
    [{ field: "input_variable_values" }, "metadata_key: is required when field is input_variable_values"],
    [{ field: "metadata_values", metadata_key: "" }, "metadata_key: "],
    [{ field: "prompt", prompt_id: "0" }, "prompt_id: must be a positive integer"],
    [{ field: "prompt", prompt_id: "-1" }, "prompt_id: must be a positive integer"],
    [{ field: "prompt", prompt_id: "abc" }, "prompt_id: must be a positive integer"],
    [{ field: "tags", limit: "0" }, "limit: must be a positive integer"],
    [{ field: "tags", limit: "1001" }, "limit: must be at most 1000"],
    [{ field: "tags", include_counts: "yes" }, "include_counts: "],
    [{ field: "tags", filter_group: "{not json" }, "filter_group: must be a JSON-encoded filter group"],
    [{ field: "tags", filter_group: "[]" }, "filter_group: must be a filter group object"],
    [{ field: "tags", filter_group: JSON.stringify({ filters: [{ field: "tags", operator: "gt", value: 1 }] }) }, "filter_group.filters[0].operator: gt does not apply to tags"],
    [{ field: "tags", filter_group: JSON.stringify({ filters: [{ field: "metadata", operator: "key_equals", value: "x" }] }) }, "filter_group.filters[0].nested_key: is required"],
  ])("%j → 400 %s", async (params, message) => {
    const res = await suggest(params as Record<string, string>);
    const body = await json(res);
    expect(res.status).toBe(400);
    expect(body).toMatchObject({ success: false, error: "validation_error" });
    expect(body.message).toContain(message);
  });

  it("needs an API key", async () => {
    expect((await call("/api/public/v2/requests/suggestions?field=tags")).status).toBe(401);
  });
});

describe("suggestions: the rate limit", () => {
  it("answers 10 calls a minute per key and the 11th with 429 and Retry-After; other keys are unaffected", async () => {
    const key = await addKey(ws);
    const statuses: number[] = [];
    let last: Response | undefined;
    await withinOneWindow();
    for (let i = 0; i < 11; i++) {
      last = await call("/api/public/v2/requests/suggestions?field=tags", { key });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    expect(last!.headers.get("Retry-After")).toBe("60");
    expect(await json(last!)).toMatchObject({ success: false, error: "rate_limited" });
    expect((await call("/api/public/v2/requests/suggestions?field=tags", { key: await addKey(ws) })).status).toBe(200);
  });

  it("counts bad requests too, and refuses the 11th before validating or touching the database", async () => {
    const key = await addKey(ws);
    await withinOneWindow();
    for (let i = 0; i < 10; i++) expect((await call("/api/public/v2/requests/suggestions?field=nope", { key })).status).toBe(400);
    const res = await call("/api/public/v2/requests/suggestions?field=nope", { key });
    expect(res.status).toBe(429);
  });
});

describe("suggestion queries never scan request_logs", () => {
  const group = (raw: unknown): FilterGroup => {
    const parsed = parseFilterGroup(raw);
    if (!parsed.ok) throw new Error("bad group");
    return parsed.group;
  };
  const filters = [
    undefined,
    group({ filters: [{ field: "engine", operator: "is", value: "gpt-4o" }] }),
    group({ filters: [{ field: "tags", operator: "contains", value: "prod" }] }),
    group({ filters: [{ field: "request_start_time", operator: "after", value: "2024-01-01" }] }),
  ];
  for (const field of SUGGESTION_FIELDS) {
    it(`${field}: every plan searches by index`, async () => {
      for (const filter_group of filters) {
        for (const prefix of [undefined, "a"]) {
          const input: SuggestInput = { field, prefix, metadata_key: "user_id", prompt_id: field === "prompt" ? 11 : undefined, filter_group, limit: 50 };
          const { sql, params } = suggestionQuery(ws.workspaceId, input);
          const { results } = await (await logsDb(ws)).prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...params).all<{ detail: string }>();
          const plan = results.map((r) => r.detail);
          const label = `${JSON.stringify({ filter_group, prefix })}\n${plan.join("\n")}`;
          expect(plan.filter((d) => /^SCAN (r|request_logs|v|request_log_values|f|request_log_facets)\b/.test(d)), label).toEqual([]);
          expect(plan.some((d) => /^SEARCH /.test(d)), label).toBe(true);
        }
      }
    });
  }
});
