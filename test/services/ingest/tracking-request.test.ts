// trackRequest: what /track-request adds around a converted provider call (times, tags, metadata,
// prompt link, group, score), its id checks and its failed-call path. The provider format is the
// converters' business, so a test double stands in for them here.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../../src/db/client";
import type { AuthContext } from "../../../src/env";
import { ApiError } from "../../../src/lib/errors";
import { getRequestLog } from "../../../src/logs/write";
import { createGroup } from "../../../src/logs/tracking";
import { trackRequest, type ConvertProviderCall, type TrackRequestInput } from "../../../src/services/ingest/tracking-request";
import { call, createWorkspace, json, logsDb, logsOf, shareLogsDb, type TestKey } from "../../helpers/api";

let ws: TestKey;
let other: TestKey;
const authOf = (k: TestKey): AuthContext => ({ workspaceId: k.workspaceId, userId: k.userId, userEmail: k.email, apiKeyId: 0 });

beforeAll(async () => {
  ws = await createWorkspace();
  other = await createWorkspace();
  // One log database: other's group ids are then not ws's, and only the workspace condition keeps them out.
  await shareLogsDb(other, ws);
  // A key id the log-key trigger accepts (the log names the key that wrote it).
  const key = await env.DB.prepare("SELECT id FROM api_keys WHERE workspace_id = ?").bind(ws.workspaceId).first<{ id: number }>();
  wsAuth = { ...authOf(ws), apiKeyId: key!.id };
  const otherKey = await env.DB.prepare("SELECT id FROM api_keys WHERE workspace_id = ?").bind(other.workspaceId).first<{ id: number }>();
  otherAuth = { ...authOf(other), apiKeyId: otherKey!.id };
});
let wsAuth: AuthContext;
let otherAuth: AuthContext;

/** A stand-in converter: reads a tiny made-up format, refuses anything else. */
const convert: ConvertProviderCall = (c) => {
  const r = c.request_response as { text?: string; usage?: [number, number] };
  if (c.function_name !== "fake.create") return { ok: false, error: `function_name: unsupported ${c.function_name}` };
  if (typeof r?.text !== "string") return { ok: false, error: "request_response: no text in the response" };
  return {
    ok: true,
    value: {
      provider: "fake",
      model: String(c.kwargs.model),
      input: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: String(c.kwargs.prompt) }] }] },
      output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: r.text }] }] },
      parameters: { temperature: 0.1 },
      input_tokens: r.usage?.[0] ?? 0,
      output_tokens: r.usage?.[1] ?? 0,
      price: 0.002,
      status: "SUCCESS",
    },
  };
};

const body = (extra: Partial<TrackRequestInput> = {}): TrackRequestInput => ({
  function_name: "fake.create",
  kwargs: { model: "fake-1", prompt: "Hello" },
  request_response: { text: "Hi!", usage: [7, 2] },
  request_start_time: Date.parse("2024-05-01T10:00:00Z"),
  request_end_time: Date.parse("2024-05-01T10:00:02Z"),
  tags: [],
  metadata: {},
  prompt_input_variables: {},
  ...extra,
});

async function publish(key: string, name: string): Promise<number> {
  const res = await call("/rest/prompt-templates", {
    method: "POST",
    key,
    json: {
      prompt_template: { prompt_name: name },
      prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "Hello {x}" }] }] } },
    },
  });
  expect(res.status).toBe(200);
  return (await json(res)).id;
}

/** The control database with the statements it is asked to run recorded (drizzle prepares each query it runs). */
function recordingDb() {
  const statements: string[] = [];
  const d1 = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "prepare") return (query: string) => (statements.push(query), target.prepare(query));
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: getDb(d1), statements };
}

const count = async (workspaceId: number) =>
  (await (await logsDb(workspaceId)).prepare("SELECT count(*) AS n FROM request_logs WHERE workspace_id = ?").bind(workspaceId).first<{ n: number }>())!.n;

