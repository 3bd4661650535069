// A fetch by release label through a running A/B release: the label's read carries the release and
// the reads of its variants' versions (so the edge cache answers a variant as it answers the label,
// within the same staleness bound), and each request is assigned its variant from its
// metadata_filters (src/prompts/ab-split.ts). A pinned version, the latest, or a label no release
// overloads is served as before, and its answer does not change by a byte.
import { assign, type ServedRelease } from "../../prompts";

/** What a fetch served through a release: the additive `ab_test` of its answer. */
export interface ServedAb {
  id: number;
  revision: number;
  release_label: string;
  variant: string;
  segment: string | null;
  assignment: "sticky" | "random";
}

/** The running release of a label read, with the read of each variant whose version is not the label read's own. */
export interface ReleaseRead<V> {
  release: ServedRelease;
  /** Variant key → its version's read; null for a variant served by the label's read itself. */
  variants: Record<string, V | null>;
}

/** Loads the release's variants' reads (`readVersion` for each version other than `labelVersion`), together. */
export async function readRelease<V>(release: ServedRelease, labelVersion: number, readVersion: (version: number) => Promise<V>): Promise<ReleaseRead<V>> {
  const entries = await Promise.all(
    Object.entries(release.split.versions).map(async ([key, version]) => [key, version === labelVersion ? null : await readVersion(version)] as const),
  );
  return { release, variants: Object.fromEntries(entries) };
}

/** The variant a request gets, its read (null: the label read's own) and the answer's `ab_test`. */
export async function servedVariant<V>(read: ReleaseRead<V>, metadata: Readonly<Record<string, unknown>> | null | undefined): Promise<{ variant: V | null; ab: ServedAb }> {
  const r = read.release;
  const a = await assign(r, metadata);
  return {
    variant: read.variants[a.variant] ?? null,
    ab: { id: r.id, revision: r.revision, release_label: r.releaseLabel, variant: a.variant, segment: a.segment, assignment: a.assignment },
  };
}

/** The X-PromptEdge-AB header's value: `id;variant;r<revision>;<assignment>`. */
export const abHeaderValue = (ab: ServedAb) => `${ab.id};${ab.variant};r${ab.revision};${ab.assignment}`;

export const AB_HEADER = "X-PromptEdge-AB";
