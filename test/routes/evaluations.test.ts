// Evaluations: pipelines on saved dataset versions, columns of the block engine, runs on the queue
// (batched, redelivery-safe), reading, scoring, columns, renaming, archiving and workspace isolation.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { getDb } from "../../src/db/client";
import { blockContextFor } from "../../src/base-deps";
import { giveUpEvaluationRun, runEvaluationBatch, startEvaluationRun } from "../../src/services/evaluations/runs";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { hookKey, hookUrl, inbox, register, verify, waitForInbox } from "../helpers/webhooks";

const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;
const auth = (ws: TestKey) => ({ workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 });

/** Logs whose input variables become the dataset's columns: question, answer, expected. */
const ROWS = [
  { question: "Why is the sky blue?", answer: "Blue light scatters more. [[reply:true]]", expected: "blue", n: "3" },
  { question: "What is 2+2?", answer: "Five, surely. [[reply:false]]", expected: "4", n: "x" },
];

/** A dataset group with a saved version 1 of the given rows (columns question, answer, expected, n). */
async function dataset(ws: TestKey, rows = ROWS) {
  const ids: number[] = [];
  for (const vars of rows) {
    const res = await call("/log-request", { method: "POST", key: ws.key, json: logBody({ prompt_input_variables: vars }) });
    ids.push((await json(res)).id);
  }
  const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("set") } }));
  const groupId = g.dataset_group.id as number;
  await call("/api/public/v2/dataset-versions/from-filter-params", {
    method: "POST",
    key: ws.key,
    json: { dataset_group_id: groupId, request_log_ids: ids, variables_to_parse: ["question", "answer", "expected", "n"] },
  });
  for (let i = 0; i < 200; i++) {
    const list = await json(await call(`/api/public/v2/datasets?dataset_group_id=${groupId}`, { key: ws.key }));
    if (list.datasets[0]?.job_status === "COMPLETED") break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const saved = await json(await call("/api/public/v2/dataset-versions/save-draft", { method: "POST", key: ws.key, json: { dataset_group_id: groupId } }));
  return { groupId, datasetId: saved.draft_dataset_id as number };
}

/** A saved version of `n` rows written straight into D1 (column k), for batch tests. */
async function bigDataset(ws: TestKey, n: number) {
  const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("big") } }));
  const id = g.dataset.id as number;
  await env.DB.prepare(
    `WITH RECURSIVE s(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM s WHERE k + 1 < ?)
     INSERT INTO dataset_rows (workspace_id, dataset_id, job_id, position, "values") SELECT ?, ?, 0, k, json_object('k', 'row ' || k) FROM s`,
  )
    .bind(n, ws.workspaceId, id)
    .run();
  await env.DB.prepare(`UPDATE datasets SET version_number = 1, column_names = '["k"]' WHERE id = ?`).bind(id).run();
  return { groupId: g.dataset_group.id as number, datasetId: id };
}

const COLUMNS = [
  { column_type: "CONTAINS", name: "mentions expected", configuration: { source: "answer", value_source: "expected" }, is_part_of_score: true },
  { column_type: "LLM_ASSERTION", name: "judge", configuration: { source: "answer", prompt: "Is it correct?" }, is_part_of_score: true },
  { column_type: "PARSE_VALUE", name: "n as number", configuration: { source: "n", type: "number" } },
  { column_type: "MATH_OPERATOR", name: "n > 1", configuration: { sources: ["n as number"], operator: "gt", value: 1 } },
];

async function pipeline(ws: TestKey, groupId: number, extra: Record<string, unknown> = {}) {
  const res = await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, name: uniq("eval"), columns: COLUMNS, ...extra } });
  expect(res.status, await res.clone().text()).toBe(201);
  return json(res);
}

const runReport = (ws: TestKey, id: number, body: Record<string, unknown> = { name: uniq("run") }) => call(`/reports/${id}/run`, { method: "POST", key: ws.key, json: body });

