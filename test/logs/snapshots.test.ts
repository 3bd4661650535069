// Snapshots miss nothing: a dataset version made from a filter, an evaluation run on it and an export
// through a filter (POST /requests/export) hold every log written before they were asked for, however recently. The logs here are written with
// an index queue that delivers nothing and no sweep runs, so the indexer has not seen them when the
// snapshot is asked for: the snapshot's job indexes what is waiting before it selects
// (src/logs/indexing.ts, indexBeforeSnapshot).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { call, createWorkspace, json, scopedKey, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { buildDeps } from "../../src/deps";
import { parseFilterGroup } from "../../src/filters";
import { exportFilter, exportMatchingLogs } from "../../src/logs";
import { exportedMatching, getLog } from "../helpers/log-reads";

const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;

/** An index queue that takes the write's announcements and delivers none of them. */
const silentQueue = { send: async () => {}, sendBatch: async () => {} } as unknown as Queue;

/** Logs `n` requests tagged `tag` through the Worker's handler, announcing them to nothing; their ids in order. */
async function logFive(ws: TestKey, tag: string, n = 5): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const ctx = createExecutionContext();
    const body = logBody({ tags: [tag], metadata: { batch: tag }, prompt_input_variables: { question: `question ${i}` } });
    const req = new Request("http://api.test/log-request", { method: "POST", headers: { "X-API-KEY": ws.key, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const res = await worker.fetch(req, { ...env, INDEX: silentQueue }, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(201);
    ids.push((await json(res)).id);
  }
  return ids;
}

const byTag = (tag: string) => ({ logic: "AND", filters: [{ field: "tags", operator: "contains", value: tag }, { field: "metadata", operator: "key_equals", nested_key: "batch", value: tag }] });

async function searchIds(ws: TestKey, tag: string): Promise<number[]> {
  const res = await call("/api/public/v2/requests/search", { method: "POST", key: ws.key, json: { filter_group: byTag(tag), per_page: 100 } });
  expect(res.status).toBe(200);
  return (await json(res)).items.map((i: { id: number }) => i.id);
}

async function until<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 800; i++) {
    const got = await read();
    if (got !== undefined) return got;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} did not finish`);
}

describe("snapshots of logs just written", { timeout: 60_000 }, () => {
  it("a dataset from a filter holds all five logs, and an evaluation run on it evaluates all five", async () => {
    const ws = await createWorkspace();
    const tag = uniq("snap");
    const ids = await logFive(ws, tag);
    // No index message was delivered and no sweep ran: search does not find them yet.
    expect(await searchIds(ws, tag)).toEqual([]);

    const group = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("set") } }));
    const filled = await call("/api/public/v2/dataset-versions/from-filter-params", {
      method: "POST",
      key: ws.key,
      json: { dataset_group_id: group.dataset_group.id, filter_group: byTag(tag), variables_to_parse: ["request_log_id", "question"] },
    });
    expect(filled.status, await filled.clone().text()).toBe(201);
    const draft = await until(async () => {
      const res = await call(`/api/public/v2/datasets?dataset_group_id=${group.dataset_group.id}&status=all`, { key: ws.key });
      const d = ((await json(res)).datasets as { version_number: number; job_status: string; id: number }[]).find((x) => x.version_number === -1);
      return d?.job_status === "COMPLETED" ? d : undefined;
    }, "the fill");
    const rows = await json(await call(`/api/public/v2/datasets/${draft.id}/rows?per_page=100`, { key: ws.key }));
    expect(rows.columns).toEqual(["request_log_id", "question"]);
    expect(rows.rows.map((r: { value: number }[]) => r[0].value).sort((a: number, b: number) => a - b)).toEqual(ids);
    // The snapshot indexed them on its way: search finds them now too.
    expect((await searchIds(ws, tag)).sort((a, b) => a - b)).toEqual(ids);

    // An evaluation run on the dataset the filter made: one result row per log.
    const saved = await call("/api/public/v2/dataset-versions/save-draft", { method: "POST", key: ws.key, json: { dataset_group_id: group.dataset_group.id } });
    expect(saved.status, await saved.clone().text()).toBe(202);
    const pipeline = await call("/reports", {
      method: "POST",
      key: ws.key,
      json: { dataset_group_id: group.dataset_group.id, name: uniq("eval"), columns: [{ column_type: "COUNT", name: "question words", configuration: { source: "question", type: "words" } }] },
    });
    expect(pipeline.status, await pipeline.clone().text()).toBe(201);
    const run = await call(`/reports/${(await json(pipeline)).report_id}/run`, { method: "POST", key: ws.key, json: { name: uniq("run") } });
    expect(run.status, await run.clone().text()).toBe(201);
    const runId = (await json(run)).report_id;
    const done = await until(async () => {
      const body = await json(await call(`/reports/${runId}`, { key: ws.key }));
      return body.status === "COMPLETED" ? body : undefined;
    }, "the run");
    expect(done.stats.status_counts).toMatchObject({ COMPLETED: 5 });
    const evaluated = await json(await call(`/api/public/v2/evaluations/${runId}/rows?per_page=100`, { key: ws.key }));
    expect(evaluated.rows).toHaveLength(5);
  });

  it("an export through a filter, asked for right after five logs, holds all five: only the workspace's logs the filter matches, each as GET by id answers it", async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const tag = uniq("export");
    const ids = await logFive(ws, tag);
    // A log of the workspace the filter does not match, and another workspace's log it would match.
    const [unmatched] = await logFive(ws, uniq("other"), 1);
    const [theirs] = await logFive(other, tag, 1);
    // No index message was delivered and no sweep ran: search does not find them yet.
    expect(await searchIds(ws, tag)).toEqual([]);
    expect(await searchIds(other, tag)).toEqual([]);

    const lines = await exportedMatching(ws, { filter_group: byTag(tag) });
    // In id order, each once, and nothing else.
    expect(lines.map((l) => l.request_id)).toEqual(ids);
    for (const l of lines) expect(l).toEqual((await getLog(ws, l.request_id)).body);
    // The snapshot indexed them on its way: search finds them now too.
    expect((await searchIds(ws, tag)).sort((a, b) => a - b)).toEqual(ids);
    // The other workspace's export through the same filter holds its own log only; without a filter, each holds all its own.
    expect((await exportedMatching(other, { filter_group: byTag(tag) })).map((l) => l.request_id)).toEqual([theirs]);
    expect((await exportedMatching(ws, {})).map((l) => l.request_id)).toEqual([...ids, unmatched]);
    expect((await exportedMatching(other, { filter_group: null })).map((l) => l.request_id)).toEqual([theirs]);
  });

  it("an export's range [from, to) and filter combine; a log written after it was asked for is not in it", async () => {
    const ws = await createWorkspace();
    const tag = uniq("range");
    const ids = await logFive(ws, tag);
    const starts = await Promise.all(ids.map(async (id) => Date.parse((await getLog(ws, id)).body.request_start_time)));
    const filter_group = byTag(tag);
    const within = (from?: number | string, to?: number) => exportedMatching(ws, { filter_group, from, to }).then((lines) => lines.map((l) => l.request_id));
    expect(await within(starts[0], Math.max(...starts) + 1)).toEqual(ids);
    expect(await within(Math.max(...starts) + 1)).toEqual([]);
    expect(await within(undefined, Math.min(...starts))).toEqual([]);
    // ISO 8601 bounds, as the GET takes them.
    expect(await within(new Date(Math.min(...starts)).toISOString())).toEqual(ids);

    // A page of one log a time, the sixth log written between the first and the second page: the mark keeps it out.
    const logs = await buildDeps(env).logs(ws.workspaceId);
    const parsed = parseFilterGroup(filter_group);
    if (!parsed.ok) throw new Error("the test's filter must parse");
    const filter = await exportFilter(logs, ws.workspaceId, { filter_group: parsed.group });
    const lines = await exportMatchingLogs(logs, env.BLOBS, ws.workspaceId, filter, { pageSize: 1 });
    const first = await lines.next();
    const [late] = await logFive(ws, tag, 1);
    const rest: string[] = [];
    for await (const line of lines) rest.push(line);
    expect([first.value as string, ...rest].map((l) => JSON.parse(l).request_id)).toEqual(ids);
    expect((await exportedMatching(ws, { filter_group })).map((l) => l.request_id)).toEqual([...ids, late]);
  });
});

describe("POST /api/public/v2/requests/export refuses what it cannot do", () => {
  it("a bad filter group or range is a 400 naming the field, before anything is streamed; no key is a 401, a key without logs:read a 403", async () => {
    const ws = await createWorkspace();
    const post = (json: unknown, key = ws.key) => call("/api/public/v2/requests/export", { method: "POST", key, json });
    for (const [body, field] of [
      [{ filter_group: { logic: "AND", filters: [{ field: "no_such_field", operator: "is", value: 1 }] } }, "filter_group"],
      [{ filter_group: { logic: "AND", filters: [{ field: "engine", operator: "gt", value: 1 }] } }, "filter_group"],
      [{ filter_group: "tags contain x" }, "filter_group"],
      [{ from: 2000, to: 1000 }, "to"],
      [{ from: "yesterday" }, "from"],
    ] as [unknown, string][]) {
      const res = await post(body);
      const got = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(got).toMatchObject({ success: false, error: "validation_error" });
      expect(got.message).toMatch(new RegExp(`^${field}`));
    }
    expect((await call("/api/public/v2/requests/export", { method: "POST", json: {} })).status).toBe(401);
    const noRead = await post({}, await scopedKey(ws, ["prompts:read"]));
    expect(noRead.status).toBe(403);
    expect((await json(noRead)).message).toMatch(/logs:read/);
  });
});
