// Schemas of the prompt registry endpoints (templates, versions, release labels), after PromptLayer's document.
import { z } from "@hono/zod-openapi";
import { NameText, PromptBlueprint } from "../../lib/schemas";
import { QueryBool, QueryInt, QueryList, ResourceFilterShape, SortBy, SortOrder } from "../../lib/query";
import { ExternalId, ExternalIdLookupShape, ExternalIdsInput } from "../external-ids/schemas";
import { KWARGS_PROVIDERS } from "../../converters";

export const PromptName = NameText(512);
export const LabelName = NameText(255);
const CommitMessage = z.string().max(72, "must be at most 72 characters").nullish();
const Tags = z.array(z.string().min(1, "must be 1 to 512 characters").max(512, "must be 1 to 512 characters")).max(100, "at most 100 tags");
const Metadata = z.looseObject({}).nullish().openapi({ description: "Metadata of the version, e.g. {model: {provider, name, parameters}}." });
export const ReleaseLabels = z.array(LabelName).max(50, "at most 50 labels").nullish();
const Obj = z.record(z.string(), z.unknown());

export const Identifier = z
  .string()
  .min(1)
  .max(512, "must be at most 512 characters")
  .openapi({ param: { name: "identifier", in: "path" }, description: "The template's id or name (a numeric identifier is tried as an id first).", example: "support-response" });

export const PublishBody = z
  .object({
    prompt_template: z.object({
      prompt_name: PromptName,
      tags: Tags.nullish(),
      folder_id: z.int().positive("must be a positive integer").nullish(),
      workspace_id: z.int().nullish(),
    }),
    prompt_version: z.object({
      prompt_template: PromptBlueprint,
      commit_message: CommitMessage,
      metadata: Metadata,
    }),
    release_labels: ReleaseLabels,
    external_ids: ExternalIdsInput,
  })
  .openapi("CreatePromptTemplate");

export const PublishedTemplate = z
  .object({
    id: z.int(),
    prompt_name: z.string(),
    prompt_version_id: z.int(),
    version_number: z.int(),
    tags: z.array(z.string()),
    release_labels: z.array(z.string()),
    prompt_template: Obj,
    metadata: Obj.nullable(),
    commit_message: z.string().nullable(),
    folder_id: z.int().nullable(),
    external_ids: z.array(ExternalId),
  })
  .openapi("CreatePromptTemplateResponse");

const ListPatch = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).nullish();

export const PatchBody = z
  .object({
    version: z.int().positive("must be > 0").nullish(),
    label: LabelName.nullish(),
    messages: ListPatch.openapi({ description: "Index-keyed object patches messages; an array replaces them all." }),
    tools: ListPatch,
    functions: ListPatch,
    function_call: z.union([z.string(), Obj]).nullish(),
    tool_choice: z.union([z.string(), Obj]).nullish(),
    content: ListPatch,
    model_parameters: Obj.nullish(),
    response_format: Obj.nullish(),
    commit_message: CommitMessage,
    release_labels: ReleaseLabels,
  })
  .openapi("PatchPromptTemplateVersion");

export const PatchedTemplate = PublishedTemplate.extend({ base_version: z.int() }).openapi("PatchPromptTemplateResponse");

/** What a fetch through a running A/B release answers beside the template (absent otherwise). */
export const ServedAbTest = z
  .object({
    id: z.int().openapi({ description: "The release (GET /api/public/v2/ab-tests/{id})." }),
    revision: z.int().openapi({ description: "The release's revision when it assigned the variant (every ramp or status change moves it on)." }),
    release_label: z.string(),
    variant: z.string().openapi({ description: "The variant's key; `version` is its version." }),
    segment: z.string().nullable().openapi({ description: "The segment whose split applied, or null for the release's own split." }),
    assignment: z.enum(["sticky", "random"]).openapi({ description: "sticky: from the unit (metadata_filters[assignment_key]); random: drawn for this request." }),
  })
  .openapi("ServedAbTest", {
    description:
      "The A/B release variant this answer serves: present only when `label` names a label a running release overloads (an addition to PromptLayer's answer, which SDKs ignore). The X-PromptEdge-AB header says the same as `id;variant;r<revision>;<assignment>`.",
  });

/** GET's metadata_filters, read by the handler from the raw query (metadata-filters.ts) in either form; declared for /openapi.json and MCP tools. */
export const MetadataFiltersQuery = z
  .string()
  .optional()
  .openapi({
    description:
      "The unit and segment of a running A/B release's assignment (the POST form's metadata_filters): a JSON object of key → value, or instead one " +
      "`metadata_filters[<key>]=<value>` parameter per key.",
  });

export const VersionQuery = z.object({
  version: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
  label: LabelName.optional(),
  metadata_filters: MetadataFiltersQuery,
  skip_input_variable_rendering: QueryBool.optional().openapi({ description: "Accepted for the SDKs; this route never fills input variables." }),
});

