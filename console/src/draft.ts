// The prompt editor's draft: a version's blueprint and model as editable fields (roles, text, model,
// parameters, tools, response format as JSON text), and back to the blueprint and metadata the API
// takes. Whatever the editor does not show (images, tool calls of a message, unknown fields) is kept
// as it was. Pure, unit-tested (test/console/draft.test.ts).
import { templateVariableNames } from "../../src/prompts/variables";
import { isObj, type Obj } from "../../src/lib/obj";


export const ROLES = ["system", "user", "assistant", "developer", "tool", "placeholder"] as const;

export interface MessageDraft {
  role: string;
  /** The message's text blocks, joined. */
  text: string;
  /** The message as it was, for the fields and blocks the editor does not show. */
  base: Obj;
}

export interface Draft {
  type: "chat" | "completion";
  messages: MessageDraft[];
  /** A completion template's text. */
  content: string;
  templateFormat: "f-string" | "jinja2";
  provider: string;
  model: string;
  /** JSON text of the model's parameters (response_format apart). */
  parameters: string;
  /** JSON text of the tools list ("" for none). */
  tools: string;
  /** JSON text of the response format ("" for none). */
  responseFormat: string;
  /** The blueprint and metadata as they were, for what the editor does not show. */
  base: { template: Obj; metadata: Obj | null };
}

/** The text blocks of a message's (or a completion's) content, joined. */
export const textOf = (content: unknown) =>
  (Array.isArray(content) ? content : [])
    .filter((b): b is Obj => isObj(b) && b.type === "text")
    .map((b) => String(b.text ?? ""))
    .join("");

const json = (v: unknown) => (v === undefined || v === null ? "" : JSON.stringify(v, null, 2));

/** A draft of a stored version (or of nothing: a new template's first version). */
export function draftOf(template: Obj | null, metadata: Obj | null): Draft {
  const t = template ?? { type: "chat", messages: [{ role: "system", content: [] }, { role: "user", content: [] }] };
  const model = isObj(metadata?.model) ? (metadata!.model as Obj) : {};
  const { response_format, ...parameters } = isObj(model.parameters) ? model.parameters : {};
  const messages = (Array.isArray(t.messages) ? t.messages : []).filter(isObj);
  const format = [t, ...messages].map((m) => m.template_format).find((f) => f === "jinja2" || f === "f-string");
  return {
    type: t.type === "completion" ? "completion" : "chat",
    messages: messages.map((m) => ({ role: String(m.role ?? "user"), text: textOf(m.content), base: m })),
    content: textOf(t.content),
    templateFormat: format === "jinja2" ? "jinja2" : "f-string",
    provider: typeof model.provider === "string" ? model.provider : "openai",
    model: typeof model.name === "string" ? model.name : "gpt-4o-mini",
    parameters: JSON.stringify(parameters, null, 2),
    tools: Array.isArray(t.tools) && t.tools.length ? json(t.tools) : "",
    responseFormat: json(response_format),
    base: { template: t, metadata },
  };
}

/** Content blocks: the text first, then the blocks the editor does not show (images…). */
function contentOf(text: string, base: unknown): Obj[] {
  const others = (Array.isArray(base) ? base : []).filter((b) => !(isObj(b) && b.type === "text"));
  return [...(text ? [{ type: "text", text }] : []), ...(others as Obj[])];
}

/** The JSON fields that do not parse, by field name (parameters, tools, responseFormat). */
export type JsonProblems = Partial<Record<"parameters" | "tools" | "responseFormat", string>>;

function parse(text: string, field: keyof JsonProblems, problems: JsonProblems, want: "object" | "array"): unknown {
  if (!text.trim()) return undefined;
  try {
    const v = JSON.parse(text);
    if (want === "array" ? !Array.isArray(v) : !isObj(v)) problems[field] = `must be a JSON ${want}`;
    return v;
  } catch (err) {
    problems[field] = `is not JSON: ${(err as Error).message}`;
    return undefined;
  }
}

