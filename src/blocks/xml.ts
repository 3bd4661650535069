// A small XML reader and an ElementTree-style path subset for XML_PATH (no dependency available).
// DOCTYPE declarations are skipped, never expanded: no external or custom entities (no XXE).

export interface XmlElement {
  tag: string;
  attrs: Record<string, string>;
  children: (XmlElement | string)[];
  parent?: XmlElement;
}

export class XmlError extends Error {}

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

function decode(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (m, e: string) => {
    if (e.startsWith("#x")) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(parseInt(e.slice(1), 10));
    const v = ENTITIES[e];
    if (v === undefined) throw new XmlError(`unknown entity ${m}`);
    return v;
  });
}

const NAME = /^[A-Za-z_:][\w:.-]*/;

/** Parses a document and returns its root element. */
export function parseXml(src: string): XmlElement {
  let i = 0;
  const doc: XmlElement = { tag: "#document", attrs: {}, children: [] };
  const stack: XmlElement[] = [doc];
  const top = () => stack[stack.length - 1];
  while (i < src.length) {
    const lt = src.indexOf("<", i);
    const textEnd = lt === -1 ? src.length : lt;
    if (textEnd > i) {
      const text = src.slice(i, textEnd);
      if (stack.length > 1) top().children.push(decode(text));
      else if (text.trim()) throw new XmlError("text outside the root element");
    }
    if (lt === -1) break;
    i = lt;
    if (src.startsWith("<!--", i)) {
      const end = src.indexOf("-->", i + 4);
      if (end === -1) throw new XmlError("unterminated comment");
      i = end + 3;
    } else if (src.startsWith("<![CDATA[", i)) {
      const end = src.indexOf("]]>", i + 9);
      if (end === -1) throw new XmlError("unterminated CDATA section");
      if (stack.length === 1) throw new XmlError("CDATA outside the root element");
      top().children.push(src.slice(i + 9, end));
      i = end + 3;
    } else if (src.startsWith("<?", i)) {
      const end = src.indexOf("?>", i + 2);
      if (end === -1) throw new XmlError("unterminated processing instruction");
      i = end + 2;
    } else if (src.startsWith("<!", i)) {
      // <!DOCTYPE …> possibly with an internal subset in brackets: skipped whole.
      let depth = 0, j = i + 2;
      for (; j < src.length; j++) {
        if (src[j] === "[") depth++;
        else if (src[j] === "]") depth--;
        else if (src[j] === ">" && depth <= 0) break;
      }
      if (j >= src.length) throw new XmlError("unterminated declaration");
      i = j + 1;
    } else if (src[i + 1] === "/") {
      const m = NAME.exec(src.slice(i + 2));
      const end = src.indexOf(">", i);
      if (!m || end === -1) throw new XmlError("malformed closing tag");
      const el = stack.pop();
      if (!el || el === doc || el.tag !== m[0]) throw new XmlError(`closing tag </${m[0]}> does not match <${el?.tag ?? ""}>`);
      i = end + 1;
    } else {
      const m = NAME.exec(src.slice(i + 1));
      if (!m) throw new XmlError(`malformed tag at offset ${i}`);
      const el: XmlElement = { tag: m[0], attrs: {}, children: [], parent: top() === doc ? undefined : top() };
      i += 1 + m[0].length;
      for (;;) {
        const ws = /^\s*/.exec(src.slice(i))![0];
        i += ws.length;
        if (src.startsWith("/>", i)) {
          i += 2;
          addElement(doc, top(), el);
          break;
        }
        if (src[i] === ">") {
          i += 1;
          addElement(doc, top(), el);
          stack.push(el);
          break;
        }
        const a = /^([A-Za-z_:][\w:.-]*)\s*=\s*("([^"]*)"|'([^']*)')/.exec(src.slice(i));
        if (!a || !ws) throw new XmlError(`malformed attribute in <${el.tag}>`);
        el.attrs[a[1]] = decode(a[3] ?? a[4]);
        i += a[0].length;
      }
    }
  }
  if (stack.length > 1) throw new XmlError(`unclosed element <${top().tag}>`);
  const root = doc.children.find((c): c is XmlElement => typeof c !== "string");
  if (!root) throw new XmlError("no root element");
  return root;
}

function addElement(doc: XmlElement, parent: XmlElement, el: XmlElement) {
  if (parent === doc && doc.children.some((c) => typeof c !== "string")) throw new XmlError("more than one root element");
  parent.children.push(el);
}

const elementsOf = (e: XmlElement) => e.children.filter((c): c is XmlElement => typeof c !== "string");