async function waitForRun(ws: TestKey, id: number) {
  for (let i = 0; i < 400; i++) {
    const body = await json(await call(`/reports/${id}`, { key: ws.key }));
    if (body.status === "COMPLETED") return body;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the run did not finish");
}

describe("POST /reports (create a pipeline)", { timeout: 60_000 }, () => {
  it("creates the pipeline on the newest saved version with its columns in order (201)", async () => {
    const ws = await createWorkspace();
    const { groupId, datasetId } = await dataset(ws);
    const res = await call("/reports", {
      method: "POST",
      key: ws.key,
      json: {
        dataset_group_id: groupId,
        columns: [
          { column_type: "COUNT", name: "words", configuration: { source: "answer", type: "words" } },
          { column_type: "CONTAINS", name: "first", configuration: { source: "answer", value: "blue" }, position: 1 },
        ],
        external_ids: [{ source: "ci", external_id: "e-1" }],
      },
    });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, report_id: expect.any(Number), external_ids: [{ source: "ci", external_id: "e-1" }] });
    expect(body.report_columns.map((c: any) => [c.name, c.position, c.column_type])).toEqual([
      ["first", 1, "CONTAINS"],
      ["words", 2, "COUNT"],
    ]);
    const got = await json(await call(`/reports/${body.report_id}`, { key: ws.key }));
    expect(got.report).toMatchObject({ id: body.report_id, name: expect.stringMatching(/^evaluation-/), is_blueprint: true, deleted: false, dataset_id: datasetId, dataset_group_id: groupId, workspace_id: ws.workspaceId, parent_report_id: null });
    expect(got.status).toBe("COMPLETED");
    expect(got.stats.status_counts).toEqual({ COMPLETED: 0, FAILED: 0, QUEUED: 0, RUNNING: 0 });
    expect(got.report_columns[1].configuration).toEqual({ source: "answer", type: "words" });
  });

  it("takes a specific version; the draft, a missing version or a group without saved versions is refused", async () => {
    const ws = await createWorkspace();
    const { groupId, datasetId } = await dataset(ws);
    expect((await json(await call(`/reports/${(await pipeline(ws, groupId, { dataset_version_number: 1 })).report_id}`, { key: ws.key }))).report.dataset_id).toBe(datasetId);
    const draft = await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, dataset_version_number: -1, columns: COLUMNS } });
    expect(draft.status).toBe(400);
    expect((await json(draft)).message).toMatch(/^dataset_version_number: /);
    expect((await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, dataset_version_number: 7 } })).status).toBe(404);
    const fresh = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("empty") } }));
    const none = await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: fresh.dataset_group.id } });
    expect(none.status).toBe(400);
    expect((await json(none)).message).toMatch(/^dataset_group_id: .*saved/);
  });

  it("validates every column against the block engine, naming the column", async () => {
    const ws = await createWorkspace();
    const { groupId } = await dataset(ws);
    const col = (c: Record<string, unknown>) => ({ name: "c", configuration: {}, ...c });
    const cases: [unknown[], RegExp][] = [
      [[col({ column_type: "NOPE" })], /^columns\[0\] \("c"\)\.column_type: unknown block type/],
      [[col({ column_type: "CODE_EXECUTION", configuration: { code: "1" } })], /^columns\[0\] \("c"\)\.column_type: CODE_EXECUTION blocks cannot run here/],
      [[col({ column_type: "COUNT", configuration: { source: "answer", type: "lines" } })], /^columns\[0\] \("c"\)\.configuration\.type: /],
      [[col({ column_type: "COUNT", configuration: { source: "nowhere", type: "words" } })], /reads "nowhere", which is neither a dataset column nor a column/],
      [
        [col({ column_type: "COUNT", name: "a", configuration: { source: "b", type: "words" } }), col({ column_type: "COUNT", name: "b", configuration: { source: "answer", type: "words" } })],
        /^columns\[0\] \("a"\)\.configuration: reads "b", a column to its right/,
      ],
      [[col({ column_type: "COUNT", name: "d", configuration: { source: "answer", type: "words" } }), col({ column_type: "COUNT", name: "d", configuration: { source: "answer", type: "words" } })], /^columns\[1\] \("d"\)\.name: is used by another column/],
      [[col({ column_type: "COUNT", name: "answer", configuration: { source: "question", type: "words" } })], /\.name: is a column of the dataset/],
      [[col({ column_type: "COUNT", name: "", configuration: { source: "answer", type: "words" } })], /^columns\.0\.name: |^columns\[0\]\.name: /],
      [[col({ column_type: "COUNT", configuration: { source: "answer", type: "words" }, position: 0 })], /position/],
    ];
    for (const [columns, message] of cases) {
      const res = await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns } });
      expect(res.status, JSON.stringify(columns)).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ column_type: "COUNT", name: `c${i}`, configuration: { source: "answer", type: "words" } }));
    expect((await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: many(50) } })).status).toBe(201);
    const over = await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: many(51) } });
    expect(over.status).toBe(400);
    expect((await json(over)).message).toMatch(/^columns: at most 50 columns/);
    const custom = await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, score_configuration: { code: "return {'score': 1}" } } });
    expect(custom.status).toBe(400);
    expect((await json(custom)).message).toMatch(/^score_configuration: /);
    // Nothing but the one valid pipeline was created.
    expect((await json(await call("/api/public/v2/evaluations?per_page=100", { key: ws.key }))).total).toBe(1);
  });

  it("a configuration nested deeper than 64 levels is a 400 on create, add and edit (SQLite's JSON stops at 1,000); nothing is written", async () => {
    const ws = await createWorkspace();
    const { groupId } = await dataset(ws);
    const nest = (n: number) => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = [v];
      return v;
    };
    const config = (n: number) => ({ source: "answer", type: "words", extra: nest(n) });
    const col = (n: number, name = "c") => ({ column_type: "COUNT", name, configuration: config(n) });
    const deep = await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: [col(2000)] } });
    expect(deep.status).toBe(400);
    // The body-wide rule (MAX_JSON_DEPTH) meets a nesting this deep first; col(65) below meets the configuration's own.
    expect((await json(deep)).message).toMatch(/^columns\[0\]\.configuration\.extra(\[0\])+\.…: nests deeper than 100 levels/);
    const just = await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: [col(65)] } });
    expect(just.status).toBe(400);
    expect((await json(just)).message).toMatch(/^columns\[0\]\.configuration: must nest at most 64 levels/);
    expect((await json(await call("/api/public/v2/evaluations", { key: ws.key }))).total).toBe(0);
    // 64 levels below the configuration object itself (the object is level 1, extra's arrays the rest).
    const ok = await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: [col(62)] } });
    expect(ok.status, await ok.clone().text()).toBe(201);
    const p = await json(ok);
    const added = await call("/report-columns", { method: "POST", key: ws.key, json: { report_id: p.report_id, ...col(2000, "d") } });
    expect(added.status).toBe(400);
    const edited = await call(`/report-columns/${p.report_columns[0].id}`, { method: "PATCH", key: ws.key, json: { report_id: p.report_id, column_type: "COUNT", configuration: config(2000) } });
    expect(edited.status).toBe(400);
    const after = await json(await call(`/reports/${p.report_id}`, { key: ws.key }));
    expect(after.report_columns.map((c: any) => c.name)).toEqual(["c"]);
    expect(JSON.stringify(after.report_columns[0].configuration)).toBe(JSON.stringify(config(62)));
  });

  it("places the pipeline in a folder (listed as REPORT); another workspace's folder or group is a 404; a taken external ID is a 409", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { groupId } = await dataset(a);
    const { groupId: groupB } = await dataset(b);
    const folder = await json(await call("/api/public/v2/folders", { method: "POST", key: a.key, json: { name: uniq("f") } }));
    const p = await pipeline(a, groupId, { folder_id: folder.folder.id, external_ids: [{ source: "ci", external_id: "taken" }] });
    const entities = await json(await call(`/api/public/v2/folders/entities?folder_id=${folder.folder.id}&filter_type=REPORT`, { key: a.key }));
    expect(JSON.stringify(entities)).toContain(`"id":${p.report_id}`);
    expect((await call("/reports", { method: "POST", key: b.key, json: { dataset_group_id: groupB, folder_id: folder.folder.id } })).status).toBe(404);
    expect((await call("/reports", { method: "POST", key: b.key, json: { dataset_group_id: groupId } })).status).toBe(404);
    const name = uniq("dup-ext");
    const taken = await call("/reports", { method: "POST", key: a.key, json: { dataset_group_id: groupId, name, external_ids: [{ source: "ci", external_id: "taken" }] } });
    expect(taken.status).toBe(409);
    expect((await json(await call(`/api/public/v2/evaluations?name=${name}`, { key: a.key }))).total).toBe(0);
    // Another workspace's mapping neither conflicts nor shows.
    await pipeline(b, groupB, { external_ids: [{ source: "ci", external_id: "taken" }] });
  });
});

