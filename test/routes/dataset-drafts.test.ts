// Datasets beyond from-filter-params: create-draft (empty and copied), add-request-log, the preview,
// the list's prompt filters, and fills given up by the dead-letter queue.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { getDb } from "../../src/db/client";
import { runDatasetFill } from "../../src/services/datasets/fill";
import { createDraft } from "../../src/services/datasets/drafts";
import { call, createWorkspace, json, logsOf, shareLogsDb, type TestKey } from "../helpers/api";
import { logBody, text } from "../helpers/fixtures";
import { seedLogs } from "../helpers/logs";

const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;
const auth = (ws: TestKey) => ({ workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 });

async function createGroup(ws: TestKey, extra: Record<string, unknown> = {}) {
  const res = await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("set"), ...extra } });
  expect(res.status, await res.clone().text()).toBe(201);
  return json(res);
}
const post = (ws: TestKey, path: string, body: unknown) => call(`/api/public/v2/dataset-versions/${path}`, { method: "POST", key: ws.key, json: body });

async function datasetsOf(ws: TestKey, groupId: number) {
  const res = await call(`/api/public/v2/datasets?dataset_group_id=${groupId}&status=all&sort_by=id&sort_order=asc`, { key: ws.key });
  expect(res.status).toBe(200);
  return (await json(res)).datasets as any[];
}

