// Schemas of POST /api/public/v2/prompt-runs: what a run takes (a stored version or a draft, input
// variables, model overrides) and what it answers (the log it made, the reply, tokens, cost, latency).
import { z } from "@hono/zod-openapi";
import { PromptBlueprint } from "../../lib/schemas";
import { LabelName } from "../prompt-templates/schemas";

const Obj = z.record(z.string(), z.unknown());

export const PromptRunBody = z
  .object({
    prompt: z
      .object({
        identifier: z
          .union([z.int().positive("must be a positive integer"), z.string().min(1, "must be 1 to 512 characters").max(512, "must be 1 to 512 characters")])
          .transform(String)
          .openapi({ description: "The template's id or name." }),
        version: z.int().positive("must be > 0").nullish(),
        label: LabelName.nullish(),
      })
      .refine((p) => p.version == null || p.label == null, { message: "give version or label, not both", path: ["label"] })
      .nullish()
      .openapi({ description: "A stored template: its version (or the one a release label names; the latest by default) runs. With prompt_version, the template the draft belongs to." }),
    prompt_version: z
      .object({
        prompt_template: PromptBlueprint,
        metadata: z.looseObject({}).nullish().openapi({ description: "As a version's: metadata.model {provider, name, parameters} names the model." }),
      })
      .nullish()
      .openapi({ description: "An unsaved draft to run instead of a stored version (as POST /rest/prompt-templates takes a version)." }),
    input_variables: z.record(z.string(), z.unknown()).nullish().transform((v) => v ?? {}).openapi({ description: "A value for every variable the template uses." }),
    model: z
      .object({
        provider: z.string().min(1, "must not be empty").max(64, "must be at most 64 characters").nullish(),
        name: z.string().min(1, "must not be empty").max(256, "must be at most 256 characters").nullish(),
        parameters: Obj.nullish(),
      })
      .nullish()
      .openapi({ description: "Overrides of the version's metadata.model: another provider or model, or parameters merged over its own (to compare models)." }),
    stream: z.boolean().nullish().transform((v) => v ?? false).openapi({ description: "true: answer text/event-stream (delta events, then done)." }),
    tags: z
      .array(z.string().min(1, "must be 1 to 512 characters").max(512, "must be 1 to 512 characters"))
      .max(100, "at most 100 tags")
      .nullish()
      .transform((v) => v ?? []),
    metadata: z
      .record(z.string().min(1, "metadata keys must not be empty").max(1024, "metadata keys must be at most 1024 characters"), z.string({ error: "metadata values must be strings" }))
      .nullish()
      .transform((v) => v ?? {}),
  })
  .superRefine((b, ctx) => {
    if (!b.prompt && !b.prompt_version) ctx.addIssue({ code: "custom", path: ["prompt"], message: "give prompt (a stored version), prompt_version (a draft), or both" });
  })
  .openapi("PromptRunRequest");

export const PromptRunResult = z
  .object({
    success: z.literal(true),
    request_id: z.int().openapi({ description: "The request log this run made (GET /api/public/v2/requests/{request_id})." }),
    status: z.enum(["SUCCESS", "WARNING", "ERROR"]).openapi({ description: "ERROR when the provider failed (error_message says how); the run is logged either way." }),
    provider: z.string(),
    model: z.string(),
    output_text: z.string().openapi({ description: "The reply's text." }),
    output: Obj.openapi({ description: "The reply as a chat blueprint (its text, tool calls)." }),
    input_tokens: z.int(),
    output_tokens: z.int(),
    price: z.number().openapi({ description: "Cost in US dollars, from the model's list price (0 for a model without one)." }),
    latency_ms: z.int(),
    error_message: z.string().nullable(),
    prompt_id: z.int().nullable(),
    prompt_version_number: z.int().nullable().openapi({ description: "The version that ran; null for a draft." }),
  })
  .openapi("PromptRunResult");
