// A/B releases (/api/public/v2/ab-tests): a release label overloaded by a sticky split between a
// template's versions, its scorecard, guardrails, trail, promote and rollback, and its external IDs.
// Every write purges the edge cache of the workspace's label reads, as a publish does.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { purgesPromptCache } from "../../http/prompt-cache";
import { IdParam } from "../../lib/schemas";
import { ApiError } from "../../lib/errors";
import {
  createRelease,
  deleteRelease,
  listReleases,
  patchRelease,
  promoteRelease,
  readTrail,
  refuseImmutable,
  releaseAssignment,
  releaseExists,
  releaseScorecard,
  releaseView,
  requireRelease,
  rollbackRelease,
} from "../../services/releases";
import { externalIdRoutes } from "../external-ids";
import { metadataFiltersQuery } from "../prompt-templates/metadata-filters";
import { AbTestAnswer, AbTestList, Assignment, AssignmentQuery, CreateBody, Events, EventsQuery, ListQuery, PatchBody, PromoteBody, Scorecard, ScorecardQuery } from "./schemas";
import { ChangeRequestAnswer } from "../prompt-templates/schemas";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const tags = ["ab tests"];
const BASE = "/api/public/v2/ab-tests";
const idParams = z.object({ ab_test_id: IdParam("ab_test_id") });
const PATCHABLE = ["name", "status", "variants", "segments", "guardrails", "folder_id"];

const create = defineRoute({
  method: "post",
  scope: "prompts:write",
  path: BASE,
  tags,
  summary: "Create an A/B release",
  description:
    "Overloads a release label of a prompt template with a split between its versions: fetches by that label (POST|GET /prompt-templates/{identifier} with `label`, " +
    "or the SDKs' run(prompt_release_label=…)) are served the variant the split assigns, sticky per unit when `assignment_key` names a metadata_filters key " +
    "(a hash of the release, salt, segment and unit into 10,000 buckets), random per request otherwise; the answer carries `ab_test` and X-PromptEdge-AB, and the log " +
    "that follows records the variant. `variants` sum to 100 and one of them is the label's current version (the base). A second release on the same template and " +
    "label while one is running or paused is a 409; percentages not summing to 100, no base, an unknown version or label are 400s naming the field, and nothing is stored. " +
    "On a protected release label only an admin key makes a release (403 otherwise). Emits ab_test_created.",
  errors: [404, 409],
  middleware: [purgesPromptCache],
  request: { body: { required: true, content: { "application/json": { schema: CreateBody } } } },
  responses: { 201: json(AbTestAnswer, "The release") },
});

const list = defineRoute({
  method: "get",
  scope: "prompts:read",
  path: BASE,
  tags,
  summary: "List A/B releases",
  description:
    "Newest first by default. Takes the filters every resource list takes (name contains, created_by_email, created/updated bounds, external_source with external_id, " +
    "sort_by, sort_order), plus status, prompt_template_id and release_label. Deleted releases are not listed.",
  request: { query: ListQuery },
  responses: { 200: json(AbTestList, "One page of releases") },
});

const get = defineRoute({
  method: "get",
  scope: "prompts:read",
  path: `${BASE}/{ab_test_id}`,
  tags,
  summary: "Get an A/B release",
  description: "The release with its variants' percentages and bucket ranges, segments, guardrails and outcome. Another workspace's id is a 404.",
  errors: [404],
  request: { params: idParams },
  responses: { 200: json(AbTestAnswer, "The release") },
});

const patch = defineRoute({
  method: "patch",
  scope: "prompts:write",
  path: `${BASE}/{ab_test_id}`,
  tags,
  summary: "Ramp, pause or resume an A/B release",
  description:
    "`variants` (and `segments`, by name) take new percentages, still summing to 100: a challenger that grows takes base units only, one that shrinks gives its units " +
    "back to the base, so no unit moves between challengers. `status` paused serves the label's own version to everyone; running resumes. Each change moves `revision` " +
    "on and emits ab_test_updated. A completed release is a 409; salt, assignment_key, release_label and the template cannot change (400). On a protected release label, " +
    "ramping a challenger up (top level or in a segment) or resuming a release that serves one takes an admin key (403 otherwise).",
  errors: [404, 409],
  middleware: [purgesPromptCache],
  request: { params: idParams, body: { required: true, content: { "application/json": { schema: PatchBody } } } },
  responses: { 200: json(AbTestAnswer, "The release") },
});

