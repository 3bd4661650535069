// A JSONPath subset (no dependency available): $, .name, ['name'], [n], [-n], [*], .*, ..name, ..*,
// unions [a,b] and slices [start:end:step]. Filter expressions ([?(...)]) are refused at validation.
// One evaluation is bounded: each step may hold at most MAX_JSON_PATH_MATCHES values and the whole
// query may visit at most MAX_JSON_PATH_WORK nodes (repeated `..*` on a 2 KB object made tens of
// millions of matches and ran the isolate out of memory); past either, a JsonPathError says so.

type Selector =
  | { kind: "name"; name: string }
  | { kind: "index"; index: number }
  | { kind: "wildcard" }
  | { kind: "slice"; start?: number; end?: number; step: number }
  | { kind: "union"; items: ({ kind: "name"; name: string } | { kind: "index"; index: number })[] };

interface Step {
  descendant: boolean;
  selector: Selector;
}

export type CompiledPath = Step[];

export class JsonPathError extends Error {}

const NAME_RE = /^[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff-]*/;

function parseBracket(body: string, path: string): Selector {
  const s = body.trim();
  if (s === "*") return { kind: "wildcard" };
  if (s.startsWith("?")) throw new JsonPathError(`filter expressions are not supported: ${path}`);
  if (s.startsWith("(")) throw new JsonPathError(`script expressions are not supported: ${path}`);
  if (/^-?\d*\s*:\s*-?\d*(\s*:\s*-?\d*)?$/.test(s)) {
    const [a, b, c] = s.split(":").map((x) => x.trim());
    const step = c ? Number(c) : 1;
    if (step === 0) throw new JsonPathError(`a slice step cannot be 0: ${path}`);
    return { kind: "slice", start: a ? Number(a) : undefined, end: b ? Number(b) : undefined, step };
  }
  const items: ({ kind: "name"; name: string } | { kind: "index"; index: number })[] = [];
  for (const part of splitUnion(s, path)) {
    const p = part.trim();
    if (/^-?\d+$/.test(p)) items.push({ kind: "index", index: Number(p) });
    else if (/^'(?:[^'\\]|\\.)*'$/.test(p) || /^"(?:[^"\\]|\\.)*"$/.test(p)) items.push({ kind: "name", name: unquote(p) });
    else throw new JsonPathError(`unsupported selector [${body}] in ${path}`);
  }
  if (items.length === 0) throw new JsonPathError(`empty brackets in ${path}`);
  return items.length === 1 ? items[0] : { kind: "union", items };
}

function unquote(p: string): string {
  return p.slice(1, -1).replace(/\\(.)/g, "$1");
}

