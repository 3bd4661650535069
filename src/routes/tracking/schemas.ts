// Bodies of the tracking calls: the SDK's /library-track-*, /create-group, /track-group and their REST
// twins /rest/track-* (PromptLayer's shapes). `api_key` is accepted on the SDK's paths and never kept.
import { z } from "@hono/zod-openapi";
import { Timestamp } from "../../lib/schemas";

const POSITIVE = "must be a positive integer";

/** A positive integer id, as a JSON number or a string of digits (PromptLayer's documents allow both). */
export const IdField = (what: string) =>
  z
    .union([z.int({ error: POSITIVE }).min(1, POSITIVE), z.string().regex(/^[1-9][0-9]{0,15}$/, POSITIVE)], { error: POSITIVE })
    .transform((v) => Number(v))
    .refine((n) => Number.isSafeInteger(n), POSITIVE)
    .openapi({ type: "integer", minimum: 1, description: what, example: 12345 });

const RequestId = IdField("The request log's id (the `id` POST /log-request answered, or the SDK's request_id).");

/** Sent by the SDK in the body instead of X-API-KEY; never stored, logged or echoed. */
const ApiKeyField = z.string().optional().openapi({ description: "The API key, when no X-API-KEY header is sent (the SDK's way). Both given and different: 401." });

export const TrackScoreBody = z
  .object({
    request_id: RequestId,
    score: z
      .int({ error: "must be a whole number from 0 to 100" })
      .min(0, "must be from 0 to 100")
      .max(100, "must be from 0 to 100"),
    name: z
      .string()
      .min(1, "must not be empty")
      .max(256, "must be at most 256 characters")
      .nullish()
      .openapi({ description: "The score's name; absent or null means `default`, which is also the log's `score`." }),
  })
  .openapi("TrackScore");

export const TrackMetadataBody = z
  .object({
    request_id: RequestId,
    metadata: z
      .record(
        z.string().min(1, "metadata keys must not be empty").max(1024, "metadata keys must be at most 1024 characters"),
        z.string({ error: "metadata values must be strings" }),
      )
      .openapi({ description: "Merged into the log's metadata: new keys are added, a key sent again takes the new value, others stay." }),
  })
  .openapi("TrackMetadata");

export const TrackPromptBody = z
  .object({
    request_id: RequestId,
    prompt_name: z.string().min(1, "must not be empty").max(512, "must be at most 512 characters"),
    prompt_input_variables: z
      .record(z.string(), z.unknown())
      .nullish()
      .openapi({ description: "Replace the log's input variables when given." }),
    version: z
      .union([z.int().min(1, POSITIVE), z.string().regex(/^[1-9][0-9]{0,8}$/, POSITIVE)], { error: POSITIVE })
      .transform((v) => Number(v))
      .nullish()
      .openapi({ type: "integer", minimum: 1, description: "The version number; give this or `label` (neither: the latest version)." }),
    label: z.string().min(1, "must not be empty").max(512, "must be at most 512 characters").nullish().openapi({ description: "A release label of the prompt." }),
  })
  .openapi("TrackPrompt");

export const TrackGroupBody = z
  .object({
    request_id: RequestId,
    group_id: IdField("A group id from POST /create-group, of this workspace."),
  })
  .openapi("TrackGroup");

/** The SDK's variants: the same fields plus the key in the body. */
export const LibraryTrackScoreBody = TrackScoreBody.extend({ api_key: ApiKeyField });
export const LibraryTrackMetadataBody = TrackMetadataBody.extend({ api_key: ApiKeyField });
export const LibraryTrackPromptBody = TrackPromptBody.extend({ api_key: ApiKeyField });
export const LibraryTrackGroupBody = TrackGroupBody.extend({ api_key: ApiKeyField });
export const CreateGroupBody = z.object({ api_key: ApiKeyField });

export const TrackResponse = z.object({ success: z.literal(true), message: z.string() }).openapi("TrackResponse");
export const CreateGroupResponse = z.object({ success: z.literal(true), id: z.int() }).openapi("CreateGroupResponse");

const wholeNumber = "must be a whole number";

/** POST /track-request: the provider's own call, as run() and the SDK's provider wrappers post it. */
export const TrackRequestBody = z
  .object({
    function_name: z
      .string()
      .min(1, "must not be empty")
      .max(256, "must be at most 256 characters")
      .openapi({
        description:
          "The provider call, `<family>[.<client class>].<method>`: `openai.chat.completions.create` (run(), the JavaScript SDK), " +
          "`openai.AsyncOpenAI.chat.completions.create` or `anthropic.Anthropic.messages.create` (the Python SDK's wrappers name the client class). " +
          "It picks the converter; a class naming a cloud (AzureOpenAI, AnthropicBedrock, AnthropicVertex, sync or async) sets the provider.",
      }),
    provider_type: z.string().max(64, "must be at most 64 characters").nullish().openapi({ description: "openai, anthropic, openai.azure, google, vertexai, amazon.bedrock, anthropic.bedrock, mistral." }),
    args: z.array(z.unknown()).nullish(),
    kwargs: z.record(z.string(), z.unknown()).nullish().transform((v) => v ?? {}).openapi({ description: "The arguments the provider was called with (model, messages, parameters, tools)." }),
    request_response: z.unknown().optional().openapi({ description: "The provider's response as its client returned it (streams assembled by the SDK)." }),
    request_start_time: Timestamp.nullish(),
    request_end_time: Timestamp.nullish(),
    tags: z.array(z.string().max(512, "each tag must be at most 512 characters")).nullish().transform((v) => v ?? []),
    metadata: z
      .record(
        z.string().min(1, "metadata keys must not be empty").max(1024, "metadata keys must be at most 1024 characters"),
        z.string({ error: "metadata values must be strings" }),
      )
      .nullish()
      .transform((v) => v ?? {}),
    prompt_id: z.int({ error: wholeNumber }).min(1, "must be >= 1").nullish().openapi({ description: "A prompt template of this workspace (else 404)." }),
    prompt_version: z.int({ error: wholeNumber }).min(1, "must be >= 1").nullish().openapi({ description: "A version number of prompt_id (else 404)." }),
    prompt_input_variables: z.record(z.string(), z.unknown()).nullish().transform((v) => v ?? {}),
    group_id: z.int({ error: wholeNumber }).min(1, "must be >= 1").nullish().openapi({ description: "A group of this workspace from POST /create-group (else 404)." }),
    score: z.int({ error: "must be a whole number from 0 to 100" }).min(0, "must be from 0 to 100").max(100, "must be from 0 to 100").nullish(),
    status: z.enum(["SUCCESS", "WARNING", "ERROR"], { error: "must be one of SUCCESS, WARNING, ERROR" }).nullish(),
    error_type: z.string().max(64, "must be at most 64 characters").nullish(),
    error_message: z.string().max(10_000, "must be at most 10000 characters").nullish(),
    return_pl_id: z.boolean().nullish(),
    return_prompt_blueprint: z.boolean().nullish(),
    span_id: z.string().max(128).nullish(),
    api_key: ApiKeyField,
  })
  .openapi("TrackRequest");

export const TrackRequestResponse = z
  .object({
    success: z.literal(true),
    request_id: z.int().openapi({ description: "The new request log's id." }),
    prompt_blueprint: z.record(z.string(), z.unknown()).openapi({ description: "The log as a prompt blueprint: its input, provider, model and parameters." }),
  })
  .openapi("TrackRequestResponse");
