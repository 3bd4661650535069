// Fair shares of background work: each workspace has at most JOB_CAPS[kind] jobs of a kind queued or
// running (imports, dataset fills, evaluation runs, workflow runs, signal backfills); one more is a 429
// with Retry-After and creates nothing, other workspaces are unaffected.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { assertRoomForJob, JOB_CAPS, JOB_RETRY_AFTER_SECONDS } from "../../src/services/workspace";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";
import { b64, importFile, newTable, pollOperation } from "../helpers/tables";
import { newSignal, SIGNALS } from "../helpers/signals";

/** Makes `n` open imports of the workspace (rows as a queued import leaves them; no job runs them). */
async function openImports(ws: TestKey, n: number) {
  for (let i = 0; i < n; i++) {
    await env.DB.prepare("INSERT INTO sheet_operations (workspace_id, id, table_id, sheet_id, source, status) VALUES (?, ?, 'held', 'held', 'file', 'pending')")
      .bind(ws.workspaceId, crypto.randomUUID())
      .run();
  }
}
const closeAll = (ws: TestKey) => env.DB.prepare("UPDATE sheet_operations SET status = 'failed' WHERE workspace_id = ? AND table_id = 'held'").bind(ws.workspaceId).run();
const sheetsOf = async (tableId: string) => (await env.DB.prepare("SELECT count(*) AS n FROM sheets WHERE table_id = ?").bind(tableId).first<{ n: number }>())!.n;

