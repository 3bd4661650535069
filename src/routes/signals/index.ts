// /api/public/v2/signals: yes/no questions an LLM answers about production logs (docs/signals.md).
// Signals and their totals, hooks one at a time, tests and estimates, the true-rate series, backfills.
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { recordAudit, type AuditAction } from "../../services/workspace";
import { defineRoute } from "../../http/openapi";
import { enqueue } from "../../lib/jobs";
import { IdParam } from "../../lib/schemas";
import {
  addHook,
  cancelBackfill,
  checkCostCapOnCreate,
  checkCostCapOnPatch,
  createBackfill,
  createSignal,
  deleteHook,
  deleteSignal,
  estimateSignal,
  getBackfill,
  getSignal,
  listBackfills,
  listSignals,
  MAX_ENABLED_SIGNALS,
  MAX_HOOKS_PER_SIGNAL,
  MAX_OPEN_BACKFILLS,
  MAX_OPEN_BACKFILLS_PER_WORKSPACE,
  BACKFILL_WINDOW,
  MAX_TEST_LOGS,
  requireSignal,
  testSignal,
  trueRateSeries,
  updateHook,
  updateSignal,
  withTotals,
  DEFAULT_INCLUDE,
} from "../../services/signals";
import {
  BackfillBody,
  BackfillSchema,
  CreateSignalBody,
  EstimateBody,
  EstimateSchema,
  HookBody,
  HookPatchBody,
  HookSchema,
  ListQuery,
  PatchSignalBody,
  SeriesQuery,
  SeriesSchema,
  SignalSchema,
  TestBody,
  TestResultSchema,
  TestSavedBody,
} from "./schemas";

const tags = ["signals"];
const BASE = "/api/public/v2/signals";
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const body = <T extends z.ZodType>(schema: T) => ({ body: { required: true, content: { "application/json": { schema } } } });
const ok = z.literal(true);
const SignalParams = z.object({ signal_id: IdParam("signal_id") });
const HookParams = z.object({ signal_id: IdParam("signal_id"), hook_id: IdParam("hook_id") });
const BackfillParams = z.object({ signal_id: IdParam("signal_id"), backfill_id: IdParam("backfill_id") });
const SignalAnswer = json(z.object({ success: ok, signal: SignalSchema }), "The signal with its hooks and totals");

const create = defineRoute({
  scope: "signals:write",
  method: "post",
  path: BASE,
  tags,
  summary: "Create a signal",
  description:
    "A yes/no statement an LLM judges about production logs, with the hooks that choose which logs (scope, filters, sample rate). " +
    `Disabled unless enabled is true (test it first); at most ${MAX_ENABLED_SIGNALS} enabled signals a workspace and ${MAX_HOOKS_PER_SIGNAL} hooks a signal (409 beyond). ` +
    "A name already used in the workspace is a 409. A hook naming a template, version or label the workspace does not have is a 400. " +
    "limits.daily_cost_usd is taken only on a judge model the price table prices (model.name, else the provider's default model): on another, a cap could not be held, and it is a 400 naming the model.",
  errors: [409],
  request: body(CreateSignalBody),
  responses: { 201: SignalAnswer },
});

const list = defineRoute({
  scope: "signals:read",
  method: "get",
  path: BASE,
  tags,
  summary: "List signals",
  description: "The workspace's signals, newest first by default, each with its hooks and running totals (processed, true, false, errors, skipped, true-rate, cost).",
  request: { query: ListQuery },
  responses: {
    200: json(z.object({ success: ok, items: z.array(SignalSchema), page: z.int(), per_page: z.int(), total: z.int(), pages: z.int() }), "A page of signals"),
  },
});

const read = defineRoute({ scope: "signals:read", method: "get", path: `${BASE}/{signal_id}`, tags, summary: "Get a signal", description: "The signal with its hooks and its totals (processed, true, false, errors, skipped, true-rate, cost). Another workspace's id is a 404.", errors: [404], request: { params: SignalParams }, responses: { 200: SignalAnswer } });

const patch = defineRoute({
  scope: "signals:write",
  method: "patch",
  path: `${BASE}/{signal_id}`,
  tags,
  summary: "Change a signal",
  description:
    "Any subset of the fields, at least one (an empty body is a 400). A change to statement, model or include moves revision on: logs judged from then on carry the new revision, and a newer revision's result replaces an older one. " +
    `Enabling past ${MAX_ENABLED_SIGNALS} enabled signals, or a name already used, is a 409. Fields that are all the signal's already change and record nothing. ` +
    "Setting limits.daily_cost_usd, or changing the model of a signal that keeps one, on a judge model the price table does not price is a 400 naming the model (the cap could not be held).",
  errors: [404, 409],
  request: { params: SignalParams, ...body(PatchSignalBody) },
  responses: { 200: SignalAnswer },
});