async function waitForDraft(ws: TestKey, groupId: number) {
  for (let i = 0; i < 200; i++) {
    const draft = (await datasetsOf(ws, groupId)).find((d) => d.version_number === -1);
    if (draft && draft.job_status === "COMPLETED") return draft;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the job did not finish");
}

async function rowsOf(ws: TestKey, datasetId: number) {
  const res = await call(`/api/public/v2/datasets/${datasetId}/rows?per_page=100`, { key: ws.key });
  expect(res.status).toBe(200);
  return json(res);
}

/** A group with a saved version 1 holding the given logs (variables_to_parse as given). */
async function savedVersion(ws: TestKey, ids: number[], variables?: string[]) {
  const g = await createGroup(ws);
  await post(ws, "from-filter-params", { dataset_group_id: g.dataset_group.id, request_log_ids: ids, ...(variables ? { variables_to_parse: variables } : {}) });
  await waitForDraft(ws, g.dataset_group.id);
  const saved = await post(ws, "save-draft", { dataset_group_id: g.dataset_group.id });
  expect(saved.status).toBe(202);
  return { groupId: g.dataset_group.id as number, datasetId: (await json(saved)).draft_dataset_id as number };
}

describe("POST /api/public/v2/dataset-versions/create-draft", { timeout: 30_000 }, () => {
  it("creates an empty draft (201) once a group has none; a second one is a 409", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const { groupId, datasetId } = await savedVersion(ws, [ids[0]]);
    const res = await post(ws, "create-draft", { dataset_group_id: groupId });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toEqual({ success: true, message: "Draft dataset version created", draft_dataset_id: expect.any(Number) });
    expect(body.draft_dataset_id).not.toBe(datasetId);
    const draft = (await datasetsOf(ws, groupId)).find((d) => d.version_number === -1);
    expect(draft).toMatchObject({ id: body.draft_dataset_id, column_names: [], job_status: null });
    const again = await post(ws, "create-draft", { dataset_group_id: groupId });
    expect(again.status).toBe(409);
    expect((await datasetsOf(ws, groupId)).filter((d) => d.version_number === -1)).toHaveLength(1);
    // A fresh group already has its draft.
    const g = await createGroup(ws);
    expect((await post(ws, "create-draft", { dataset_group_id: g.dataset_group.id })).status).toBe(409);
  });

  it("copies a saved version's rows and columns on the queue (202)", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const { groupId, datasetId } = await savedVersion(ws, [ids[2], ids[0], ids[1]], ["request_log_id", "topic"]);
    const res = await post(ws, "create-draft", { dataset_group_id: groupId, source_dataset_id: datasetId });
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(body.message).toMatch(/copied/);
    const draft = await waitForDraft(ws, groupId);
    expect(draft.id).toBe(body.draft_dataset_id);
    expect(draft.column_names).toEqual(["request_log_id", "topic"]);
    const copied = await rowsOf(ws, draft.id);
    const original = await rowsOf(ws, datasetId);
    expect(copied.rows).toEqual(original.rows);
    expect(copied.rows.map((r: any[]) => r[0].value)).toEqual([ids[2], ids[0], ids[1]]);
  });

  it("a copy (or fill) the queue refuses is FAILED, so the draft is not busy for good: it can be saved or filled again", async () => {
    const { createApp } = await import("../../src/app");
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const { groupId, datasetId } = await savedVersion(ws, [ids[0]]);
    const refusing = { ...env, JOBS: { send: async () => Promise.reject(new Error("queue unavailable")) } as unknown as Queue };
    const viaRefusingQueue = (path: string, body: unknown) =>
      createApp().fetch(
        new Request(`http://api.test/api/public/v2/dataset-versions/${path}`, { method: "POST", headers: { "X-API-KEY": ws.key, "Content-Type": "application/json" }, body: JSON.stringify(body) }),
        refusing,
        createExecutionContext(),
      );
    expect((await viaRefusingQueue("create-draft", { dataset_group_id: groupId, source_dataset_id: datasetId })).status).toBe(500);
    let draft = (await datasetsOf(ws, groupId)).find((d) => d.version_number === -1);
    expect(draft.job_status).toBe("FAILED");
    expect((await post(ws, "add-request-log", { dataset_group_id: groupId, request_log_id: ids[1] })).status).toBe(201);
    expect((await viaRefusingQueue("from-filter-params", { dataset_group_id: groupId, request_log_ids: [ids[2]] })).status).toBe(500);
    draft = (await datasetsOf(ws, groupId)).find((d) => d.version_number === -1);
    expect(draft.job_status).toBe("FAILED");
    expect((await post(ws, "save-draft", { dataset_group_id: groupId })).status).toBe(202);
  });

  it("the copy job is redelivery-safe: a rerun after a partial copy adds no duplicates", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const { groupId, datasetId } = await savedVersion(ws, ids, ["request_log_id"]);
    const draft = await createDraft(getDb(env.DB), auth(ws), { dataset_group_id: groupId, source_dataset_id: datasetId });
    expect(draft.queued).toBe(true);
    // A crash after copying the first row.
    await env.DB.prepare(`INSERT INTO dataset_rows (workspace_id, dataset_id, job_id, position, request_log_id, "values") SELECT workspace_id, ?, ?, 0, request_log_id, "values" FROM dataset_rows WHERE dataset_id = ? AND position = 0`)
      .bind(draft.draftDatasetId, draft.jobId, datasetId)
      .run();
    expect(await runDatasetFill(getDb(env.DB), logsOf, ws.workspaceId, draft.jobId!)).toEqual({ state: "copied", datasetId: draft.draftDatasetId, rowsAdded: 4 });
    expect(await runDatasetFill(getDb(env.DB), logsOf, ws.workspaceId, draft.jobId!)).toEqual({ state: "skipped" });
    const rows = await rowsOf(ws, draft.draftDatasetId);
    expect(rows.rows.map((r: any[]) => r[0].value)).toEqual(ids);
  });

  it("refuses a source of another group (400), an unknown or foreign source or group (404), bad ids (400)", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const idsA = await seedLogs(a.key);
    const idsB = await seedLogs(b.key);
    const one = await savedVersion(a, [idsA[0]]);
    const two = await savedVersion(a, [idsA[1]]);
    const theirs = await savedVersion(b, [idsB[0]]);
    const cross = await post(a, "create-draft", { dataset_group_id: one.groupId, source_dataset_id: two.datasetId });
    expect(cross.status).toBe(400);
    expect((await json(cross)).message).toMatch(/^source_dataset_id: /);
    expect((await post(a, "create-draft", { dataset_group_id: one.groupId, source_dataset_id: theirs.datasetId })).status).toBe(404);
    expect((await post(a, "create-draft", { dataset_group_id: one.groupId, source_dataset_id: 999_999_999 })).status).toBe(404);
    expect((await post(a, "create-draft", { dataset_group_id: theirs.groupId })).status).toBe(404);
    for (const body of [{}, { dataset_group_id: 0 }, { dataset_group_id: one.groupId, source_dataset_id: -1 }]) {
      expect((await post(a, "create-draft", body)).status).toBe(400);
    }
    // Nothing was created by the refusals.
    expect((await datasetsOf(a, one.groupId)).map((d) => d.version_number)).toEqual([1]);
    expect((await datasetsOf(b, theirs.groupId)).map((d) => d.version_number)).toEqual([1]);
  });
});

