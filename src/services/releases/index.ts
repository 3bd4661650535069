// The releases domain: A/B releases of prompt templates (ab_tests) with their sticky split, scorecard,
// guardrails and trail, and the approvals of protected release labels' moves (a promote's among
// them). Route folder: ab-tests (and the label-change-request routes of prompt-templates). Serving
// reads releases in src/prompts/ (the split is src/prompts/ab-split.ts); logs record the variant there
// too, and their rollups are the log store's (src/logs/ab-rollups.ts).
// Rule: imports registry and webhooks; the queue runs its guardrails and rollups.
export { decideChangeRequest } from "./label-approvals";
export { GUARDRAIL_INTERVAL_MS, runGuardrails } from "./guardrail-runs";
export { decide, type Decision, type GuardrailInput, type VariantStats } from "./guardrails";
export { readTrail } from "./events";
export {
  assignmentKeys,
  createRelease,
  deleteRelease,
  listReleases,
  patchRelease,
  promoteRelease,
  refuseImmutable,
  releaseAssignment,
  releaseExists,
  releaseView,
  requireRelease,
  rollbackRelease,
  type CreateInput,
  type ListQuery,
  type PatchInput,
  type ReleaseView,
} from "./releases";
export { releaseScorecard, scorecardOf, variantStats } from "./scorecard";
export { baseOnly, newSplit, rampedSplit } from "./split-input";
