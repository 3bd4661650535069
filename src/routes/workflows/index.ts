// Workflows: POST /rest/workflows, PATCH /rest/workflows/{id_or_name}, GET /workflows,
// GET /workflows/{id_or_name}, GET /workflows/{id_or_name}/labels, POST /workflows/{name}/run and
// GET /workflow-version-execution-results. Thin handlers; the work is in services/workflows/.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { externalIdRoutes } from "../external-ids";
import { and, eq } from "drizzle-orm";
import { workflows } from "../../db/schema";
import { createWorkflowVersion, executionResults, getWorkflowVersion, listWorkflowLabels, listWorkflows, patchWorkflow, startRun } from "../../services/workflows";
import {
  CreateWorkflowBody,
  CreateWorkflowResponse,
  ExecutionResults,
  ExecutionResultsQuery,
  GetWorkflowQuery,
  IdOrNameParam,
  LabelsResponse,
  ListWorkflowsQuery,
  PatchWorkflowBody,
  RunWorkflowBody,
  RunWorkflowResponse,
  WorkflowDetail,
  WorkflowListResponse,
} from "./schemas";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

const createWorkflow = defineRoute({
  method: "post",
  path: "/rest/workflows",
  scope: "workflows:write",
  tags: ["workflows"],
  summary: "Create a workflow or a new version of one",
  description:
    "`name` creates a workflow (auto-generated when absent); `workflow_id` or `workflow_name` adds a version to an existing one. " +
    "Nodes are validated as a graph: unique names, dependencies that name a node or a required input variable, no cycles, " +
    "edges between existing nodes, and each configuration against its block type.",
  errors: [404, 409],
  request: { body: { required: true, content: { "application/json": { schema: CreateWorkflowBody } } } },
  responses: { 201: json(CreateWorkflowResponse, "The created version") },
});

const patchWorkflowRoute = defineRoute({
  method: "patch",
  path: "/rest/workflows/{workflow_id_or_name}",
  scope: "workflows:write",
  tags: ["workflows"],
  summary: "Create a version by changing a base version",
  description:
    "Starts from `base_version` (latest by default). `nodes` maps a node name to its change (configuration deep-merged, null removing a key; " +
    "other fields replaced) or to null (the node is removed, with its edges). `edges` and `required_input_variables` replace when given.",
  errors: [404],
  request: {
    params: z.object({ workflow_id_or_name: IdOrNameParam("workflow_id_or_name") }),
    body: { required: true, content: { "application/json": { schema: PatchWorkflowBody } } },
  },
  responses: { 201: json(CreateWorkflowResponse, "The created version, with base_version") },
});

const listWorkflowsRoute = defineRoute({
  method: "get",
  path: "/workflows",
  scope: "workflows:read",
  tags: ["workflows"],
  summary: "List workflows",
  description: "Paged (page, per_page 1..100) and sorted like the other lists; items carry latest_version_number and their release label names. created_by_email matches without regard to case.",
  request: { query: ListWorkflowsQuery },
  responses: { 200: json(WorkflowListResponse, "A page of workflows") },
});

const getWorkflow = defineRoute({
  method: "get",
  path: "/workflows/{workflow_id_or_name}",
  scope: "workflows:read",
  tags: ["workflows"],
  summary: "Get a workflow version (latest, by version, or by label)",
  description: "The latest version, or the one version or label names, with its nodes and edges; `workflow` describes the workflow itself (id, workspace, creator, name).",
  errors: [404],
  request: { params: z.object({ workflow_id_or_name: IdOrNameParam("workflow_id_or_name") }), query: GetWorkflowQuery },
  responses: { 200: json(WorkflowDetail, "The version with its nodes and edges") },
});

const getLabels = defineRoute({
  method: "get",
  path: "/workflows/{workflow_id_or_name}/labels",
  scope: "workflows:read",
  tags: ["workflows"],
  summary: "List a workflow's release labels",
  description: "Every release label of the workflow, with the version it names.",
  errors: [404],
  request: { params: z.object({ workflow_id_or_name: IdOrNameParam("workflow_id_or_name") }) },
  responses: { 200: json(LabelsResponse, "Each label and the version it names") },
});