describe("POST /reports/{id}/run and reading a run", { timeout: 60_000 }, () => {
  it("evaluates every row on the queue with the block engine; GET shows columns, counts and scores", async () => {
    const ws = await createWorkspace();
    const { groupId, datasetId } = await dataset(ws);
    const p = await pipeline(ws, groupId);
    const res = await runReport(ws, p.report_id, { name: "nightly" });
    expect(res.status).toBe(201);
    const { success, report_id: runId } = await json(res);
    expect(success).toBe(true);
    expect(runId).not.toBe(p.report_id);
    const done = await waitForRun(ws, runId);
    expect(done.report).toMatchObject({ id: runId, name: "nightly", is_blueprint: false, parent_report_id: p.report_id, dataset_id: datasetId });
    // 2 rows × 4 columns: row 2's "n" is not a number, so its parse and the comparison that reads it fail.
    expect(done.stats.status_counts).toEqual({ COMPLETED: 6, FAILED: 2, QUEUED: 0, RUNNING: 0 });
    // mentions expected: true, false → 50; judge: true, false → 50.
    expect(done.report.score).toMatchObject({ overall_score: 50, score_type: "multi_column", has_custom_scoring: false });
    expect(done.report_columns.map((c: any) => [c.name, c.score])).toEqual([
      ["mentions expected", 50],
      ["judge", 50],
      ["n as number", null],
      ["n > 1", null],
    ]);
    const rows = await json(await call(`/api/public/v2/evaluations/${runId}/rows`, { key: ws.key }));
    expect(rows).toMatchObject({ success: true, columns: ["question", "answer", "expected", "n", "mentions expected", "judge", "n as number", "n > 1"], total: 2, pages: 1, page: 1 });
    expect(rows.rows[0].slice(4)).toEqual([
      { type: "eval", status: "COMPLETED", value: true, error_message: null },
      { type: "eval", status: "COMPLETED", value: true, error_message: null },
      { type: "eval", status: "COMPLETED", value: 3, error_message: null },
      { type: "eval", status: "COMPLETED", value: true, error_message: null },
    ]);
    expect(rows.rows[1][0]).toEqual({ type: "dataset", value: "What is 2+2?" });
    expect(rows.rows[1].slice(4).map((c: any) => c.status)).toEqual(["COMPLETED", "COMPLETED", "FAILED", "FAILED"]);
    expect(rows.rows[1][7].error_message).toBe('column "n as number" failed');
    // The pipeline's rows are those of its newest run.
    expect((await json(await call(`/api/public/v2/evaluations/${p.report_id}/rows?per_page=1&page=2`, { key: ws.key }))).rows[0][0].value).toBe("What is 2+2?");
    const score = await json(await call(`/reports/${runId}/score`, { key: ws.key }));
    expect(score.score.details.columns).toEqual([
      { column_name: "mentions expected", score: 50, score_type: "boolean", num_skipped: 0 },
      { column_name: "judge", score: 50, score_type: "boolean", num_skipped: 0 },
    ]);
    expect((await call(`/reports/${p.report_id}/score`, { key: ws.key })).status).toBe(400);
  });

  it("a run snapshots the pipeline's columns: later column edits do not change it", async () => {
    const ws = await createWorkspace();
    const { groupId } = await dataset(ws);
    const p = await pipeline(ws, groupId, { columns: [COLUMNS[0]] });
    const { report_id: runId } = await json(await runReport(ws, p.report_id));
    await waitForRun(ws, runId);
    await call("/report-columns", { method: "POST", key: ws.key, json: { report_id: p.report_id, column_type: "COUNT", name: "later", configuration: { source: "answer", type: "words" } } });
    const run = await json(await call(`/reports/${runId}`, { key: ws.key }));
    expect(run.report_columns.map((c: any) => c.name)).toEqual(["mentions expected"]);
    expect(run.report.score).toMatchObject({ score_type: "single_column", overall_score: 50 });
    const added = await call("/report-columns", { method: "POST", key: ws.key, json: { report_id: runId, column_type: "COUNT", name: "x", configuration: { source: "answer", type: "words" } } });
    expect(added.status).toBe(400);
  });

  it("refuses bad runs with a 400 naming the field; another workspace's pipeline or dataset is a 404", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { groupId } = await dataset(a);
    const other = await dataset(b);
    const p = await pipeline(a, groupId);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /^name: /],
      [{ name: "" }, /^name: /],
      [{ name: "x".repeat(256) }, /^name: /],
      [{ name: "r", refresh_dataset: true }, /^refresh_dataset: /],
      [{ name: "r", dataset_id: 0 }, /^dataset_id: /],
    ];
    for (const [body, message] of cases) {
      const res = await runReport(a, p.report_id, body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    expect((await runReport(a, p.report_id, { name: "x".repeat(255) })).status).toBe(201);
    expect((await runReport(a, p.report_id, { name: "r", dataset_id: other.datasetId })).status).toBe(404);
    expect((await runReport(b, p.report_id)).status).toBe(404);
    expect((await runReport(a, 999_999_999)).status).toBe(404);
    // A draft cannot be evaluated; a dataset without the columns the pipeline reads neither.
    const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: a.key, json: { name: uniq("g") } }));
    const draft = await runReport(a, p.report_id, { name: "r", dataset_id: g.dataset.id });
    expect(draft.status).toBe(400);
    expect((await json(draft)).message).toMatch(/^dataset_id: a draft/);
    const big = await bigDataset(a, 3);
    const lacking = await runReport(a, p.report_id, { name: "r", dataset_id: big.datasetId });
    expect(lacking.status).toBe(400);
    expect((await json(lacking)).message).toMatch(/^dataset_id: .*reads "answer"/);
    // No columns, or a run as the pipeline.
    const empty = await json(await call("/reports", { method: "POST", key: a.key, json: { dataset_group_id: groupId } }));
    expect((await runReport(a, empty.report_id)).status).toBe(400);
    const { report_id: runId } = await json(await runReport(a, p.report_id));
    expect((await runReport(a, runId)).status).toBe(400);
  });

  it("runs on another saved dataset given by dataset_id", async () => {
    const ws = await createWorkspace();
    const { groupId } = await dataset(ws);
    const second = await dataset(ws, [ROWS[0]]);
    const p = await pipeline(ws, groupId);
    const { report_id: runId } = await json(await runReport(ws, p.report_id, { name: "other", dataset_id: second.datasetId }));
    const done = await waitForRun(ws, runId);
    expect(done.report.dataset_id).toBe(second.datasetId);
    expect(done.stats.status_counts.COMPLETED).toBe(4);
  });
});