describe("trackRequest", () => {
  it("writes the converted call with the times, tags, metadata, score, prompt link and group, and answers its blueprint", async () => {
    const db = getDb(env.DB);
    const logs = await logsOf(ws);
    const promptId = await publish(ws.key, `trs-${Date.now()}`);
    const { id: groupId } = await createGroup(logs, wsAuth);
    const tracked = await trackRequest(
      db,
      logs,
      wsAuth,
      body({ tags: ["a"], metadata: { user: "u1" }, score: 60, prompt_id: promptId, prompt_version: 1, prompt_input_variables: { x: "you" }, group_id: groupId }),
      convert,
    );
    expect(tracked.prompt_blueprint).toEqual({
      prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }] },
      metadata: { model: { provider: "fake", name: "fake-1", parameters: { temperature: 0.1 } } },
      inference_client_name: null,
    });
    const row = await getRequestLog(logs.current, ws.workspaceId, tracked.request_id);
    expect(row).toMatchObject({
      provider: "fake",
      model: "fake-1",
      inputTokens: 7,
      outputTokens: 2,
      price: 0.002,
      tags: ["a"],
      metadata: { user: "u1" },
      score: 60,
      scores: { default: 60 },
      promptId,
      promptVersionNumber: 1,
      promptVersionId: expect.any(Number),
      promptInputVariables: { x: "you" },
      groupId,
      functionName: "fake.create",
      status: "SUCCESS",
      errorType: null,
      requestEndTime: Date.parse("2024-05-01T10:00:02Z"),
    });
  });

  it("logs a failed call reported with status ERROR and an empty response", async () => {
    const db = getDb(env.DB);
    const logs = await logsOf(ws);
    const tracked = await trackRequest(db, logs, wsAuth, body({ request_response: {}, status: "ERROR", error_type: "PROVIDER_TIMEOUT", error_message: "timed out" }), convert);
    expect(await getRequestLog(logs.current, ws.workspaceId, tracked.request_id)).toMatchObject({
      provider: "fake",
      model: "fake-1",
      status: "ERROR",
      errorType: "PROVIDER_TIMEOUT",
      errorMessage: "timed out",
    });
  });

  it("a call the converter cannot read is a 400 with its message (which names the field); nothing is written", async () => {
    const logs = await logsOf(ws);
    const before = await count(ws.workspaceId);
    await expect(trackRequest(getDb(env.DB), logs, wsAuth, body({ request_response: { nope: 1 } }), convert)).rejects.toMatchObject({
      status: 400,
      message: "request_response: no text in the response",
    });
    await expect(trackRequest(getDb(env.DB), logs, wsAuth, body({ function_name: "other.create" }), convert)).rejects.toBeInstanceOf(ApiError);
    expect(await count(ws.workspaceId)).toBe(before);
  });

  it("another workspace's prompt or group, or a missing version, is a 404 and writes nothing", async () => {
    const db = getDb(env.DB);
    const logs = await logsOf(ws);
    const foreignPrompt = await publish(other.key, `trs-other-${Date.now()}`);
    const { id: foreignGroup } = await createGroup(await logsOf(other), otherAuth);
    const mine = await publish(ws.key, `trs-mine-${Date.now()}`);
    const before = await count(ws.workspaceId);
    for (const extra of [{ prompt_id: foreignPrompt }, { group_id: foreignGroup }, { prompt_id: mine, prompt_version: 5 }]) {
      await expect(trackRequest(db, logs, wsAuth, body(extra), convert), JSON.stringify(extra)).rejects.toMatchObject({ status: 404 });
    }
    await expect(trackRequest(db, logs, wsAuth, body({ prompt_version: 1 }), convert)).rejects.toMatchObject({ status: 400 });
    expect(await count(ws.workspaceId)).toBe(before);
  });

  it("prompt_version 0 (below the first version) is the same 404 as a missing version, without looking versions up", async () => {
    const logs = await logsOf(ws);
    const mine = await publish(ws.key, `trs-zero-${Date.now()}`);
    const before = await count(ws.workspaceId);
    const missing = recordingDb();
    await expect(trackRequest(missing.db, logs, wsAuth, body({ prompt_id: mine, prompt_version: 5 }), convert)).rejects.toMatchObject({
      status: 404,
      message: "prompt_version: prompt template has no version 5",
    });
    // The template's check, then the version's.
    expect(missing.statements).toHaveLength(2);
    const zero = recordingDb();
    await expect(trackRequest(zero.db, logs, wsAuth, body({ prompt_id: mine, prompt_version: 0 }), convert)).rejects.toMatchObject({
      status: 404,
      message: "prompt_version: prompt template has no version 0",
    });
    // The template's check only.
    expect(zero.statements).toHaveLength(1);
    expect(zero.statements[0]).toContain('"prompt_templates"');
    expect(await count(ws.workspaceId)).toBe(before);
  });
});
