// GET /api/public/v2/request-payload?request_id=…: PromptLayer's first name for the request detail
// answers what GET /api/public/v2/requests/{request_id} answers, for the workspace's own logs only.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createWorkspace, json, shareLogsDb, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";

let ws: TestKey;
let other: TestKey;
let id: number;

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
  // One log database: the other workspace's log ids are then real ids there, kept out by the workspace alone.
  await shareLogsDb(other, ws);
  id = (await json(await call("/log-request", { method: "POST", key: ws.key, json: logBody({ tags: ["payload"], input_tokens: 12, output_tokens: 25, price: 0.5 }) }))).id;
});

const payload = (query: string, key = ws.key) => call(`/api/public/v2/request-payload${query}`, { key });

describe("GET /api/public/v2/request-payload", () => {
  it("answers the request detail of GET /api/public/v2/requests/{request_id}, byte for byte", async () => {
    const res = await payload(`?request_id=${id}`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toEqual(await json(await call(`/api/public/v2/requests/${id}`, { key: ws.key })));
    expect(body).toMatchObject({
      success: true,
      request_id: id,
      prompt_blueprint: { prompt_template: { type: "chat" }, metadata: { model: { provider: "openai", name: "gpt-4o" } } },
      input_tokens: 12,
      output_tokens: 25,
      tokens: 37,
      price: 0.5,
      latency_ms: 5000,
    });
  });

  it("is a 404 for another workspace's log and for an unknown id", async () => {
    const theirs = (await json(await call("/log-request", { method: "POST", key: other.key, json: logBody() }))).id;
    for (const query of [`?request_id=${theirs}`, "?request_id=999999999"]) {
      const res = await payload(query);
      expect(res.status, query).toBe(404);
      expect(await json(res)).toMatchObject({ success: false, error: "not_found" });
    }
    expect((await payload(`?request_id=${theirs}`, other.key)).status).toBe(200);
  });

  it.each(["", "?request_id=", "?request_id=abc", "?request_id=0", "?request_id=-1", "?request_id=1.5"])("is a 400 naming request_id for %j", async (query) => {
    const res = await payload(query);
    const body = await json(res);
    expect(res.status).toBe(400);
    expect(body).toMatchObject({ success: false, error: "validation_error" });
    expect(body.message).toMatch(/request_id/);
  });

  it("needs a key", async () => {
    expect((await call(`/api/public/v2/request-payload?request_id=${id}`)).status).toBe(401);
  });

  it("is in the API document with its 404", async () => {
    const op = (await json(await call("/openapi.json"))).paths["/api/public/v2/request-payload"]?.get;
    expect(op).toBeDefined();
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: "request_id", in: "query", required: true }));
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "404"]));
  });
});
