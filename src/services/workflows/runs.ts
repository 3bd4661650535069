// Workflow runs: POST …/run records an execution with one row per node and queues it; the queue job
// executes the nodes level by level (a level's nodes concurrently), honouring conditional edges, and
// records each node's status, value and error. A redelivered job resumes: finished nodes keep their
// results (no LLM call is made twice for a node that finished), unfinished ones run again. Given a
// slice, a run stops after the level that uses it up and answers "continue": its next delivery
// resumes at the next level the same way.
import { assertRoomForJob } from "../workspace";
import { and, eq, inArray, sql } from "drizzle-orm";
import { evaluateBlock, type BlockContext } from "../../blocks";
import type { Db } from "../../db/client";
import { workflowExecutionNodes, workflowExecutions, workflowVersions, type NodeStatus } from "../../db/schema";
import { col, columnList } from "../../db/sql";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { chainIncludes } from "../../lib/error-text";
import { enqueue, sliceOver, type JobSlice } from "../../lib/jobs";
import { edgePasses, validateGraph, type EdgeSpec, type NodeSpec } from "./graph";
import { findVersion, findWorkflow } from "./workflows";
import { channelOf, completionMessage, runChannelOf, type ChannelMessage } from "../../realtime/protocol";
import { runBatch } from "../../db/batch";

export interface RunInput {
  workflow_label_name?: string | null;
  workflow_version_number?: number | null;
  metadata?: Record<string, string> | null;
  input_variables: Record<string, unknown>;
  callback_url?: string | null;
  return_all_outputs?: boolean | null;
  /** The Python SDK's: the run also ends on channel workflows:<workflow id>:run:<suffix>. */
  channel_name_suffix?: string | null;
}

export async function startRun(db: Db, jobs: Queue, auth: AuthContext, workflowName: string, body: RunInput) {
  if (body.workflow_label_name != null && body.workflow_version_number != null) {
    throw new ApiError("validation_error", "workflow_label_name, workflow_version_number: give one of them, not both", {
      details: [{ field: "workflow_version_number", rule: "mutually exclusive with workflow_label_name" }],
    });
  }
  if (body.callback_url != null) {
    throw new ApiError("validation_error", "callback_url: callbacks are not supported; poll GET /workflow-version-execution-results", {
      details: [{ field: "callback_url", rule: "not supported" }],
    });
  }
  const wf = await findWorkflow(db, auth.workspaceId, workflowName);
  if (!wf) throw ApiError.notFound(`workflow ${JSON.stringify(workflowName)}`);
  const v = await findVersion(db, wf, { version: body.workflow_version_number, label: body.workflow_label_name });
  const required = Object.keys(v.requiredInputVariables);
  const missing = required.filter((k) => !Object.prototype.hasOwnProperty.call(body.input_variables, k));
  if (missing.length > 0) {
    throw new ApiError("validation_error", `input_variables: missing required input variables: ${missing.join(", ")}`, {
      details: missing.map((m) => ({ field: `input_variables.${m}`, rule: "is required by the workflow" })),
    });
  }
  const unused = Object.keys(body.input_variables).filter((k) => !required.includes(k));
  const nodeRows = v.nodes.map((n) => ({ name: n.name, out: n.is_output_node ? 1 : 0 }));
  await assertRoomForJob(db, auth.workspaceId, "workflow_run");
  const [, inserted] = await runBatch(db, [
    db.insert(workflowExecutions).values({
      workspaceId: auth.workspaceId,
      workflowId: wf.id,
      workflowVersionId: v.id,
      inputVariables: body.input_variables,
      metadata: body.metadata ?? null,
      createdBy: auth.userId,
      returnAllOutputs: body.return_all_outputs ?? false,
      channelNameSuffix: body.channel_name_suffix ?? null,
    }),
    // AUTOINCREMENT ids only grow and the batch is one transaction: the workspace's newest execution is ours.
    sql`INSERT INTO ${workflowExecutionNodes} (${columnList(workflowExecutionNodes, ["executionId", "nodeName", "isOutputNode"])})
        SELECT (SELECT MAX(${workflowExecutions.id}) FROM ${workflowExecutions} WHERE ${workflowExecutions.workspaceId} = ${auth.workspaceId}), json_extract(j.value, '$.name'), json_extract(j.value, '$.out')
        FROM json_each(${JSON.stringify(nodeRows)}) j RETURNING ${col(workflowExecutionNodes.executionId)}`,
  ]);
  const executionId = (inserted.results[0] as { execution_id: number }).execution_id;
  try {
    await enqueue(jobs, { v: 1, kind: "workflow_run", workspace_id: auth.workspaceId, execution_id: executionId });
  } catch (err) {
    await db.update(workflowExecutions).set({ status: "FAILED", finishedAt: Date.now() }).where(eq(workflowExecutions.id, executionId));
    await db
      .update(workflowExecutionNodes)
      .set({ status: "FAILED", errorMessage: "the run could not be queued" })
      .where(eq(workflowExecutionNodes.executionId, executionId));
    throw err;
  }
  return {
    success: true,
    message: "Workflow execution started",
    warning: unused.length > 0 ? `input variables not used by the workflow: ${unused.join(", ")}` : null,
    workflow_version_execution_id: executionId,
  };
}

