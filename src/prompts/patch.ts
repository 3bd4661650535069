// Pure logic of PATCH /rest/prompt-templates/{identifier}: a new prompt template and metadata from a
// base version and a patch (index-keyed objects patch lists, arrays replace them, null removes).
// Filling input variables is variables.ts's.
import { ApiError } from "../lib/errors";
import { isObj, type Obj } from "../lib/obj";

export interface PromptPatch {
  messages?: Record<string, unknown> | unknown[] | null;
  tools?: Record<string, unknown> | unknown[] | null;
  functions?: Record<string, unknown> | unknown[] | null;
  function_call?: string | Record<string, unknown> | null;
  tool_choice?: string | Record<string, unknown> | null;
  content?: Record<string, unknown> | unknown[] | null;
  model_parameters?: Record<string, unknown> | null;
  response_format?: Record<string, unknown> | null;
}

const bad = (msg: string) => new ApiError("validation_error", msg);

/** Applies an index-keyed patch ({"0": …}) or a full replacement (an array) to a list. */
export function patchList(field: string, current: unknown, patch: Obj | unknown[]): unknown[] {
  if (Array.isArray(patch)) return structuredClone(patch);
  const list = Array.isArray(current) ? structuredClone(current) : [];
  for (const [k, v] of Object.entries(patch)) {
    if (!/^(0|[1-9][0-9]*)$/.test(k)) throw bad(`${field}.${k}: keys must be message indexes (0, 1, …)`);
    const i = Number(k);
    if (i >= list.length) throw bad(`${field}.${k}: index out of range (the base has ${list.length})`);
    list[i] = structuredClone(v);
  }
  return list;
}

export function applyPromptPatch(base: { template: Obj; metadata: Obj | null }, patch: PromptPatch): { template: Obj; metadata: Obj | null } {
  const template = structuredClone(base.template);
  let metadata = base.metadata ? structuredClone(base.metadata) : null;
  const isChat = template.type === "chat";
  const chatOnly = ["messages", "tools", "functions", "function_call", "tool_choice"] as const;
  for (const f of chatOnly) {
    if (patch[f] !== undefined && !isChat) throw bad(`${f}: only chat templates have ${f}`);
  }
  if (patch.content !== undefined && isChat) throw bad("content: only completion templates have content (patch messages instead)");

  if (patch.messages !== undefined) {
    if (patch.messages === null) throw bad("messages: cannot be null");
    template.messages = patchList("messages", template.messages, patch.messages);
  }
  for (const f of ["tools", "functions"] as const) {
    const p = patch[f];
    if (p === undefined) continue;
    if (p === null) delete template[f];
    else template[f] = patchList(f, template[f], p);
  }
  for (const f of ["function_call", "tool_choice"] as const) {
    const p = patch[f];
    if (p === undefined) continue;
    if (p === null) delete template[f];
    else template[f] = structuredClone(p);
  }
  if (patch.content !== undefined) {
    if (patch.content === null) throw bad("content: cannot be null");
    template.content = patchList("content", template.content, patch.content);
  }

  if (patch.model_parameters !== undefined || patch.response_format !== undefined) {
    if (patch.response_format !== undefined && isObj(patch.model_parameters) && "response_format" in patch.model_parameters) {
      throw bad("response_format: give it either on its own or inside model_parameters, not both");
    }
    metadata = metadata ?? {};
    const model = isObj(metadata.model) ? metadata.model : null;
    if (!model) throw bad("model_parameters: the base version has no metadata.model to hold parameters");
    const params: Obj = isObj(model.parameters) ? model.parameters : {};
    if (patch.model_parameters) Object.assign(params, structuredClone(patch.model_parameters));
    if (patch.response_format === null) delete params.response_format;
    else if (patch.response_format !== undefined) params.response_format = structuredClone(patch.response_format);
    model.parameters = params;
    metadata.model = model;
  }
  return { template, metadata };
}