describe("the evaluation_run job", { timeout: 60_000 }, () => {
  const noQueue = { send: async () => {} } as unknown as Queue;
  const wordCount = [{ column_type: "COUNT", name: "words", configuration: { source: "k", type: "words" }, is_part_of_score: false }];

  it("works in batches: a delivery stops after its rows and queues its continuation; the last one completes", async () => {
    const ws = await createWorkspace();
    const { groupId } = await bigDataset(ws, 130);
    const p = await json(await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: wordCount } }));
    const runId = await startEvaluationRun(getDb(env.DB), noQueue, auth(ws), p.report_id, { name: "batched" });
    const sent: unknown[] = [];
    const spyEnv = { ...env, JOBS: { send: async (m: unknown) => void sent.push(m) } as unknown as Queue };
    const message = { v: 1, kind: "evaluation_run", workspace_id: ws.workspaceId, report_id: runId };
    const deliver = async (id: string) => {
      const batch = createMessageBatch("promptedge-jobs", [{ id, timestamp: new Date(), attempts: 1, body: message }]);
      const ctx = createExecutionContext();
      await worker.queue(batch, spyEnv);
      return getQueueResult(batch, ctx);
    };
    expect((await deliver("e1")).explicitAcks).toEqual(["e1"]);
    expect(sent).toEqual([message]);
    let state = await json(await call(`/reports/${runId}`, { key: ws.key }));
    expect(state.status).toBe("RUNNING");
    expect(state.stats.status_counts).toEqual({ COMPLETED: 100, FAILED: 0, QUEUED: 30, RUNNING: 0 });
    const partial = await json(await call(`/api/public/v2/evaluations/${runId}/rows?per_page=100&page=2`, { key: ws.key }));
    expect(partial.rows[29][1]).toEqual({ type: "eval", status: "QUEUED", value: null, error_message: null });
    expect((await deliver("e2")).explicitAcks).toEqual(["e2"]);
    expect(sent).toHaveLength(1);
    state = await json(await call(`/reports/${runId}`, { key: ws.key }));
    expect(state.status).toBe("COMPLETED");
    expect(state.stats.status_counts).toEqual({ COMPLETED: 130, FAILED: 0, QUEUED: 0, RUNNING: 0 });
    // A redelivery of a finished run does nothing.
    await deliver("e3");
    expect(sent).toHaveLength(1);
  });

  it("bounds a delivery by cells too: with 10 columns it evaluates 50 rows", async () => {
    const ws = await createWorkspace();
    const { groupId } = await bigDataset(ws, 60);
    const columns = Array.from({ length: 10 }, (_, i) => ({ column_type: "COUNT", name: `c${i}`, configuration: { source: "k", type: "chars" } }));
    const p = await json(await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns } }));
    const runId = await startEvaluationRun(getDb(env.DB), noQueue, auth(ws), p.report_id, { name: "wide" });
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, {})).toBe("continue");
    const done = await env.DB.prepare("SELECT count(*) AS n FROM report_rows WHERE report_id = ? AND state = 'DONE'").bind(runId).first<{ n: number }>();
    expect(done!.n).toBe(50);
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, {})).toBe("completed");
  });

  it("is redelivery-safe: finished rows are never evaluated (nor called out for) again", async () => {
    const ws = await createWorkspace();
    const { groupId } = await dataset(ws);
    const endpoint = [{ column_type: "ENDPOINT", name: "echo", configuration: { url: "https://fake-endpoint.test/score" } }];
    const p = await json(await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: endpoint } }));
    const runId = await startEvaluationRun(getDb(env.DB), noQueue, auth(ws), p.report_id, { name: "once" });
    let calls = 0;
    const base = blockContextFor(env, getDb(env.DB), ws.workspaceId);
    const ctx = { ...base, fetch: (input: RequestInfo | URL, init?: RequestInit) => (calls++, fetch(input, init)) };
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, ctx, { maxRows: 1 })).toBe("continue");
    expect(calls).toBe(1);
    // A crash mid-row: the second row was claimed but its cells never written.
    await env.DB.prepare("UPDATE report_rows SET state = 'RUNNING' WHERE report_id = ? AND row_index = 1").bind(runId).run();
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, ctx)).toBe("completed");
    expect(calls).toBe(2);
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, ctx)).toBe("skipped");
    expect(calls).toBe(2);
    const rows = await json(await call(`/api/public/v2/evaluations/${runId}/rows`, { key: ws.key }));
    expect(rows.rows.map((r: any[]) => r[4].value.received.question)).toEqual([ROWS[0].question, ROWS[1].question]);
    // Another workspace's delivery of the same id is ignored.
    const other = await createWorkspace();
    expect(await runEvaluationBatch(getDb(env.DB), other.workspaceId, runId, ctx)).toBe("skipped");
  });

  it("two copies of a delivery at once (a duplicated message) share the rows: none is evaluated twice", async () => {
    const ws = await createWorkspace();
    const { groupId } = await bigDataset(ws, 12);
    const endpoint = [{ column_type: "ENDPOINT", name: "echo", configuration: { url: "https://fake-endpoint.test/score" } }];
    const p = await json(await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: endpoint } }));
    const runId = await startEvaluationRun(getDb(env.DB), noQueue, auth(ws), p.report_id, { name: "dup" });
    const calls: string[] = [];
    const base = blockContextFor(env, getDb(env.DB), ws.workspaceId);
    const ctx = {
      ...base,
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        calls.push(String(init?.body ?? ""));
        await new Promise((r) => setTimeout(r, 50)); // slow enough for the two deliveries to overlap
        return fetch(input, init);
      },
    };
    const outcomes = await Promise.all([runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, ctx), runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, ctx)]);
    expect(outcomes).toContain("completed");
    expect(calls).toHaveLength(12);
    expect(new Set(calls).size).toBe(12);
    const state = await json(await call(`/reports/${runId}`, { key: ws.key }));
    expect(state.stats.status_counts).toEqual({ COMPLETED: 12, FAILED: 0, QUEUED: 0, RUNNING: 0 });
  });

  it("rows another delivery holds are left to it (the job waits and looks again); a stale claim is taken over", async () => {
    const ws = await createWorkspace();
    const { groupId } = await bigDataset(ws, 3);
    const p = await json(await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: wordCount } }));
    const runId = await startEvaluationRun(getDb(env.DB), noQueue, auth(ws), p.report_id, { name: "held" });
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, {}, { maxRows: 2 })).toBe("continue");
    // Another delivery is evaluating the last row right now.
    await env.DB.prepare("UPDATE report_rows SET state = 'RUNNING', claimed_at = ? WHERE report_id = ? AND row_index = 2").bind(Date.now(), runId).run();
    const sent: [unknown, unknown][] = [];
    const spyEnv = { ...env, JOBS: { send: async (m: unknown, o: unknown) => void sent.push([m, o]) } as unknown as Queue };
    const message = { v: 1, kind: "evaluation_run", workspace_id: ws.workspaceId, report_id: runId };
    const batch = createMessageBatch("promptedge-jobs", [{ id: "w1", timestamp: new Date(), attempts: 1, body: message }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, spyEnv);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["w1"]);
    expect(sent).toEqual([[message, { contentType: "json", delaySeconds: 60 }]]);
    expect((await json(await call(`/reports/${runId}`, { key: ws.key }))).status).toBe("RUNNING");
    // The claim went stale (its delivery died): the row is taken over and the run completes.
    await env.DB.prepare("UPDATE report_rows SET claimed_at = ? WHERE report_id = ? AND row_index = 2").bind(Date.now() - 16 * 60_000, runId).run();
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, {})).toBe("completed");
  });

  it("a row whose evaluation was cut off three times (it kills the Worker) fails instead of being tried forever", async () => {
    const ws = await createWorkspace();
    const { groupId } = await dataset(ws);
    const endpoint = [{ column_type: "ENDPOINT", name: "echo", configuration: { url: "https://fake-endpoint.test/score" } }];
    const p = await json(await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: endpoint } }));
    const runId = await startEvaluationRun(getDb(env.DB), noQueue, auth(ws), p.report_id, { name: "poison" });
    let calls = 0;
    const base = blockContextFor(env, getDb(env.DB), ws.workspaceId);
    const ctx = { ...base, fetch: (input: RequestInfo | URL, init?: RequestInit) => (calls++, fetch(input, init)) };
    // Row 0 was claimed three times and each delivery died in it; its last claim has gone stale.
    await env.DB.prepare("UPDATE report_rows SET state = 'RUNNING', claims = 3, claimed_at = ? WHERE report_id = ? AND row_index = 0").bind(Date.now() - 16 * 60_000, runId).run();
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, ctx)).toBe("completed");
    expect(calls).toBe(1); // only row 1 was evaluated
    const rows = await json(await call(`/api/public/v2/evaluations/${runId}/rows`, { key: ws.key }));
    expect(rows.rows[0][4]).toEqual({ type: "eval", status: "FAILED", value: null, error_message: expect.stringMatching(/cut off 3 times/) });
    expect(rows.rows[1][4]).toMatchObject({ type: "eval", status: "COMPLETED" });
  });

  it("a run given up by the dead-letter queue completes with its unfinished cells FAILED", async () => {
    const ws = await createWorkspace();
    const { groupId } = await bigDataset(ws, 3);
    const p = await json(await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns: wordCount } }));
    const runId = await startEvaluationRun(getDb(env.DB), noQueue, auth(ws), p.report_id, { name: "doomed" });
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, {}, { maxRows: 1 })).toBe("continue");
    const batch = createMessageBatch("promptedge-jobs-dlq", [{ id: "x1", timestamp: new Date(), attempts: 1, body: { v: 1, kind: "evaluation_run", workspace_id: ws.workspaceId, report_id: runId } }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["x1"]);
    const state = await json(await call(`/reports/${runId}`, { key: ws.key }));
    expect(state.status).toBe("COMPLETED");
    expect(state.stats.status_counts).toEqual({ COMPLETED: 1, FAILED: 2, QUEUED: 0, RUNNING: 0 });
    const rows = await json(await call(`/api/public/v2/evaluations/${runId}/rows`, { key: ws.key }));
    expect(rows.rows[2][1]).toEqual({ type: "eval", status: "FAILED", value: null, error_message: expect.stringMatching(/given up/) });
  });
});

