// Renders prompt blueprints for PROMPT_TEMPLATE: f-string ({var}, with {{ and }} as literal braces) and
// jinja2-style ({{ var }} and {{ var.field }}; {# comments #}). Jinja2 control tags ({% %}) are refused.
import { BlockError, type ChatMessage } from "./types";

export type { ChatMessage };
import { toText } from "./values";

export type TemplateFormat = "f-string" | "jinja2";


function lookup(vars: Record<string, unknown>, path: string): unknown {
  const parts = path.split(".");
  if (!Object.prototype.hasOwnProperty.call(vars, parts[0])) throw new BlockError(`template variable "${parts[0]}" has no value`);
  let cur: unknown = vars[parts[0]];
  for (const p of parts.slice(1)) {
    if (cur !== null && typeof cur === "object" && Object.prototype.hasOwnProperty.call(cur, p)) cur = (cur as Record<string, unknown>)[p];
    else throw new BlockError(`template variable "${path}" has no value`);
  }
  return cur;
}

function renderFString(t: string, vars: Record<string, unknown>): string {
  let out = "";
  for (let i = 0; i < t.length; i++) {
    const ch = t[i];
    if (ch === "{" && t[i + 1] === "{") { out += "{"; i++; continue; }
    if (ch === "}" && t[i + 1] === "}") { out += "}"; i++; continue; }
    if (ch === "{") {
      const end = t.indexOf("}", i);
      if (end === -1) throw new BlockError("f-string template has an unclosed {");
      const name = t.slice(i + 1, end).trim();
      if (!/^[A-Za-z_][\w.]*$/.test(name)) throw new BlockError(`f-string template has an invalid variable {${t.slice(i + 1, end)}}`);
      out += toText(lookup(vars, name));
      i = end;
      continue;
    }
    out += ch;
  }
  return out;
}

function renderJinja(t: string, vars: Record<string, unknown>): string {
  if (/\{%/.test(t)) throw new BlockError("jinja2 control tags ({% … %}) are not supported; only {{ variable }} substitution is");
  return t.replace(/\{#[\s\S]*?#\}/g, "").replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_m, expr: string) => {
    if (!/^[A-Za-z_][\w.]*$/.test(expr)) throw new BlockError(`jinja2 expression {{ ${expr} }} is not supported; only variable names and dotted fields are`);
    return toText(lookup(vars, expr));
  });
}

export function renderTemplate(t: string, vars: Record<string, unknown>, format: TemplateFormat = "f-string"): string {
  return format === "jinja2" ? renderJinja(t, vars) : renderFString(t, vars);
}

/** Variable names a template text uses (first path segment only). */
export function templateVariables(t: string, format: TemplateFormat = "f-string"): string[] {
  const names = new Set<string>();
  if (format === "jinja2") {
    for (const m of t.matchAll(/\{\{\s*([A-Za-z_]\w*)[\w.]*\s*\}\}/g)) names.add(m[1]);
  } else {
    for (const m of t.replace(/\{\{|\}\}/g, "").matchAll(/\{\s*([A-Za-z_]\w*)[\w.]*\s*\}/g)) names.add(m[1]);
  }
  return [...names];
}

function formatOf(v: unknown, fallback: TemplateFormat): TemplateFormat {
  return v === "jinja2" ? "jinja2" : v === "f-string" ? "f-string" : fallback;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b && typeof b === "object" && (b as { type?: unknown }).type === "text")
    .map((b) => String((b as { text?: unknown }).text ?? ""))
    .join("");
}

const ROLE_MAP: Record<string, ChatMessage["role"]> = { system: "system", developer: "system", user: "user", assistant: "assistant" };

/** A blueprint (chat or completion) rendered to plain chat messages. */
export function renderBlueprint(blueprint: Record<string, unknown>, vars: Record<string, unknown>): ChatMessage[] {
  const base = formatOf(blueprint.template_format, "f-string");
  if (blueprint.type === "completion") {
    return [{ role: "user", content: renderTemplate(contentText(blueprint.content), vars, base) }];
  }
  if (!Array.isArray(blueprint.messages)) throw new BlockError("the prompt template has no messages");
  const out: ChatMessage[] = [];
  for (const m of blueprint.messages as Record<string, unknown>[]) {
    const role = ROLE_MAP[String(m?.role)];
    if (!role) continue; // placeholders, tool turns: nothing to send for a single-shot call
    out.push({ role, content: renderTemplate(contentText(m.content), vars, formatOf(m.template_format, base)) });
  }
  if (out.length === 0) throw new BlockError("the prompt template renders no messages");
  return out;
}

/** Every variable a blueprint uses. */
export function blueprintVariables(blueprint: Record<string, unknown>): string[] {
  const base = formatOf(blueprint.template_format, "f-string");
  const names = new Set<string>();
  if (blueprint.type === "completion") templateVariables(contentText(blueprint.content), base).forEach((n) => names.add(n));
  for (const m of (Array.isArray(blueprint.messages) ? blueprint.messages : []) as Record<string, unknown>[]) {
    templateVariables(contentText(m?.content), formatOf(m?.template_format, base)).forEach((n) => names.add(n));
  }
  return [...names];
}