export function textContent(e: XmlElement): string {
  return e.children.map((c) => (typeof c === "string" ? c : textContent(c))).join("");
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export function serializeXml(e: XmlElement): string {
  const attrs = Object.entries(e.attrs).map(([k, v]) => ` ${k}="${esc(v)}"`).join("");
  if (e.children.length === 0) return `<${e.tag}${attrs}/>`;
  return `<${e.tag}${attrs}>${e.children.map((c) => (typeof c === "string" ? esc(c) : serializeXml(c))).join("")}</${e.tag}>`;
}

type Predicate =
  | { kind: "attr"; name: string; value?: string }
  | { kind: "child"; tag: string; value?: string }
  | { kind: "text"; value: string }
  | { kind: "position"; index: number | "last" };

interface PathStep {
  descendant: boolean;
  test: string; // tag, "*", "." or ".."
  predicates: Predicate[];
}

export interface CompiledXPath {
  absolute: boolean;
  steps: PathStep[];
}

function splitSteps(path: string): string[] {
  const out: string[] = [];
  let cur = "", depth = 0, quote = "";
  for (const ch of path) {
    if (quote) {
      if (ch === quote) quote = "";
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "[") depth++;
    else if (ch === "]") depth--;
    else if (ch === "/" && depth === 0) {
      out.push(cur);
      cur = "";
      continue;
    }
    cur += ch;
  }
  if (quote || depth !== 0) throw new XmlError(`unbalanced brackets or quotes in ${path}`);
  out.push(cur);
  return out;
}

function parsePredicate(p: string, path: string): Predicate {
  let m: RegExpExecArray | null;
  if ((m = /^@([\w:.-]+)$/.exec(p))) return { kind: "attr", name: m[1] };
  if ((m = /^@([\w:.-]+)\s*=\s*(?:'([^']*)'|"([^"]*)")$/.exec(p))) return { kind: "attr", name: m[1], value: m[2] ?? m[3] };
  if ((m = /^\.\s*=\s*(?:'([^']*)'|"([^"]*)")$/.exec(p))) return { kind: "text", value: m[1] ?? m[2] };
  if ((m = /^([A-Za-z_][\w:.-]*)\s*=\s*(?:'([^']*)'|"([^"]*)")$/.exec(p))) return { kind: "child", tag: m[1], value: m[2] ?? m[3] };
  if ((m = /^([A-Za-z_][\w:.-]*)$/.exec(p)) && m[1] !== "last") return { kind: "child", tag: m[1] };
  if (/^\d+$/.test(p) && Number(p) >= 1) return { kind: "position", index: Number(p) };
  if (/^last\(\)$/.test(p)) return { kind: "position", index: "last" };
  throw new XmlError(`unsupported predicate [${p}] in ${path}`);
}

/**
 * ElementTree path syntax: tag, *, ., .., //, [@a], [@a='v'], [tag], [tag='text'], [.='text'], [n], [last()].
 * Relative paths start at the root element (as ElementTree's find on the root); a leading "/" starts
 * above it, so "/root/item" and "//item" also work.
 */
export function compileXPath(path: string): CompiledXPath {
  const p = path.trim();
  if (!p) throw new XmlError("an XML path cannot be empty");
  const absolute = p.startsWith("/");
  const parts = splitSteps(absolute ? p.slice(1) : p);
  const steps: PathStep[] = [];
  let descendant = false;
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k].trim();
    if (part === "") {
      if (k === parts.length - 1) throw new XmlError(`a path cannot end with "/": ${path}`);
      descendant = true;
      continue;
    }
    const m = /^(\.\.|\.|\*|[A-Za-z_][\w:.-]*)((?:\[[^\]]*\])*)$/.exec(part);
    if (!m) throw new XmlError(`unsupported step "${part}" in ${path}`);
    const predicates = [...m[2].matchAll(/\[([^\]]*)\]/g)].map((x) => parsePredicate(x[1].trim(), path));
    steps.push({ descendant, test: m[1], predicates });
    descendant = false;
  }
  return { absolute, steps };
}

function descendants(e: XmlElement, out: XmlElement[]) {
  for (const c of elementsOf(e)) {
    out.push(c);
    descendants(c, out);
  }
}

function matches(e: XmlElement, p: Predicate): boolean {
  switch (p.kind) {
    case "attr":
      return p.value === undefined ? p.name in e.attrs : e.attrs[p.name] === p.value;
    case "child":
      return elementsOf(e).some((c) => c.tag === p.tag && (p.value === undefined || textContent(c) === p.value));
    case "text":
      return textContent(e) === p.value;
    default:
      return true;
  }
}

/** All matches in document order (duplicates removed). */
export function queryXml(root: XmlElement, path: CompiledXPath | string): XmlElement[] {
  const compiled = typeof path === "string" ? compileXPath(path) : path;
  const doc: XmlElement = { tag: "#document", attrs: {}, children: [root] };
  let cur: XmlElement[] = [compiled.absolute ? doc : root];
  for (const step of compiled.steps) {
    const next: XmlElement[] = [];
    for (const ctx of cur) {
      let group: XmlElement[];
      if (step.test === ".") group = step.descendant ? [ctx, ...all(ctx)] : [ctx];
      else if (step.test === "..") group = ctx.parent ? [ctx.parent] : [];
      else {
        const pool = step.descendant ? all(ctx) : elementsOf(ctx);
        group = step.test === "*" ? pool : pool.filter((e) => e.tag === step.test);
      }
      for (const pred of step.predicates) {
        if (pred.kind === "position") {
          const idx = pred.index === "last" ? group.length - 1 : pred.index - 1;
          group = idx >= 0 && idx < group.length ? [group[idx]] : [];
        } else group = group.filter((e) => matches(e, pred));
      }
      for (const e of group) if (!next.includes(e)) next.push(e);
    }
    cur = next;
  }
  return cur.filter((e) => e !== doc);
}

function all(e: XmlElement): XmlElement[] {
  const out: XmlElement[] = [];
  descendants(e, out);
  return out;
}