const runWorkflow = defineRoute({
  method: "post",
  path: "/workflows/{workflow_name}/run",
  scope: "workflows:write",
  tags: ["workflows"],
  summary: "Run a workflow",
  description:
    "Runs the latest version, or the one `workflow_label_name` or `workflow_version_number` names, on the queue. The path takes the workflow's " +
    "name or id (a numeric one is tried as an id first). Poll GET /workflow-version-execution-results with the returned id, or listen on the realtime " +
    "channel (POST /ws-token-request-library): `workflow_updates:<execution id>`, and `workflows:<workflow id>:run:<channel_name_suffix>` when a suffix is given.",
  errors: [404],
  request: {
    params: z.object({ workflow_name: IdOrNameParam("workflow_name") }),
    body: { required: true, content: { "application/json": { schema: RunWorkflowBody } } },
  },
  responses: { 201: json(RunWorkflowResponse, "The execution was queued") },
});

const getResults = defineRoute({
  method: "get",
  path: "/workflow-version-execution-results",
  scope: "workflows:read",
  tags: ["workflows"],
  summary: "Get the results of a workflow run",
  description: "202 with every node's state while any node is QUEUED or RUNNING. Finished: the value of the first output node that succeeded (or, when none did, the output nodes' results), or with return_all_outputs=true every node's status, value and error.",
  errors: [404],
  request: { query: ExecutionResultsQuery },
  responses: {
    200: json(ExecutionResults, "The run is done"),
    202: json(ExecutionResults, "The run is still going: at least one node is QUEUED or RUNNING"),
  },
});

export function registerWorkflowRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(createWorkflow, async (c) => {
    const b = c.req.valid("json");
    const res = await createWorkflowVersion(c.var.deps.db, c.get("auth"), {
      ...b,
      nodes: b.nodes,
      edges: b.edges ?? [],
      requiredInputVariables: b.required_input_variables ?? {},
      commitMessage: b.commit_message ?? null,
      releaseLabels: [...new Set(b.release_labels ?? [])],
    });
    return c.json(res, 201);
  });

  app.openapi(patchWorkflowRoute, async (c) => {
    const res = await patchWorkflow(c.var.deps.db, c.get("auth"), c.req.valid("param").workflow_id_or_name, c.req.valid("json"));
    return c.json(res, 201);
  });

  app.openapi(listWorkflowsRoute, async (c) => c.json(await listWorkflows(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("query")), 200));

  app.openapi(getWorkflow, async (c) => {
    const res = await getWorkflowVersion(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").workflow_id_or_name, c.req.valid("query"));
    return c.json(res, 200);
  });

  app.openapi(getLabels, async (c) => c.json(await listWorkflowLabels(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").workflow_id_or_name), 200));

  app.openapi(runWorkflow, async (c) => {
    const res = await startRun(c.var.deps.db, c.var.deps.jobs, c.get("auth"), c.req.valid("param").workflow_name, c.req.valid("json"));
    return c.json(res, 201);
  });

  app.openapi(getResults, async (c) => {
    const q = c.req.valid("query");
    const { done, body } = await executionResults(c.var.deps.db, c.get("auth").workspaceId, q.workflow_version_execution_id, q.return_all_outputs ?? false);
    return c.json(body as Record<string, unknown>, done ? 200 : 202);
  });

  externalIdRoutes(app, {
    area: "workflows",
    entityType: "workflow",
    basePath: "/workflows",
    idParam: "workflow_id",
    label: "workflow",
    tag: "workflows",
    exists: async (db, ws, id) =>
      (await db.select({ id: workflows.id }).from(workflows).where(and(eq(workflows.workspaceId, ws), eq(workflows.id, id))).limit(1)).length > 0,
  });
}