const remove = defineRoute({
  method: "delete",
  scope: "prompts:write",
  path: `${BASE}/{ab_test_id}`,
  tags,
  summary: "Delete an A/B release",
  description: "The release label reverts to its base mapping: it serves the version it names, and is not moved. Logs keep the variant they recorded. Emits ab_test_deleted.",
  errors: [404],
  middleware: [purgesPromptCache],
  request: { params: idParams },
  responses: { 200: json(z.object({ success: z.literal(true) }), "Deleted") },
});

const promote = defineRoute({
  method: "post",
  scope: "prompts:write",
  path: `${BASE}/{ab_test_id}/promote`,
  tags,
  summary: "Promote a variant",
  description:
    "Moves the release label to the variant's version through the label-move path (one prompt_template_label_moved; none when the label names it already) and completes " +
    "the release (ab_test_promoted). On a protected label the move is asked instead: 202 with a pending change request (prompt_template_label_change_requested), and the " +
    "release completes when it is approved (a denial lets it run on). A completed release, or one waiting on a request, is a 409.",
  errors: [404, 409],
  middleware: [purgesPromptCache],
  request: { params: idParams, body: { required: true, content: { "application/json": { schema: PromoteBody } } } },
  responses: {
    200: json(AbTestAnswer, "Promoted: the label moved and the release completed"),
    202: json(AbTestAnswer.extend({ change_request: ChangeRequestAnswer.shape.change_request }), "The label is protected: the move waits for approval"),
  },
});

const rollback = defineRoute({
  method: "post",
  scope: "prompts:write",
  path: `${BASE}/{ab_test_id}/rollback`,
  tags,
  summary: "Roll an A/B release back",
  description: "Every challenger to 0 % and the release completed as rolled back; the label is not moved. Emits ab_test_rolled_back. A completed release is a 409.",
  errors: [404, 409],
  middleware: [purgesPromptCache],
  request: { params: idParams },
  responses: { 200: json(AbTestAnswer, "The release") },
});

const assignment = defineRoute({
  method: "get",
  scope: "prompts:read",
  path: `${BASE}/{ab_test_id}/assignment`,
  tags,
  summary: "Which variant a unit gets",
  description:
    "For debugging a split: the segment, variant, bucket and version that `metadata_filters[<key>]=<value>` query parameters get, as a fetch with those metadata_filters " +
    "would (random without the assignment key's value).",
  errors: [404],
  request: { params: idParams, query: AssignmentQuery },
  responses: { 200: json(Assignment, "The assignment") },
});

const scorecard = defineRoute({
  method: "get",
  scope: "prompts:read",
  path: `${BASE}/{ab_test_id}/scorecard`,
  tags,
  summary: "An A/B release's scorecard",
  description:
    "Per variant, from rollups of the logs that recorded it (every log database of the workspace, never a scan of logs): requests, unique units, error rate (Wilson " +
    "interval, difference to the base and a two-proportion p-value), cost per request, latency p50/p95 (from histograms, within 10 %), each score's mean with a 95 % " +
    "interval, its difference to the base and Welch's p-value, and each signal's true-rate the same way (each verdict Signals store about a log the release served; docs/signals.md). A log counts a few seconds after it is written.",
  errors: [404],
  request: { params: idParams, query: ScorecardQuery },
  responses: { 200: json(Scorecard, "The scorecard") },
});

