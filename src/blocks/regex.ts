// Regular expressions as users write them for PromptLayer (Python syntax) compiled for JavaScript:
// named groups (?P<n>…), back-references (?P=n), leading inline flags (?ims), \A and \Z.
export const MAX_PATTERN_LENGTH = 1000;

export function compileRegex(pattern: string, global = false): RegExp {
  if (pattern.length > MAX_PATTERN_LENGTH) throw new SyntaxError(`is longer than ${MAX_PATTERN_LENGTH} characters`);
  let src = pattern;
  let flags = global ? "g" : "";
  const lead = /^\(\?([imsx]+)\)/.exec(src);
  if (lead) {
    if (lead[1].includes("x")) throw new SyntaxError("verbose mode (?x) is not supported");
    for (const f of lead[1]) if (!flags.includes(f)) flags += f;
    src = src.slice(lead[0].length);
  }
  src = src.replace(/\(\?P<([A-Za-z_]\w*)>/g, "(?<$1>").replace(/\(\?P=([A-Za-z_]\w*)\)/g, "\\k<$1>").replace(/\\A/g, "^").replace(/\\Z/g, "$");
  return new RegExp(src, flags);
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
