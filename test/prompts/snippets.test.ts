// The pure snippet expansion: references filled recursively, unknown ones kept, cycles refused.
import { describe, expect, it } from "vitest";
import { expandSnippets, MAX_SNIPPET_DEPTH, referencedSnippets, SnippetCycleError, snippetText, type SnippetSource } from "../../src/prompts/snippets";

const completion = (text: string) => ({ type: "completion", content: [{ type: "text", text }] });
const chat = (...texts: string[]) => ({ type: "chat", messages: texts.map((t, i) => ({ role: i ? "user" : "system", content: [{ type: "text", text: t }] })) });
const registry = (entries: Record<string, Record<string, unknown>>) => {
  const calls: string[] = [];
  const lookup = async (name: string): Promise<SnippetSource | null> => {
    calls.push(name);
    const t = entries[name];
    return t ? { id: name.length, name, version: 1, template: t } : null;
  };
  return { lookup, calls };
};

describe("snippets", () => {
  it("fills references in chat messages and completion content, recursively, looking each name up once", async () => {
    const { lookup, calls } = registry({ tone: completion("Be kind. @@@sig@@@"), sig: completion("-- Bot") });
    const { template, used } = await expandSnippets(chat("@@@tone@@@ Hi", "Again: @@@tone@@@"), "main", lookup);
    expect(template).toEqual(chat("Be kind. -- Bot Hi", "Again: Be kind. -- Bot"));
    expect(used.map((s) => s.name)).toEqual(["tone", "sig"]);
    expect(calls).toEqual(["tone", "sig"]);
    expect((await expandSnippets(completion("x @@@sig@@@"), "main", lookup)).template).toEqual(completion("x -- Bot"));
  });

  it("keeps a reference to no template as written, and leaves non-text blocks alone", async () => {
    const { lookup } = registry({});
    const t = { type: "chat", messages: [{ role: "user", content: [{ type: "text", text: "@@@nobody@@@" }, { type: "image_url", image_url: { url: "@@@x@@@" } }] }] };
    const out = await expandSnippets(t, "main", lookup);
    expect(out.template).toEqual(t);
    expect(out.used).toEqual([]);
  });

  it("a chat snippet contributes its messages' text joined by blank lines", () => {
    expect(snippetText(chat("a", "b"))).toBe("a\n\nb");
    expect(referencedSnippets(chat("@@@a@@@ @@@b@@@", "@@@a@@@"))).toEqual(["a", "b"]);
  });

  it("refuses cycles, direct and through others, naming the chain", async () => {
    const { lookup } = registry({ a: completion("@@@b@@@"), b: completion("@@@main@@@") });
    await expect(expandSnippets(completion("@@@main@@@"), "main", lookup)).rejects.toThrow(/cycle: main → main/);
    const err = await expandSnippets(completion("@@@a@@@"), "main", lookup).catch((e) => e);
    expect(err).toBeInstanceOf(SnippetCycleError);
    expect(err.message).toBe("snippets form a cycle: main → a → b → main");
  });

  it("allows nesting up to the depth limit and refuses one more", async () => {
    const chain = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i}`, completion(i + 1 < n ? `@@@s${i + 1}@@@` : "end")]));
    const ok = registry(chain(MAX_SNIPPET_DEPTH));
    expect((await expandSnippets(completion("@@@s0@@@"), "main", ok.lookup)).template).toEqual(completion("end"));
    const deep = registry(chain(MAX_SNIPPET_DEPTH + 1));
    await expect(expandSnippets(completion("@@@s0@@@"), "main", deep.lookup)).rejects.toThrow(/deeper than 16 levels/);
  });
});
