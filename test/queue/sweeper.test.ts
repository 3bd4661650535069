// Crash drills for every job kind: a job whose message was lost, or whose worker died mid-way, is
// re-queued by the sweeper once its heartbeat is older than the lease, resumes from what it
// committed (no row twice), and is failed with a message after the last re-queue.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { buildDeps } from "../../src/deps";
import type { Deps, Env } from "../../src/env";
import type { JobMessage } from "../../src/lib/jobs";
import { runDatasetFill } from "../../src/services/datasets/fill";
import { createDraft } from "../../src/services/datasets/drafts";
import { queueDraftFill } from "../../src/services/datasets/datasets";
import { runEvaluationBatch, startEvaluationRun } from "../../src/services/evaluations/runs";
import { runScheduled } from "../../src/queue/scheduled";
import { sweepJobs, type SweepSettings } from "../../src/queue/sweeper";
import { createFileImport, runImport } from "../../src/services/tables";
import { findOperation } from "../../src/services/tables/sheets";
import { runExecution, startRun } from "../../src/services/workflows/runs";
import { call, createWorkspace, json, logsOf, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { newTable } from "../helpers/tables";

const SETTINGS: SweepSettings = { leaseMs: 60_000, maxRedrives: 2 };
const db = getDb(env.DB);
const auth = (ws: TestKey) => ({ workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 });
const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;

/** Deps whose queue records what is sent and delivers nothing: every message is "lost" until the test runs it. */
function recordingDeps() {
  const sent: JobMessage[] = [];
  const jobs = { send: async (m: JobMessage) => void sent.push(m), sendBatch: async (ms: { body: JobMessage }[]) => void sent.push(...ms.map((m) => m.body)) } as unknown as Queue;
  const deps = buildDeps({ ...env, JOBS: jobs } as Env);
  return { deps, sent, jobs };
}

/** A sweep as if the clock stood `after` ms past the job's heartbeat plus the lease. */
const sweepAt = (deps: Deps, heartbeat: number, after: number) => sweepJobs(deps, heartbeat + SETTINGS.leaseMs + after, SETTINGS);

describe("sheet imports", () => {
  async function pendingImport(deps: Deps, rows: number) {
    const ws = await createWorkspace();
    const t = await newTable(ws);
    const csv = `n\n${Array.from({ length: rows }, (_, i) => i).join("\n")}\n`;
    const blobKey = `imports/${ws.workspaceId}/${crypto.randomUUID()}`;
    await env.BLOBS.put(blobKey, csv);
    const created = await createFileImport(deps, auth(ws), t.id, { title: null, index: null, operationId: null, fileName: "n.csv", file: { blobKey, bytes: csv.length, error: null } });
    return { ws, op: created.operation, sheetId: created.sheet.id };
  }
  const rowsOf = async (sheetId: string) => (await env.SHEETS.get(env.SHEETS.idFromName(sheetId)).readRows({ limit: 100 })).rows.length;

  it("a lost message: nothing before the lease ends, re-queued just after, then the import completes", async () => {
    const { deps, sent } = recordingDeps();
    const { ws, op, sheetId } = await pendingImport(deps, 30);
    sent.length = 0;
    const stored = (await findOperation(db, ws.workspaceId, op.id))!;
    expect((await sweepAt(deps, stored.updatedAt, 0)).requeued).toEqual({});
    expect((await sweepAt(deps, stored.updatedAt, 1)).requeued).toEqual({ sheet_import: 1 });
    expect(sent).toEqual([{ v: 1, kind: "sheet_import", workspace_id: ws.workspaceId, operation_id: op.id }]);
    // The claim refreshed the heartbeat: the same sweep again finds nothing.
    expect((await sweepAt(deps, stored.updatedAt, 1)).requeued).toEqual({});
    await runImport(deps, ws.workspaceId, op.id);
    expect((await findOperation(db, ws.workspaceId, op.id))!.status).toBe("completed");
    expect(await rowsOf(sheetId)).toBe(30);
  });

  it("a worker killed mid-import: the re-queued run resumes after the last committed batch, no row twice", async () => {
    const { deps, sent } = recordingDeps();
    const { ws, op, sheetId } = await pendingImport(deps, 45);
    const killed = new Error("worker killed");
    await expect(runImport(deps, ws.workspaceId, op.id, { batchRows: 10, afterBatch: (b) => { if (b === 1) throw killed; } })).rejects.toBe(killed);
    const stalled = (await findOperation(db, ws.workspaceId, op.id))!;
    expect(stalled.status).toBe("running");
    sent.length = 0;
    expect((await sweepAt(deps, stalled.updatedAt, 1)).requeued).toEqual({ sheet_import: 1 });
    await runImport(deps, ws.workspaceId, (sent[0] as Extract<JobMessage, { kind: "sheet_import" }>).operation_id, { batchRows: 10 });
    const done = (await findOperation(db, ws.workspaceId, op.id))!;
    expect(done).toMatchObject({ status: "completed", rowsAdded: 45 });
    expect(await rowsOf(sheetId)).toBe(45);
  });

  it("after the last re-queue the import fails with a message that says why", async () => {
    const { deps } = recordingDeps();
    const { ws, op } = await pendingImport(deps, 3);
    await env.DB.prepare("UPDATE sheet_operations SET redrives = ? WHERE id = ?").bind(SETTINGS.maxRedrives, op.id).run();
    const stored = (await findOperation(db, ws.workspaceId, op.id))!;
    expect((await sweepAt(deps, stored.updatedAt, 1)).failed).toEqual({ sheet_import: 1 });
    const failed = (await findOperation(db, ws.workspaceId, op.id))!;
    expect(failed.status).toBe("failed");
    expect(failed.errorMessage).toBe("the job stopped 3 times without finishing (its worker was restarted) and was given up; create the import again");
  });
});

describe("dataset fills", () => {
  async function draftWithLostFill(ws: TestKey) {
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) ids.push((await json(await call("/log-request", { method: "POST", key: ws.key, json: logBody() }))).id);
    const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("set") } }));
    // The service alone: the route would queue the job; here its message is "lost".
    const queued = await queueDraftFill(db, auth(ws), { dataset_group_id: g.dataset_group.id, request_log_ids: ids });
    return { jobId: queued.jobId, datasetId: queued.datasetId };
  }
  const job = (id: number) => env.DB.prepare("SELECT status, updated_at, rows_added FROM dataset_jobs WHERE id = ?").bind(id).first<{ status: string; updated_at: number; rows_added: number | null }>();

  it("a lost fill message is re-queued after the lease and the fill completes once", async () => {
    const { deps, sent } = recordingDeps();
    const ws = await createWorkspace();
    const { jobId } = await draftWithLostFill(ws);
    const before = (await job(jobId))!;
    expect((await sweepAt(deps, before.updated_at, 0)).requeued).toEqual({});
    expect((await sweepAt(deps, before.updated_at, 1)).requeued).toEqual({ dataset_fill: 1 });
    expect(sent).toEqual([{ v: 1, kind: "dataset_fill", workspace_id: ws.workspaceId, job_id: jobId }]);
    expect(await runDatasetFill(db, logsOf, ws.workspaceId, jobId)).toMatchObject({ state: "completed", rowsAdded: 4 });
    // A duplicate delivery of the re-queued message changes nothing.
    expect(await runDatasetFill(db, logsOf, ws.workspaceId, jobId)).toEqual({ state: "skipped" });
    expect((await job(jobId))!).toMatchObject({ status: "COMPLETED", rows_added: 4 });
  });

  it("a lost copy (a draft made from a saved version) is re-queued the same way and copies every row once", async () => {
    const { deps, sent } = recordingDeps();
    const ws = await createWorkspace();
    const { jobId } = await draftWithLostFill(ws);
    await runDatasetFill(db, logsOf, ws.workspaceId, jobId);
    const groupId = (await env.DB.prepare("SELECT d.dataset_group_id AS g FROM dataset_jobs j JOIN datasets d ON d.id = j.dataset_id WHERE j.id = ?").bind(jobId).first<{ g: number }>())!.g;
    const saved = await json(await call("/api/public/v2/dataset-versions/save-draft", { method: "POST", key: ws.key, json: { dataset_group_id: groupId } }));
    const copy = await createDraft(db, auth(ws), { dataset_group_id: groupId, source_dataset_id: saved.draft_dataset_id });
    expect(copy.queued).toBe(true);
    const before = (await job(copy.jobId!))!;
    sent.length = 0;
    expect((await sweepAt(deps, before.updated_at, 1)).requeued).toEqual({ dataset_fill: 1 });
    expect(sent).toEqual([{ v: 1, kind: "dataset_fill", workspace_id: ws.workspaceId, job_id: copy.jobId }]);
    expect(await runDatasetFill(db, logsOf, ws.workspaceId, copy.jobId!)).toEqual({ state: "copied", datasetId: copy.draftDatasetId, rowsAdded: 4 });
  });

  it("after the last re-queue the fill is FAILED, so the draft is not busy for good", async () => {
    const { deps } = recordingDeps();
    const ws = await createWorkspace();
    const { jobId } = await draftWithLostFill(ws);
    await env.DB.prepare("UPDATE dataset_jobs SET redrives = ? WHERE id = ?").bind(SETTINGS.maxRedrives, jobId).run();
    const before = (await job(jobId))!;
    expect((await sweepAt(deps, before.updated_at, 1)).failed).toEqual({ dataset_fill: 1 });
    expect((await job(jobId))!.status).toBe("FAILED");
  });
});

