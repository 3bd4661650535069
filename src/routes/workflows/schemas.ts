// Request and response schemas of the workflow endpoints (PromptLayer's shapes); they also feed /openapi.json.
import { NameText } from "../../lib/schemas";
import { z } from "@hono/zod-openapi";
import { OPERATORS } from "../../services/workflows";
import { ExternalId, ExternalIdLookupShape, ExternalIdsInput } from "../external-ids/schemas";
import { QueryBool, QueryInt, ResourceFilterShape, SortBy } from "../../lib/query";
import { CHANNEL_SUFFIX } from "../../realtime/protocol";

const Name255 = NameText(255);
const LabelName = NameText(255);


export const WorkflowNodeSchema = z
  .looseObject({
    name: Name255,
    node_type: z.string().min(1, "must be a non-empty string"),
    is_output_node: z.boolean(),
    configuration: z.record(z.string(), z.unknown()),
    dependencies: z.array(z.string()).nullish().transform((d) => d ?? []),
  })
  .openapi("WorkflowNode");

const Operand = z
  .looseObject({ source: z.string().min(1).nullish(), static_value: z.unknown().optional() })
  .openapi({ description: "Either source (a node or input variable name) or static_value." });

export const EdgeSchema = z
  .looseObject({
    source_node_name: z.string().min(1),
    target_node_name: z.string().min(1),
    is_and: z.boolean(),
    conditionals: z
      .array(
        z.looseObject({
          position: z.int().min(0, "must be >= 0"),
          operator: z.enum(OPERATORS, { error: `must be one of ${OPERATORS.join(", ")}` }),
          left_config: Operand,
          right_config: Operand.nullish().transform((o) => o ?? {}),
        }),
      )
      .min(1, "must have at least one conditional"),
  })
  .openapi("Edge");

const InputVariables = z.record(z.string().min(1, "names must be non-empty"), z.string());
const Labels = z.array(LabelName).nullish();

export const CreateWorkflowBody = z
  .looseObject({
    name: Name255.nullish(),
    workflow_id: z.int().positive().nullish(),
    workflow_name: z.string().min(1).nullish(),
    folder_id: z.int().positive().nullish(),
    commit_message: z.string().max(10_000).nullish(),
    nodes: z.array(WorkflowNodeSchema),
    required_input_variables: InputVariables.nullish(),
    edges: z.array(EdgeSchema).nullish(),
    release_labels: Labels,
    external_ids: ExternalIdsInput,
  })
  .openapi("CreateWorkflow");
export type CreateWorkflowBody = z.infer<typeof CreateWorkflowBody>;

export const NodeUpdateSchema = z
  .looseObject({
    node_type: z.string().min(1).nullish(),
    configuration: z.record(z.string(), z.unknown()).nullish(),
    dependencies: z.array(z.string()).nullish(),
    is_output_node: z.boolean().nullish(),
  })
  .openapi("NodeUpdate");

export const PatchWorkflowBody = z
  .looseObject({
    base_version: z.int().positive().nullish(),
    commit_message: z.string().max(10_000).nullish(),
    nodes: z.record(Name255, NodeUpdateSchema.nullable()).nullish(),
    required_input_variables: InputVariables.nullish(),
    edges: z.array(EdgeSchema).nullish(),
    release_labels: Labels,
  })
  .openapi("PatchWorkflow");
export type PatchWorkflowBody = z.infer<typeof PatchWorkflowBody>;

export const CreateWorkflowResponse = z
  .object({
    success: z.boolean(),
    workflow_id: z.int(),
    workflow_name: z.string(),
    workflow_version_id: z.int(),
    version_number: z.int(),
    base_version: z.int().nullable(),
    release_labels: z.array(z.string()).nullable(),
    nodes: z.array(z.object({ id: z.string(), name: z.string(), node_type: z.string(), is_output_node: z.boolean() })),
    required_input_variables: z.record(z.string(), z.string()),
    external_ids: z.array(ExternalId),
  })
  .openapi("CreateWorkflowResponse");

