// POST /log-request: the Logged request of the interface, every field, default and limit.
import { z } from "@hono/zod-openapi";
import { PromptBlueprint, PromptVersionSchema, Timestamp } from "../../lib/schemas";

import { ERROR_TYPE_STATUSES, REQUEST_STATUSES as STATUSES, type ErrorType } from "../../db/schema";

export { STATUSES };

export { ERROR_TYPE_STATUSES, type ErrorType };
const ERROR_TYPES = Object.keys(ERROR_TYPE_STATUSES) as [ErrorType, ...ErrorType[]];

const wholeNumber = (iss: { input?: unknown }) =>
  typeof iss.input === "number" && Number.isInteger(iss.input) ? `must be at most ${Number.MAX_SAFE_INTEGER}` : "must be a whole number";

/** Optional field whose null or absence means `value` (documented as the default in /openapi.json). */
function withDefault<S extends z.ZodType, D extends z.output<S>>(schema: S, value: D) {
  return schema
    .nullish()
    .transform((v) => (v ?? value) as z.output<S>)
    .openapi({ default: value });
}

const nonNegativeInt = (what: string) => withDefault(z.int({ error: wholeNumber }).min(0, `${what} must be >= 0`), 0);

export const LogRequestBody = z
  .object({
    provider: z.string().min(1, "must not be empty"),
    model: z.string().min(1, "must not be empty"),
    input: PromptBlueprint,
    output: PromptBlueprint,
    request_start_time: Timestamp,
    request_end_time: Timestamp,
    parameters: withDefault(z.record(z.string(), z.unknown()), {}),
    tags: withDefault(z.array(z.string().max(512, "each tag must be at most 512 characters")), []),
    metadata: withDefault(
      z
        .record(
          z.string().min(1, "metadata keys must not be empty").max(1024, "metadata keys must be at most 1024 characters"),
          z.string({ error: "metadata values must be strings" }),
        )
        .openapi({ description: "Custom key-value pairs; keys 1 to 1024 characters, values strings." }),
      {},
    ),
    prompt_name: z.string().nullish(),
    prompt_id: z.int({ error: wholeNumber }).min(1, "must be >= 1").nullish(),
    prompt_version_number: z.int({ error: wholeNumber }).gt(0, "must be > 0").nullish(),
    prompt_input_variables: withDefault(z.record(z.string(), z.unknown()), {}),
    input_tokens: nonNegativeInt("input_tokens"),
    output_tokens: nonNegativeInt("output_tokens"),
    price: withDefault(z.number().min(0, "must be >= 0"), 0),
    function_name: withDefault(z.string(), ""),
    score: withDefault(
      z
        .int({ error: "must be a whole number from 0 to 100" })
        .min(0, "must be from 0 to 100")
        .max(100, "must be from 0 to 100"),
      0,
    ),
    score_name: z.string().nullish(),
    api_type: z.string().nullish(),
    status: withDefault(z.enum(STATUSES, { error: `must be one of ${STATUSES.join(", ")}` }), "SUCCESS"),
    error_type: z.enum(ERROR_TYPES, { error: `must be one of ${ERROR_TYPES.join(", ")} or null` }).nullish(),
    error_message: z.string().max(1024, "must be at most 1024 characters").nullish(),
  })
  .superRefine((b, ctx) => {
    if (b.error_type) {
      const allowed: readonly string[] = ERROR_TYPE_STATUSES[b.error_type];
      if (!allowed.includes(b.status)) {
        ctx.addIssue({
          code: "custom",
          path: ["error_type"],
          message: `${b.error_type} is allowed only with status ${allowed.join(" or ")}, not ${b.status}`,
        });
      }
    }
    if (b.request_end_time < b.request_start_time) {
      ctx.addIssue({ code: "custom", path: ["request_end_time"], message: "must not be before request_start_time" });
    }
  })
  .openapi("LogRequest");

export const LogRequestResponse = z
  .object({
    id: z.int(),
    prompt_version: z.union([PromptVersionSchema, z.null()]),
    status: z.enum(STATUSES),
    error_type: z.string().nullable(),
    error_message: z.string().nullable(),
  })
  .openapi("LogRequestResponse");