const events = defineRoute({
  method: "get",
  scope: "prompts:read",
  path: `${BASE}/{ab_test_id}/events`,
  tags,
  summary: "An A/B release's events",
  description:
    "What happened to the release, newest first: created, updated, paused, resumed, promoted, promote_requested, promote_denied, rolled_back, deleted by a user, and each " +
    "guardrail decision (rolled_back, paused, ramped, promoted, promote_requested, ready_to_promote) with the metric, observed value and bound; a decision is written once.",
  errors: [404],
  request: { params: idParams, query: EventsQuery },
  responses: { 200: json(Events, "The events") },
});

export function registerAbTestRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    return c.json({ success: true as const, ab_test: await createRelease(c.var.deps.db, c.get("auth"), body) }, 201);
  });

  app.openapi(list, async (c) => c.json(await listReleases(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("query")), 200));

  app.openapi(get, async (c) => {
    const { ab_test_id } = c.req.valid("param");
    const { db } = c.var.deps;
    const ws = c.get("auth").workspaceId;
    return c.json({ success: true as const, ab_test: await releaseView(db, ws, await requireRelease(db, ws, ab_test_id)) }, 200);
  });

  app.openapi(patch, async (c) => {
    const { ab_test_id } = c.req.valid("param");
    const raw = (await c.req.json()) as Record<string, unknown>;
    refuseImmutable(raw);
    if (!PATCHABLE.some((f) => f in raw)) throw new ApiError("validation_error", `body: give at least one of ${PATCHABLE.join(", ")}`);
    const view = await patchRelease(c.var.deps.db, c.get("auth"), ab_test_id, c.req.valid("json"), (f) => f in raw);
    return c.json({ success: true as const, ab_test: view }, 200);
  });

  app.openapi(remove, async (c) => {
    const { ab_test_id } = c.req.valid("param");
    await deleteRelease(c.var.deps.db, c.get("auth"), ab_test_id);
    return c.json({ success: true as const }, 200);
  });

  app.openapi(promote, async (c) => {
    const { ab_test_id } = c.req.valid("param");
    const done = await promoteRelease(c.var.deps.db, c.get("auth"), ab_test_id, c.req.valid("json").variant);
    return done.changeRequest
      ? c.json({ success: true as const, ab_test: done.view, change_request: done.changeRequest }, 202)
      : c.json({ success: true as const, ab_test: done.view }, 200);
  });

  app.openapi(rollback, async (c) => {
    const { ab_test_id } = c.req.valid("param");
    return c.json({ success: true as const, ab_test: await rollbackRelease(c.var.deps.db, c.get("auth"), ab_test_id) }, 200);
  });

  app.openapi(assignment, async (c) => {
    const { ab_test_id } = c.req.valid("param");
    const a = await releaseAssignment(c.var.deps.db, c.get("auth").workspaceId, ab_test_id, metadataFiltersQuery(new URL(c.req.url).searchParams));
    return c.json(
      { success: true as const, ab_test_id: a.ab_test_id, revision: a.revision, serving: a.serving, segment: a.segment, variant: a.variant, prompt_version_number: a.version, bucket: a.bucket, assignment: a.assignment },
      200,
    );
  });

  app.openapi(scorecard, async (c) => {
    const { ab_test_id } = c.req.valid("param");
    const ws = c.get("auth").workspaceId;
    return c.json(await releaseScorecard(c.var.deps.db, await c.var.deps.logs(ws), ws, ab_test_id, c.req.valid("query")), 200);
  });

  app.openapi(events, async (c) => {
    const { ab_test_id } = c.req.valid("param");
    const ws = c.get("auth").workspaceId;
    const { db } = c.var.deps;
    await requireRelease(db, ws, ab_test_id);
    const q = c.req.valid("query");
    return c.json(await readTrail(db, ws, ab_test_id, q.page, q.per_page), 200);
  });

  externalIdRoutes(app, {
    area: "prompts",
    entityType: "ab_test",
    basePath: BASE,
    idParam: "ab_test_id",
    label: "A/B release",
    tag: "ab tests",
    exists: releaseExists,
  });
}
