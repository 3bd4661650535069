// A hook's coverage with its references resolved against the registry: a release label becomes the
// (template, version) pairs it names now, so matching a log is a condition on the log's own columns
// (src/logs/signal-matching.ts), read in the log's database without reaching back to this one.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { abTests, promptLabels, promptVersions } from "../../db/schema";
import type { FilterGroup } from "../../filters";
import type { HookCoverage } from "../../logs";
import type { HookInput } from "./definitions";

type CoverageOf = Pick<HookInput, "scope" | "prompt_template_id" | "prompt_version_number" | "release_label" | "ab_variant" | "filters">;

/** The (template, version) pairs a label names in the workspace (of one template, or of every template). */
async function labelVersions(db: Db, ws: number, label: string, promptId: number | null): Promise<[number, number][]> {
  const rows = await db
    .select({ promptId: promptLabels.promptId, version: promptVersions.version })
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.promptVersionId))
    .where(and(eq(promptLabels.workspaceId, ws), eq(promptLabels.name, label), promptId === null ? sql`1` : eq(promptLabels.promptId, promptId)));
  return rows.map((r) => [r.promptId, r.version]);
}

/**
 * The A/B releases of a label (of one template, or of every template), running or not: a log one of
 * them served is that label's traffic, whichever version (variant) served it.
 */
async function labelReleases(db: Db, ws: number, label: string, promptId: number | null): Promise<number[]> {
  const rows = await db
    .select({ id: abTests.id })
    .from(abTests)
    .where(and(eq(abTests.workspaceId, ws), eq(abTests.releaseLabel, label), promptId === null ? sql`1` : eq(abTests.promptId, promptId)));
  return rows.map((r) => r.id);
}

/** What a hook covers now. */
export async function coverageOf(db: Db, ws: number, hook: CoverageOf): Promise<HookCoverage> {
  const filter = (hook.filters ?? null) as FilterGroup | null;
  const abVariant = hook.ab_variant ?? null;
  const label = async (name: string, promptId: number | null) => {
    const [versions, releases] = await Promise.all([labelVersions(db, ws, name, promptId), labelReleases(db, ws, name, promptId)]);
    return { labelVersions: versions, labelReleases: releases };
  };
  switch (hook.scope) {
    case "all":
      return { promptId: null, versionNumber: null, labelVersions: null, labelReleases: null, abVariant, filter };
    case "release_label":
      return { promptId: null, versionNumber: null, ...(await label(hook.release_label!, null)), abVariant, filter };
    case "prompt_template":
      return {
        promptId: hook.prompt_template_id ?? null,
        versionNumber: hook.prompt_version_number ?? null,
        ...(hook.release_label ? await label(hook.release_label, hook.prompt_template_id ?? null) : { labelVersions: null, labelReleases: null }),
        abVariant,
        filter,
      };
  }
}