const remove = defineRoute({
  scope: "signals:write",
  method: "delete",
  path: `${BASE}/{signal_id}`,
  tags,
  summary: "Delete a signal",
  description: "The signal, its hooks, budget and backfills go at once; its results leave every log (purged from the log databases in the background). Nothing more is judged.",
  errors: [404],
  request: { params: SignalParams },
  responses: { 200: json(z.object({ success: ok, message: z.string() }), "Deleted") },
});

const testDraft = defineRoute({
  scope: "signals:write",
  method: "post",
  path: `${BASE}/test`,
  tags,
  summary: "Test a statement on chosen logs",
  description: `Judges up to ${MAX_TEST_LOGS} logs of the workspace with the statement given (${MAX_TEST_LOGS + 1} is a 400) and answers each verdict with its reasoning and quote. Nothing is stored, counted or sent. An id of no log of the workspace is a 404.`,
  errors: [404],
  request: body(TestBody),
  responses: { 200: json(z.object({ success: ok, results: z.array(TestResultSchema) }), "One verdict a log, in the order asked") },
});

const testSaved = defineRoute({
  scope: "signals:write",
  method: "post",
  path: `${BASE}/{signal_id}/test`,
  tags,
  summary: "Test a signal on chosen logs",
  description: `As POST ${BASE}/test, with the saved signal's statement, model and include.`,
  errors: [404],
  request: { params: SignalParams, ...body(TestSavedBody) },
  responses: { 200: json(z.object({ success: ok, results: z.array(TestResultSchema) }), "One verdict a log, in the order asked") },
});

const estimate = defineRoute({
  scope: "signals:read",
  method: "post",
  path: `${BASE}/estimate`,
  tags,
  summary: "Estimate what hooks would judge",
  description:
    "Counts the logs each hook would have matched over the last window_days (default 7) and answers per day how many it matches and samples, " +
    "and what judging them would cost with the model given (or the workspace's default), from the logs' mean length. " +
    "Hooks are checked as create checks them (a template, version or label the workspace does not have is a 400 naming the field). " +
    "A model the price table does not price (or none) answers its costs as null: unknown, not free.",
  request: body(EstimateBody),
  responses: { 200: json(EstimateSchema.extend({ success: ok }), "The estimate") },
});

const series = defineRoute({
  scope: "signals:read",
  method: "get",
  path: `${BASE}/{signal_id}/series`,
  tags,
  summary: "A signal's true-rate per day",
  description: "Per UTC day of the judged logs: true, false, errors, true-rate and cost (default: the last 30 days).",
  errors: [404],
  request: { params: SignalParams, query: SeriesQuery },
  responses: { 200: json(SeriesSchema.extend({ success: ok }), "The days that have results, oldest first") },
});

const hooksList = defineRoute({
  scope: "signals:read",
  method: "get",
  path: `${BASE}/{signal_id}/hooks`,
  tags,
  summary: "List a signal's hooks",
  description: "Every hook of the signal, oldest first (the order in which a log's first sampling hook is found).",
  errors: [404],
  request: { params: SignalParams },
  responses: { 200: json(z.object({ success: ok, hooks: z.array(HookSchema) }), "The hooks, oldest first") },
});

const hookCreate = defineRoute({
  scope: "signals:write",
  method: "post",
  path: `${BASE}/{signal_id}/hooks`,
  tags,
  summary: "Add a hook",
  description: `A scope (all, release_label, prompt_template with an optional version or label), an optional A/B variant (a release label split by an A/B release covers every log the release served, whichever variant; ab_variant narrows to one variant's logs), filters and a sample rate. At most ${MAX_HOOKS_PER_SIGNAL} hooks a signal (409 beyond). A template, version or label that does not exist is a 400.`,
  errors: [404, 409],
  request: { params: SignalParams, ...body(HookBody) },
  responses: { 201: json(z.object({ success: ok, hook: HookSchema }), "The hook") },
});

const hookPatch = defineRoute({
  scope: "signals:write",
  method: "patch",
  path: `${BASE}/{signal_id}/hooks/{hook_id}`,
  tags,
  summary: "Change a hook",
  description:
    "Any subset of the hook's fields, at least one (an empty body is a 400); the hook they make is checked as a new one is (a 400 naming the field). " +
    "Logs matched from then on follow the changed hook; results already stored stay. Fields that are all the hook's already change and record nothing.",
  errors: [404],
  request: { params: HookParams, ...body(HookPatchBody) },
  responses: { 200: json(z.object({ success: ok, hook: HookSchema }), "The hook") },
});

const hookDelete = defineRoute({
  scope: "signals:write",
  method: "delete",
  path: `${BASE}/{signal_id}/hooks/{hook_id}`,
  tags,
  summary: "Delete a hook",
  description: "Logs matched from then on are no longer judged through this hook; results already stored stay.",
  errors: [404],
  request: { params: HookParams },
  responses: { 200: json(z.object({ success: ok, message: z.string() }), "Deleted") },
});