describe("giving a run up", { timeout: 60_000 }, () => {
  it("fails the unwritten rows in bounded statements (a 50,000-row run is not one giant UPDATE)", async () => {
    const ws = await createWorkspace();
    const { groupId } = await bigDataset(ws, 2500);
    const columns = [{ column_type: "COUNT", name: "words", configuration: { source: "k", type: "words" } }];
    const p = await json(await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns } }));
    const runId = await startEvaluationRun(getDb(env.DB), { send: async () => {} } as unknown as Queue, auth(ws), p.report_id, { name: "huge" });
    // Every statement's row changes, seen through a recording D1.
    const changes: number[] = [];
    type St = { inner: D1PreparedStatement };
    const wrap = (st: D1PreparedStatement): St & Record<string, unknown> => ({
      inner: st,
      bind: (...args: unknown[]) => wrap(st.bind(...args)),
      run: async () => {
        const r = await st.run();
        changes.push(r.meta.changes ?? 0);
        return r;
      },
      first: (...args: [string?]) => st.first(...(args as [])),
      all: async () => {
        const r = await st.all();
        changes.push(r.meta.changes ?? 0);
        return r;
      },
      raw: () => st.raw(),
    });
    const spy = {
      prepare: (q: string) => wrap(env.DB.prepare(q)),
      batch: async (sts: St[]) => {
        const rs = await env.DB.batch(sts.map((s) => s.inner));
        for (const r of rs) changes.push(r.meta.changes ?? 0);
        return rs;
      },
    } as unknown as D1Database;
    await giveUpEvaluationRun(getDb(spy), ws.workspaceId, runId);
    expect(Math.max(...changes)).toBeLessThanOrEqual(1000);
    const state = await json(await call(`/reports/${runId}`, { key: ws.key }));
    expect(state.status).toBe("COMPLETED");
    expect(state.stats.status_counts).toEqual({ COMPLETED: 0, FAILED: 2500, QUEUED: 0, RUNNING: 0 });
  });
});

describe("the report_finished webhook event", { timeout: 60_000 }, () => {
  const noQueue = { send: async () => {} } as unknown as Queue;
  const scored = [{ column_type: "CONTAINS", name: "mentions expected", configuration: { source: "answer", value_source: "expected" }, is_part_of_score: true }];
  const finished = async (ws: TestKey) =>
    (
      await env.DB.prepare(`SELECT id, user_id, details FROM webhook_events WHERE workspace_id = ? AND event_type = 'report_finished' ORDER BY created_at`)
        .bind(ws.workspaceId)
        .all<{ id: string; user_id: number; details: string }>()
    ).results.map((e) => ({ ...e, details: JSON.parse(e.details) }));

  it("fires once when a run completes, signed, with the run, its pipeline, dataset, row count and score", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    const hook = await register(ws, { url: hookUrl(key), events: ["report_finished"] });
    const other = await createWorkspace();
    const otherKey = hookKey();
    await register(other, { url: hookUrl(otherKey) });
    const { groupId, datasetId } = await dataset(ws);
    const p = await pipeline(ws, groupId, { columns: scored });
    const res = await runReport(ws, p.report_id, { name: "nightly" });
    expect(res.status).toBe(201);
    const runId = (await json(res)).report_id as number;
    await waitForRun(ws, runId);
    const [got] = await waitForInbox(key, 1);
    expect(await verify(got, hook.secret)).toBe(true);
    expect(JSON.parse(got.body)).toEqual({
      event_type: "report_finished",
      details: { report_id: runId, report_name: "nightly", parent_report_id: p.report_id, dataset_id: datasetId, row_count: 2, score: 50 },
      workspace_id: ws.workspaceId,
      user_id: ws.userId,
      timestamp: expect.any(String),
    });
    // Delivered again or given up after it completed: still one event.
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, {})).toBe("skipped");
    await giveUpEvaluationRun(getDb(env.DB), ws.workspaceId, runId);
    expect(await finished(ws)).toEqual([{ id: `report_finished_${runId}`, user_id: ws.userId, details: expect.objectContaining({ report_id: runId }) }]);
    expect(await inbox(key)).toHaveLength(1);
    // Another workspace's webhook hears nothing of it.
    expect(await inbox(otherKey)).toEqual([]);
  });

  it("is written in the batch that completes the run: none while it runs, one when a completion is repeated", async () => {
    const ws = await createWorkspace();
    const { groupId } = await bigDataset(ws, 3);
    const columns = [{ column_type: "COUNT", name: "words", configuration: { source: "k", type: "words" }, is_part_of_score: true }];
    const p = await json(await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns } }));
    const runId = await startEvaluationRun(getDb(env.DB), noQueue, auth(ws), p.report_id, { name: "twice" });
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, {}, { maxRows: 1 })).toBe("continue");
    expect(await finished(ws)).toEqual([]);
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, {})).toBe("completed");
    // As if a redelivery raced the completion: the run looks RUNNING again and completes a second time.
    await env.DB.prepare(`UPDATE reports SET status = 'RUNNING' WHERE id = ?`).bind(runId).run();
    expect(await runEvaluationBatch(getDb(env.DB), ws.workspaceId, runId, {})).toBe("completed");
    const events = await finished(ws);
    expect(events).toHaveLength(1);
    expect(events[0].details).toEqual({ report_id: runId, report_name: "twice", parent_report_id: p.report_id, dataset_id: expect.any(Number), row_count: 3, score: 2 });
  });

  it("a run given up by the dead-letter queue finishes too, and its event is dispatched at once", async () => {
    const ws = await createWorkspace();
    const key = hookKey();
    await register(ws, { url: hookUrl(key) });
    const { groupId } = await bigDataset(ws, 3);
    const columns = [{ column_type: "COUNT", name: "words", configuration: { source: "k", type: "words" } }];
    const p = await json(await call("/reports", { method: "POST", key: ws.key, json: { dataset_group_id: groupId, columns } }));
    const runId = await startEvaluationRun(getDb(env.DB), noQueue, auth(ws), p.report_id, { name: "doomed" });
    const batch = createMessageBatch("promptedge-jobs-dlq", [{ id: "d1", timestamp: new Date(), attempts: 1, body: { v: 1, kind: "evaluation_run", workspace_id: ws.workspaceId, report_id: runId } }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["d1"]);
    expect(await finished(ws)).toEqual([{ id: `report_finished_${runId}`, user_id: ws.userId, details: expect.objectContaining({ report_id: runId, row_count: 3, score: null }) }]);
    const [got] = await waitForInbox(key, 1);
    expect(JSON.parse(got.body)).toMatchObject({ event_type: "report_finished", details: { report_id: runId } });
  });
});