describe("POST /api/public/v2/dataset-versions/add-request-log", { timeout: 30_000 }, () => {
  it("appends a log to the draft with the default columns; the same log again changes nothing", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    const res = await post(ws, "add-request-log", { dataset_group_id: g.dataset_group.id, request_log_id: ids[1] });
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({ success: true, message: "Request log added to draft dataset", draft_dataset_id: g.dataset.id });
    await post(ws, "add-request-log", { dataset_group_id: g.dataset_group.id, request_log_id: ids[0] });
    const again = await post(ws, "add-request-log", { dataset_group_id: g.dataset_group.id, request_log_id: ids[1] });
    expect(again.status).toBe(201);
    expect((await json(again)).message).toMatch(/already/);
    const rows = await rowsOf(ws, g.dataset.id);
    expect(rows.columns).toEqual(["n", "topic", "input", "output"]);
    expect(rows.rows.map((r: any[]) => r.slice(0, 2).map((c) => c.value))).toEqual([
      [null, "dogs"],
      [3, "cats"],
    ]);
    expect(rows.total).toBe(2);
  });

  it("follows the variables_to_parse of the draft's fill, and appends after its rows", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const g = await createGroup(ws);
    await post(ws, "from-filter-params", { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[0]], variables_to_parse: ["request_log_id", "model"] });
    await waitForDraft(ws, g.dataset_group.id);
    await post(ws, "add-request-log", { dataset_group_id: g.dataset_group.id, request_log_id: ids[3] });
    const rows = await rowsOf(ws, g.dataset.id);
    expect(rows.columns).toEqual(["request_log_id", "model"]);
    expect(rows.rows.map((r: any[]) => r.map((c) => c.value))).toEqual([
      [ids[0], "gpt-4o"],
      [ids[3], "gpt-4o"],
    ]);
  });

  it("on a draft copied from a version (create-draft), follows that version's columns, not the default ones", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const { groupId, datasetId } = await savedVersion(ws, [ids[0]], ["model", "request_log_id"]);
    expect((await post(ws, "create-draft", { dataset_group_id: groupId, source_dataset_id: datasetId })).status).toBe(202);
    const draft = await waitForDraft(ws, groupId);
    const added = await post(ws, "add-request-log", { dataset_group_id: groupId, request_log_id: ids[3] });
    expect(added.status).toBe(201);
    const rows = await rowsOf(ws, draft.id);
    expect(rows.columns).toEqual(["model", "request_log_id"]);
    expect(rows.rows.map((r: any[]) => r.map((c) => c.value))).toEqual([
      ["gpt-4o", ids[0]],
      ["gpt-4o", ids[3]],
    ]);
    const { results } = await env.DB.prepare(`SELECT "values" AS v FROM dataset_rows WHERE dataset_id = ? ORDER BY position`).bind(draft.id).all<{ v: string }>();
    expect(results.map((r) => Object.keys(JSON.parse(r.v)).sort())).toEqual([
      ["model", "request_log_id"],
      ["model", "request_log_id"],
    ]);
  });

  it("on a draft copied from a version with the default columns, the columns still grow by new variables (also past 100 of them)", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const { groupId, datasetId } = await savedVersion(ws, [ids[1]]);
    expect((await post(ws, "create-draft", { dataset_group_id: groupId, source_dataset_id: datasetId })).status).toBe(202);
    const draft = await waitForDraft(ws, groupId);
    expect(draft.column_names).toEqual(["topic", "input", "output"]);
    expect((await post(ws, "add-request-log", { dataset_group_id: groupId, request_log_id: ids[0] })).status).toBe(201);
    expect((await rowsOf(ws, draft.id)).columns).toEqual(["n", "topic", "input", "output"]);
    // A source whose default columns are more variables than one statement can name.
    const vars = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`v${String(i).padStart(3, "0")}`, i]));
    const wide = await json(await call("/log-request", { method: "POST", key: ws.key, json: logBody({ prompt_input_variables: vars }) }));
    const big = await savedVersion(ws, [wide.id]);
    expect((await post(ws, "create-draft", { dataset_group_id: big.groupId, source_dataset_id: big.datasetId })).status).toBe(202);
    const bigDraft = await waitForDraft(ws, big.groupId);
    const res = await post(ws, "add-request-log", { dataset_group_id: big.groupId, request_log_id: ids[0] });
    expect(res.status, await res.clone().text()).toBe(201);
    expect((await datasetsOf(ws, big.groupId)).find((d) => d.id === bigDraft.id).column_names).toHaveLength(124);
  });

  it("concurrent appends of logs with different variables lose none of the columns", async () => {
    const ws = await createWorkspace();
    const g = await createGroup(ws);
    const logIds: number[] = [];
    for (let i = 0; i < 12; i++) {
      logIds.push((await json(await call("/log-request", { method: "POST", key: ws.key, json: logBody({ prompt_input_variables: { [`var${String(i).padStart(2, "0")}`]: i } }) }))).id);
    }
    const answers = await Promise.all(logIds.map((id) => post(ws, "add-request-log", { dataset_group_id: g.dataset_group.id, request_log_id: id })));
    expect(answers.map((r) => r.status)).toEqual(logIds.map(() => 201));
    const rows = await rowsOf(ws, g.dataset.id);
    expect(rows.total).toBe(12);
    expect(rows.columns).toEqual([...logIds.map((_, i) => `var${String(i).padStart(2, "0")}`), "input", "output"]);
  });

  it("creates the draft when the group has none", async () => {
    const ws = await createWorkspace();
    const ids = await seedLogs(ws.key);
    const { groupId, datasetId } = await savedVersion(ws, [ids[0]]);
    const body = await json(await post(ws, "add-request-log", { dataset_group_id: groupId, request_log_id: ids[2] }));
    expect(body.draft_dataset_id).not.toBe(datasetId);
    expect((await rowsOf(ws, body.draft_dataset_id)).total).toBe(1);
    expect((await rowsOf(ws, datasetId)).total).toBe(1);
  });

  it("is a 409 while the draft's fill is queued; 404 for another workspace's log or group", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    // One log database: the other workspace's log ids are then not this one's, and only the workspace condition keeps them out.
    await shareLogsDb(b, a);
    const idsA = await seedLogs(a.key);
    const idsB = await seedLogs(b.key);
    const g = await createGroup(a);
    const gB = await createGroup(b);
    expect((await post(a, "add-request-log", { dataset_group_id: g.dataset_group.id, request_log_id: idsB[0] })).status).toBe(404);
    expect((await post(a, "add-request-log", { dataset_group_id: gB.dataset_group.id, request_log_id: idsA[0] })).status).toBe(404);
    expect((await post(a, "add-request-log", { dataset_group_id: g.dataset_group.id, request_log_id: 0 })).status).toBe(400);
    expect((await post(a, "add-request-log", { dataset_group_id: g.dataset_group.id })).status).toBe(400);
    await env.DB.prepare("INSERT INTO dataset_jobs (workspace_id, dataset_id, params) VALUES (?, ?, '{}')").bind(a.workspaceId, g.dataset.id).run();
    await env.DB.prepare("UPDATE datasets SET current_job_id = (SELECT max(id) FROM dataset_jobs WHERE dataset_id = ?) WHERE id = ?").bind(g.dataset.id, g.dataset.id).run();
    expect((await post(a, "add-request-log", { dataset_group_id: g.dataset_group.id, request_log_id: idsA[0] })).status).toBe(409);
    expect((await rowsOf(a, g.dataset.id)).total).toBe(0);
    expect((await rowsOf(b, gB.dataset.id)).total).toBe(0);
  });
});

