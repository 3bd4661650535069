// Applies a unified diff (the output of `diff -u` / `git diff` for one file) to a text, for APPLY_DIFF.
// A hunk is placed at its stated line when its context matches there, else at the nearest place where it does.

export class DiffError extends Error {}

interface Hunk {
  oldStart: number;
  lines: { op: " " | "-" | "+"; text: string }[];
  noNewlineAtEnd: boolean;
}

export function parseUnifiedDiff(diff: string): Hunk[] {
  const lines = diff.replace(/\r\n/g, "\n").split("\n");
  const hunks: Hunk[] = [];
  let cur: Hunk | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const h = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (h) {
      cur = { oldStart: Number(h[1]), lines: [], noNewlineAtEnd: false };
      hunks.push(cur);
      continue;
    }
    if (!cur) continue; // headers: diff --git, index, ---, +++
    if (line.startsWith("\\")) {
      // Marks the line before it; only the new side's last line decides the result.
      if (cur.lines.at(-1)?.op !== "-") cur.noNewlineAtEnd = true;
      continue;
    }
    if (line === "" && i === lines.length - 1) break;
    const op = line[0];
    if (op === " " || op === "-" || op === "+") cur.lines.push({ op, text: line.slice(1) });
    else if (line === "") cur.lines.push({ op: " ", text: "" });
    else if (line.startsWith("---") || line.startsWith("diff ")) cur = null;
    else throw new DiffError(`line ${i + 1} of the diff is not part of a hunk: ${JSON.stringify(line.slice(0, 60))}`);
  }
  if (hunks.length === 0) throw new DiffError("the diff has no hunks (expected lines starting with @@ -a,b +c,d @@)");
  return hunks;
}

function fitsAt(text: string[], at: number, expected: string[]): boolean {
  if (at < 0 || at + expected.length > text.length) return false;
  return expected.every((l, k) => text[at + k] === l);
}

export function applyUnifiedDiff(original: string, diff: string): string {
  const hunks = parseUnifiedDiff(diff);
  const hadTrailingNewline = original.endsWith("\n");
  const text = original === "" ? [] : (hadTrailingNewline ? original.slice(0, -1) : original).split("\n");
  let offset = 0;
  let endsWithNewline = hadTrailingNewline || original === "";
  for (const [n, hunk] of hunks.entries()) {
    const expected = hunk.lines.filter((l) => l.op !== "+").map((l) => l.text);
    const replacement = hunk.lines.filter((l) => l.op !== "-").map((l) => l.text);
    // A pure insertion's start names the line it goes after; any other hunk's, its first line.
    const want = Math.max(0, (expected.length === 0 ? hunk.oldStart : hunk.oldStart - 1) + offset);
    let at = -1;
    for (let d = 0; d <= Math.max(want, text.length); d++) {
      if (fitsAt(text, want - d, expected)) { at = want - d; break; }
      if (fitsAt(text, want + d, expected)) { at = want + d; break; }
    }
    if (at === -1) throw new DiffError(`hunk ${n + 1} (at line ${hunk.oldStart}) does not apply: its context is not in the text`);
    text.splice(at, expected.length, ...replacement);
    offset += replacement.length - expected.length;
    if (hunk.noNewlineAtEnd) endsWithNewline = false;
  }
  const out = text.join("\n");
  return endsWithNewline && out !== "" ? `${out}\n` : out;
}