const FINAL: ReadonlySet<NodeStatus> = new Set(["SUCCESS", "FAILED", "SKIPPED"]);

/** Records a node's state; the run's heartbeat moves with it, so the job sweeper leaves a live run alone. */
async function recordNode(db: Db, executionId: number, name: string, status: NodeStatus, value: unknown, error: string | null) {
  const where = and(eq(workflowExecutionNodes.executionId, executionId), eq(workflowExecutionNodes.nodeName, name));
  const heartbeat = db.update(workflowExecutions).set({ heartbeatAt: Date.now() }).where(eq(workflowExecutions.id, executionId));
  try {
    await runBatch(db, [db.update(workflowExecutionNodes).set({ status, value: value ?? null, errorMessage: error }).where(where), heartbeat]);
  } catch (err) {
    if (!chainIncludes(err, /SQLITE_TOOBIG|too big/i)) throw err;
    await runBatch(db, [
      db.update(workflowExecutionNodes).set({ status: "FAILED", value: null, errorMessage: "the node's value is larger than the database accepts" }).where(where),
      heartbeat,
    ]);
  }
}

/** What a node does given its upstream results: run, or not (and why). */
function decide(nodeNames: Set<string>, upstream: string[], inputs: string[], incoming: EdgeSpec[], status: Map<string, NodeStatus>, values: Record<string, unknown>) {
  const failed = upstream.find((u) => status.get(u) === "FAILED");
  if (failed) return { run: false as const, status: "FAILED" as const, error: `dependency "${failed}" failed` };
  const nodeInputs = inputs.filter((i) => nodeNames.has(i));
  // A node all of whose node inputs were skipped sits on a branch not taken.
  if (nodeInputs.length > 0 && nodeInputs.every((i) => status.get(i) === "SKIPPED")) return { run: false as const, status: "SKIPPED" as const, error: null };
  if (incoming.length > 0 && !incoming.some((e) => status.get(e.source_node_name) === "SUCCESS" && edgePasses(e, values))) {
    return { run: false as const, status: "SKIPPED" as const, error: null };
  }
  return { run: true as const };
}

/**
 * The queue job: runs (or resumes) one execution; safe to redeliver. "over": the run has ended (its
 * watchers can be told); "continue": the slice was used up with levels left; "missing": no such run.
 */