export const GetTemplateBody = z
  .object({
    version: z.int().positive("must be > 0").nullish(),
    label: LabelName.nullish(),
    workspace_id: z.int().nullish(),
    provider: z
      .enum(KWARGS_PROVIDERS, { error: `must be one of ${KWARGS_PROVIDERS.join(", ")}` })
      .nullish()
      .openapi({ description: "run()'s provider override: metadata.model.provider and llm_kwargs become that provider's (the blueprint converted as a version of that provider would be)." }),
    model: z
      .string()
      .min(1, "must not be empty")
      .max(256, "must be at most 256 characters")
      .nullish()
      .openapi({ description: "run()'s model override: replaces metadata.model.name and the model in llm_kwargs." }),
    input_variables: z.record(z.string(), z.unknown()).nullish(),
    prompt_release_label: LabelName.nullish().openapi({ description: "The SDK's name for `label` (run()'s prompt_release_label); giving both is a 400 unless they are equal." }),
    metadata_filters: z
      .record(z.string(), z.unknown())
      .nullish()
      .openapi({
        description:
          "What the SDKs send as run()'s `metadata`, for A/B releases: when `label` names a label a running release overloads, the value of the release's " +
          "assignment_key here is the unit of sticky assignment (the same unit always gets the same variant) and the segments are matched on these keys; " +
          "without the key the variant is drawn at random per request. Values are compared as text (a number or boolean as its JSON text). Ignored for a pinned `version` or the latest.",
      }),
    model_parameter_overrides: Obj.nullish().openapi({
      description: "run()'s parameter overrides, merged over metadata.model.parameters (a key set to null removes that parameter) and into llm_kwargs.",
    }),
    skip_input_variable_rendering: z
      .boolean()
      .nullish()
      .openapi({ description: "true: prompt_template and llm_kwargs keep their {var} / {{ var }} placeholders as written; input_variables are not applied." }),
  })
  .openapi("GetPromptTemplate");

export const TemplateVersion = z
  .object({
    success: z.literal(true),
    id: z.int(),
    prompt_name: z.string(),
    prompt_version_id: z.int(),
    version: z.int(),
    workspace_id: z.int(),
    folder_id: z.int().nullable(),
    prompt_template: Obj,
    metadata: Obj.nullable(),
    commit_message: z.string().nullable(),
    tags: z.array(z.string()),
    release_labels: z.array(z.string()),
    created_at: z.string(),
    updated_at: z.string(),
    snippets: z.array(Obj),
    llm_kwargs: Obj.nullable(),
    external_ids: z.array(ExternalId),
    ab_test: ServedAbTest.optional(),
  })
  .openapi("GetPromptTemplateResponse");

export const ListQuery = z.object({
  page: QueryInt(1, 1_000_000).default(1),
  per_page: QueryInt(1, 100).default(30),
  label: LabelName.optional(),
  name: z.string().max(512).optional(),
  tags: QueryList().optional(),
  ...ResourceFilterShape,
  sort_by: SortBy,
  sort_order: SortOrder,
  ...ExternalIdLookupShape,
});

export const ListTemplates = z
  .object({
    has_next: z.boolean(),
    has_prev: z.boolean(),
    items: z.array(
      z.object({
        id: z.int(),
        prompt_name: z.string(),
        prompt_version_id: z.int(),
        version: z.int(),
        prompt_template: Obj,
        metadata: Obj.nullable(),
        commit_message: z.string().nullable(),
        llm_kwargs: Obj.nullable(),
        tags: z.array(z.string()),
        folder_id: z.int().nullable(),
        created_at: z.string(),
        updated_at: z.string(),
        external_ids: z.array(ExternalId),
      }),
    ),
    next_num: z.int().nullable(),
    prev_num: z.int().nullable(),
    page: z.int(),
    pages: z.int(),
    total: z.int(),
  })
  .openapi("ListPromptTemplates");

export const TemplateLabels = z
  .object({
    release_labels: z.array(z.object({ prompt_version_id: z.int(), prompt_version_number: z.int(), release_label: z.string(), release_label_id: z.int() })),
  })
  .openapi("GetPromptTemplateLabelResponse");

export const CreateLabelBody = z.object({ prompt_version_number: z.int().positive("must be > 0"), name: LabelName }).openapi("CreatePromptLabel");
export const MoveLabelBody = z.object({ prompt_version_number: z.int().positive("must be > 0") }).openapi("MovePromptLabel");
export const ReleaseLabel = z
  .object({
    id: z.int(),
    name: z.string(),
    protected: z.boolean().openapi({ description: "A protected label moves only through an approved change request (PUT /api/public/v2/prompt-labels/{id}/protection)." }),
    prompt_id: z.int(),
    prompt_version_id: z.int(),
    prompt_version_number: z.int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("ReleaseLabel");

export const ChangeRequest = z
  .object({
    id: z.int(),
    prompt_template_id: z.int(),
    prompt_label_id: z.int(),
    prompt_template_label: z.string(),
    change_type: z.literal("move"),
    status: z.enum(["pending", "approved", "denied"]),
    prompt_version_number: z.int().openapi({ description: "The version the label is to move to." }),
    old_prompt_version_number: z.int().openapi({ description: "The version the label named when the move was asked." }),
    ab_test_id: z.int().nullable().openapi({ description: "The A/B release whose promote asked for the move, if one did." }),
    requested_by: z.int().nullable(),
    decided_by: z.int().nullable(),
    created_at: z.string(),
    decided_at: z.string().nullable(),
  })
  .openapi("LabelChangeRequest");

export const ChangeRequestAnswer = z.object({ success: z.literal(true), change_request: ChangeRequest }).openapi("LabelChangeRequestResponse");
