// Serving workspaces' jobs in turn (src/queue/turns.ts): long jobs work one slice per delivery and queue
// their continuation at the back, and a batch serves each workspace for one turn, sending the rest of
// its messages back. The consumer runs for real (its handlers, D1, the sheet objects); the queue is a
// FIFO of batches of 10 the test drives, so the order of what finishes is seen batch by batch. With
// JOB_SLICE_MS 0 a slice is one step and a turn one message: turns are counted, never timed.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { createApp } from "../../src/app";
import { getDb } from "../../src/db/client";
import { buildDeps } from "../../src/deps";
import type { Env } from "../../src/env";
import type { JobMessage } from "../../src/lib/jobs";
import { DEFAULT_JOB_SLICE_MS, inTurn, jobSliceMs, Turns } from "../../src/queue/turns";
import { queueDraftFill } from "../../src/services/datasets/datasets";
import { runDatasetFill } from "../../src/services/datasets/fill";
import { runExecution, startRun } from "../../src/services/workflows/runs";
import { call, createWorkspace, json, logsOf, type TestKey } from "../helpers/api";
import { logBody } from "../helpers/fixtures";
import { b64, newTable } from "../helpers/tables";

describe("turns (pure)", () => {
  it("a batch runs each workspace's first job, then each one's second…, keeping each workspace's own order", () => {
    const batch = ["A1", "A2", "A3", "A4", "B1", "C1", "B2", "x"].map((id) => ({ id, ws: id === "x" ? null : id.charCodeAt(0) }));
    expect(inTurn(batch, (m) => m.ws).map((m) => m.id)).toEqual(["A1", "B1", "C1", "x", "A2", "B2", "A3", "A4"]);
    expect(inTurn([], () => 1)).toEqual([]);
  });

  it("a workspace's turn: its first message always, more while its time in the batch is under the turn", () => {
    const turns = new Turns(100);
    expect(turns.open(1)).toBe(true);
    turns.spend(1, 60);
    expect(turns.open(1)).toBe(true);
    turns.spend(1, 40);
    expect(turns.open(1)).toBe(false);
    expect(turns.open(2)).toBe(true);
    const zero = new Turns(0);
    zero.spend(1, 0);
    expect([zero.open(1), zero.open(2)]).toEqual([false, true]);
  });

  it("JOB_SLICE_MS: a whole number of ms, 0 included; anything else is the default", () => {
    expect([jobSliceMs("2500"), jobSliceMs("0"), jobSliceMs(undefined), jobSliceMs(""), jobSliceMs("-1"), jobSliceMs("1.5"), jobSliceMs("x")]).toEqual([
      2500, 0, DEFAULT_JOB_SLICE_MS, DEFAULT_JOB_SLICE_MS, DEFAULT_JOB_SLICE_MS, DEFAULT_JOB_SLICE_MS, DEFAULT_JOB_SLICE_MS,
    ]);
  });
});

/** A queue the test delivers by hand: what is sent waits in order; deliver() hands the consumer the next batch. */
function handQueue() {
  const waiting: unknown[] = [];
  const queue = {
    send: async (body: unknown) => void waiting.push(body),
    sendBatch: async (items: { body: unknown }[]) => void waiting.push(...items.map((i) => i.body)),
  } as unknown as Queue;
  const bindings = { ...env, JOBS: queue, JOB_SLICE_MS: "0" } as Env;
  let delivery = 0;
  return {
    waiting,
    bindings,
    /** Runs the next batch (up to 10 messages, as wrangler.toml's consumer); none of it may be retried. */
    async deliver(): Promise<void> {
      const batch = createMessageBatch(
        "promptedge-jobs",
        waiting.splice(0, 10).map((body, i) => ({ id: `d${delivery}-${i}`, timestamp: new Date(), attempts: 1, body })),
      );
      delivery++;
      const ctx = createExecutionContext();
      await worker.queue(batch, bindings);
      const result = await getQueueResult(batch, ctx);
      expect(result.retryMessages).toEqual([]);
      expect(result.explicitAcks).toHaveLength(batch.messages.length);
    },
  };
}

