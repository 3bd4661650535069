// The entity types a folder holds: a list of names only, so the answer schemas can name them.

/** Every type the endpoint knows; those without a registered source simply list nothing. */
export const FOLDER_ENTITY_TYPES = [
  "FOLDER",
  "PROMPT",
  "SNIPPET",
  "WORKFLOW",
  "DATASET",
  "REPORT",
  "AB_TEST",
  "INPUT_VARIABLE_SET",
  "SKILL_COLLECTION",
  "TOOL_REGISTRY",
] as const;
export type FolderEntityType = (typeof FOLDER_ENTITY_TYPES)[number];
