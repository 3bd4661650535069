// Which prompt, prompt version and release label a column's config references. The sheet object
// copies these into D1 (sheet_prompt_refs) so GET /tables can filter on prompt_id, prompt_version_id
// and prompt_label_id. Pure: the column engine owns the config schemas; this only reads ids.

export interface PromptRef {
  promptId: number | null;
  promptVersionId: number | null;
  promptLabelId: number | null;
}

const KEYS = {
  promptId: ["prompt_id", "prompt_template_id"],
  promptVersionId: ["prompt_version_id", "version_id"],
  promptLabelId: ["prompt_label_id", "label_id", "release_label_id"],
} as const;

/** Where a block config may carry its prompt reference: at the top level or under one of these keys. */
const NESTED = ["template", "prompt_template", "prompt"];

function idOf(obj: Record<string, unknown>, keys: readonly string[]): number | null {
  for (const k of keys) {
    const v = obj[k];
    if (typeof v === "number" && Number.isSafeInteger(v) && v > 0) return v;
    if (typeof v === "string" && /^[1-9][0-9]{0,15}$/.test(v)) return Number(v);
  }
  return null;
}

function refIn(obj: Record<string, unknown>): PromptRef | null {
  const ref = {
    promptId: idOf(obj, KEYS.promptId),
    promptVersionId: idOf(obj, KEYS.promptVersionId),
    promptLabelId: idOf(obj, KEYS.promptLabelId),
  };
  return ref.promptId ?? ref.promptVersionId ?? ref.promptLabelId ? ref : null;
}

/** The prompt references of a column (none for TEXT columns or configs that name no prompt). */
export function promptRefsOf(type: string, config: unknown): PromptRef[] {
  if (type === "TEXT" || !config || typeof config !== "object" || Array.isArray(config)) return [];
  const c = config as Record<string, unknown>;
  const refs: PromptRef[] = [];
  const top = refIn(c);
  if (top) refs.push(top);
  for (const k of NESTED) {
    const nested = c[k];
    if (nested && typeof nested === "object" && !Array.isArray(nested)) {
      const r = refIn(nested as Record<string, unknown>);
      if (r) refs.push(r);
    }
  }
  return refs;
}