/** The draft as the API takes a version, or the JSON fields that do not parse. */
export function versionOf(d: Draft): { ok: true; prompt_template: Obj; metadata: Obj } | { ok: false; problems: JsonProblems } {
  const problems: JsonProblems = {};
  const parameters = parse(d.parameters, "parameters", problems, "object") as Obj | undefined;
  const tools = parse(d.tools, "tools", problems, "array") as unknown[] | undefined;
  const responseFormat = parse(d.responseFormat, "responseFormat", problems, "object");
  if (Object.keys(problems).length) return { ok: false, problems };
  const base = { ...d.base.template };
  delete base.input_variables;
  let template: Obj;
  if (d.type === "completion") {
    template = { ...base, type: "completion", content: contentOf(d.content, base.content), template_format: d.templateFormat };
    delete template.messages;
  } else {
    template = {
      ...base,
      type: "chat",
      messages: d.messages.map((m) => ({ ...m.base, role: m.role, content: contentOf(m.text, m.base.content), template_format: d.templateFormat })),
    };
    delete template.content;
    if (tools && tools.length) template.tools = tools;
    else delete template.tools;
  }
  template.input_variables = templateVariableNames(template);
  const baseModel = isObj(d.base.metadata?.model) ? (d.base.metadata!.model as Obj) : {};
  const model: Obj = { ...baseModel, provider: d.provider.trim(), name: d.model.trim(), parameters: { ...(parameters ?? {}), ...(responseFormat !== undefined ? { response_format: responseFormat } : {}) } };
  return { ok: true, prompt_template: template, metadata: { ...(d.base.metadata ?? {}), model } };
}

/** The variables a draft's text uses, as the API fills them. */
export function draftVariables(d: Draft): string[] {
  const v = versionOf(d);
  return v.ok ? templateVariableNames(v.prompt_template) : [];
}

/** The common parameters the editor shows as controls (the rest stay in the JSON of the advanced view). */
export const COMMON_PARAMETERS = ["temperature", "max_tokens", "top_p", "stop"] as const;
export type CommonParameter = (typeof COMMON_PARAMETERS)[number];

/** The draft's parameters as an object, or null while their JSON does not parse. */
export function parametersOf(d: Draft): Obj | null {
  if (!d.parameters.trim()) return {};
  try {
    const v = JSON.parse(d.parameters);
    return isObj(v) ? v : null;
  } catch {
    return null;
  }
}

/**
 * The draft with one parameter set from its control's text ("" removes it): numbers for temperature,
 * max_tokens and top_p (text that is not a number is kept as text, for the API to refuse by name), a
 * list for stop (comma-separated). Null while the parameters' JSON does not parse.
 */
export function withParameter(d: Draft, name: CommonParameter, text: string): Draft | null {
  const params = parametersOf(d);
  if (!params) return null;
  const next: Obj = { ...params };
  const t = text.trim();
  if (!t) delete next[name];
  else if (name === "stop") next[name] = t.split(",").map((s) => s.trim()).filter(Boolean);
  else next[name] = Number.isFinite(Number(t)) ? Number(t) : t;
  return { ...d, parameters: JSON.stringify(next, null, 2) };
}

/** A parameter's value as its control shows it. */
export function parameterText(d: Draft, name: CommonParameter): string {
  const v = parametersOf(d)?.[name];
  if (v === undefined || v === null) return "";
  return Array.isArray(v) ? v.join(", ") : String(v);
}

/** The response format as the editor's choice: none, a JSON object, or something only the JSON view shows (a schema). */
export function responseFormatChoice(d: Draft): "" | "json_object" | "custom" {
  if (!d.responseFormat.trim()) return "";
  try {
    const v = JSON.parse(d.responseFormat);
    return isObj(v) && v.type === "json_object" && Object.keys(v).length === 1 ? "json_object" : "custom";
  } catch {
    return "custom";
  }
}