describe("POST /api/public/v2/dataset-versions/from-filter-params/preview", { timeout: 30_000 }, () => {
  const gpt4o = { logic: "AND", filters: [{ field: "engine", operator: "is", value: "gpt-4o" }] };

  it("counts the matches and shows the first rows, writing nothing", async () => {
    const ws = await createWorkspace();
    await seedLogs(ws.key);
    const g = await createGroup(ws);
    const res = await post(ws, "from-filter-params/preview", { dataset_group_id: g.dataset_group.id, filter_group: gpt4o, sort_order: "asc", preview_rows: 1, variables_to_parse: ["topic", "model"] });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      success: true,
      message: expect.any(String),
      dataset_group_id: g.dataset_group.id,
      total_matching: 2,
      rows_to_add: 2,
      columns: ["topic", "model"],
      rows: [[{ type: "dataset", value: "cats" }, { type: "dataset", value: "gpt-4o" }]],
    });
    const [draft] = await datasetsOf(ws, g.dataset_group.id);
    expect(draft).toMatchObject({ job_status: null, filter_params: null });
    expect((await rowsOf(ws, draft.id)).total).toBe(0);
  });

  it("applies limit to rows_to_add, default columns, and explicit ids in order (other workspaces' skipped)", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    // One log database: the other workspace's log ids are then not this one's, and only the workspace condition keeps them out.
    await shareLogsDb(b, a);
    const ids = await seedLogs(a.key);
    const idsB = await seedLogs(b.key);
    const g = await createGroup(a);
    const all = await json(await post(a, "from-filter-params/preview", { dataset_group_id: g.dataset_group.id, limit: 3 }));
    // Newest first, the three shown lack "n": default columns come from the rows shown.
    expect(all).toMatchObject({ total_matching: 4, rows_to_add: 3, columns: ["topic", "input", "output"] });
    expect(all.rows).toHaveLength(3);
    const explicit = await json(
      await post(a, "from-filter-params/preview", { dataset_group_id: g.dataset_group.id, request_log_ids: [ids[3], idsB[0], ids[1]], filter_group: gpt4o, variables_to_parse: ["request_log_id"] }),
    );
    expect(explicit).toMatchObject({ total_matching: 2, rows_to_add: 2 });
    expect(explicit.rows.map((r: any[]) => r[0].value)).toEqual([ids[3], ids[1]]);
  });

  it("validates like from-filter-params; preview_rows is 1 to 100; another workspace's group is a 404", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const g = await createGroup(a);
    const gB = await createGroup(b);
    const id = g.dataset_group.id;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /^dataset_group_id: /],
      [{ dataset_group_id: id, limit: 0 }, /^limit: /],
      [{ dataset_group_id: id, preview_rows: 0 }, /^preview_rows: /],
      [{ dataset_group_id: id, preview_rows: 101 }, /^preview_rows: /],
      [{ dataset_group_id: id, filter_group: { filters: [{ field: "nope", operator: "is", value: 1 }] } }, /^filter_group/],
      [{ dataset_group_id: id, request_log_ids: Array.from({ length: 50_001 }, (_, i) => i + 1) }, /^request_log_ids: /],
    ];
    for (const [body, message] of cases) {
      const res = await post(a, "from-filter-params/preview", body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    expect((await post(a, "from-filter-params/preview", { dataset_group_id: id, preview_rows: 100 })).status).toBe(200);
    const max = await post(a, "from-filter-params/preview", { dataset_group_id: id, request_log_ids: Array.from({ length: 50_000 }, (_, i) => i + 1) });
    expect(max.status).toBe(200);
    expect((await post(a, "from-filter-params/preview", { dataset_group_id: gB.dataset_group.id })).status).toBe(404);
  });
});