export async function runExecution(db: Db, workspaceId: number, executionId: number, ctx: BlockContext, slice?: JobSlice): Promise<"over" | "continue" | "missing"> {
  const [exec] = await db.select().from(workflowExecutions).where(and(eq(workflowExecutions.id, executionId), eq(workflowExecutions.workspaceId, workspaceId))).limit(1);
  if (!exec) return "missing";
  if (exec.status === "COMPLETED" || exec.status === "FAILED") return "over";
  const [version] = await db.select().from(workflowVersions).where(eq(workflowVersions.id, exec.workflowVersionId)).limit(1);
  const nodes: NodeSpec[] = version.nodes;
  const plan = validateGraph(nodes, version.edges as unknown as EdgeSpec[], version.requiredInputVariables);
  const rows = await db.select().from(workflowExecutionNodes).where(eq(workflowExecutionNodes.executionId, executionId));
  const status = new Map<string, NodeStatus>(rows.map((r) => [r.nodeName, r.status]));
  const values: Record<string, unknown> = { ...exec.inputVariables };
  for (const r of rows) if (FINAL.has(r.status)) values[r.nodeName] = r.status === "SUCCESS" ? r.value : null;
  await db.update(workflowExecutions).set({ status: "RUNNING", heartbeatAt: Date.now() }).where(eq(workflowExecutions.id, executionId));

  if (!plan.ok) {
    // Stored versions were validated when written; this only guards against a block schema that got stricter.
    const why = plan.issues.map((i) => `${i.field}: ${i.rule}`).join("; ");
    for (const n of nodes) if (!FINAL.has(status.get(n.name) ?? "QUEUED")) await recordNode(db, executionId, n.name, "FAILED", null, `the workflow version is no longer valid: ${why}`);
  } else {
    const byName = new Map(nodes.map((n) => [n.name, n]));
    const nodeNames = new Set(byName.keys());
    let ran = false;
    for (const level of plan.plan.levels) {
      const open = level.filter((name) => !FINAL.has(status.get(name) ?? "QUEUED"));
      if (open.length === 0) continue;
      // A level run and the slice used up: the next delivery takes the levels left.
      if (ran && sliceOver(slice)) {
        await db.update(workflowExecutions).set({ heartbeatAt: Date.now() }).where(eq(workflowExecutions.id, executionId));
        return "continue";
      }
      ran = true;
      await Promise.all(
        level.map(async (name) => {
          if (FINAL.has(status.get(name) ?? "QUEUED")) return;
          const node = byName.get(name)!;
          const d = decide(nodeNames, plan.plan.upstream[name], plan.plan.inputsOf[name], plan.plan.incomingEdges[name], status, values);
          if (!d.run) {
            status.set(name, d.status);
            values[name] = null;
            await recordNode(db, executionId, name, d.status, null, d.error);
            return;
          }
          await recordNode(db, executionId, name, "RUNNING", null, null);
          const inputs = Object.fromEntries(plan.plan.inputsOf[name].map((i) => [i, values[i] ?? null]));
          const result = await evaluateBlock(node.node_type, node.configuration, inputs, ctx);
          status.set(name, result.ok ? "SUCCESS" : "FAILED");
          values[name] = result.ok ? result.value : null;
          await recordNode(db, executionId, name, result.ok ? "SUCCESS" : "FAILED", result.ok ? result.value : null, result.ok ? null : result.error);
        }),
      );
    }
  }
  const after = await db.select({ status: workflowExecutionNodes.status }).from(workflowExecutionNodes).where(eq(workflowExecutionNodes.executionId, executionId));
  const anyFailed = after.some((r) => r.status === "FAILED");
  await db.update(workflowExecutions).set({ status: anyFailed ? "FAILED" : "COMPLETED", finishedAt: Date.now() }).where(eq(workflowExecutions.id, executionId));
  return "over";
}