const backfillCreate = defineRoute({
  scope: "signals:write",
  method: "post",
  path: `${BASE}/{signal_id}/backfills`,
  tags,
  summary: "Judge past logs",
  description:
    "Queues a job that judges the workspace's logs started in [from, to) that the filters match, sampled at sample_rate (default 1), at most max_logs (default 1000, at most 100000), " +
    "leaving out logs already judged at the signal's revision. It runs whether or not the signal is enabled, within the signal's daily caps. " +
    `Answers 202 with the backfill; GET it for progress, DELETE it to cancel. At most ${MAX_OPEN_BACKFILLS} open backfills a signal (409 beyond) ` +
    `and ${MAX_OPEN_BACKFILLS_PER_WORKSPACE} a workspace over all its signals (429 with Retry-After beyond: nothing is created). ` +
    `It keeps at most ${BACKFILL_WINDOW} judgements queued at once, reading on as they are made, so it never crowds out the workspaces' live judgements.`,
  errors: [404, 409, 429],
  request: { params: SignalParams, ...body(BackfillBody) },
  responses: { 202: json(z.object({ success: ok, backfill: BackfillSchema }), "Queued") },
});

const backfillList = defineRoute({
  scope: "signals:read",
  method: "get",
  path: `${BASE}/{signal_id}/backfills`,
  tags,
  summary: "List a signal's backfills",
  description: "The newest 100, newest first, each with its progress.",
  errors: [404],
  request: { params: SignalParams },
  responses: { 200: json(z.object({ success: ok, backfills: z.array(BackfillSchema) }), "Backfills") },
});

const backfillRead = defineRoute({
  scope: "signals:read",
  method: "get",
  path: `${BASE}/{signal_id}/backfills/{backfill_id}`,
  tags,
  summary: "A backfill's progress",
  description: "queued, running (reading logs, then waiting for the judgements it queued), completed, failed or cancelled; with what it matched, queued, judged, skipped and spent.",
  errors: [404],
  request: { params: BackfillParams },
  responses: { 200: json(z.object({ success: ok, backfill: BackfillSchema }), "The backfill") },
});

const backfillCancel = defineRoute({
  scope: "signals:write",
  method: "delete",
  path: `${BASE}/{signal_id}/backfills/{backfill_id}`,
  tags,
  summary: "Cancel a backfill",
  description: "It reads no more logs, and what it queued and was not judged yet is dropped. A backfill already over is a 409.",
  errors: [404, 409],
  request: { params: BackfillParams },
  responses: { 200: json(z.object({ success: ok, backfill: BackfillSchema }), "Cancelled") },
});

/** Records an administrative change right after it (changes that are not one batch; creation and deletion record theirs in their batch). */
const audit = (c: Context<AppEnv>, action: AuditAction, targetType: string, targetId: number, details: Record<string, unknown>) =>
  recordAudit(c.var.deps.db, { workspaceId: c.get("auth").workspaceId, action, by: c.get("auth"), targetType, targetId, details });

