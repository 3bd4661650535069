// Request and response schemas of /api/public/v2/signals (docs/signals.md); they also feed /openapi.json.
import { z } from "@hono/zod-openapi";
import { SIGNAL_BACKFILL_STATUSES, SIGNAL_HOOK_SCOPES } from "../../db/schema";
import { FilterGroupSchema, isGroup, type FilterGroup } from "../../filters";
import { QueryBool, QueryInt, SortOrder } from "../../lib/query";
import { NameText, Timestamp } from "../../lib/schemas";
import {
  checkHookShape,
  DEFAULT_BACKFILL_LOGS,
  DEFAULT_SAMPLE_RATE,
  MAX_BACKFILL_LOGS,
  MAX_DELAY_SECONDS,
  MAX_HOOKS_PER_SIGNAL,
  MAX_INCLUDE_CHARS,
  MAX_NAME_LENGTH,
  MAX_STATEMENT_LENGTH,
  MAX_TEST_LOGS,
  type HookInput,
} from "../../services/signals";
import { ApiError } from "../../lib/errors";

const PositiveId = z.int("must be an integer").positive("must be a positive integer");

const PROVIDERS: Record<string, string> = { openai: "openai", "openai-compatible": "openai", openai_compatible: "openai", anthropic: "anthropic" };

export const SignalModelSchema = z
  .object({
    provider: z
      .string("must be a string")
      .transform((p, ctx) => {
        const name = PROVIDERS[p.toLowerCase()];
        if (!name) {
          ctx.addIssue({ code: "custom", message: "must be openai (or an OpenAI-compatible server) or anthropic", input: p });
          return z.NEVER;
        }
        return name;
      })
      .openapi({ type: "string", enum: ["openai", "anthropic"] }),
    name: z.string("must be a string").min(1, "must be 1 to 200 characters").max(200, "must be 1 to 200 characters").optional().openapi({ description: "The model; omitted: the provider's default model of this deployment (LLM_DEFAULT_MODEL)." }),
    parameters: z.record(z.string(), z.unknown(), { error: "must be an object" }).optional().openapi({ description: "Passed to the provider as given (temperature, max_tokens…)." }),
  })
  .transform((m) => ({ provider: m.provider, name: m.name ?? "", parameters: m.parameters ?? {} }))
  .openapi("SignalModel", { description: "Which model judges. null or omitted: the workspace's configured provider and its default model." });

export const SignalIncludeSchema = z
  .object({
    input: z.boolean("must be true or false").optional(),
    output: z.boolean("must be true or false").optional(),
    metadata: z.boolean("must be true or false").optional(),
    tools: z.boolean("must be true or false").optional(),
    max_chars: z.int("must be an integer").min(1, `must be 1 to ${MAX_INCLUDE_CHARS}`).max(MAX_INCLUDE_CHARS, `must be 1 to ${MAX_INCLUDE_CHARS}`).optional(),
  })
  .openapi("SignalInclude", {
    description: `Which parts of a log the judge reads (defaults: input, output and tools yes, metadata no) and how many characters at most (default 20000, at most ${MAX_INCLUDE_CHARS}; the rest is cut).`,
  });

const LimitsSchema = z
  .object({
    daily_runs: z.int("must be an integer").min(1, "must be 1 to 10000000").max(10_000_000, "must be 1 to 10000000").nullish(),
    daily_cost_usd: z.number("must be a number").positive("must be more than 0").max(1_000_000, "must be at most 1000000").nullish(),
  })
  .openapi("SignalLimits", {
    description:
      "Caps per UTC day, reserved atomically before each judge call: concurrent consumers stop exactly at daily_runs, and the cost of the calls made never passes daily_cost_usd " +
      "(each call reserves its upper estimate and settles to the provider's usage). What a cap turns away is counted as skipped. null: no cap.",
  });

