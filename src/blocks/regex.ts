// Regular expressions as users write them for PromptLayer (Python syntax), run by RE2JS, a port of
// RE2: matching takes time linear in the input whatever the pattern, so a pattern such as `(a+)+$`
// cannot stall the isolate that evaluates it (JavaScript's backtracking RegExp doubled its time with
// each character). RE2 reads Python's named groups (?P<n>…), inline flags (?i) (?m) (?s) and \A;
// Python's \Z is RE2's \z. What linear time cannot do (back-references, lookaround) is refused when
// the pattern is checked. The input and the number of matches are capped, so the work of one
// evaluation is bounded too.
import { RE2JS } from "re2js";

export const MAX_PATTERN_LENGTH = 1000;
/** The longest text a pattern is run on, in characters. */
export const MAX_REGEX_INPUT = 1_000_000;
/** The most matches REGEX_EXTRACTION lists. */
export const MAX_REGEX_MATCHES = 10_000;

export class RegexError extends Error {}

const UNSUPPORTED: [RegExp, string][] = [
  [/\(\?P=/, "back-references (?P=name) are not supported: patterns run on a linear-time engine (RE2)"],
  [/\(\?<?[=!]/, "lookahead and lookbehind are not supported: patterns run on a linear-time engine (RE2)"],
];

/** Python's spelling to RE2's: \Z (end of text) is \z; an escaped backslash is left alone. */
const toRe2 = (pattern: string) => pattern.replace(/\\\\|\\Z/g, (m) => (m === "\\Z" ? "\\z" : m));

export function compileRegex(pattern: string): RE2JS {
  if (pattern.length > MAX_PATTERN_LENGTH) throw new RegexError(`is longer than ${MAX_PATTERN_LENGTH} characters`);
  const lead = /^\(\?([a-zA-Z]+)\)/.exec(pattern);
  if (lead?.[1].includes("x")) throw new RegexError("verbose mode (?x) is not supported");
  try {
    return RE2JS.compile(toRe2(pattern));
  } catch (err) {
    const known = UNSUPPORTED.find(([re]) => re.test(pattern));
    throw new RegexError(known ? known[1] : String((err as Error)?.message ?? err).replace(/^error parsing regexp: /, ""));
  }
}

/** Null when the pattern compiles, else why not. */
export function regexProblem(pattern: string): string | null {
  try {
    compileRegex(pattern);
    return null;
  } catch (err) {
    return `is not a valid regular expression (${(err as Error).message})`;
  }
}

function checkInput(text: string): void {
  if (text.length > MAX_REGEX_INPUT) {
    throw new RegexError(`the text is ${text.length} characters long; a pattern is run on at most ${MAX_REGEX_INPUT}`);
  }
}

/** Whether the pattern matches anywhere in the text (Python's re.search). */
export function regexTest(re: RE2JS, text: string): boolean {
  checkInput(text);
  return re.test(text);
}

/** Python's re.findall: whole matches without groups, the group with one, a list of groups with several. */
export function regexFindAll(re: RE2JS, text: string): unknown[] {
  checkInput(text);
  const m = re.matcher(text);
  const groups = m.groupCount();
  const out: unknown[] = [];
  while (m.find()) {
    if (out.length >= MAX_REGEX_MATCHES) throw new RegexError(`the pattern matches more than ${MAX_REGEX_MATCHES} times; narrow it`);
    if (groups === 0) out.push(m.group() ?? "");
    else if (groups === 1) out.push(m.group(1) ?? "");
    else out.push(Array.from({ length: groups }, (_, i) => m.group(i + 1) ?? ""));
  }
  return out;
}
