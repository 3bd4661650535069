// Ids unique in a deployment (src/logs/id-ranges.ts): workspaces on two different log databases and
// one logging into the control database never get a log or group id of the same number, each
// database numbers in its own range, and another workspace's log or group id is a 404 on every
// route that takes one, with nothing changed. (The isolation tests of each route put both workspaces
// on one database, where only the workspace condition keeps a foreign id out; these put them apart.)
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureIdRange, ID_RANGE_SIZE, idRangeFor, idRangeOf, MAX_ID_RANGE } from "../../src/logs/id-ranges";
import { call, createWorkspace, json, placeOn, type TestKey } from "../helpers/api";
import { bulkSpan, logBody } from "../helpers/fixtures";
import { newSheet } from "../helpers/sheet-data";
import { pollOperation } from "../helpers/tables";

let a: TestKey;
let b: TestKey;
let c: TestKey;

const post = (ws: TestKey, path: string, body: unknown) => call(path, { method: "POST", key: ws.key, json: body });
const sdkPost = (ws: TestKey, path: string, body: Record<string, unknown>) => call(path, { method: "POST", json: { ...body, api_key: ws.key } });

async function logOne(ws: TestKey, overrides: Record<string, unknown> = {}): Promise<number> {
  const res = await post(ws, "/log-request", logBody({ tags: [`t${ws.workspaceId}`], metadata: { owner: String(ws.workspaceId) }, ...overrides }));
  expect(res.status).toBe(201);
  return (await json(res)).id;
}

async function newGroup(ws: TestKey): Promise<number> {
  const res = await sdkPost(ws, "/create-group", {});
  expect(res.status).toBe(200);
  return (await json(res)).id;
}

async function publishPrompt(ws: TestKey, name: string) {
  const res = await post(ws, "/rest/prompt-templates", {
    prompt_template: { prompt_name: name },
    prompt_version: { prompt_template: { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }, metadata: { model: { provider: "openai", name: "gpt-4o", parameters: {} } } },
  });
  expect(res.status).toBe(200);
}

/** A spans-bulk span that makes a request log. */
const llmSpan = (traceId: string, spanId: string) =>
  bulkSpan(traceId, spanId, { name: "llm", log_request: { provider: "openai", model: "gpt-4o", input: { type: "chat", messages: [] }, output: { type: "chat", messages: [] } } });

const detail = async (ws: TestKey, id: number) => {
  const res = await call(`/api/public/v2/requests/${id}`, { key: ws.key });
  expect(res.status).toBe(200);
  return json(res);
};

const datasetGroup = async (ws: TestKey) => {
  const res = await post(ws, "/api/public/v2/dataset-groups", { name: `g-${crypto.randomUUID()}` });
  expect(res.status).toBe(201);
  return (await json(res)).dataset_group.id as number;
};

beforeAll(async () => {
  a = await createWorkspace();
  b = await createWorkspace();
  c = await createWorkspace();
  await placeOn(a, "LOGS_0");
  await placeOn(b, "LOGS_1");
  await placeOn(c, "DB");
});