describe("evaluation runs", () => {
  async function lostRun(deps: Deps, ws: TestKey) {
    const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: uniq("set") } }));
    const datasetId = g.dataset.id as number;
    await env.DB.prepare(`INSERT INTO dataset_rows (workspace_id, dataset_id, job_id, position, "values") VALUES (?1, ?2, 0, 0, '{"a":"x"}'), (?1, ?2, 0, 1, '{"a":"y"}')`)
      .bind(ws.workspaceId, datasetId)
      .run();
    await env.DB.prepare(`UPDATE datasets SET version_number = 1, column_names = '["a"]' WHERE id = ?`).bind(datasetId).run();
    const p = await json(
      await call("/reports", {
        method: "POST",
        key: ws.key,
        json: { dataset_group_id: g.dataset_group.id, name: uniq("eval"), columns: [{ column_type: "COMBINE_COLUMNS", name: "both", configuration: { sources: ["a"] }, is_part_of_score: false }] },
      }),
    );
    const runId = await startEvaluationRun(db, deps.jobs, auth(ws), p.report_id, { name: uniq("run"), dataset_id: datasetId });
    return runId;
  }
  const report = (id: number) => env.DB.prepare("SELECT status, updated_at FROM reports WHERE id = ?").bind(id).first<{ status: string; updated_at: number }>();

  it("a run whose message was lost is re-queued after the lease and completes", async () => {
    const { deps, sent } = recordingDeps();
    const ws = await createWorkspace();
    const runId = await lostRun(deps, ws);
    sent.length = 0;
    const r = (await report(runId))!;
    expect(r.status).toBe("RUNNING");
    expect((await sweepAt(deps, r.updated_at, 0)).requeued).toEqual({});
    expect((await sweepAt(deps, r.updated_at, 1)).requeued).toEqual({ evaluation_run: 1 });
    expect(sent).toEqual([{ v: 1, kind: "evaluation_run", workspace_id: ws.workspaceId, report_id: runId }]);
    expect(await runEvaluationBatch(db, ws.workspaceId, runId, deps.blocks(ws.workspaceId))).toBe("completed");
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM report_rows WHERE report_id = ? AND state = 'DONE'").bind(runId).first<{ n: number }>();
    expect(rows!.n).toBe(2);
  });

  it("after the last re-queue the run completes with its unwritten cells FAILED and the reason", async () => {
    const { deps } = recordingDeps();
    const ws = await createWorkspace();
    const runId = await lostRun(deps, ws);
    await env.DB.prepare("UPDATE reports SET redrives = ? WHERE id = ?").bind(SETTINGS.maxRedrives, runId).run();
    expect((await sweepAt(deps, (await report(runId))!.updated_at, 1)).failed).toEqual({ evaluation_run: 1 });
    expect((await report(runId))!.status).toBe("COMPLETED");
    const cells = await env.DB.prepare("SELECT cells FROM report_rows WHERE report_id = ? LIMIT 1").bind(runId).first<{ cells: string }>();
    expect(cells!.cells).toContain("was given up");
  });
});