const Color = z.string("must be a string").regex(/^#[0-9a-fA-F]{6}$/, "must be a hex color such as #22c55e");

const Statement = z
  .string("must be a string")
  .min(1, `must be 1 to ${MAX_STATEMENT_LENGTH} characters`)
  .max(MAX_STATEMENT_LENGTH, `must be 1 to ${MAX_STATEMENT_LENGTH} characters`)
  .refine((s) => s.trim().length > 0, "must not be only white space")
  .openapi({ description: `The yes/no question or statement the judge answers about each log, at most ${MAX_STATEMENT_LENGTH} characters.` });

/** Whether a filter group names a field hooks cannot filter on (signal results: they may not exist yet when a log is matched). */
function namesSignals(group: FilterGroup): boolean {
  return group.filters.some((f) => (isGroup(f) ? namesSignals(f) : (f.field as string) === "signals"));
}

const HookFields = {
  scope: z.enum(SIGNAL_HOOK_SCOPES, { error: `must be one of ${SIGNAL_HOOK_SCOPES.join(", ")}` }),
  prompt_template_id: PositiveId.nullish().openapi({ description: "scope prompt_template: the template." }),
  prompt_version_number: PositiveId.nullish().openapi({ description: "scope prompt_template: only this version." }),
  release_label: NameText(255).nullish().openapi({ description: "scope release_label: the label (logs of the versions it names); scope prompt_template: only that label's version." }),
  ab_variant: NameText(64).nullish().openapi({ description: "Only logs served as this A/B release variant." }),
  sample_rate: z.number("must be a number").min(0, "must be 0 to 1").max(1, "must be 0 to 1").optional().openapi({ description: `Share of the matching logs judged, 0 to 1 (default ${DEFAULT_SAMPLE_RATE}); the draw is deterministic per signal, hook and log.` }),
  filters: FilterGroupSchema.nullish().openapi({ description: "A structured filter group, as request search takes it (the signals field aside)." }),
};

/** A PATCH body names at least one field (null counts: it clears the field); an empty one would change nothing. */
const namesAField = (b: Record<string, unknown>) => Object.values(b).some((v) => v !== undefined);

const hookIssues = (h: Partial<HookInput>, ctx: z.core.$RefinementCtx) => {
  if (h.filters && namesSignals(h.filters)) ctx.addIssue({ code: "custom", path: ["filters"], message: "a hook cannot filter on signals (results come after the log is matched)", input: h.filters });
};

export const HookBody = z
  .object(HookFields)
  .superRefine((h, ctx) => {
    hookIssues(h, ctx);
    try {
      checkHookShape(h, "");
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const d = err.details?.[0];
      ctx.addIssue({ code: "custom", path: d ? [d.field] : [], message: d?.rule ?? err.message, input: h });
    }
  })
  .openapi("SignalHookInput");

export const HookPatchBody = z
  .object(Object.fromEntries(Object.entries(HookFields).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof HookFields]: z.ZodOptional<(typeof HookFields)[K]> })
  .superRefine(hookIssues)
  .refine(namesAField, { message: `give at least one of ${Object.keys(HookFields).join(", ")}` })
  .openapi("SignalHookPatch", { description: "Any subset of a hook's fields, at least one (an empty body is a 400); the hook they make is checked whole." });

const SignalFields = {
  name: NameText(MAX_NAME_LENGTH).openapi({ description: "Unique in the workspace." }),
  statement: Statement,
  color: Color.nullish(),
  enabled: z.boolean("must be true or false").optional().openapi({ description: "Default false: test first. At most 50 enabled signals a workspace." }),
  model: SignalModelSchema.nullish(),
  include: SignalIncludeSchema.optional(),
  delay_seconds: z.int("must be an integer").min(0, `must be 0 to ${MAX_DELAY_SECONDS}`).max(MAX_DELAY_SECONDS, `must be 0 to ${MAX_DELAY_SECONDS}`).optional().openapi({ description: "Seconds to wait after a log is indexed before judging it (late scores and metadata)." }),
  limits: LimitsSchema.nullish(),
};

export const CreateSignalBody = z
  .object({
    ...SignalFields,
    hooks: z.array(HookBody, { error: "must be an array of hooks" }).max(MAX_HOOKS_PER_SIGNAL, `at most ${MAX_HOOKS_PER_SIGNAL} hooks`).optional(),
  })
  .openapi("CreateSignalRequest");