describe("ids across databases", () => {
  it("moves a database into its range once, keeping the ids it gave before ranges existed", async () => {
    // Logged the way the code before ranges did, on a database the Worker has not opened yet.
    const legacy = await env.LOGS_0.prepare(
      `INSERT INTO request_logs (workspace_id, provider, model, input, output, parameters, tags, metadata, prompt_input_variables, request_start_time, request_end_time)
       VALUES (?, 'openai', 'gpt-4o', '{}', '{}', '{}', '["legacy"]', '{}', '{}', 1, 2) RETURNING id`,
    )
      .bind(a.workspaceId)
      .first<{ id: number }>();
    expect(idRangeOf(legacy!.id)).toBe(0);
    const fresh = await logOne(a);
    const base = (await idRangeFor(env.DB, "LOGS_0")) * ID_RANGE_SIZE;
    expect(fresh).toBe(base + 1);
    expect((await detail(a, legacy!.id)).tags).toEqual(["legacy"]);
    expect(await env.LOGS_0.prepare("SELECT base FROM log_id_range").all()).toMatchObject({ results: [{ base }] });
    // Opened again (a later isolate), nothing moves.
    expect(await ensureIdRange(env, "LOGS_0", env.LOGS_0)).toBe(base);
    expect(await logOne(a)).toBe(base + 2);
    // Another binding name over a database that records another range: refused, its ids would be read as another database's.
    await expect(ensureIdRange(env, "LOGS_7", env.LOGS_0)).rejects.toThrow(/another database bound under this name/);
  });

  it("each database numbers logs and groups in its own range: no id repeats, even logged at once", { timeout: 60_000 }, async () => {
    const logged = await Promise.all([a, b, c, a, b, c, a, b, c, a, b, c].map((ws) => logOne(ws)));
    const groups = await Promise.all([a, b, c, a, b, c].map(newGroup));
    expect(new Set(logged).size).toBe(logged.length);
    expect(new Set(groups).size).toBe(groups.length);
    const rangeOf = (ids: number[], i: number) => new Set(ids.filter((_, k) => k % 3 === i).map(idRangeOf));
    for (const ids of [logged, groups]) {
      const ranges = [0, 1, 2].map((i) => rangeOf(ids, i));
      // One range per database, none of them range 0 (the ids given before ranges existed).
      expect(ranges.map((r) => r.size)).toEqual([1, 1, 1]);
      const [ra, rb, rc] = ranges.map((r) => [...r][0]);
      expect(new Set([ra, rb, rc]).size).toBe(3);
      expect(Math.min(ra, rb, rc)).toBeGreaterThan(0);
      for (const id of ids) expect(Number.isSafeInteger(id)).toBe(true);
    }
    // Logs and groups of one database share its range, and so do the logs made from spans.
    expect(idRangeOf(logged[0])).toBe(idRangeOf(groups[0]));
    const traceId = crypto.randomUUID().replace(/-/g, "");
    const fromSpans = await Promise.all(
      [a, b, c].map(async (ws, k) => {
        const res = await post(ws, "/spans-bulk", { spans: [llmSpan(traceId, `${k + 1}`.padStart(16, "0"))] });
        expect(res.status).toBe(201);
        return (await json(res)).request_logs[0].id as number;
      }),
    );
    expect(fromSpans.map(idRangeOf)).toEqual([0, 1, 2].map((k) => idRangeOf(logged[k])));
    for (const id of fromSpans) expect(logged).not.toContain(id);
    // Every log reads back under its own workspace.
    for (const [k, id] of logged.entries()) expect((await detail([a, b, c][k % 3], id)).request_id).toBe(id);
  });

  it("a database's range is the shard map's, kept whatever order LOG_SHARDS lists the databases in", async () => {
    const before = await Promise.all(["LOGS_0", "LOGS_1", "DB"].map((s) => idRangeFor(env.DB, s)));
    const map = await env.DB.prepare("SELECT binding, id_range AS r FROM log_shards ORDER BY binding").all<{ binding: string; r: number }>();
    expect(Object.fromEntries(map.results.map((m) => [m.binding, m.r]))).toMatchObject({ LOGS_0: before[0], LOGS_1: before[1], DB: before[2] });
    const ws = await createWorkspace();
    const res = await post(ws, "/log-request", logBody());
    expect(res.status).toBe(201);
    // Placement read LOG_SHARDS reversed: nothing changes.
    const { placeWorkspace } = await import("../../src/logs/shards");
    const { getDb } = await import("../../src/db/client");
    const other = await createWorkspace();
    await placeWorkspace(getDb(env.DB), { ...env, LOG_SHARDS: "LOGS_1,LOGS_0" }, other.workspaceId);
    const after = await env.DB.prepare("SELECT binding, id_range AS r FROM log_shards ORDER BY binding").all<{ binding: string; r: number }>();
    expect(after.results).toEqual(map.results);
    expect(MAX_ID_RANGE * ID_RANGE_SIZE + ID_RANGE_SIZE - 1).toBe(Number.MAX_SAFE_INTEGER);
  });

});