describe("GET /api/public/v2/datasets: prompt filters", { timeout: 30_000 }, () => {
  const chat = { type: "chat", messages: [{ role: "user", content: text("Hi {name}") }] };

  it("keeps datasets holding a log of the prompt, version or label; foreign or unknown ids match nothing", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const name = uniq("tpl");
    const v1 = await json(await call("/rest/prompt-templates", { method: "POST", key: a.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat }, release_labels: ["prod"] } }));
    const v2 = await json(await call("/rest/prompt-templates", { method: "POST", key: a.key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: chat } } }));
    const labels = await json(await call(`/prompt-templates/${name}/labels`, { key: a.key }));
    const labelId = labels.release_labels[0].release_label_id;
    const log = async (version: number) =>
      (await json(await call("/log-request", { method: "POST", key: a.key, json: logBody({ prompt_id: v1.id, prompt_version_number: version }) }))).id as number;
    const l1 = await log(1);
    const l2 = await log(2);
    const plain = (await seedLogs(a.key))[2];
    const g1 = await savedVersion(a, [l1, plain]);
    const g2 = await savedVersion(a, [l2]);
    await savedVersion(a, [plain]);
    const ids = async (q: string, key = a.key) => {
      const res = await call(`/api/public/v2/datasets?${q}`, { key });
      expect(res.status).toBe(200);
      return (await json(res)).datasets.map((d: any) => d.id).sort();
    };
    expect(await ids(`prompt_id=${v1.id}`)).toEqual([g1.datasetId, g2.datasetId].sort());
    expect(await ids(`prompt_version_id=${v1.prompt_version_id}`)).toEqual([g1.datasetId]);
    expect(await ids(`prompt_version_id=${v2.prompt_version_id}`)).toEqual([g2.datasetId]);
    expect(await ids(`prompt_label_id=${labelId}`)).toEqual([g1.datasetId]);
    expect(await ids(`prompt_label_id=${labelId}&prompt_version_id=${v2.prompt_version_id}`)).toEqual([]);
    expect(await ids("prompt_version_id=999999999")).toEqual([]);
    expect(await ids("prompt_label_id=999999999")).toEqual([]);
    expect(await ids(`prompt_id=${v1.id}`, b.key)).toEqual([]);
    expect(await ids(`prompt_label_id=${labelId}`, b.key)).toEqual([]);
    expect((await call("/api/public/v2/datasets?prompt_id=0", { key: a.key })).status).toBe(400);
    expect((await call(`/api/public/v2/datasets?workspace_id=${b.workspaceId}`, { key: a.key })).status).toBe(404);
    expect((await call(`/api/public/v2/datasets?workspace_id=${a.workspaceId}`, { key: a.key })).status).toBe(200);
  });
});