export const PatchSignalBody = z
  .object({
    name: SignalFields.name.optional(),
    statement: Statement.optional(),
    color: SignalFields.color,
    enabled: SignalFields.enabled,
    model: SignalFields.model,
    include: SignalFields.include,
    delay_seconds: SignalFields.delay_seconds,
    limits: SignalFields.limits,
  })
  .refine(namesAField, { message: `give at least one of ${Object.keys(SignalFields).join(", ")}` })
  .openapi("PatchSignalRequest", {
    description: "Any subset of the signal's fields, at least one (an empty body is a 400, as every PATCH of this API's own resources); hooks have their own routes. A change to statement, model or include moves revision on.",
  });

const RequestIds = z
  .array(PositiveId, { error: "must be an array of request log ids" })
  .min(1, `must hold 1 to ${MAX_TEST_LOGS} ids`)
  .max(MAX_TEST_LOGS, `must hold 1 to ${MAX_TEST_LOGS} ids`)
  .openapi({ description: `The logs to judge, 1 to ${MAX_TEST_LOGS}.` });

export const TestBody = z
  .object({ statement: Statement, model: SignalModelSchema.nullish(), include: SignalIncludeSchema.optional(), request_ids: RequestIds })
  .openapi("SignalTestRequest");

export const TestSavedBody = z.object({ request_ids: RequestIds }).openapi("SavedSignalTestRequest");

export const EstimateBody = z
  .object({
    hooks: z.array(HookBody, { error: "must be an array of hooks" }).min(1, `must hold 1 to ${MAX_HOOKS_PER_SIGNAL} hooks`).max(MAX_HOOKS_PER_SIGNAL, `must hold 1 to ${MAX_HOOKS_PER_SIGNAL} hooks`),
    window_days: z.int("must be an integer").min(1, "must be 1 to 30").max(30, "must be 1 to 30").optional().openapi({ description: "Days of past logs counted (default 7)." }),
    statement: Statement.optional(),
    model: SignalModelSchema.nullish(),
    include: SignalIncludeSchema.optional(),
  })
  .openapi("SignalEstimateRequest");

export const BackfillBody = z
  .object({
    from: Timestamp.openapi({ description: "The first request_start_time included." }),
    to: Timestamp.openapi({ description: "The first request_start_time no longer included, after from." }),
    filters: FilterGroupSchema.nullish(),
    sample_rate: z.number("must be a number").min(0, "must be 0 to 1").max(1, "must be 0 to 1").optional().openapi({ description: "Share of the matching logs judged (default 1); deterministic per signal, backfill and log." }),
    max_logs: z.int("must be an integer").min(1, `must be 1 to ${MAX_BACKFILL_LOGS}`).max(MAX_BACKFILL_LOGS, `must be 1 to ${MAX_BACKFILL_LOGS}`).optional().openapi({ description: `Judgements queued at most (default ${DEFAULT_BACKFILL_LOGS}).` }),
  })
  .superRefine((b, ctx) => {
    if (b.to <= b.from) ctx.addIssue({ code: "custom", path: ["to"], message: "must be after from", input: b.to });
    if (b.filters && namesSignals(b.filters)) ctx.addIssue({ code: "custom", path: ["filters"], message: "a backfill cannot filter on signals", input: b.filters });
  })
  .openapi("SignalBackfillRequest");

export const ListQuery = z.object({
  page: QueryInt(1).default(1),
  per_page: QueryInt(1, 100).default(20),
  name: z.string().max(255, "must be at most 255 characters").optional().openapi({ description: "Only signals whose name contains this (ASCII case ignored)." }),
  enabled: QueryBool.optional(),
  sort_order: SortOrder,
});

export const SeriesQuery = z
  .object({
    from: Timestamp.optional().openapi({ param: { name: "from", in: "query" }, description: "First day included (default: 30 days ago)." }),
    to: Timestamp.optional().openapi({ param: { name: "to", in: "query" }, description: "End, excluded (default: now)." }),
  })
  .superRefine((q, ctx) => {
    if (q.from !== undefined && q.to !== undefined && q.to <= q.from) ctx.addIssue({ code: "custom", path: ["to"], message: "must be after from", input: q.to });
  });

// ---- answers ----

