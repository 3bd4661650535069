// A block that ran away before (a backtracking REGEX, repeated `..*` in JSON_PATH) no longer holds
// the isolate that evaluates it: the run ends with a value or a clear error, and the same isolate
// answers other requests meanwhile. Before, the REGEX alone needed about 2^5000 steps.
//
// One block's evaluation is synchronous JavaScript, so "meanwhile" is between evaluations: the second
// test holds a run in the middle of the level that evaluates its runaway blocks (a node of that level
// waits on a fetch the test answers), sees those blocks' results written and the run still in progress,
// has the isolate answer other requests, then lets the run go on to a further runaway block and its end.
// With the backtracking engine the first REGEX never returned: the run never reached that point, and no
// request was answered again.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { workflowExecutionNodes, workflowExecutions } from "../../src/db/schema";
import { buildDeps } from "../../src/deps";
import worker from "../../src/index";
import { runExecution } from "../../src/services/workflows";
import { call, createWorkspace, json, type TestKey } from "../helpers/api";

async function results(key: string, id: number) {
  for (let i = 0; i < 400; i++) {
    const res = await call(`/workflow-version-execution-results?workflow_version_execution_id=${id}&return_all_outputs=true`, { key });
    if (res.status === 200) return json(res);
    expect(res.status).toBe(202);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the run did not finish");
}

const RUNAWAY_TEXT = `${"a".repeat(5000)}!`;
function deepDoc(): string {
  let deep: unknown = 1;
  for (let i = 0; i < 400; i++) deep = { a: deep };
  return JSON.stringify(deep);
}
const CAP_ERROR = "the path matches more than 10000 values; make it more specific";

/** The runaway blocks, all reading the run's inputs (plus `after` as a dependency when given). */
const runawayNodes = (suffix = "", after: string[] = []) => [
  { name: `backtrack${suffix}`, node_type: "REGEX", is_output_node: true, configuration: { source: "text", regex_pattern: "(a+)+$" }, dependencies: ["text", ...after] },
  { name: `extract${suffix}`, node_type: "REGEX_EXTRACTION", is_output_node: true, configuration: { source: "text", regex_pattern: "(a|aa)+b" }, dependencies: ["text", ...after] },
  { name: `everything${suffix}`, node_type: "JSON_PATH", is_output_node: true, configuration: { source: "doc", json_path: "$..*..*..*..*", return_first_match: false }, dependencies: ["doc", ...after] },
];

async function createWorkflow(ws: TestKey, nodes: unknown[]): Promise<string> {
  const name = `runaway-${crypto.randomUUID().slice(0, 8)}`;
  const created = await call("/rest/workflows", { method: "POST", key: ws.key, json: { name, required_input_variables: { text: "string", doc: "string" }, nodes } });
  expect(created.status, await created.clone().text()).toBe(201);
  return name;
}

/** A jobs queue that takes the run's message and delivers it to nobody: the test runs the execution itself. */
const silentQueue = { send: async () => {}, sendBatch: async () => {} } as unknown as Queue;

describe("runaway blocks", () => {
  it("a run of runaway REGEX and JSON_PATH blocks through the queue ends, each with a value or a clear error", { timeout: 120_000 }, async () => {
    const ws = await createWorkspace();
    const name = await createWorkflow(ws, runawayNodes());
    const started = await json(await call(`/workflows/${name}/run`, { method: "POST", key: ws.key, json: { input_variables: { text: RUNAWAY_TEXT, doc: deepDoc() } } }));
    const all = await results(ws.key, started.workflow_version_execution_id);
    expect(all.backtrack).toMatchObject({ status: "SUCCESS", value: false });
    expect(all.extract).toMatchObject({ status: "SUCCESS", value: [] });
    expect(all.everything).toMatchObject({ status: "FAILED", error_message: CAP_ERROR });
  });

  it("the isolate evaluating a run's runaway blocks answers other requests while that run is in progress, and the run then ends", { timeout: 120_000 }, async () => {
    const ws = await createWorkspace();
    // Level 1: the runaway blocks and `gate`, an ENDPOINT whose fetch the test answers. Level 2: one more runaway block.
    const name = await createWorkflow(ws, [
      ...runawayNodes(),
      { name: "gate", node_type: "ENDPOINT", is_output_node: false, configuration: { url: "http://gate.test/hold", method: "POST" }, dependencies: ["text"] },
      { name: "everything_after", node_type: "JSON_PATH", is_output_node: true, configuration: { source: "doc", json_path: "$..*..*..*..*", return_first_match: false }, dependencies: ["doc", "gate"] },
    ]);
    // Started through the Worker, its queue message sent nowhere: no consumer runs it but the test.
    const ctx = createExecutionContext();
    const req = new Request(`http://api.test/workflows/${name}/run`, {
      method: "POST",
      headers: { "X-API-KEY": ws.key, "Content-Type": "application/json" },
      body: JSON.stringify({ input_variables: { text: RUNAWAY_TEXT, doc: deepDoc() } }),
    });
    const res = await worker.fetch(req, { ...env, JOBS: silentQueue }, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(201);
    const executionId: number = (await json(res)).workflow_version_execution_id;

    let entered!: () => void;
    const gateEntered = new Promise<void>((r) => (entered = r));
    let answer!: (res: Response) => void;
    const gateAnswer = new Promise<Response>((r) => (answer = r));
    const gatedFetch = (async () => {
      entered();
      return gateAnswer;
    }) as unknown as typeof fetch;
    const deps = buildDeps(env);
    const blocks = { ...deps.blocks(ws.workspaceId), fetch: gatedFetch, endpoint: { timeoutMs: 120_000 } };
    const running = runExecution(deps.db, ws.workspaceId, executionId, blocks);

    const nodeStatus = async () => {
      const rows = await deps.db.select().from(workflowExecutionNodes).where(eq(workflowExecutionNodes.executionId, executionId));
      return Object.fromEntries(rows.map((r) => [r.nodeName, r.status]));
    };
    const runStatus = async () =>
      (await deps.db.select({ status: workflowExecutions.status }).from(workflowExecutions).where(and(eq(workflowExecutions.id, executionId), eq(workflowExecutions.workspaceId, ws.workspaceId))))[0].status;

    // The run is inside level 1, held at the gate; wait until that level's runaway blocks have their results.
    await gateEntered;
    const final = new Set(["SUCCESS", "FAILED"]);
    let status = await nodeStatus();
    for (let i = 0; i < 2000 && !["backtrack", "extract", "everything"].every((n) => final.has(status[n])); i++) {
      await new Promise((r) => setTimeout(r, 10));
      status = await nodeStatus();
    }
    expect(status).toMatchObject({ backtrack: "SUCCESS", extract: "SUCCESS", everything: "FAILED", gate: "RUNNING" });
    expect(status.everything_after ?? "QUEUED").toBe("QUEUED");
    expect(await runStatus()).toBe("RUNNING");

    // The same isolate answers other requests while the run is held there.
    for (let i = 0; i < 5; i++) expect((await call("/health")).status).toBe(200);
    expect((await call(`/workflow-version-execution-results?workflow_version_execution_id=${executionId}`, { key: ws.key })).status).toBe(202);
    expect((await nodeStatus()).gate).toBe("RUNNING");

    // Let it go: the gate answers, the last runaway block runs, the run ends with the cap's clear error.
    answer(new Response(JSON.stringify({ opened: true }), { headers: { "content-type": "application/json" } }));
    expect(await running).toBe("over");
    const all = await results(ws.key, executionId);
    expect(all.backtrack).toMatchObject({ status: "SUCCESS", value: false });
    expect(all.extract).toMatchObject({ status: "SUCCESS", value: [] });
    expect(all.everything).toMatchObject({ status: "FAILED", error_message: CAP_ERROR });
    expect(all.everything_after).toMatchObject({ status: "FAILED", error_message: CAP_ERROR });
    expect(await runStatus()).toBe("FAILED");
  });
});