export const WorkflowListItem = z.object({
  id: z.int(),
  workspace_id: z.int(),
  user_id: z.int().nullable(),
  name: z.string(),
  is_deleted: z.boolean(),
  latest_version_number: z.int().nullable(),
  release_labels: z.array(z.string()),
  external_ids: z.array(ExternalId),
  folder_id: z.int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const WorkflowListResponse = z
  .object({
    items: z.array(WorkflowListItem),
    page: z.int(),
    per_page: z.int(),
    total: z.int(),
    pages: z.int(),
    has_next: z.boolean(),
    has_prev: z.boolean(),
    next_num: z.int().nullable(),
    prev_num: z.int().nullable(),
  })
  .openapi("WorkflowList");

const PositiveIntQuery = (max?: number) => QueryInt(1, max);

export const ListWorkflowsQuery = z.object({
  page: PositiveIntQuery().optional(),
  per_page: PositiveIntQuery(100).optional(),
  ...ResourceFilterShape,
  ...ExternalIdLookupShape,
  sort_by: SortBy,
  sort_order: z.enum(["asc", "desc"], { error: "must be asc or desc" }).optional(),
});

export const IdOrNameParam = (name: string) =>
  z.string().min(1).max(255).openapi({ param: { name, in: "path" }, example: "my-workflow" });

export const GetWorkflowQuery = z.object({
  version: PositiveIntQuery().optional(),
  label: z.string().min(1).max(255).optional(),
});

export const WorkflowDetail = z
  .object({
    success: z.boolean(),
    workflow: z
      .object({ id: z.int(), workspace_id: z.int(), user_id: z.int().nullable(), name: z.string(), is_draft: z.boolean(), is_deleted: z.boolean() })
      .openapi({ description: "The workflow itself (what the Python SDK's run_workflow reads its id from)." }),
    workflow_id: z.int(),
    workflow_name: z.string(),
    version: z.int(),
    version_number: z.int(),
    workflow_version_id: z.int(),
    commit_message: z.string().nullable(),
    required_input_variables: z.record(z.string(), z.string()),
    release_labels: z.array(z.string()),
    created_at: z.string(),
    base_version: z.int().nullable(),
    nodes: z.array(
      z.object({
        id: z.string(),
        workflow_version_id: z.int(),
        name: z.string(),
        node_type: z.string(),
        is_output_node: z.boolean(),
        configuration: z.record(z.string(), z.unknown()),
        dependencies: z.array(z.string()),
      }),
    ),
    edges: z.array(
      z.object({ id: z.string(), source_node_name: z.string(), target_node_name: z.string(), is_and: z.boolean(), conditionals: z.array(z.record(z.string(), z.unknown())) }),
    ),
    external_ids: z.array(ExternalId),
  })
  .openapi("WorkflowVersionDetail");

export const LabelsResponse = z
  .object({
    success: z.boolean(),
    release_labels: z.array(z.object({ release_label: z.string(), release_label_id: z.int(), workflow_version_id: z.int(), workflow_version_number: z.int() })),
  })
  .openapi("WorkflowLabels");

export const RunWorkflowBody = z
  .looseObject({
    workflow_label_name: z.string().min(1).max(255).nullish(),
    workflow_version_number: z.int().positive().nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
    input_variables: z.record(z.string(), z.unknown()).nullish().transform((v) => v ?? {}),
    return_all_outputs: z.boolean().nullish().openapi({ description: "The shape of the outputs the realtime completion message carries (every node's result, or the main output)." }),
    callback_url: z.string().nullish(),
    channel_name_suffix: z
      .string()
      .regex(CHANNEL_SUFFIX, "must be 1 to 64 letters, digits, _ or -")
      .nullish()
      .openapi({
        description:
          "The Python SDK's: it asked a token for channel `workflows:<workflow id>:run:<suffix>` before the run and listens there; the run's end is published on it too.",
        example: "9f86d081884c7d659a2feaa0c55ad015",
      }),
  })
  .openapi("RunWorkflow");
export type RunWorkflowBody = z.infer<typeof RunWorkflowBody>;

export const RunWorkflowResponse = z
  .object({ success: z.boolean(), message: z.string(), warning: z.string().nullable(), workflow_version_execution_id: z.int() })
  .openapi("RunWorkflowResponse");

export const ExecutionResultsQuery = z.object({
  workflow_version_execution_id: PositiveIntQuery(),
  return_all_outputs: QueryBool.optional(),
});

export const NodeResult = z
  .object({ status: z.string(), value: z.unknown(), error_message: z.string().nullable(), raw_error_message: z.string().nullable(), is_output_node: z.boolean() })
  .openapi("WorkflowNodeResult");

export const ExecutionResults = z
  .union([z.record(z.string(), NodeResult), z.unknown()])
  .openapi("WorkflowExecutionResults", { description: "Node name → result, or the main output value when return_all_outputs is false and the run is done." });
