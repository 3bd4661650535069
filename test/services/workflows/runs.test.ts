// The run job as a unit: redelivery never duplicates rows and never re-runs a finished node.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../../src/index";
import { call, createWorkspace, json } from "../../helpers/api";

async function setup() {
  const ws = await createWorkspace();
  const name = `unit-run-${crypto.randomUUID().slice(0, 8)}`;
  const wf = await json(
    await call("/rest/workflows", {
      method: "POST",
      key: ws.key,
      json: {
        name,
        required_input_variables: { text: "string" },
        nodes: [
          { name: "first", node_type: "PROMPT_TEMPLATE", is_output_node: false, configuration: { template: { prompt_template: { type: "completion", content: [{ type: "text", text: "{text}" }] } } } },
          { name: "count", node_type: "COUNT", is_output_node: true, configuration: { source: "first", type: "words" } },
        ],
      },
    }),
  );
  const exec = await env.DB.prepare("INSERT INTO workflow_executions (workspace_id, workflow_id, workflow_version_id, input_variables) VALUES (?, ?, ?, ?) RETURNING id")
    .bind(ws.workspaceId, wf.workflow_id, wf.workflow_version_id, JSON.stringify({ text: "[[reply:one two three]]" }))
    .first<{ id: number }>();
  await env.DB.prepare("INSERT INTO workflow_execution_nodes (execution_id, node_name, is_output_node) VALUES (?1, 'first', 0), (?1, 'count', 1)").bind(exec!.id).run();
  return { ws, executionId: exec!.id };
}

async function deliver(workspaceId: number, executionId: number, id: string) {
  const batch = createMessageBatch("promptedge-jobs", [{ id, timestamp: new Date(), attempts: 1, body: { v: 1, kind: "workflow_run", workspace_id: workspaceId, execution_id: executionId } }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  return getQueueResult(batch, ctx);
}

const nodes = (executionId: number) =>
  env.DB.prepare("SELECT node_name, status, value, error_message FROM workflow_execution_nodes WHERE execution_id = ? ORDER BY node_name").bind(executionId).all();

describe("the workflow_run job", () => {
  it("runs once; a redelivery changes nothing", async () => {
    const { ws, executionId } = await setup();
    expect((await deliver(ws.workspaceId, executionId, "w1")).explicitAcks).toEqual(["w1"]);
    const after = (await nodes(executionId)).results;
    expect(after).toEqual([
      { node_name: "count", status: "SUCCESS", value: "3", error_message: null },
      { node_name: "first", status: "SUCCESS", value: '"one two three"', error_message: null },
    ]);
    expect((await deliver(ws.workspaceId, executionId, "w2")).explicitAcks).toEqual(["w2"]);
    expect((await nodes(executionId)).results).toEqual(after);
    const exec = await env.DB.prepare("SELECT status FROM workflow_executions WHERE id = ?").bind(executionId).first();
    expect(exec).toEqual({ status: "COMPLETED" });
  });

  it("resumes: a node that finished before the crash keeps its result", async () => {
    const { ws, executionId } = await setup();
    await env.DB.prepare("UPDATE workflow_execution_nodes SET status = 'SUCCESS', value = '\"kept from before\"' WHERE execution_id = ? AND node_name = 'first'").bind(executionId).run();
    await env.DB.prepare("UPDATE workflow_executions SET status = 'RUNNING' WHERE id = ?").bind(executionId).run();
    await deliver(ws.workspaceId, executionId, "w3");
    expect((await nodes(executionId)).results).toEqual([
      { node_name: "count", status: "SUCCESS", value: "3", error_message: null },
      { node_name: "first", status: "SUCCESS", value: '"kept from before"', error_message: null },
    ]);
  });

  it("ignores an execution of another workspace", async () => {
    const { executionId } = await setup();
    const other = await createWorkspace();
    await deliver(other.workspaceId, executionId, "w4");
    expect((await nodes(executionId)).results.every((r: any) => r.status === "QUEUED")).toBe(true);
  });
});