describe("fills given up by the dead-letter queue", { timeout: 30_000 }, () => {
  const msg = (id: string, body: unknown) => ({ id, timestamp: new Date(), attempts: 1, body });

  it("marks the fill FAILED (not forever RUNNING); a finished fill stays as it is", async () => {
    const ws = await createWorkspace();
    const g = await createGroup(ws);
    await env.DB.prepare("INSERT INTO dataset_jobs (workspace_id, dataset_id, params, status) VALUES (?, ?, '{}', 'RUNNING')").bind(ws.workspaceId, g.dataset.id).run();
    const { id: jobId } = (await env.DB.prepare("SELECT max(id) AS id FROM dataset_jobs WHERE dataset_id = ?").bind(g.dataset.id).first<{ id: number }>())!;
    await env.DB.prepare("UPDATE datasets SET current_job_id = ? WHERE id = ?").bind(jobId, g.dataset.id).run();
    await env.DB.prepare("INSERT INTO dataset_jobs (workspace_id, dataset_id, params, status) VALUES (?, ?, '{}', 'COMPLETED')").bind(ws.workspaceId, g.dataset.id).run();
    const done = jobId + 1;
    const batch = createMessageBatch("promptedge-jobs-dlq", [
      msg("d1", { v: 1, kind: "dataset_fill", workspace_id: ws.workspaceId, job_id: jobId }),
      msg("d2", { v: 1, kind: "dataset_fill", workspace_id: ws.workspaceId, job_id: done }),
      msg("d3", { kind: "garbage" }),
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["d1", "d2", "d3"]);
    const statuses = await env.DB.prepare("SELECT id, status FROM dataset_jobs WHERE dataset_id = ? ORDER BY id").bind(g.dataset.id).all();
    expect(statuses.results).toEqual([
      { id: jobId, status: "FAILED" },
      { id: done, status: "COMPLETED" },
    ]);
    const [draft] = await datasetsOf(ws, g.dataset_group.id);
    expect(draft.job_status).toBe("FAILED");
    // A failed fill no longer blocks the draft.
    expect((await post(ws, "save-draft", { dataset_group_id: g.dataset_group.id })).status).toBe(202);
  });

  it("fails a workflow run's unfinished nodes", async () => {
    const ws = await createWorkspace();
    const wf = await json(
      await call("/rest/workflows", { method: "POST", key: ws.key, json: { name: uniq("wf"), nodes: [{ name: "out", node_type: "VARIABLE", is_output_node: true, configuration: { value: { type: "string", value: "x" } }, dependencies: [] }] } }),
    );
    await env.DB.prepare("INSERT INTO workflow_executions (workspace_id, workflow_id, workflow_version_id, input_variables, status) VALUES (?, ?, ?, '{}', 'RUNNING')")
      .bind(ws.workspaceId, wf.workflow_id, wf.workflow_version_id)
      .run();
    const { id } = (await env.DB.prepare("SELECT max(id) AS id FROM workflow_executions WHERE workspace_id = ?").bind(ws.workspaceId).first<{ id: number }>())!;
    await env.DB.prepare("INSERT INTO workflow_execution_nodes (execution_id, node_name, is_output_node) VALUES (?, 'out', 1)").bind(id).run();
    const batch = createMessageBatch("promptedge-jobs-dlq", [msg("w1", { v: 1, kind: "workflow_run", workspace_id: ws.workspaceId, execution_id: id })]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["w1"]);
    const res = await call(`/workflow-version-execution-results?workflow_version_execution_id=${id}&return_all_outputs=true`, { key: ws.key });
    expect(res.status).toBe(200);
    expect((await json(res)).out).toMatchObject({ status: "FAILED", error_message: expect.stringMatching(/given up/) });
  });
});