export const HookSchema = z
  .object({
    id: z.int(),
    signal_id: z.int(),
    scope: z.enum(SIGNAL_HOOK_SCOPES),
    prompt_template_id: z.int().nullable(),
    prompt_version_number: z.int().nullable(),
    release_label: z.string().nullable(),
    ab_variant: z.string().nullable(),
    sample_rate: z.number(),
    filters: z.unknown().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("SignalHook");

export const TotalsSchema = z
  .object({
    processed: z.int().openapi({ description: "Logs judged: true + false + errors." }),
    true: z.int(),
    false: z.int(),
    errors: z.int(),
    skipped: z.int().openapi({ description: "Judgements the daily caps turned away." }),
    true_rate: z.number().nullable().openapi({ description: "true / (true + false); null before any verdict." }),
    cost_usd: z.number(),
  })
  .openapi("SignalTotals");

export const SignalSchema = z
  .object({
    id: z.int(),
    name: z.string(),
    statement: z.string(),
    color: z.string().nullable(),
    enabled: z.boolean(),
    model: z.object({ provider: z.string(), name: z.string(), parameters: z.record(z.string(), z.unknown()) }).nullable(),
    include: z.object({ input: z.boolean(), output: z.boolean(), metadata: z.boolean(), tools: z.boolean(), max_chars: z.int() }),
    delay_seconds: z.int(),
    limits: z.object({ daily_runs: z.int().nullable(), daily_cost_usd: z.number().nullable() }),
    hooks: z.array(HookSchema),
    revision: z.int(),
    totals: TotalsSchema,
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Signal");

export const TestResultSchema = z
  .object({
    request_id: z.int(),
    result: z.boolean().nullable(),
    reasoning: z.string().nullable(),
    quote: z.string().nullable(),
    quote_verified: z.boolean().openapi({ description: "The quote occurs in the text the judge read (case and white space aside)." }),
    status: z.enum(["ok", "error"]),
    error: z.string().nullable(),
    model: z.string().nullable(),
    input_tokens: z.int(),
    output_tokens: z.int(),
    cost_usd: z.number(),
  })
  .openapi("SignalTestResult");

export const EstimateSchema = z
  .object({
    window_days: z.int(),
    from: z.string(),
    to: z.string(),
    model: z.string().nullable().openapi({ description: "The judge model the estimate prices: the one given, else the workspace's default; null when none is configured." }),
    hooks: z.array(
      z.object({
        matches: z.int(),
        matches_per_day: z.number(),
        sampled_per_day: z.number(),
        cost_per_judgement_usd: z.number().nullable().openapi({ description: "null: the cost is unknown (the model is not in the price table, or there is no model)." }),
      }),
    ),
    sampled_per_day: z.number().openapi({ description: "Judgements per day, the hooks added up (an upper bound when hooks overlap: a log is judged once)." }),
    cost_usd_per_day: z.number().nullable().openapi({ description: "null when the model's cost is unknown (not 0: such a model is not free, only unpriced)." }),
  })
  .openapi("SignalEstimate");

export const BackfillSchema = z
  .object({
    id: z.int(),
    signal_id: z.int(),
    status: z.enum(SIGNAL_BACKFILL_STATUSES),
    from: z.string(),
    to: z.string(),
    filters: z.unknown().nullable(),
    sample_rate: z.number(),
    max_logs: z.int(),
    matched: z.int().openapi({ description: "Logs read that the filters matched." }),
    enqueued: z.int().openapi({ description: "Of those, sampled and queued for judging (logs already judged at the signal's revision are left out)." }),
    judged: z.int().openapi({ description: "Results stored so far (errors included)." }),
    errors: z.int(),
    skipped: z.int().openapi({ description: "Turned away by the signal's daily caps." }),
    remaining: z.int().openapi({ description: "Queued and not judged yet." }),
    cost_usd: z.number(),
    error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .openapi("SignalBackfill");

export const SeriesSchema = z
  .object({
    days: z.array(z.object({ day: z.string(), true: z.int(), false: z.int(), errors: z.int(), true_rate: z.number().nullable(), cost_usd: z.number() })),
  })
  .openapi("SignalSeries");
