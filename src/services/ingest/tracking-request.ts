// POST /track-request: the provider's own request and response (what run() and the SDK's provider
// wrappers post) become a request log. The provider format is the converters' business
// (converters/, passed in by the route); this adds the times, tags, metadata, prompt link, group and
// score, checks every id against the workspace, and writes the log through the one log store
// (createRequestLog).
import type { Db } from "../../db/client";
import type { RequestStatus } from "../../db/schema";
import type { AuthContext } from "../../env";
import { ApiError } from "../../lib/errors";
import { loggedPromptVersion, templateExists, type PromptVersionView } from "../../prompts";
import { createRequestLog, requireGroup, type RecordAnswer, type RequestLogInput, type WorkspaceLogs } from "../../logs";

/** What the provider call gives a log (the fields of RequestLogInput a converter fills). */
export type ConvertedFields = Pick<
  RequestLogInput,
  "provider" | "model" | "input" | "output" | "parameters" | "input_tokens" | "output_tokens" | "price" | "status" | "error_type" | "error_message"
> &
  Partial<Pick<RequestLogInput, "api_type">>;

/** The converters' entry point: one provider call in, the log's fields or why it cannot be read out (a message that starts with the field's name). */
export type ConvertProviderCall = (call: {
  function_name: string;
  provider_type?: string;
  args?: unknown[];
  kwargs: Record<string, unknown>;
  request_response: unknown;
}) => { ok: true; value: ConvertedFields } | { ok: false; error: string };

export interface TrackRequestInput {
  function_name: string;
  provider_type?: string | null;
  args?: unknown[] | null;
  kwargs: Record<string, unknown>;
  /** The span the call ran in (the SDK's run()); the log links to its trace when the span arrives. */
  span_id?: string | null;
  request_response?: unknown;
  request_start_time: number;
  request_end_time: number;
  tags: string[];
  metadata: Record<string, string>;
  prompt_id?: number | null;
  prompt_version?: number | null;
  prompt_input_variables: Record<string, unknown>;
  group_id?: number | null;
  score?: number | null;
  status?: RequestStatus | null;
  error_type?: string | null;
  error_message?: string | null;
}

export interface TrackedRequest {
  request_id: number;
  prompt_blueprint: {
    prompt_template: Record<string, unknown>;
    metadata: { model: { provider: string; name: string; parameters: Record<string, unknown> } };
    inference_client_name: null;
  };
}

const EMPTY_CHAT = { type: "chat", messages: [] };

/** `record`: the Idempotency-Key's row for the log's batch (src/http/idempotency.ts), when the call sent one. */
export async function trackRequest(
  db: Db,
  logs: WorkspaceLogs,
  auth: AuthContext,
  body: TrackRequestInput,
  convertProviderCall: ConvertProviderCall,
  record?: RecordAnswer,
): Promise<TrackedRequest> {
  const ws = auth.workspaceId;
  // Every id names something of this workspace, or nothing is written.
  if (body.group_id != null) await requireGroup(logs, ws, body.group_id);
  // The linked version, looked up once: it proves the template too, and the log is written with it.
  let promptVersion: PromptVersionView | null = null;
  if (body.prompt_id != null) {
    // Versions are numbered from 1: a lower number names none, and costs no lookup of it.
    if (body.prompt_version != null && body.prompt_version >= 1) {
      promptVersion = await loggedPromptVersion(db, ws, { promptId: body.prompt_id, versionNumber: body.prompt_version });
    }
    if (!promptVersion) {
      // No version found (or none asked for): whose 404 it is.
      if (!(await templateExists(db, ws, body.prompt_id))) throw ApiError.notFound("prompt template");
      if (body.prompt_version != null) throw new ApiError("not_found", `prompt_version: prompt template has no version ${body.prompt_version}`);
    }
  } else if (body.prompt_version != null) {
    throw new ApiError("validation_error", "prompt_version: needs prompt_id");
  }

  const converted = convertProviderCall({
    function_name: body.function_name,
    provider_type: body.provider_type ?? undefined,
    args: body.args ?? undefined,
    kwargs: body.kwargs,
    request_response: body.request_response ?? {},
  });
  let call: ConvertedFields;
  if (converted.ok) {
    call = converted.value;
  } else if (body.status === "ERROR") {
    // run() reports a failed provider call with an empty response: the failure is still logged.
    const model = typeof body.kwargs.model === "string" && body.kwargs.model ? body.kwargs.model : "unknown";
    call = {
      provider: body.provider_type || body.function_name.split(".")[0] || "unknown",
      model,
      input: EMPTY_CHAT,
      output: EMPTY_CHAT,
      parameters: {},
      input_tokens: 0,
      output_tokens: 0,
      price: 0,
      status: "ERROR",
    };
  } else {
    // The converter's message names the field it could not read (function_name, kwargs, request_response).
    throw new ApiError("validation_error", converted.error);
  }

  // What the client says about the outcome (run()'s failed calls) wins over what the response shows.
  const status: RequestStatus = body.status ?? call.status;
  const errorType = body.error_type ?? call.error_type ?? (status === "ERROR" ? "UNKNOWN_ERROR" : null);
  const input: RequestLogInput = {
    ...call,
    status,
    error_type: status === "SUCCESS" ? null : errorType,
    error_message: (body.error_message ?? call.error_message ?? null)?.slice(0, 1024) ?? null,
    tags: body.tags,
    metadata: body.metadata,
    prompt_id: body.prompt_id ?? null,
    prompt_version_number: body.prompt_version ?? null,
    prompt_input_variables: body.prompt_input_variables,
    function_name: body.function_name,
    score: body.score ?? 0,
    group_id: body.group_id ?? null,
    request_start_time: body.request_start_time,
    request_end_time: Math.max(body.request_end_time, body.request_start_time),
    span_id: body.span_id ?? null,
  };
  // The answer shows the log as stored (redacted by the workspace's policy, if any), never more.
  const answer = (id: number, stored: RequestLogInput): TrackedRequest => ({
    request_id: id,
    prompt_blueprint: {
      prompt_template: stored.input,
      metadata: { model: { provider: stored.provider, name: stored.model, parameters: stored.parameters } },
      inference_client_name: null,
    },
  });
  const logged = await createRequestLog(db, logs, auth, input, record && ((logId, _version, stored) => record({ ...answer(0, stored) }, "request_id", logId)), { promptVersion });
  return answer(logged.id, logged.stored);
}
