import { isObj, type Obj } from "../lib/obj";
// Snippets: a prompt template's text may include another template as `@@@name@@@`; fetching the
// template replaces each reference with the snippet's text (its latest version), recursively. Pure:
// the caller supplies the lookup. A reference to no template stays as written; a cycle is refused.


export const SNIPPET_PATTERN = /@@@([^@\n]{1,255})@@@/g;
/** How deep snippets may nest before the expansion gives up (a chain this long is a mistake). */
export const MAX_SNIPPET_DEPTH = 16;

export interface SnippetSource {
  id: number;
  name: string;
  version: number;
  template: Obj;
}

export type SnippetLookup = (name: string) => Promise<SnippetSource | null>;

export class SnippetCycleError extends Error {
  constructor(
    readonly chain: string[],
    tooDeep = false,
  ) {
    super(tooDeep ? `snippets nest deeper than ${MAX_SNIPPET_DEPTH} levels: ${chain.join(" → ")}` : `snippets form a cycle: ${chain.join(" → ")}`);
  }
}


/** The text blocks of a template: messages' content (chat) or content (completion). */
function textBlocks(template: Obj): Obj[] {
  const lists: unknown[] = template.type === "chat" ? (Array.isArray(template.messages) ? template.messages.map((m) => (isObj(m) ? m.content : undefined)) : []) : [template.content];
  return lists.flatMap((l) => (Array.isArray(l) ? l.filter((b): b is Obj => isObj(b) && b.type === "text" && typeof b.text === "string") : []));
}

/** The text a snippet contributes: its text blocks joined by blank lines. */
export function snippetText(template: Obj): string {
  return textBlocks(template)
    .map((b) => b.text as string)
    .join("\n\n");
}

/** The snippet names a template refers to, in order of first appearance. */
export function referencedSnippets(template: Obj): string[] {
  const names = new Set<string>();
  for (const b of textBlocks(template)) for (const m of (b.text as string).matchAll(SNIPPET_PATTERN)) names.add(m[1]);
  return [...names];
}

/**
 * The template with every reference replaced, and the snippets used (each once). `self` names the
 * template being expanded, so a snippet that leads back to it is a cycle.
 */
export async function expandSnippets(template: Obj, self: string, lookup: SnippetLookup): Promise<{ template: Obj; used: SnippetSource[] }> {
  const used = new Map<string, SnippetSource>();
  const cache = new Map<string, Promise<SnippetSource | null>>();
  const find = (name: string) => {
    let p = cache.get(name);
    if (!p) cache.set(name, (p = lookup(name)));
    return p;
  };

  const expandText = async (text: string, chain: string[]): Promise<string> => {
    const names = [...new Set([...text.matchAll(SNIPPET_PATTERN)].map((m) => m[1]))];
    if (names.length === 0) return text;
    const replacements = new Map<string, string>();
    for (const name of names) {
      if (chain.includes(name)) throw new SnippetCycleError([...chain, name]);
      const snippet = await find(name);
      if (!snippet) continue;
      // chain holds the template itself, then one name per level of nesting so far.
      if (chain.length > MAX_SNIPPET_DEPTH) throw new SnippetCycleError([...chain, name], true);
      used.set(name, snippet);
      replacements.set(name, await expandText(snippetText(snippet.template), [...chain, name]));
    }
    return text.replace(SNIPPET_PATTERN, (whole, name: string) => replacements.get(name) ?? whole);
  };

  const out = structuredClone(template);
  for (const block of textBlocks(out)) block.text = await expandText(block.text as string, [self]);
  return { template: out, used: [...used.values()] };
}
