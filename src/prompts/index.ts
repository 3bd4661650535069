// The prompt store's face: every read of a stored prompt (a template and one of its versions, for
// logging, blocks and the registry's reads), the pure rules of prompt text (snippets, the PATCH merge), and the edge
// cache of template reads. Below the log store: logs/ looks prompt versions up while it writes a log,
// so nothing here imports logs/ or services/. The registry's writes (publish, patch, labels) are
// services/registry's.
export {
  findPromptVersion,
  findPromptVersions,
  findTemplate,
  labelVersionId,
  latestVersionsOf,
  loggedPromptVersion,
  requirePromptVersion,
  requireTemplate,
  templateExists,
  templateIdOf,
  versionNumberOf,
  type PromptVersionView,
} from "./find";
export { refuseSnippetCycles, resolveSnippets, type SnippetDependencies } from "./snippet-lookup";
export {
  asksForFresh,
  CACHE_STATE_HEADER,
  DEFAULT_PROMPT_CACHE_TTL_MS,
  PromptCache,
  type ReadSource,
} from "./cache";
export { applyPromptPatch, type PromptPatch } from "./patch";
export { renderTemplate, templateVariableNames } from "./variables";
export {
  assign,
  bucketOf,
  bucketsOf,
  BUCKETS,
  initialShares,
  matchSegment,
  percentageOf,
  rampShares,
  sizeOf,
  unitOf,
  variantOfLog,
  type Assignment,
  type Share,
  type Split,
} from "./ab-split";
export { abOfLog, LOG_ATTRIBUTION_MS, releasesForLog, runningRelease, servedRelease, type LogAb, type LogRelease, type ServedRelease } from "./releases";
