// Snippets in the registry: resolving `@@@name@@@` references when a template is fetched, and
// refusing a version that would make them cycle. The expansion is snippets.ts's (pure); the lookup
// is the latest version of a template by name (findPromptVersion).
import type { Db } from "../db/client";
import { ApiError } from "../lib/errors";
import { findPromptVersion } from "./find";
import { expandSnippets, SnippetCycleError, type SnippetLookup } from "./snippets";

type Obj = Record<string, unknown>;

/**
 * What an expansion looked up, by snippet name: the template found (its id and cache generation, read
 * with its text) or null for a name no template has. The edge cache keeps a read as long as these hold.
 */
export type SnippetDependencies = Record<string, { id: number; generation: number } | null>;

/** The latest version of each template by name, looked up as the expansion meets it; `seen` records each answer. */
export function registryLookup(db: Db, ws: number, seen?: SnippetDependencies): SnippetLookup {
  return async (name) => {
    const found = await findPromptVersion(db, ws, { name, latest: true });
    if (seen) seen[name] = found ? { id: found.template.id, generation: found.template.cacheGeneration } : null;
    return found ? { id: found.template.id, name: found.template.name, version: found.version.version, template: found.version.promptTemplate as Obj } : null;
  };
}

const cycleError = (err: SnippetCycleError) => new ApiError("validation_error", `prompt_template: ${err.message}`);

/** The template with its snippets filled in, the snippets it used, and every name it looked up (nested ones too). */
export async function resolveSnippets(db: Db, ws: number, name: string, template: Obj) {
  const dependencies: SnippetDependencies = {};
  try {
    const { template: out, used } = await expandSnippets(template, name, registryLookup(db, ws, dependencies));
    return { template: out, snippets: used.map((s) => ({ id: s.id, prompt_name: s.name, version: s.version })), dependencies };
  } catch (err) {
    if (err instanceof SnippetCycleError) throw cycleError(err);
    throw err;
  }
}

/** A 400 when publishing `template` as `name` would make its snippets cycle. */
export async function refuseSnippetCycles(db: Db, ws: number, name: string, template: Obj): Promise<void> {
  await resolveSnippets(db, ws, name, template);
}