describe("GET /api/public/v2/evaluations", { timeout: 60_000 }, () => {
  it("lists pipelines with filters, paging, runs and the external-ID lookup; never another workspace's", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { groupId } = await dataset(a);
    const { groupId: groupB } = await dataset(b);
    const tag = uniq("listed");
    const one = await pipeline(a, groupId, { name: `${tag}-one`, columns: [COLUMNS[0]], external_ids: [{ source: "ci", external_id: "p1" }] });
    const two = await pipeline(a, groupId, { name: `${tag}-two`, columns: [COLUMNS[0]] });
    await pipeline(b, groupB, { name: `${tag}-theirs`, external_ids: [{ source: "ci", external_id: "p1" }] });
    const { report_id: runId } = await json(await runReport(a, one.report_id, { name: "r1" }));
    await waitForRun(a, runId);
    const page = await json(await call(`/api/public/v2/evaluations?name=${tag}&per_page=1&sort_by=name&sort_order=asc`, { key: a.key }));
    expect(page).toMatchObject({ success: true, page: 1, per_page: 1, total: 2, pages: 2 });
    expect(page.evaluations[0]).toMatchObject({ id: one.report_id, is_blueprint: true, external_ids: [{ source: "ci", external_id: "p1" }] });
    expect(page.evaluations[0].runs).toBeUndefined();
    const withRuns = await json(await call(`/api/public/v2/evaluations?name=${tag}&include_runs=True&sort_by=id&sort_order=asc`, { key: a.key }));
    expect((await json(await call(`/api/public/v2/evaluations?name=${tag}&include_runs=FALSE`, { key: a.key }))).evaluations[0].runs).toBeUndefined();
    expect(withRuns.evaluations.map((e: any) => e.runs.map((r: any) => r.id))).toEqual([[runId], []]);
    expect(withRuns.evaluations[0].runs[0]).toMatchObject({ status: "COMPLETED", parent_report_id: one.report_id, stats: { status_counts: { COMPLETED: 2, FAILED: 0, QUEUED: 0, RUNNING: 0 } } });
    const byExt = await json(await call("/api/public/v2/evaluations?external_source=ci&external_id=p1", { key: a.key }));
    expect(byExt.evaluations.map((e: any) => e.id)).toEqual([one.report_id]);
    expect((await json(await call("/api/public/v2/evaluations?external_source=ci&external_id=nope", { key: a.key }))).total).toBe(0);
    expect((await call("/api/public/v2/evaluations?external_source=ci", { key: a.key })).status).toBe(400);
    for (const q of ["per_page=0", "per_page=101", "page=0", "status=gone", "include_runs=maybe"]) {
      expect((await call(`/api/public/v2/evaluations?${q}`, { key: a.key })).status, q).toBe(400);
    }
    expect((await call("/api/public/v2/evaluations?per_page=100", { key: a.key })).status).toBe(200);
    expect((await call(`/api/public/v2/evaluations?workspace_id=${b.workspaceId}`, { key: a.key })).status).toBe(404);
    const mine = await json(await call(`/api/public/v2/evaluations?name=${tag}&created_by_email=${encodeURIComponent(a.email)}`, { key: a.key }));
    expect(mine.evaluations.map((e: any) => e.id).sort()).toEqual([one.report_id, two.report_id].sort());
    const theirs = await json(await call(`/api/public/v2/evaluations?name=${tag}`, { key: b.key }));
    expect(theirs.evaluations.map((e: any) => e.name)).toEqual([`${tag}-theirs`]);
    // Runs are never listed as evaluations of their own.
    expect((await json(await call(`/api/public/v2/evaluations?name=r1`, { key: a.key }))).total).toBe(0);
  });

  it("include_runs brings each pipeline's newest 10 runs and run_count; 10 runs are all listed, 11 are not", async () => {
    const ws = await createWorkspace();
    const { groupId } = await dataset(ws);
    const tag = uniq("many-runs");
    const noQueue = { send: async () => {} } as unknown as Queue;
    const ten = await pipeline(ws, groupId, { name: `${tag}-ten`, columns: [COLUMNS[0]] });
    const eleven = await pipeline(ws, groupId, { name: `${tag}-eleven`, columns: [COLUMNS[0]] });
    const runsOf = { [ten.report_id]: [] as number[], [eleven.report_id]: [] as number[] };
    for (const [id, n] of [[ten.report_id, 10], [eleven.report_id, 11]] as const) {
      for (let i = 0; i < n; i++) {
        runsOf[id].push(await startEvaluationRun(getDb(env.DB), noQueue, auth(ws), id, { name: `run-${i}` }));
        // Nothing runs them (no queue): each is ended, so the workspace stays under its cap of open runs.
        await env.DB.prepare("UPDATE reports SET status = 'COMPLETED' WHERE id = ?").bind(runsOf[id].at(-1)).run();
      }
    }
    const got = await json(await call(`/api/public/v2/evaluations?name=${tag}&include_runs=true&sort_by=id&sort_order=asc`, { key: ws.key }));
    expect(got.evaluations.map((e: any) => e.run_count)).toEqual([10, 11]);
    expect(got.evaluations[0].runs.map((r: any) => r.id)).toEqual([...runsOf[ten.report_id]].reverse());
    expect(got.evaluations[1].runs.map((r: any) => r.id)).toEqual(runsOf[eleven.report_id].slice(1).reverse());
  });

  it("GET /api/public/v2/datasets?report_id= keeps the dataset a run or pipeline uses", async () => {
    const ws = await createWorkspace();
    const first = await dataset(ws);
    const second = await dataset(ws, [ROWS[0]]);
    const p = await pipeline(ws, first.groupId);
    const { report_id: runId } = await json(await runReport(ws, p.report_id, { name: "r", dataset_id: second.datasetId }));
    const ids = async (id: number, key = ws.key) => (await json(await call(`/api/public/v2/datasets?report_id=${id}`, { key }))).datasets.map((d: any) => d.id).sort();
    expect(await ids(p.report_id)).toEqual([first.datasetId]);
    expect(await ids(runId)).toEqual([first.datasetId, second.datasetId].sort());
    expect(await ids(runId, (await createWorkspace()).key)).toEqual([]);
  });
});

