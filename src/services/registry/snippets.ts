// Snippets in the registry: resolving `@@@name@@@` references when a template is fetched, and
// refusing a version that would make them cycle.
import { and, desc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { promptTemplates, promptVersions } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import { expandSnippets, SnippetCycleError, type SnippetLookup } from "../../prompts";

type Obj = Record<string, unknown>;

/**
 * What an expansion looked up, by snippet name: the template found (its id and cache generation, read
 * with its text) or null for a name no template has. The edge cache keeps a read as long as these hold.
 */
export type SnippetDependencies = Record<string, { id: number; generation: number } | null>;

/** The latest version of each template by name, looked up as the expansion meets it; `seen` records each answer. */
export function registryLookup(db: Db, ws: number, seen?: SnippetDependencies): SnippetLookup {
  return async (name) => {
    const [row] = await db
      .select({
        id: promptTemplates.id,
        name: promptTemplates.name,
        generation: promptTemplates.cacheGeneration,
        version: promptVersions.version,
        template: promptVersions.promptTemplate,
      })
      .from(promptTemplates)
      .innerJoin(promptVersions, eq(promptVersions.promptId, promptTemplates.id))
      .where(and(eq(promptTemplates.workspaceId, ws), eq(promptTemplates.name, name)))
      .orderBy(desc(promptVersions.version))
      .limit(1);
    if (seen) seen[name] = row ? { id: row.id, generation: row.generation } : null;
    return row ? { id: row.id, name: row.name, version: row.version, template: row.template as Obj } : null;
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
