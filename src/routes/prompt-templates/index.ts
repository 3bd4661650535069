// The prompt registry: publish and patch templates, read them by id or name (version or label),
// list them, and manage release labels (POST /prompts/{id}/label, PATCH|DELETE /prompt-labels/{id}).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { IdParam, PromptBlueprint } from "../../lib/schemas";
import { validationError } from "../../lib/validation";
import { ApiError } from "../../lib/errors";
import { requireOwnWorkspace } from "../../http/workspace";
import { createLabel, deleteLabel, getTemplateVersion, listTemplates, moveLabel, patchTemplate, publishTemplate, snippetUsage, templateLabels, templateReadSource, upsertTemplateByExternalId, changeRequestViews, labelAsItStands, AB_HEADER, abHeaderValue, type TemplateVersionRead, type TemplateVersionView } from "../../services/registry";
import { asksForFresh, CACHE_STATE_HEADER, templateExists } from "../../prompts";
import { purgesPromptCache } from "../../http/prompt-cache";
import { afterAnswer } from "../../http/after-answer";
import { externalIdRoutes } from "../external-ids";
import { metadataFiltersQuery } from "./metadata-filters";
import { ExternalIdSource, ExternalIdValue } from "../external-ids/schemas";
import { QueryInt } from "../../lib/query";
import {
  ChangeRequest,
  CreateLabelBody,
  GetTemplateBody,
  Identifier,
  ListQuery,
  ListTemplates,
  MoveLabelBody,
  PatchBody,
  PatchedTemplate,
  PublishBody,
  PublishedTemplate,
  ReleaseLabel,
  TemplateLabels,
  TemplateVersion,
  VersionQuery,
} from "./schemas";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const tags = ["prompt templates"];