describe("archiving, renaming, scoring and columns", { timeout: 60_000 }, () => {
  it("DELETE archives a pipeline with its runs; GET still shows it; a second DELETE is a 404", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { groupId } = await dataset(a);
    const p = await pipeline(a, groupId, { columns: [COLUMNS[0]] });
    const { report_id: runId } = await json(await runReport(a, p.report_id));
    await waitForRun(a, runId);
    expect((await call(`/reports/${p.report_id}`, { method: "DELETE", key: b.key })).status).toBe(404);
    const del = await call(`/reports/${p.report_id}`, { method: "DELETE", key: a.key });
    expect(del.status).toBe(200);
    expect(await json(del)).toEqual({ success: true, message: "Report archived successfully" });
    expect((await call(`/reports/${p.report_id}`, { method: "DELETE", key: a.key })).status).toBe(404);
    expect((await json(await call(`/reports/${p.report_id}`, { key: a.key }))).report.deleted).toBe(true);
    expect((await json(await call(`/reports/${runId}`, { key: a.key }))).report.deleted).toBe(true);
    const active = await json(await call(`/api/public/v2/evaluations`, { key: a.key }));
    expect(active.evaluations.map((e: any) => e.id)).not.toContain(p.report_id);
    const deleted = await json(await call(`/api/public/v2/evaluations?status=deleted`, { key: a.key }));
    expect(deleted.evaluations.map((e: any) => e.id)).toContain(p.report_id);
    const archived = await json(await call(`/api/public/v2/evaluations?status=deleted&include_runs=true&per_page=100`, { key: a.key }));
    expect(archived.evaluations.find((e: any) => e.id === p.report_id).runs.map((r: any) => [r.id, r.deleted])).toEqual([[runId, true]]);
    expect((await runReport(a, p.report_id)).status).toBe(404);
  });

  it("DELETE /reports/name/{name} archives every report of that name; none is a 404", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { groupId } = await dataset(a);
    const name = uniq("same");
    await pipeline(a, groupId, { name });
    await pipeline(a, groupId, { name });
    expect((await call(`/reports/name/${name}`, { method: "DELETE", key: b.key })).status).toBe(404);
    const res = await call(`/reports/name/${name}`, { method: "DELETE", key: a.key });
    expect(res.status).toBe(200);
    expect((await json(await call(`/api/public/v2/evaluations?name=${name}`, { key: a.key }))).total).toBe(0);
    expect((await call(`/reports/name/${name}`, { method: "DELETE", key: a.key })).status).toBe(404);
  });

  it("GET /reports/{id} and the rows of another workspace's evaluation are 404s", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { groupId } = await dataset(a);
    const p = await pipeline(a, groupId);
    expect((await call(`/reports/${p.report_id}`, { key: b.key })).status).toBe(404);
    expect((await call(`/reports/${p.report_id}/score`, { key: b.key })).status).toBe(404);
    expect((await call(`/api/public/v2/evaluations/${p.report_id}/rows`, { key: b.key })).status).toBe(404);
    expect((await call(`/api/public/v2/evaluations/${p.report_id}/rows?workspace_id=${b.workspaceId}`, { key: a.key })).status).toBe(404);
    expect((await call(`/reports/999999999`, { key: a.key })).status).toBe(404);
    expect((await call(`/reports/abc`, { key: a.key })).status).toBe(400);
    expect((await call(`/reports/${p.report_id}`)).status).toBe(401);
    // A pipeline never run has its columns and no rows.
    const rows = await json(await call(`/api/public/v2/evaluations/${p.report_id}/rows?per_page=100`, { key: a.key }));
    expect(rows).toMatchObject({ total: 0, rows: [], columns: ["question", "answer", "expected", "n", ...COLUMNS.map((c) => c.name)] });
    expect((await call(`/api/public/v2/evaluations/${p.report_id}/rows?per_page=101`, { key: a.key })).status).toBe(400);
  });

  it("rename changes name and tags; neither is a 400; another workspace's is a 404", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { groupId } = await dataset(a);
    const p = await pipeline(a, groupId);
    const path = `/reports/${p.report_id}/rename`;
    const res = await call(path, { method: "PATCH", key: a.key, json: { name: "renamed", tags: ["nightly"] } });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ success: true, report: { id: p.report_id, name: "renamed", tags: ["nightly"], score_configuration: null } });
    expect((await json(await call(path, { method: "PATCH", key: a.key, json: { tags: [] } }))).report).toMatchObject({ name: "renamed", tags: [] });
    expect((await call(path, { method: "PATCH", key: a.key, json: {} })).status).toBe(400);
    expect((await call(path, { method: "PATCH", key: a.key, json: { name: "" } })).status).toBe(400);
    expect((await call(path, { method: "PATCH", key: b.key, json: { name: "x" } })).status).toBe(404);
    expect((await json(await call(`/reports/${p.report_id}`, { key: a.key }))).report.name).toBe("renamed");
  });

  it("score-card picks the scored columns; custom code and unknown columns are 400s", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { groupId } = await dataset(a);
    const p = await pipeline(a, groupId);
    const path = `/reports/${p.report_id}/score-card`;
    expect((await call(path, { method: "PATCH", key: a.key, json: { column_names: ["judge"] } })).status).toBe(200);
    const got = await json(await call(`/reports/${p.report_id}`, { key: a.key }));
    expect(got.report_columns.filter((c: any) => c.is_part_of_score).map((c: any) => c.name)).toEqual(["judge"]);
    expect((await call(path, { method: "PATCH", key: a.key, json: { column_names: ["judge"], code: "return 1" } })).status).toBe(400);
    expect((await call(path, { method: "PATCH", key: a.key, json: { column_names: ["nope"] } })).status).toBe(400);
    expect((await call(path, { method: "PATCH", key: a.key, json: {} })).status).toBe(400);
    expect((await call(path, { method: "PATCH", key: b.key, json: { column_names: [] } })).status).toBe(404);
    const { report_id: runId } = await json(await runReport(a, p.report_id));
    const done = await waitForRun(a, runId);
    expect(done.report.score).toMatchObject({ score_type: "single_column", overall_score: 50, details: { column_name: "judge" } });
  });

  it("/report-columns adds, edits, moves and deletes columns, keeping the pipeline runnable", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { groupId } = await dataset(a);
    const p = await pipeline(a, groupId, { columns: [COLUMNS[2], COLUMNS[3]] });
    const add = (body: Record<string, unknown>, key = a.key) => call("/report-columns", { method: "POST", key, json: { report_id: p.report_id, ...body } });
    const names = async () => (await json(await call(`/reports/${p.report_id}`, { key: a.key }))).report_columns.map((c: any) => `${c.position}:${c.name}`);
    const added = await add({ column_type: "COUNT", name: "words", configuration: { source: "answer", type: "words" }, position: 1 });
    expect(added.status).toBe(201);
    const col = (await json(added)).report_column;
    expect(col).toMatchObject({ name: "words", position: 1, column_type: "COUNT", report_id: p.report_id });
    expect(await names()).toEqual(["1:words", "2:n as number", "3:n > 1"]);
    expect((await add({ column_type: "COUNT", name: "last", configuration: { source: "words", type: "chars" } })).status).toBe(201);
    expect(await names()).toEqual(["1:words", "2:n as number", "3:n > 1", "4:last"]);
    // Refusals: a duplicate name, a read of a later column, a bad config, another workspace, a bad body.
    expect((await add({ column_type: "COUNT", name: "words", configuration: { source: "answer", type: "words" } })).status).toBe(400);
    const early = await add({ column_type: "COUNT", name: "early", configuration: { source: "last", type: "chars" }, position: 1 });
    expect(early.status).toBe(400);
    expect((await json(early)).message).toMatch(/reads "last", a column to its right/);
    expect((await add({ column_type: "HUMAN", name: "h", configuration: {} })).status).toBe(400);
    expect((await add({ column_type: "COUNT", name: "w2", configuration: { source: "answer", type: "words" } }, b.key)).status).toBe(404);
    expect((await add({ name: "w2", configuration: {} })).status).toBe(400);
    expect(await names()).toEqual(["1:words", "2:n as number", "3:n > 1", "4:last"]);

    const edit = (id: number, body: Record<string, unknown>, key = a.key) => call(`/report-columns/${id}`, { method: "PATCH", key, json: { report_id: p.report_id, ...body } });
    // "last" reads "words": renaming it away, or moving it after "last", would break the pipeline.
    const renamed = await edit(col.id, { column_type: "COUNT", name: "chars" });
    expect(renamed.status).toBe(400);
    expect((await json(renamed)).message).toMatch(/reads "words", which is neither/);
    const moved = await edit(col.id, { column_type: "COUNT", configuration: { source: "answer", type: "chars" }, position: 3 });
    expect(moved.status).toBe(200);
    expect((await json(moved)).report_column).toMatchObject({ name: "words", position: 3, configuration: { source: "answer", type: "chars" } });
    expect(await names()).toEqual(["1:n as number", "2:n > 1", "3:words", "4:last"]);
    const after = await edit(col.id, { column_type: "COUNT", position: 9 });
    expect(after.status).toBe(400);
    expect((await json(after)).message).toMatch(/reads "words", a column to its right/);
    expect((await edit(col.id, { column_type: "COUNT", report_id: 999_999_999 })).status).toBe(400);
    expect((await edit(col.id, { column_type: "COUNT" }, b.key)).status).toBe(404);
    expect((await edit(col.id, { column_type: "NOPE" })).status).toBe(400);
    expect(await names()).toEqual(["1:n as number", "2:n > 1", "3:words", "4:last"]);

    const cols = (await json(await call(`/reports/${p.report_id}`, { key: a.key }))).report_columns;
    const parse = cols.find((c: any) => c.name === "n as number");
    const last = cols.find((c: any) => c.name === "last");
    const blocked = await call(`/report-columns/${parse.id}`, { method: "DELETE", key: a.key });
    expect(blocked.status).toBe(400);
    expect((await json(blocked)).message).toMatch(/reads "n as number"/);
    expect((await call(`/report-columns/${last.id}`, { method: "DELETE", key: b.key })).status).toBe(404);
    const gone = await call(`/report-columns/${last.id}`, { method: "DELETE", key: a.key });
    expect(gone.status).toBe(204);
    expect(await gone.text()).toBe("");
    expect((await call(`/report-columns/${last.id}`, { method: "DELETE", key: a.key })).status).toBe(404);
    expect((await call(`/report-columns/${col.id}`, { method: "DELETE", key: a.key })).status).toBe(204);
    expect(await names()).toEqual(["1:n as number", "2:n > 1"]);
  });

  it("external IDs attach to pipelines through /reports/{report_id}/external-ids; another workspace's is a 404", async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const { groupId } = await dataset(a);
    const p = await pipeline(a, groupId);
    const path = `/reports/${p.report_id}/external-ids`;
    expect((await call(path, { method: "POST", key: a.key, json: { source: "s", external_id: "e" } })).status).toBe(201);
    expect((await json(await call(path, { key: a.key }))).external_ids).toEqual([{ source: "s", external_id: "e" }]);
    expect((await call(path, { key: b.key })).status).toBe(404);
    expect((await json(await call("/api/public/v2/evaluations?external_source=s&external_id=e", { key: a.key }))).evaluations.map((e: any) => e.id)).toEqual([p.report_id]);
    expect((await call(`${path}/s/e`, { method: "DELETE", key: a.key })).status).toBe(200);
  });
});

describe("API document", () => {
  it.each([
    ["post", "/reports", "201"],
    ["get", "/api/public/v2/evaluations", "200"],
    ["get", "/reports/{report_id}", "200"],
    ["delete", "/reports/{report_id}", "200"],
    ["post", "/reports/{report_id}/run", "201"],
    ["get", "/api/public/v2/evaluations/{evaluation_id}/rows", "200"],
    ["post", "/report-columns", "201"],
    ["patch", "/report-columns/{report_column_id}", "200"],
    ["delete", "/report-columns/{report_column_id}", "204"],
    ["post", "/api/public/v2/dataset-versions/create-draft", "201"],
    ["post", "/api/public/v2/dataset-versions/add-request-log", "201"],
    ["post", "/api/public/v2/dataset-versions/from-filter-params/preview", "200"],
  ])("%s %s answers %s", async (method, path, status) => {
    const doc = await json(await call("/openapi.json"));
    const op = doc.paths[path]?.[method];
    expect(op, `${method} ${path}`).toBeDefined();
    expect(Object.keys(op.responses)).toContain(status);
    expect(op.security).toEqual([{ ApiKeyAuth: [] }]);
  });
});
