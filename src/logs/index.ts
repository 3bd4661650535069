// The log store: every module that reads or writes request logs (and their index rows, facet counts,
// daily totals, groups) goes through here, so where logs live can change without touching its callers.
// The filter compiler (src/filters/) is its query language.
export { createRequestLog, decodeLogRow, getRequestLog, getRequestLogs, requestLogView, type RequestLog, type RequestLogInput } from "./write";
export { filterEstimates, KEYED_FIELDS, searchRequestLogs, SORT_COLUMNS, suggestRequestValues, SUGGESTION_FIELDS, SUGGESTION_LIMIT, type SortBy } from "./search";
export { createGroup, requireGroup, trackGroup, trackMetadata, trackPrompt, trackScore } from "./tracking";
export { requestAnalytics } from "./analytics";
export { customAnalytics } from "./custom-analytics";
export { HISTOGRAM_AUTO_BINS, MAX_DEPTH, TRACE_ANALYTICS_LIMITS, traceCustomAnalytics, type TraceAnalyticsLimits } from "./trace-analytics";
export { fillQuery, findLog, logValues, logValuesSql, LOGS_BY_IDS, matchingLogIds, previewLogs, REQUEST_FIELDS, valuesSql, type LogValues } from "./datasets";
export { logsInOrder, matchingLogPages, newestLogId } from "./readers";
export { CONTROL_SHARD, configuredShards, placeWorkspace } from "./shards";
export { closedTraces, closeTrace, storeSpans, traceHasSpan, traceLogIds, traceSpans, type SpanPromptRef, type SpanToStore, type StoredSpans } from "./spans";
export { archiveCutoff, archiveOldLogs, archiveSettings, exportLogs, findArchivedLogLine, LOG_RETENTION_DAYS, readRequestLog, type ArchiveSettings } from "./archive";
export { indexLeftBehind, indexLogs, INDEX_BATCH_LOGS, SWEEP_AFTER_MS, SWEEP_MAX_LOGS } from "./indexing";
