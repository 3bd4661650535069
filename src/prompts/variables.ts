import { isObj, type Obj } from "../lib/obj";
// The input variables of a prompt blueprint's text blocks: which it uses and how they are filled
// (f-string `{name}` or jinja2 `{{ name }}`, per message's template_format). Pure and without imports:
// the console's editor reads the same rule (console/src/draft.ts).

const FSTRING = /\{(\w+)(?:[!:][^}]*)?\}/g;
const JINJA_VAR = /\{\{\s*([A-Za-z_][\w]*)\s*\}\}/g;

/** Calls `fn` with each text block of a template and the format its variables are written in. */
function eachTextBlock(template: Obj, fn: (block: Obj & { text: string }, format: unknown) => void) {
  const inBlocks = (blocks: unknown, format: unknown) => {
    if (!Array.isArray(blocks)) return;
    for (const b of blocks) if (isObj(b) && b.type === "text" && typeof b.text === "string") fn(b as Obj & { text: string }, format);
  };
  if (template.type === "chat" && Array.isArray(template.messages)) {
    for (const m of template.messages) if (isObj(m)) inBlocks(m.content, m.template_format);
  } else if (template.type === "completion") {
    inBlocks(template.content, template.template_format);
  }
}

const variablePattern = (format: unknown) => (format === "jinja2" ? JINJA_VAR : FSTRING);

/** Fills input variables into text blocks: f-string `{name}` or jinja2 `{{ name }}` (plain variables only). */
export function renderTemplate(template: Obj, variables: Record<string, unknown>): Obj {
  const out = structuredClone(template);
  eachTextBlock(out, (b, format) => {
    b.text = b.text.replace(variablePattern(format), (_m, name: string) => {
      const v = variables[name];
      return v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v);
    });
  });
  return out;
}

/** The input variables renderTemplate would fill in a template, in order of first use. */
export function templateVariableNames(template: Obj): string[] {
  const names = new Set<string>();
  eachTextBlock(template, (b, format) => {
    for (const m of b.text.matchAll(variablePattern(format))) names.add(m[1]);
  });
  return [...names];
}
