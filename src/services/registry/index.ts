// The registry domain: prompt templates (their writes and views: publish, patch, labels, upsert,
// snippet usage), tools, skill collections, folders, external IDs, and the list and release-label
// helpers its resources share. Route folders: prompt-templates, tool-registry, skill-collections,
// folders, external-ids. Reads of one stored prompt version live below the log store, in src/prompts/.
// Rule: imports workspace and webhooks only; datasets, tables, workflows, ingest and evaluations build on it.
export { attachExternalId, detachExternalId, externalIdsFor, listExternalIds, newMappings, resolveExternalIdLookup, type ExternalIdLookupQuery, type ExternalIdPair, type NewMappings } from "./external-ids";
export { listFolderEntities } from "./folder-entities";
export { deleteFolderEntities, moveFolderEntities, resolveFolderPath } from "./folder-entity-changes";
export { FOLDER_ENTITY_SOURCES } from "./folder-entity-sources";
export { createFolder, folderExists, renameFolder, requireFolder } from "./folders";
export { upsertTemplateByExternalId } from "./prompt-template-upsert";
export { createLabel, deleteLabel, getTemplateVersion, labelAsItStands, labelView, requireLabel, listTemplates, moveLabel, patchTemplate, publishTemplate, templateLabels, templateReadSource, type TemplateVersionRead, type TemplateVersionView } from "./prompt-templates";
export { labelStatements, type LabelTable } from "./release-labels";
export {
  changeRequestStatements,
  changeRequestViews,
  decisionStatements,
  labelMoveStatements,
  listChangeRequests,
  pendingConflict,
  pendingRequestOf,
  requireChangeRequest,
  setLabelProtection,
  type ChangeRequestView,
  type LabelActor,
  type TargetVersion,
} from "./label-changes";
export { AB_HEADER, abHeaderValue, type ServedAb } from "./release-reads";
export { resourceConditions, resourceOrder, type ResourceColumns, type ResourceFilters, type ResourceListQuery } from "../workspace";
export { collectionExists, collectionExternalIds, collectionView, createCollection, createVersion, listCollections, looksLikeUuid, renameCollection, requireCollection, selectVersion, versionFiles, versionView, type NewFile, type SkillStore } from "./skill-collections";
export { normalizePath, SKILL_MAX_FILE_BYTES, SKILL_MAX_FILES } from "./skill-manifest";
export { snippetUsage } from "./snippet-usage";
export { testExecuteTool } from "./tool-execution";
export { addToolVersion, createTool, getTool, listTools, requireTool, toolExists } from "./tool-registry";