function splitUnion(s: string, path: string): string[] {
  const out: string[] = [];
  let cur = "", quote = "";
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (quote) {
      cur += ch;
      if (ch === "\\") cur += s[++i] ?? "";
      else if (ch === quote) quote = "";
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      cur += ch;
    } else if (ch === ",") {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (quote) throw new JsonPathError(`unterminated quote in ${path}`);
  out.push(cur);
  return out;
}

/** Parses a path once; throws JsonPathError with a readable message. Paths without `$` are read from the root. */
export function compileJsonPath(path: string): CompiledPath {
  let s = path.trim();
  if (s === "") throw new JsonPathError("a JSONPath cannot be empty");
  if (s.startsWith("$")) s = s.slice(1);
  else if (!s.startsWith(".") && !s.startsWith("[")) s = `.${s}`;
  const steps: Step[] = [];
  let i = 0;
  while (i < s.length) {
    let descendant = false;
    if (s.startsWith("..", i)) {
      descendant = true;
      i += 2;
    } else if (s[i] === ".") i += 1;
    else if (s[i] !== "[") throw new JsonPathError(`unexpected "${s[i]}" at position ${i + 1} in ${path}`);
    if (s[i] === "[") {
      let depth = 0, j = i, quote = "";
      for (; j < s.length; j++) {
        const ch = s[j];
        if (quote) {
          if (ch === "\\") j++;
          else if (ch === quote) quote = "";
        } else if (ch === "'" || ch === '"') quote = ch;
        else if (ch === "[") depth++;
        else if (ch === "]" && --depth === 0) break;
      }
      if (j >= s.length) throw new JsonPathError(`unclosed "[" in ${path}`);
      steps.push({ descendant, selector: parseBracket(s.slice(i + 1, j), path) });
      i = j + 1;
    } else if (s[i] === "*") {
      steps.push({ descendant, selector: { kind: "wildcard" } });
      i += 1;
    } else {
      const m = NAME_RE.exec(s.slice(i));
      if (!m) throw new JsonPathError(`expected a name at position ${i + 1} in ${path}`);
      steps.push({ descendant, selector: { kind: "name", name: m[0] } });
      i += m[0].length;
    }
  }
  return steps;
}

/** The most values one step of a query may hold (its matches, or the candidates of its next step). */
export const MAX_JSON_PATH_MATCHES = 10_000;
/** The most nodes one query may visit, over all its steps. */
export const MAX_JSON_PATH_WORK = 1_000_000;

class Budget {
  work = 0;
  spend(n: number): void {
    this.work += n;
    if (this.work > MAX_JSON_PATH_WORK) throw new JsonPathError(`the path visits more than ${MAX_JSON_PATH_WORK} values of the document; make it more specific`);
  }
}

function push(out: unknown[], v: unknown): void {
  if (out.length >= MAX_JSON_PATH_MATCHES) throw new JsonPathError(`the path matches more than ${MAX_JSON_PATH_MATCHES} values; make it more specific`);
  out.push(v);
}

function children(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (v !== null && typeof v === "object") return Object.values(v);
  return [];
}

function select(v: unknown, sel: Selector, out: unknown[], budget: Budget): void {
  budget.spend(1);
  switch (sel.kind) {
    case "name":
      if (v !== null && typeof v === "object" && !Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, sel.name)) {
        push(out, (v as Record<string, unknown>)[sel.name]);
      }
      return;
    case "index":
      if (Array.isArray(v)) {
        const i = sel.index < 0 ? v.length + sel.index : sel.index;
        if (i >= 0 && i < v.length) push(out, v[i]);
      }
      return;
    case "wildcard": {
      const all = children(v);
      budget.spend(all.length);
      for (const c of all) push(out, c);
      return;
    }
    case "slice": {
      if (!Array.isArray(v)) return;
      const n = v.length, step = sel.step;
      const norm = (x: number) => (x < 0 ? Math.max(n + x, step > 0 ? 0 : -1) : Math.min(x, step > 0 ? n : n - 1));
      const start = sel.start === undefined ? (step > 0 ? 0 : n - 1) : norm(sel.start);
      const end = sel.end === undefined ? (step > 0 ? n : -1) : norm(sel.end);
      for (let i = start; step > 0 ? i < end : i > end; i += step) {
        budget.spend(1);
        push(out, v[i]);
      }
      return;
    }
    case "union":
      for (const item of sel.items) select(v, item, out, budget);
  }
}

/** The selector applied to v and to everything under it, in document order (a stack, not recursion: documents may nest deep). */
function descend(v: unknown, sel: Selector, out: unknown[], budget: Budget): void {
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const node = stack.pop();
    select(node, sel, out, budget);
    const kids = children(node);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
}

/** Every match of the path in document order; a JsonPathError past MAX_JSON_PATH_MATCHES or MAX_JSON_PATH_WORK. */
export function queryJsonPath(doc: unknown, path: CompiledPath | string): unknown[] {
  const steps = typeof path === "string" ? compileJsonPath(path) : path;
  const budget = new Budget();
  let cur: unknown[] = [doc];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of cur) (step.descendant ? descend : select)(v, step.selector, next, budget);
    cur = next;
  }
  return cur;
}