/** A request to the Worker's app with the hand-driven queue's bindings: the jobs it queues wait there. */
async function callWith(bindings: Env, path: string, ws: TestKey, body: unknown): Promise<Response> {
  return createApp().fetch(
    new Request(`http://api.test${path}`, { method: "POST", headers: { "X-API-KEY": ws.key, "Content-Type": "application/json" }, body: JSON.stringify(body) }),
    bindings,
    createExecutionContext(),
  );
}

const csvOf = (rows: number) => `n\n${Array.from({ length: rows }, (_, i) => i).join("\n")}\n`;

async function startImport(bindings: Env, ws: TestKey, rows: number) {
  const t = await newTable(ws);
  const res = await callWith(bindings, `/api/public/v2/tables/${t.id}/sheets`, ws, { source: { type: "file", file_name: "n.csv", file_content_base64: b64(csvOf(rows)) } });
  expect(res.status, await res.clone().text()).toBe(202);
  return { ws, operationId: (await json(res)).operation_id as string, rows };
}

const importState = (ws: TestKey, operationId: string) =>
  env.DB.prepare("SELECT status, rows_added FROM sheet_operations WHERE workspace_id = ? AND id = ?")
    .bind(ws.workspaceId, operationId)
    .first<{ status: string; rows_added: number | null }>();

describe("the JOBS consumer serves workspaces in turn", { timeout: 120_000 }, () => {
  it("workspace B's small import queued after A's long imports started finishes before any of them, and every row of each lands once", async () => {
    const q = handQueue();
    const [a, b] = [await createWorkspace(), await createWorkspace()];
    // A: three imports of four batches each (2,000 rows a batch), queued and started.
    const longOnes = [await startImport(q.bindings, a, 8000), await startImport(q.bindings, a, 8000), await startImport(q.bindings, a, 8000)];
    await q.deliver();
    // B: one small import, queued behind A's work.
    const small = await startImport(q.bindings, b, 3);
    const finished: string[] = [];
    let aRowsWhenBFinished: number | null = null;
    for (let round = 0; q.waiting.length > 0; round++) {
      expect(round, "the queue drains").toBeLessThan(40);
      await q.deliver();
      for (const job of [...longOnes, small]) {
        const state = (await importState(job.ws, job.operationId))!;
        if (state.status !== "running" && state.status !== "pending" && !finished.includes(job.operationId)) {
          expect(state).toEqual({ status: "completed", rows_added: job.rows });
          finished.push(job.operationId);
          if (job === small) {
            aRowsWhenBFinished = 0;
            for (const l of longOnes) aRowsWhenBFinished += (await importState(a, l.operationId))!.rows_added ?? 0;
          }
        }
      }
    }
    // B first, while A had imported at most one batch per job (of four each); then all of A's.
    expect(finished[0]).toBe(small.operationId);
    expect(finished.slice(1).sort()).toEqual(longOnes.map((l) => l.operationId).sort());
    expect(aRowsWhenBFinished).toBeLessThanOrEqual(3 * 2000);
    // Every row of every import is in its sheet once.
    for (const l of longOnes) expect((await importState(a, l.operationId))!.rows_added).toBe(8000);
  });

  it("a batch of one workspace's jobs serves one per turn and sends the others back, their attempts unspent", async () => {
    const q = handQueue();
    const a = await createWorkspace();
    for (let i = 0; i < 4; i++) q.waiting.push({ v: 1, kind: "ping", workspace_id: a.workspaceId, token: `turn-${a.workspaceId}-${i}` });
    await q.deliver();
    const pinged = async () => (await env.BLOBS.list({ prefix: `queue-pings/${a.workspaceId}/` })).objects.length;
    expect(await pinged()).toBe(1);
    expect(q.waiting).toHaveLength(3);
    while (q.waiting.length > 0) await q.deliver();
    expect(await pinged()).toBe(4);
  });
});