/** The run was given up (dead-letter queue, or the job sweeper): unfinished nodes fail, so results stop answering 202. */
export async function giveUpExecution(db: Db, workspaceId: number, executionId: number, reason = "the run failed repeatedly and was given up"): Promise<void> {
  const [exec] = await db.select({ status: workflowExecutions.status }).from(workflowExecutions).where(and(eq(workflowExecutions.id, executionId), eq(workflowExecutions.workspaceId, workspaceId))).limit(1);
  if (!exec || exec.status === "COMPLETED" || exec.status === "FAILED") return;
  await runBatch(db, [
    db
      .update(workflowExecutionNodes)
      .set({ status: "FAILED", errorMessage: reason })
      .where(and(eq(workflowExecutionNodes.executionId, executionId), inArray(workflowExecutionNodes.status, ["QUEUED", "RUNNING"]))),
    db.update(workflowExecutions).set({ status: "FAILED", finishedAt: Date.now() }).where(eq(workflowExecutions.id, executionId)),
  ]);
}

export interface NodeResultView {
  status: NodeStatus;
  value: unknown;
  error_message: string | null;
  raw_error_message: string | null;
  is_output_node: boolean;
}

/**
 * Results in PromptLayer's shape: done → 200, running → 202. Without return_all_outputs a finished run
 * answers its main output: the value of the first output node (in node order) that succeeded; when no
 * output node succeeded it answers the output nodes' results, so the error is visible.
 */
export async function executionResults(db: Db, workspaceId: number, executionId: number, returnAll: boolean): Promise<{ done: boolean; body: unknown }> {
  const [exec] = await db.select().from(workflowExecutions).where(and(eq(workflowExecutions.id, executionId), eq(workflowExecutions.workspaceId, workspaceId))).limit(1);
  if (!exec) throw ApiError.notFound(`workflow version execution ${executionId}`);
  const [version] = await db.select({ nodes: workflowVersions.nodes }).from(workflowVersions).where(eq(workflowVersions.id, exec.workflowVersionId)).limit(1);
  const rows = await db.select().from(workflowExecutionNodes).where(eq(workflowExecutionNodes.executionId, executionId));
  const order = new Map(version.nodes.map((n, i) => [n.name, i]));
  rows.sort((a, b) => (order.get(a.nodeName) ?? 0) - (order.get(b.nodeName) ?? 0));
  const view = (r: (typeof rows)[number]): NodeResultView => ({
    status: r.status,
    value: r.value ?? null,
    error_message: r.errorMessage ?? null,
    raw_error_message: r.errorMessage ?? null,
    is_output_node: r.isOutputNode,
  });
  const done = rows.every((r) => FINAL.has(r.status));
  if (returnAll || !done) return { done, body: Object.fromEntries(rows.map((r) => [r.nodeName, view(r)])) };
  const main = rows.find((r) => r.isOutputNode && r.status === "SUCCESS");
  if (main) return { done, body: main.value ?? null };
  return { done, body: Object.fromEntries(rows.filter((r) => r.isOutputNode).map((r) => [r.nodeName, view(r)])) };
}

/**
 * What a finished run tells its realtime channels: its execution's (the JavaScript SDK's) and, when
 * the Python SDK named one, workflows:<workflow id>:run:<suffix>; each carries the outputs in the
 * shape the run's return_all_outputs asked for (or sends the SDK to the results when they are large).
 */
export async function runDoneMessages(db: Db, workspaceId: number, executionId: number): Promise<ChannelMessage[]> {
  const [exec] = await db
    .select({ workflowId: workflowExecutions.workflowId, returnAll: workflowExecutions.returnAllOutputs, suffix: workflowExecutions.channelNameSuffix })
    .from(workflowExecutions)
    .where(and(eq(workflowExecutions.id, executionId), eq(workflowExecutions.workspaceId, workspaceId)))
    .limit(1);
  if (!exec) return [];
  const { done, body } = await executionResults(db, workspaceId, executionId, exec.returnAll);
  const message = completionMessage(executionId, done ? body : undefined);
  const channels = [channelOf(executionId), ...(exec.suffix ? [runChannelOf(exec.workflowId, exec.suffix)] : [])];
  return channels.map((channel) => ({ channel, message }));
}