describe("workflow runs", () => {
  async function lostRun(deps: Deps, ws: TestKey) {
    const name = uniq("wf");
    const created = await call("/rest/workflows", {
      method: "POST",
      key: ws.key,
      json: { name, nodes: [{ name: "out", node_type: "VARIABLE", is_output_node: true, configuration: { value: { type: "string", value: "done" } }, dependencies: [] }] },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const started = await startRun(db, deps.jobs, auth(ws), name, { input_variables: {} });
    return started.workflow_version_execution_id as number;
  }
  const exec = (id: number) => env.DB.prepare("SELECT status, created_at, heartbeat_at FROM workflow_executions WHERE id = ?").bind(id).first<{ status: string; created_at: number; heartbeat_at: number | null }>();

  it("a run whose message was lost (no heartbeat yet) is re-queued after the lease and completes", async () => {
    const { deps, sent } = recordingDeps();
    const ws = await createWorkspace();
    const id = await lostRun(deps, ws);
    sent.length = 0;
    const e = (await exec(id))!;
    expect(e.heartbeat_at).toBeNull();
    expect((await sweepAt(deps, e.created_at, 0)).requeued).toEqual({});
    expect((await sweepAt(deps, e.created_at, 1)).requeued).toEqual({ workflow_run: 1 });
    expect(sent).toEqual([{ v: 1, kind: "workflow_run", workspace_id: ws.workspaceId, execution_id: id }]);
    expect(await runExecution(db, ws.workspaceId, id, deps.blocks(ws.workspaceId))).toBe("over");
    expect((await exec(id))!.status).toBe("COMPLETED");
  });

  it("after the last re-queue the run is FAILED with the reason on its unfinished nodes", async () => {
    const { deps } = recordingDeps();
    const ws = await createWorkspace();
    const id = await lostRun(deps, ws);
    await env.DB.prepare("UPDATE workflow_executions SET redrives = ? WHERE id = ?").bind(SETTINGS.maxRedrives, id).run();
    expect((await sweepAt(deps, (await exec(id))!.created_at, 1)).failed).toEqual({ workflow_run: 1 });
    expect((await exec(id))!.status).toBe("FAILED");
    const node = await env.DB.prepare("SELECT status, error_message FROM workflow_execution_nodes WHERE execution_id = ?").bind(id).first<{ status: string; error_message: string }>();
    expect(node).toMatchObject({ status: "FAILED", error_message: expect.stringContaining("was given up") });
  });
});

describe("the cron", () => {
  it("runs the job sweep: a stale job is re-queued by the scheduled handler's work", async () => {
    const { deps, sent } = recordingDeps();
    const ws = await createWorkspace();
    const name = uniq("wf");
    await call("/rest/workflows", {
      method: "POST",
      key: ws.key,
      json: { name, nodes: [{ name: "out", node_type: "VARIABLE", is_output_node: true, configuration: { value: { type: "string", value: "x" } }, dependencies: [] }] },
    });
    const started = await startRun(db, deps.jobs, auth(ws), name, { input_variables: {} });
    sent.length = 0;
    // Past the default lease (10 minutes): the cron's own settings.
    await runScheduled(deps, Date.now() + 11 * 60_000);
    expect(sent).toContainEqual({ v: 1, kind: "workflow_run", workspace_id: ws.workspaceId, execution_id: started.workflow_version_execution_id });
  });
});