describe("the cap on open jobs per workspace", () => {
  it(`imports: ${JOB_CAPS.sheet_import - 1} open take one more; at ${JOB_CAPS.sheet_import} the next is a 429 with Retry-After and stores nothing; another workspace is not held`, async () => {
    const ws = await createWorkspace();
    const other = await createWorkspace();
    const table = await newTable(ws);
    await openImports(ws, JOB_CAPS.sheet_import - 2);
    const ok = await importFile(ws, table.id, "a.csv", "x\n1\n");
    expect(ok.status).toBe(202);
    const made = await json(ok);
    // The one just made ends on its own (the queue runs it): wait for it, then hold the workspace at
    // its cap with rows no job runs, so the count cannot drop before the requests that must be refused.
    await pollOperation(ws, table.id, made.operation_id);
    await openImports(ws, 2);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM sheet_operations WHERE workspace_id = ? AND status IN ('pending', 'running')").bind(ws.workspaceId).first<{ n: number }>())!.n).toBe(JOB_CAPS.sheet_import);
    const before = await sheetsOf(table.id);
    const refused = await importFile(ws, table.id, "b.csv", "x\n2\n");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe(String(JOB_RETRY_AFTER_SECONDS));
    const body = await json(refused);
    expect(body).toMatchObject({ success: false, error: "rate_limited", message: expect.stringMatching(/^the workspace has 5 imports queued or running/) });
    expect(await sheetsOf(table.id)).toBe(before);
    // Into an existing sheet, the same.
    const sheetId = made.sheet.id;
    const into = await call(`/api/public/v2/tables/${table.id}/sheets/${sheetId}/imports/file`, { method: "POST", key: ws.key, json: { file_name: "c.csv", file_content_base64: b64("x\n3\n") } });
    expect(into.status).toBe(429);
    // Another workspace imports as usual.
    const otherTable = await newTable(other);
    expect((await importFile(other, otherTable.id, "o.csv", "x\n1\n")).status).toBe(202);
    // Once one ends, the workspace may import again.
    await env.DB.prepare("UPDATE sheet_operations SET status = 'failed' WHERE seq = (SELECT max(seq) FROM sheet_operations WHERE workspace_id = ? AND table_id = 'held')").bind(ws.workspaceId).run();
    expect((await importFile(ws, table.id, "d.csv", "x\n4\n")).status).toBe(202);
    await closeAll(ws);
  });

  it(`workflow runs: at ${JOB_CAPS.workflow_run} queued or running, the next run is a 429`, async () => {
    const ws = await createWorkspace();
    const wf = await json(await call("/rest/workflows", { method: "POST", key: ws.key, json: { name: `cap-${crypto.randomUUID().slice(0, 8)}`, nodes: [{ name: "o", node_type: "VARIABLE", is_output_node: true, configuration: { value: { type: "string", value: "x" } }, dependencies: [] }] } }));
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO workflow_executions (workspace_id, workflow_id, workflow_version_id, input_variables, status) SELECT ?, ?, ?, '{}', 'RUNNING' FROM n`,
    )
      .bind(JOB_CAPS.workflow_run, ws.workspaceId, wf.workflow_id, wf.workflow_version_id)
      .run();
    const res = await call(`/workflows/${wf.workflow_id}/run`, { method: "POST", key: ws.key, json: { input_variables: {} } });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe(String(JOB_RETRY_AFTER_SECONDS));
    await env.DB.prepare("UPDATE workflow_executions SET status = 'FAILED' WHERE workspace_id = ? AND status = 'RUNNING' AND id = (SELECT max(id) FROM workflow_executions WHERE workspace_id = ?)").bind(ws.workspaceId, ws.workspaceId).run();
    expect((await call(`/workflows/${wf.workflow_id}/run`, { method: "POST", key: ws.key, json: { input_variables: {} } })).status).toBe(201);
    await env.DB.prepare("UPDATE workflow_executions SET status = 'FAILED' WHERE workspace_id = ? AND status = 'RUNNING'").bind(ws.workspaceId).run();
  });

  it("dataset fills and evaluation runs: the same rule", async () => {
    const ws = await createWorkspace();
    const db = getDb(env.DB);
    await env.DB.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO dataset_jobs (workspace_id, dataset_id, params, status) SELECT ?, 0, '{}', 'QUEUED' FROM n`)
      .bind(JOB_CAPS.dataset_fill, ws.workspaceId)
      .run();
    const fill = await call("/api/public/v2/dataset-versions/from-filter-params", { method: "POST", key: ws.key, json: { dataset_group_id: 1 } });
    expect(fill.status).toBe(429);
    await expect(assertRoomForJob(db, ws.workspaceId, "dataset_fill")).rejects.toMatchObject({ status: 429 });
    await expect(assertRoomForJob(db, ws.workspaceId, "evaluation_run")).resolves.toBeUndefined();
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO reports (workspace_id, name, is_blueprint, dataset_group_id, dataset_id, status) SELECT ?, 'r', 0, 0, 0, 'RUNNING' FROM n`,
    )
      .bind(JOB_CAPS.evaluation_run, ws.workspaceId)
      .run();
    await expect(assertRoomForJob(db, ws.workspaceId, "evaluation_run")).rejects.toMatchObject({ status: 429, headers: { "Retry-After": String(JOB_RETRY_AFTER_SECONDS) } });
    await env.DB.prepare("UPDATE dataset_jobs SET status = 'FAILED' WHERE workspace_id = ?").bind(ws.workspaceId).run();
    await env.DB.prepare("UPDATE reports SET status = 'COMPLETED' WHERE workspace_id = ?").bind(ws.workspaceId).run();
  });

  it(`signal backfills: ${JOB_CAPS.signal_backfill} open over all the workspace's signals, the next a 429 with Retry-After that stores nothing; the signal's own cap of 3 stays a 409`, async () => {
    const [ws, other] = [await createWorkspace(), await createWorkspace()];
    const signals = [await newSignal(ws), await newSignal(ws), await newSignal(ws), await newSignal(ws)];
    /** Holds `n` backfills of `signalId` open (rows as a queued backfill leaves them; no job runs them). */
    const hold = (signalId: number, n: number) =>
      env.DB.prepare(`INSERT INTO signal_backfills (workspace_id, signal_id, status, from_ms, to_ms, sample_rate, max_logs) SELECT ?, ?, 'queued', 0, 1, 1, 1 FROM json_each(?)`)
        .bind(ws.workspaceId, signalId, JSON.stringify(Array.from({ length: n }, (_, i) => i)))
        .run();
    const open = async () => (await env.DB.prepare("SELECT count(*) AS n FROM signal_backfills WHERE workspace_id = ? AND status IN ('queued', 'running')").bind(ws.workspaceId).first<{ n: number }>())!.n;
    const backfill = (signalId: number, key = ws.key) => call(`${SIGNALS}/${signalId}/backfills`, { method: "POST", key, json: { from: 0, to: 10 } });
    // One short of the cap, no signal at its own: one more is taken.
    await hold(signals[1].id, 2);
    await hold(signals[2].id, JOB_CAPS.signal_backfill - 3);
    expect((await backfill(signals[0].id)).status).toBe(202);
    // At the cap (the one just made may have finished already: top up to be sure).
    await hold(signals[3].id, JOB_CAPS.signal_backfill - (await open()));
    expect(await open()).toBe(JOB_CAPS.signal_backfill);
    const before = (await env.DB.prepare("SELECT count(*) AS n FROM signal_backfills WHERE workspace_id = ?").bind(ws.workspaceId).first<{ n: number }>())!.n;
    const refused = await backfill(signals[0].id);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe(String(JOB_RETRY_AFTER_SECONDS));
    expect(await json(refused)).toMatchObject({ success: false, error: "rate_limited", message: expect.stringMatching(/^the workspace has 5 signal backfills queued or running/) });
    expect((await env.DB.prepare("SELECT count(*) AS n FROM signal_backfills WHERE workspace_id = ?").bind(ws.workspaceId).first<{ n: number }>())!.n).toBe(before);
    // Another workspace backfills as usual.
    expect((await backfill((await newSignal(other)).id, other.key)).status).toBe(202);
    // A signal at its own cap is still told so (409), whatever the workspace has.
    await env.DB.prepare("UPDATE signal_backfills SET status = 'failed' WHERE workspace_id = ? AND signal_id != ?").bind(ws.workspaceId, signals[1].id).run();
    await hold(signals[1].id, 1);
    expect(await open()).toBe(3);
    expect((await backfill(signals[1].id)).status).toBe(409);
    // Once some end, the workspace may backfill again.
    expect((await backfill(signals[0].id)).status).toBe(202);
    await env.DB.prepare("UPDATE signal_backfills SET status = 'failed' WHERE workspace_id = ?").bind(ws.workspaceId).run();
  });
});
