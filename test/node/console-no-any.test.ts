// No `any` in console/src: its answers are typed from the API's OpenAPI document (console/src/api.gen.ts)
// and free JSON is read as `unknown` with checks. tsc's noImplicitAny (strict) refuses an implicit one;
// this test refuses a written one (`: any`, `as any`, `<T = any>`, `any[]` …), outside comments and strings.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CONSOLE_SRC = fileURLToPath(new URL("../../console/src/", import.meta.url));

/** The source with comments and string literals (quotes and template text) blanked, line breaks kept. */
function codeOnly(source: string): string {
  let out = "";
  for (let i = 0; i < source.length; ) {
    const two = source.slice(i, i + 2);
    const end =
      two === "//" ? source.indexOf("\n", i) : two === "/*" ? source.indexOf("*/", i + 2) + 2 : /["'`]/.test(source[i]) ? closingQuote(source, i) + 1 : -2;
    if (end === -2) {
      out += source[i++];
      continue;
    }
    const stop = end <= 0 ? source.length : end;
    out += source.slice(i, stop).replace(/[^\n]/g, " ");
    i = stop;
  }
  return out;
}

function closingQuote(source: string, start: number): number {
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === "\\") i++;
    else if (source[i] === source[start]) return i;
    else if (source[i] === "\n" && source[start] !== "`") return i;
  }
  return source.length;
}

// `any` where a type goes: after `:`, `<`, `,`, `|`, `&`, `=`, `(`, `[`, `as`, `extends` or `keyof`.
// Words in JSX text ("any of these") follow `>` or another word, and are not taken.
const TYPE_ANY = /(?:[:<,|&=([]|\bas|\bextends|\bkeyof)\s*any\b/g;

/** Each written `any` of a file, as "line: text". */
function anysIn(source: string): string[] {
  const code = codeOnly(source);
  const lines = source.split("\n");
  return [...code.matchAll(TYPE_ANY)].map((m) => {
    const line = code.slice(0, m.index).split("\n").length;
    return `${line}: ${lines[line - 1].trim()}`;
  });
}

describe("console/src has no any", () => {
  it("finds a written any and leaves prose, strings and JSX text alone", () => {
    expect(anysIn("const a: any = 1;\nlet b = c as any;\nfunction f<T = any>() {}\nconst d: Map<string, any[]> = new Map();")).toEqual([
      "1: const a: any = 1;",
      "2: let b = c as any;",
      "3: function f<T = any>() {}",
      "4: const d: Map<string, any[]> = new Map();",
    ]);
    expect(anysIn('// any: prose\n/* as any */\nconst s = "x: any";\nconst t = `a, any`;\nconst el = <option value="OR">any of these</option>;\nconst company = 1;')).toEqual([]);
  });

  it("holds for every file of console/src", () => {
    const files = readdirSync(CONSOLE_SRC, { recursive: true, encoding: "utf8" }).filter((f) => /\.tsx?$/.test(f));
    expect(files.length).toBeGreaterThan(10);
    const found = files.flatMap((f) => anysIn(readFileSync(join(CONSOLE_SRC, f), "utf8")).map((hit) => `console/src/${f}:${hit}`));
    expect(found).toEqual([]);
  });
});