describe("another workspace's ids, on another database, are 404s that change nothing", () => {
  let logA: number;
  let logB: number;
  let groupA: number;
  let groupB: number;
  const prompt = `p-${crypto.randomUUID()}`;

  beforeAll(async () => {
    logA = await logOne(a, { metadata: { owner: "a" }, score: 10 });
    logB = await logOne(b, { metadata: { owner: "b" }, score: 20 });
    groupA = await newGroup(a);
    groupB = await newGroup(b);
    await publishPrompt(a, prompt);
    await publishPrompt(b, prompt);
  });

  /** Both logs as their owners read them, to compare before and after. */
  const snapshot = async () => [await detail(a, logA), await detail(b, logB)];

  it("GET by id, every tracking route and its twins, track.group either way, track-request with a foreign group", async () => {
    const before = await snapshot();
    const byId = await call(`/api/public/v2/requests/${logB}`, { key: a.key });
    expect(byId.status).toBe(404);
    const foreignLog: [string, Record<string, unknown>, "rest" | "sdk"][] = [
      ["/rest/track-score", { request_id: logB, score: 99 }, "rest"],
      ["/library-track-score", { request_id: logB, score: 99 }, "sdk"],
      ["/rest/track-metadata", { request_id: logB, metadata: { owner: "a!" } }, "rest"],
      ["/library-track-metadata", { request_id: logB, metadata: { owner: "a!" } }, "sdk"],
      ["/rest/track-prompt", { request_id: logB, prompt_name: prompt }, "rest"],
      ["/library-track-prompt", { request_id: logB, prompt_name: prompt }, "sdk"],
      // Another workspace's log with one's own group, and one's own log with another workspace's group.
      ["/rest/track-group", { request_id: logB, group_id: groupA }, "rest"],
      ["/track-group", { request_id: logB, group_id: groupA }, "sdk"],
      ["/rest/track-group", { request_id: logA, group_id: groupB }, "rest"],
      ["/track-group", { request_id: logA, group_id: groupB }, "sdk"],
    ];
    for (const [path, body, how] of foreignLog) {
      const res = how === "rest" ? await post(a, path, body) : await sdkPost(a, path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(404);
    }
    const tracked = await sdkPost(a, "/track-request", {
      function_name: "openai.chat.completions.create",
      provider_type: "openai",
      kwargs: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
      request_response: { id: "x", object: "chat.completion", model: "gpt-4o", choices: [{ index: 0, message: { role: "assistant", content: "yo" }, finish_reason: "stop" }] },
      group_id: groupB,
    });
    expect(tracked.status).toBe(404);
    expect(await snapshot()).toEqual(before);
    // a still has exactly its own logs.
    const search = await json(await post(a, "/api/public/v2/requests/search", { per_page: 100 }));
    expect(search.items.some((i: { id: number }) => idRangeOf(i.id) === idRangeOf(logB))).toBe(false);
    expect(search.items.map((i: { id: number }) => i.id)).not.toContain(logB);
  });

  it("datasets: add-request-log is a 404, explicit ids in a fill or its preview are skipped", { timeout: 60_000 }, async () => {
    const group = await datasetGroup(a);
    expect((await post(a, "/api/public/v2/dataset-versions/add-request-log", { dataset_group_id: group, request_log_id: logB })).status).toBe(404);
    const preview = await json(
      await post(a, "/api/public/v2/dataset-versions/from-filter-params/preview", { dataset_group_id: group, request_log_ids: [logB, logA], variables_to_parse: ["request_log_id"] }),
    );
    expect(preview).toMatchObject({ total_matching: 1, rows_to_add: 1 });
    expect(preview.rows.map((r: { value: unknown }[]) => r[0].value)).toEqual([logA]);
  });

  it("a sheet import of explicit ids takes only the workspace's own", { timeout: 60_000 }, async () => {
    const sheet = await newSheet(a);
    const res = await post(a, `${sheet.base}/imports/request-logs`, { request_log_ids: [logB, logA] });
    expect(res.status).toBe(202);
    expect(await pollOperation(a, sheet.tableId, (await json(res)).operation_id)).toMatchObject({ status: "completed", rows_added: 1 });
  });
});
