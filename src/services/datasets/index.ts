// The datasets domain: dataset groups and versions, drafts, and fills from request logs or a file (the
// dataset_fill job). Route folder: datasets.
// Rule: imports registry (folders, external IDs, list helpers) and webhooks; evaluations build on it.
export { createDatasetGroup, datasetGroupExists, datasetRowsPage, DRAFT_VERSION, listDatasets, MAX_LOGS_PER_JOB, queueDraftFill, requireGroup, saveDraft } from "./datasets";
export { addRequestLog, createDraft, previewFill } from "./drafts";
export { MAX_COLUMN_NAME_CHARS, MAX_FILE_COLUMNS, MAX_ROW_BYTES, queueFileFill } from "./file";
export { markFillFailed, runDatasetFill } from "./fill";