describe("long jobs work in slices", { timeout: 60_000 }, () => {
  const db = getDb(env.DB);
  const auth = (ws: TestKey) => ({ workspaceId: ws.workspaceId, userId: ws.userId, userEmail: ws.email, apiKeyId: 0 });
  const over = { endsAt: 0 };

  it("a fill from logs: one chunk a slice, resumed at its offset, each log once at its position", async () => {
    const ws = await createWorkspace();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await json(await call("/log-request", { method: "POST", key: ws.key, json: logBody() }))).id);
    const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: `fill-${crypto.randomUUID()}` } }));
    const { jobId } = await queueDraftFill(db, auth(ws), { dataset_group_id: g.dataset_group.id, request_log_ids: ids });
    const offsets: number[] = [];
    let outcome = await runDatasetFill(db, logsOf, ws.workspaceId, jobId, undefined, { slice: over, chunk: 2 });
    while (outcome.state === "continue") {
      offsets.push(outcome.offset!);
      outcome = await runDatasetFill(db, logsOf, ws.workspaceId, jobId, undefined, { slice: over, chunk: 2, offset: outcome.offset });
    }
    expect(offsets).toEqual([2, 4]);
    expect(outcome).toMatchObject({ state: "completed", rowsAdded: 5 });
    const rows = await env.DB.prepare("SELECT position, request_log_id FROM dataset_rows WHERE job_id = ? ORDER BY position").bind(jobId).all<{ position: number; request_log_id: number }>();
    expect(rows.results).toEqual(ids.map((id, position) => ({ position, request_log_id: id })));
  });

  it("a fill from a file: one statement of rows a slice, resumed after the rows written", async () => {
    const ws = await createWorkspace();
    const g = await json(await call("/api/public/v2/dataset-groups", { method: "POST", key: ws.key, json: { name: `file-${crypto.randomUUID()}` } }));
    const sent: JobMessage[] = [];
    const bindings = { ...env, JOBS: { send: async (m: JobMessage) => void sent.push(m) } as unknown as Queue } as Env;
    const csv = `q\n${Array.from({ length: 2500 }, (_, i) => `r${i}`).join("\n")}\n`;
    const res = await callWith(bindings, "/api/public/v2/dataset-versions/from-file", ws, { dataset_group_id: g.dataset_group.id, file_name: "q.csv", file_content_base64: b64(csv) });
    expect(res.status, await res.clone().text()).toBe(201);
    const jobId = (sent[0] as Extract<JobMessage, { kind: "dataset_fill" }>).job_id;
    const deps = buildDeps(bindings);
    const states: string[] = [];
    for (let i = 0; i < 5 && states.at(-1) !== "loaded"; i++) states.push((await runDatasetFill(db, deps.logs, ws.workspaceId, jobId, deps.blobs, { slice: over })).state);
    expect(states).toEqual(["continue", "continue", "loaded"]);
    const rows = await env.DB.prepare("SELECT count(*) AS n, count(DISTINCT position) AS p, max(position) AS last FROM dataset_rows WHERE job_id = ?").bind(jobId).first();
    expect(rows).toEqual({ n: 2500, p: 2500, last: 2499 });
  });

  it("a workflow run: one level a slice, then over", async () => {
    const ws = await createWorkspace();
    const name = `wf-${crypto.randomUUID()}`;
    const variable = (n: string, deps: string[], out = false) => ({ name: n, node_type: "VARIABLE", is_output_node: out, configuration: { value: { type: "string", value: n } }, dependencies: deps });
    const created = await call("/rest/workflows", { method: "POST", key: ws.key, json: { name, nodes: [variable("one", []), variable("two", ["one"]), variable("three", ["two"], true)] } });
    expect(created.status, await created.clone().text()).toBe(201);
    const sent: JobMessage[] = [];
    const jobs = { send: async (m: JobMessage) => void sent.push(m) } as unknown as Queue;
    const id = (await startRun(db, jobs, auth(ws), name, { input_variables: {} })).workflow_version_execution_id as number;
    const ctx = buildDeps(env).blocks(ws.workspaceId);
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await runExecution(db, ws.workspaceId, id, ctx, over));
    expect(outcomes).toEqual(["continue", "continue", "over", "over"]);
    const done = await call(`/workflow-version-execution-results?workflow_version_execution_id=${id}`, { key: ws.key });
    expect(done.status).toBe(200);
    expect(await json(done)).toBe("three");
  });
});