/** The SDK's templates.get sends no body (or `null`) when it has no parameters: read that as {}. */
const emptyBodyIsObject: MiddlewareHandler<AppEnv> = async (c, next) => {
  const text = await c.req.text();
  // Hono caches body reads as promises (its type says string).
  if (text.trim() === "" || text.trim() === "null") (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve("{}");
  await next();
};

const publish = defineRoute({
  method: "post",
  path: "/rest/prompt-templates",
  scope: "prompts:write",
  tags,
  summary: "Publish a prompt template",
  description: "Creates the template with version 1, or adds the next version when the name exists. `release_labels` are created on, or moved to, the new version.",
  errors: [404, 409],
  middleware: [purgesPromptCache],
  request: { body: { required: true, content: { "application/json": { schema: PublishBody } } } },
  responses: { 200: json(PublishedTemplate, "The template and its new version") },
});

const patch = defineRoute({
  method: "patch",
  path: "/rest/prompt-templates/{identifier}",
  scope: "prompts:write",
  tags,
  summary: "Create a version from a base version and a patch",
  description: "Bases on the latest version, or the one version or label names; index-keyed objects patch messages, tools, functions or content, arrays replace them, null removes tools, functions, function_call and tool_choice. model_parameters merges into metadata.model.parameters. Chat-only fields on a completion template, content on a chat template and an index past the end are 400s. The answer is the version this call wrote, with base_version.",
  errors: [404],
  middleware: [purgesPromptCache],
  request: { params: z.object({ identifier: Identifier }), body: { required: true, content: { "application/json": { schema: PatchBody } } } },
  responses: { 201: json(PatchedTemplate, "The new version") },
});

const list = defineRoute({
  method: "get",
  path: "/prompt-templates",
  scope: "prompts:read",
  tags,
  summary: "List prompt templates",
  description: "Paged (page, per_page 1..100, default 30). Each item is the latest version, or the labelled one when `label` is given (templates without it are left out). `tags` must all be present.",
  request: { query: ListQuery },
  responses: { 200: json(ListTemplates, "One page of templates") },
});

/** What both template reads say of the edge cache (src/prompts/cache.ts, docs/registry.md). */
const EDGE_CACHE =
  " Answered from the edge cache of the data centre when it may: a read pinned to a version is checked against the database on every hit and is never stale; " +
  "a read by label or of the latest version may be up to PROMPT_CACHE_TTL_MS old (5 s by default) after a change made through another data centre " +
  "(a change made through this one purges it before it answers). `Cache-Control: no-cache`, or an X-PromptEdge-Bookmark newer than the cached read " +
  "(the bookmark of one's own publish), reads fresh. Input variables and overrides are applied per request; the answer is the same from the cache or not.";

const CacheStateHeader = z.object({
  [CACHE_STATE_HEADER]: z.enum(["hit", "miss", "bypass"]).openapi({
    description: "hit: answered from the edge cache; miss: read from the database (and kept); bypass: read fresh because the request asked (Cache-Control).",
  }),
  [AB_HEADER]: z
    .string()
    .optional()
    .openapi({ description: "Only on an answer an A/B release served: `<ab_test id>;<variant>;r<revision>;<sticky|random>`, as the answer's ab_test says." }),
});

/** What both template reads say of A/B releases (docs/ab-releases.md). */
const RELEASES =
  " A `label` that a running A/B release overloads (/api/public/v2/ab-tests) is served the version the release assigns: sticky per unit when the release has an " +
  "assignment_key and metadata_filters carry its value, random per request otherwise; the answer then adds `ab_test` and the X-PromptEdge-AB header. A pinned " +
  "`version` or the latest never goes through a release, and without a running release the answer is exactly as before.";

/** A template read's route: its description says what the edge cache does, its 200 names the header that says which answered. */
function edgeCached<R extends { description?: string; responses: { 200: object } }>(route: R): R {
  return { ...route, description: (route.description ?? "") + EDGE_CACHE, responses: { ...route.responses, 200: { ...route.responses[200], headers: CacheStateHeader } } };
}

const getRaw = edgeCached(defineRoute({
  method: "get",
  path: "/prompt-templates/{identifier}",
  scope: "prompts:read",
  tags,
  summary: "Get a prompt template",
  description:
    "A numeric identifier is tried as an id, then as a name; version and label together are a 400. The raw template: input variables are never filled here " +
    "(POST /prompt-templates/{identifier} fills them), so skip_input_variable_rendering is accepted and changes nothing; @@@name@@@ snippets are filled with " +
    "that template's latest version; llm_kwargs holds the provider-ready arguments for the version's model, placeholders as written. " +
    "`metadata_filters[<key>]=<value>` query parameters (at most 50) are the POST form's metadata_filters." +
    RELEASES,
  errors: [404],
  request: { params: z.object({ identifier: Identifier }), query: VersionQuery },
  responses: { 200: json(TemplateVersion, "The selected version (latest by default)") },
}));

const getWithBody = edgeCached(defineRoute({
  method: "post",
  path: "/prompt-templates/{identifier}",
  scope: "prompts:read",
  tags,
  summary: "Get a prompt template (SDK form)",
  description:
    "What the SDKs' templates.get and run() call. `input_variables` fill f-string `{var}` / jinja2 `{{ var }}` placeholders in the text blocks of prompt_template and llm_kwargs, " +
    "a missing variable becoming empty; without input_variables they are filled the same way (all empty) when the version has a model (llm_kwargs not null), as PromptLayer does. " +
    "`skip_input_variable_rendering: true` answers the placeholders as written, in both, whatever input_variables say (what the Python SDK's template cache fetches, to fill them itself). " +
    "run()'s overrides are applied here, since the SDKs hand `llm_kwargs` to the provider as they are: `model_parameter_overrides` merged over the version's parameters, " +
    "`model` and `provider` replacing the version's, and the answered `metadata.model` and `llm_kwargs` built from the result (a provider switch converts the blueprint " +
    "as a version of that provider would be, and keeps `api_type` only between OpenAI, Azure OpenAI and Mistral). The stored version does not change." +
    RELEASES,
  errors: [404],
  middleware: [emptyBodyIsObject],
  request: { params: z.object({ identifier: Identifier }), body: { required: false, content: { "application/json": { schema: GetTemplateBody } } } },
  responses: { 200: json(TemplateVersion, "The selected version") },
}));

const labels = defineRoute({
  method: "get",
  path: "/prompt-templates/{identifier}/labels",
  scope: "prompts:read",
  tags: [...tags, "release labels"],
  summary: "List a template's release labels",
  description: "Every release label of the template, with the version it names.",
  errors: [404],
  request: { params: z.object({ identifier: Identifier }) },
  responses: { 200: json(TemplateLabels, "The labels and the versions they name") },
});

const createLabelRoute = defineRoute({
  method: "post",
  path: "/prompts/{prompt_id}/label",
  scope: "prompts:write",
  tags: ["release labels"],
  summary: "Create a release label on a version",
  description: "A version that does not exist is a 404; a label name already on this prompt is a 409 (move it with PATCH /prompt-labels/{id}). A new label is not protected.",
  errors: [404, 409],
  middleware: [purgesPromptCache],
  request: { params: z.object({ prompt_id: IdParam("prompt_id") }), body: { required: true, content: { "application/json": { schema: CreateLabelBody } } } },
  responses: { 200: json(ReleaseLabel, "The label") },
});

const moveLabelRoute = defineRoute({
  method: "patch",
  path: "/prompt-labels/{prompt_label_id}",
  scope: "prompts:write",
  tags: ["release labels"],
  summary: "Move a release label to another version of its prompt",
  errors: [404, 409],
  description:
    "Moves the label to another version (prompt_version_number) of its own prompt; a number the prompt has no version for is a 404. " +
    "A protected label is not moved: the answer is the label as it stands with `change_request`, a pending change request (and prompt_template_label_change_requested " +
    "is emitted), carried out by POST /api/public/v2/label-change-requests/{id}/approve; a label with a pending request already is a 409.",
  middleware: [purgesPromptCache],
  request: { params: z.object({ prompt_label_id: IdParam("prompt_label_id") }), body: { required: true, content: { "application/json": { schema: MoveLabelBody } } } },
  responses: {
    200: json(
      ReleaseLabel.extend({ change_request: ChangeRequest.optional().openapi({ description: "Only for a protected label: the pending request its move waits on (the label is not moved)." }) }).openapi("MovedReleaseLabel"),
      "The moved label, or a protected label unmoved with its pending change request",
    ),
  },
});

const deleteLabelRoute = defineRoute({
  method: "delete",
  path: "/prompt-labels/{prompt_label_id}",
  scope: "prompts:write",
  tags: ["release labels"],
  summary: "Delete a release label",
  description: "Deletes the label; the version it named stays. A protected label is a 409 (unprotect it first).",
  errors: [404, 409],
  middleware: [purgesPromptCache],
  request: { params: z.object({ prompt_label_id: IdParam("prompt_label_id") }) },
  responses: { 204: { description: "Deleted" } },
});

/** A patched template must still be a valid blueprint; its issues are reported under prompt_template. */
function validBlueprint(template: Record<string, unknown>): Record<string, unknown> {
  const r = PromptBlueprint.safeParse(template);
  if (!r.success) throw validationError(r.error.issues.map((i) => ({ ...i, path: ["prompt_template", ...i.path] })));
  return template;
}

const upsertByExternalId = defineRoute({
  method: "put",
  path: "/prompt-templates/by-external-id/{source}/{external_id}",
  scope: "prompts:write",
  tags: [...tags, "external ids"],
  summary: "Create or update the prompt template an external ID names",
  description:
    "The template mapped to {source, external_id} takes the body's state: renamed to prompt_name if it differs (409 if that name is taken), " +
    "and given a new version only when the blueprint or metadata differ from its latest version (so the same call twice makes one version); tags, folder and " +
    "release_labels follow the body either way. When no template is mapped yet, the template named prompt_name (created if new) takes the mapping. " +
    "201 when a template was created, else 200. external_ids in the body are not taken: the path names the mapping.",
  errors: [404, 409],
  middleware: [purgesPromptCache],
  request: {
    params: z.object({ source: ExternalIdSource, external_id: ExternalIdValue }),
    body: { required: true, content: { "application/json": { schema: PublishBody.omit({ external_ids: true }) } } },
  },
  responses: { 200: json(PublishedTemplate, "Updated"), 201: json(PublishedTemplate, "Created") },
});

const snippetUsageRoute = defineRoute({
  method: "get",
  path: "/prompt-templates/{identifier}/snippet-usage",
  scope: "prompts:read",
  tags: [...tags, "snippets"],
  summary: "Which templates and labels include a snippet",
  description:
    "A template includes another as a snippet by writing `@@@name@@@` in a text block; fetching it fills in the snippet's latest version (recursively; " +
    "a reference to no template stays as written, and a version whose snippets would cycle is refused with a 400 when published). " +
    "This lists every template version holding the reference and every release label on such a version. References always take the latest version, " +
    "so prompt_version_number naming an older version answers no usage (an unknown one is a 404).",
  errors: [404],
  request: {
    params: z.object({ identifier: Identifier }),
    query: z.object({ prompt_version_number: QueryInt(1, Number.MAX_SAFE_INTEGER).optional() }),
  },
  responses: {
    200: json(
      z
        .object({
          success: z.literal(true),
          message: z.string(),
          snippet_name: z.string(),
          snippet_usage: z.array(z.object({ prompt_registry_id: z.int(), prompt_name: z.string(), version_numbers: z.array(z.int()) })),
          total_prompts_using_snippet: z.int(),
          label_usage: z.array(z.object({ prompt_registry_id: z.int(), prompt_name: z.string(), label_name: z.string() })),
          total_labels_using_snippet: z.int(),
        })
        .openapi("GetSnippetUsageResponse"),
      "The usage",
    ),
  },
});

/**
 * A template read through the edge cache (src/prompts/cache.ts): `answer` renders the read the cache
 * hands it, per request; X-PromptEdge-Cache says whether the cache answered.
 */
async function throughEdgeCache(
  c: Context<AppEnv>,
  identifier: string,
  sel: { version?: number | null; label?: string | null },
  answer: (read: TemplateVersionRead) => Promise<TemplateVersionView>,
): Promise<TemplateVersionView> {
  const { db, prompts } = c.var.deps;
  const ws = c.get("auth").workspaceId;
  const { value, state } = await prompts.read(
    { workspaceId: ws, identifier, version: sel.version, label: sel.label },
    { origin: new URL(c.req.url).origin, fresh: asksForFresh(c.req.header("cache-control")), defer: (work) => void afterAnswer(c, work) },
    templateReadSource(db, ws, identifier, sel),
  );
  c.header(CACHE_STATE_HEADER, state);
  return answer(value);
}

/** An answer served through an A/B release says so in X-PromptEdge-AB too. */
function servedAb(c: Context<AppEnv>, view: TemplateVersionView): TemplateVersionView {
  if (view.ab_test) c.header(AB_HEADER, abHeaderValue(view.ab_test));
  return view;
}

export function registerPromptTemplateRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(publish, async (c) => {
    const body = c.req.valid("json");
    const auth = c.get("auth");
    requireOwnWorkspace(auth, body.prompt_template.workspace_id);
    return c.json(await publishTemplate(c.var.deps.db, auth, body), 200);
  });

  app.openapi(patch, async (c) => {
    const { identifier } = c.req.valid("param");
    return c.json(await patchTemplate(c.var.deps.db, c.get("auth"), identifier, c.req.valid("json"), validBlueprint), 201);
  });

  app.openapi(upsertByExternalId, async (c) => {
    const pair = c.req.valid("param");
    const body = c.req.valid("json");
    const auth = c.get("auth");
    requireOwnWorkspace(auth, body.prompt_template.workspace_id);
    const { created, view } = await upsertTemplateByExternalId(c.var.deps.db, auth, pair, body);
    return created ? c.json(view, 201) : c.json(view, 200);
  });

  app.openapi(snippetUsageRoute, async (c) => {
    const { identifier } = c.req.valid("param");
    return c.json(await snippetUsage(c.var.deps.db, c.get("auth").workspaceId, identifier, c.req.valid("query").prompt_version_number), 200);
  });

  app.openapi(list, async (c) => c.json(await listTemplates(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("query")), 200));

  app.openapi(getRaw, async (c) => {
    const { identifier } = c.req.valid("param");
    const query = { ...c.req.valid("query"), metadata_filters: metadataFiltersQuery(new URL(c.req.url).searchParams) };
    return c.json(servedAb(c, await throughEdgeCache(c, identifier, query, (read) => getTemplateVersion(c.var.deps.db, c.get("auth").workspaceId, identifier, query, read))), 200);
  });

  app.openapi(getWithBody, async (c) => {
    const { identifier } = c.req.valid("param");
    const body = c.req.valid("json");
    const auth = c.get("auth");
    requireOwnWorkspace(auth, body.workspace_id);
    if (body.label != null && body.prompt_release_label != null && body.label !== body.prompt_release_label) {
      throw new ApiError("validation_error", "prompt_release_label: give label or prompt_release_label (they differ)");
    }
    const sel = { ...body, label: body.label ?? body.prompt_release_label };
    return c.json(servedAb(c, await throughEdgeCache(c, identifier, sel, (read) => getTemplateVersion(c.var.deps.db, auth.workspaceId, identifier, { ...sel, sdkForm: true }, read))), 200);
  });

  app.openapi(labels, async (c) => {
    const { identifier } = c.req.valid("param");
    return c.json({ release_labels: await templateLabels(c.var.deps.db, c.get("auth").workspaceId, identifier) }, 200);
  });

  app.openapi(createLabelRoute, async (c) => {
    const { prompt_id } = c.req.valid("param");
    return c.json(await createLabel(c.var.deps.db, c.get("auth"), prompt_id, c.req.valid("json")), 200);
  });

  app.openapi(moveLabelRoute, async (c) => {
    const { prompt_label_id } = c.req.valid("param");
    const db = c.var.deps.db;
    const done = await moveLabel(db, c.get("auth"), prompt_label_id, c.req.valid("json"));
    if ("label" in done) return c.json(done.label, 200);
    const [change_request] = await changeRequestViews(db, [done.changeRequest]);
    return c.json({ ...(await labelAsItStands(db, c.get("auth").workspaceId, prompt_label_id)), change_request }, 200);
  });

  app.openapi(deleteLabelRoute, async (c) => {
    const { prompt_label_id } = c.req.valid("param");
    await deleteLabel(c.var.deps.db, c.get("auth"), prompt_label_id);
    return c.body(null, 204);
  });

  externalIdRoutes(app, {
    area: "prompts",
    entityType: "prompt_template",
    basePath: "/prompt-templates",
    idParam: "prompt_template_id",
    label: "prompt template",
    tag: "prompt templates",
    exists: templateExists,
    writeMiddleware: [purgesPromptCache],
  });
}