export function registerSignalRoutes(app: OpenAPIHono<AppEnv>) {
  const one = async (deps: AppEnv["Variables"]["deps"], ws: number, id: number) => (await withTotals(deps, ws, [await getSignal(deps.db, ws, id)]))[0];

  app.openapi(create, async (c) => {
    const { deps } = c.var;
    const auth = c.get("auth");
    const input = c.req.valid("json");
    await checkCostCapOnCreate(deps, auth.workspaceId, input);
    const created = await createSignal(deps.db, auth, input);
    return c.json({ success: true as const, signal: await one(deps, auth.workspaceId, created.id) }, 201);
  });

  app.openapi(list, async (c) => {
    const ws = c.get("auth").workspaceId;
    const page = await listSignals(c.var.deps.db, ws, c.req.valid("query"));
    return c.json({ success: true as const, ...page, items: await withTotals(c.var.deps, ws, page.items) }, 200);
  });

  app.openapi(testDraft, async (c) => {
    const b = c.req.valid("json");
    const spec = { statement: b.statement, model: b.model ?? null, include: { ...DEFAULT_INCLUDE, ...b.include } };
    return c.json({ success: true as const, results: await testSignal(c.var.deps, c.get("auth").workspaceId, spec, b.request_ids) }, 200);
  });

  app.openapi(estimate, async (c) => {
    const b = c.req.valid("json");
    const found = await estimateSignal(c.var.deps, c.get("auth").workspaceId, { ...b, window_days: b.window_days ?? 7 });
    return c.json({ success: true as const, ...found }, 200);
  });

  app.openapi(read, async (c) => c.json({ success: true as const, signal: await one(c.var.deps, c.get("auth").workspaceId, c.req.valid("param").signal_id) }, 200));

  app.openapi(patch, async (c) => {
    const ws = c.get("auth").workspaceId;
    const { signal_id } = c.req.valid("param");
    const body = c.req.valid("json");
    // A new name needs nothing more: results are the signal's by id, and every reader shows its current name.
    await checkCostCapOnPatch(c.var.deps, ws, signal_id, body);
    const { signal: after, changed } = await updateSignal(c.var.deps.db, ws, signal_id, body);
    if (changed) await audit(c, "signal.updated", "signal", signal_id, { name: after.name, changed: Object.keys(body).sort(), enabled: after.enabled, limits: after.limits, revision: after.revision });
    return c.json({ success: true as const, signal: await one(c.var.deps, ws, signal_id) }, 200);
  });

  app.openapi(remove, async (c) => {
    const ws = c.get("auth").workspaceId;
    const { signal_id } = c.req.valid("param");
    const { name } = await requireSignal(c.var.deps.db, ws, signal_id);
    await deleteSignal(c.var.deps.db, c.get("auth"), ws, signal_id);
    await enqueue(c.var.deps.jobs, { v: 1, kind: "signal_purge", workspace_id: ws, signal_id, name });
    return c.json({ success: true as const, message: "Signal deleted" }, 200);
  });

  app.openapi(testSaved, async (c) => {
    const ws = c.get("auth").workspaceId;
    const signal = await requireSignal(c.var.deps.db, ws, c.req.valid("param").signal_id);
    return c.json({ success: true as const, results: await testSignal(c.var.deps, ws, signal, c.req.valid("json").request_ids) }, 200);
  });

  app.openapi(series, async (c) => {
    const ws = c.get("auth").workspaceId;
    const { signal_id } = c.req.valid("param");
    await requireSignal(c.var.deps.db, ws, signal_id);
    const q = c.req.valid("query");
    const to = q.to ?? c.var.deps.now();
    const days = await trueRateSeries(c.var.deps, ws, signal_id, q.from ?? to - 30 * 86_400_000, to);
    return c.json({ success: true as const, days }, 200);
  });

  app.openapi(hooksList, async (c) => {
    const signal = await getSignal(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("param").signal_id);
    return c.json({ success: true as const, hooks: signal.hooks }, 200);
  });

  app.openapi(hookCreate, async (c) => {
    const { signal_id } = c.req.valid("param");
    const hook = await addHook(c.var.deps.db, c.get("auth").workspaceId, signal_id, c.req.valid("json"));
    await audit(c, "signal.updated", "signal", signal_id, { hook_added: hook });
    return c.json({ success: true as const, hook }, 201);
  });

  app.openapi(hookPatch, async (c) => {
    const { signal_id, hook_id } = c.req.valid("param");
    const { hook, changed } = await updateHook(c.var.deps.db, c.get("auth").workspaceId, signal_id, hook_id, c.req.valid("json"));
    if (changed) await audit(c, "signal.updated", "signal", signal_id, { hook_updated: hook });
    return c.json({ success: true as const, hook }, 200);
  });

  app.openapi(hookDelete, async (c) => {
    const { signal_id, hook_id } = c.req.valid("param");
    await deleteHook(c.var.deps.db, c.get("auth").workspaceId, signal_id, hook_id);
    await audit(c, "signal.updated", "signal", signal_id, { hook_deleted: hook_id });
    return c.json({ success: true as const, message: "Hook deleted" }, 200);
  });

  app.openapi(backfillCreate, async (c) => {
    const backfill = await createBackfill(c.var.deps, c.get("auth"), c.req.valid("param").signal_id, c.req.valid("json"));
    await audit(c, "signal_backfill.created", "signal_backfill", backfill.id, { signal_id: backfill.signal_id, from: backfill.from, to: backfill.to, sample_rate: backfill.sample_rate, max_logs: backfill.max_logs });
    return c.json({ success: true as const, backfill }, 202);
  });

  app.openapi(backfillList, async (c) => {
    return c.json({ success: true as const, backfills: await listBackfills(c.var.deps, c.get("auth").workspaceId, c.req.valid("param").signal_id) }, 200);
  });

  app.openapi(backfillRead, async (c) => {
    const { signal_id, backfill_id } = c.req.valid("param");
    return c.json({ success: true as const, backfill: await getBackfill(c.var.deps, c.get("auth").workspaceId, signal_id, backfill_id) }, 200);
  });

  app.openapi(backfillCancel, async (c) => {
    const { signal_id, backfill_id } = c.req.valid("param");
    const backfill = await cancelBackfill(c.var.deps, c.get("auth").workspaceId, signal_id, backfill_id);
    await audit(c, "signal_backfill.cancelled", "signal_backfill", backfill_id, { signal_id });
    return c.json({ success: true as const, backfill }, 200);
  });
}
