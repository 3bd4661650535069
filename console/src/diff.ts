// A line diff (longest common subsequence) laid out side by side: unchanged lines face each other,
// removed lines stand on the left, added ones on the right.
import type { GetPromptTemplateResponse } from "./api.gen";
import { listOf, recordOf } from "./json";

export interface DiffRow {
  kind: "same" | "removed" | "added" | "changed";
  left: { n: number; text: string } | null;
  right: { n: number; text: string } | null;
}

export function diffLines(a: string[], b: string[]): DiffRow[] {
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const out: DiffRow[] = [];
  let removed: DiffRow[] = [];
  let added: DiffRow[] = [];
  // A run of removals followed by a run of additions is shown as changed lines, paired up.
  const flush = () => {
    const k = Math.max(removed.length, added.length);
    for (let x = 0; x < k; x++) {
      const l = removed[x]?.left ?? null;
      const r = added[x]?.right ?? null;
      out.push({ kind: l && r ? "changed" : l ? "removed" : "added", left: l, right: r });
    }
    removed = [];
    added = [];
  };
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      flush();
      out.push({ kind: "same", left: { n: i + 1, text: a[i] }, right: { n: j + 1, text: b[j] } });
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      added.push({ kind: "added", left: null, right: { n: j + 1, text: b[j] } });
      j++;
    } else {
      removed.push({ kind: "removed", left: { n: i + 1, text: a[i] }, right: null });
      i++;
    }
  }
  flush();
  return out;
}

/** A prompt version as lines of text: each message under its role, then tools and model settings. */
export function versionLines(version: Pick<GetPromptTemplateResponse, "prompt_template"> & { metadata?: GetPromptTemplateResponse["metadata"] }): string[] {
  const lines: string[] = [];
  const t = recordOf(version.prompt_template);
  const blockText = (c: unknown): string[] => {
    if (c === null || c === undefined) return [];
    if (typeof c === "string") return c.split("\n");
    if (Array.isArray(c)) return c.flatMap((b) => (recordOf(b).type === "text" ? String(recordOf(b).text ?? "").split("\n") : JSON.stringify(b, null, 2).split("\n")));
    return JSON.stringify(c, null, 2).split("\n");
  };
  if (t.type === "completion") {
    lines.push("[completion]", ...blockText(t.content));
  } else {
    for (const m of listOf(t.messages).map(recordOf)) {
      lines.push(`[${m.role ?? "?"}${m.name ? ` ${m.name}` : ""}]`, ...blockText(m.content));
      for (const call of listOf(m.tool_calls)) lines.push(...JSON.stringify(call, null, 2).split("\n"));
      lines.push("");
    }
  }
  const tools = listOf(t.tools);
  if (tools.length) lines.push("[tools]", ...JSON.stringify(t.tools, null, 2).split("\n"));
  const model = recordOf(version.metadata).model;
  if (model) lines.push("[model]", ...JSON.stringify(model, null, 2).split("\n"));
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  return lines;
}
