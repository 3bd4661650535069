// The log store: every module that reads or writes request logs (and their index rows, facet counts,
// daily totals, groups) goes through here, so where logs live can change without touching its callers.
// Its functions take the workspace's logs as deps.logs(ws) hands them out (periods.ts): one database
// or several (periods), which each function reads as a whole.
// The filter compiler (src/filters/) is its query language.
export { createRequestLog, getRequestLog } from "./write";
export type { RequestLogInput } from "./log-row";
export {
  BODY_RETRY_WINDOW_MS,
  bodyRetryClaim,
  IDEMPOTENCY_WINDOW_MS,
  idempotencyFingerprint,
  isKeyTaken,
  recordAnswerStatements,
  recordedAnswer,
  sweepIdempotencyKeys,
  winnerAnswer,
  type IdempotencyClaim,
  type RecordAnswer,
  type RecordedAnswer,
} from "./idempotency";
export { filterEstimates, KEYED_FIELDS, searchRequestLogs, SORT_COLUMNS, suggestRequestValues, SUGGESTION_FIELDS, SUGGESTION_LIMIT, type SortBy } from "./search";
export { createGroup, requireGroup, trackGroup, trackMetadata, trackPrompt, trackScore } from "./tracking";
export { requestAnalytics } from "./analytics";
export { redactionAnalytics } from "./redaction-analytics";
export { customAnalytics } from "./custom-analytics";
export { signalAnalytics } from "./signal-analytics";
export { HISTOGRAM_AUTO_BINS, MAX_DEPTH, TRACE_ANALYTICS_LIMITS, traceCustomAnalytics } from "./trace-analytics";
export { searchTraces, TRACE_SEARCH_LIMITS, TRACE_SEARCH_PAGE, type TraceSearchInput } from "./trace-search";
export { fillQuery, findLog, logValues, logValuesSql, matchingLogIds, previewLogs, type LogValues } from "./datasets";
export { LOGS_BY_IDS } from "./by-ids";
export { logMark, logsInOrder, markFilter, matchingLogPages } from "./readers";
export { exportFilter, exportMatchingLogs, type ExportSelection } from "./filtered-export";
export {
  CONTROL_SHARD,
  configuredShards,
  measureLogDatabases,
  openPeriod,
  placementOf,
  placeWorkspace,
  recordedPlacement,
  shardBinding,
  workspacePlacement,
  type LogShardEnv,
  type Placement,
} from "./shards";
export { ensureIdRange, idRangeFor } from "./id-ranges";
export { WorkspaceLogs, type LogPeriod } from "./periods";
export { closeTrace, storeSpans, traceHasSpan, traceLogIds, traceSpans, type SpanPromptRef, type SpanToStore, type StoredSpans } from "./spans";
export { JOIN_LIMITS, storeLogRecords, traceLogRecordRows, type LogContentOf } from "./log-records";
export { archiveCutoff, archiveOldLogs, archiveSettings, exportLogs, findArchivedLogLine, LOG_RETENTION_DAYS, readRequestLog, type ArchiveSettings } from "./archive";
export type { AttrValue, LogRecordInput, RejectedRecord, RejectedSpan, SpanEvent, SpanExtras, SpanInput } from "./span-input";
export { DRAFT_VERSION, MAX_LOGS_PER_JOB, type FileFillParams, type FillParams } from "./fill-params";
export { chunkIndexRows, indexBeforeSnapshot, indexLeftBehind, indexLogs, indexPending, SWEEP_AFTER_MS, SWEEP_MAX_LOGS, waitingLogs } from "./indexing";
export { MOVE_MAX_LOGS, moveToLayout, readyForSnapshot } from "./layout-move";
export { abTotals, rollupAbLogs, ROLLUP_MAX_LOGS, type AbTotals, type AssignmentKeys } from "./ab-rollups";
export type { IndexedLog, IndexExtension } from "./index-extension";
export {
  backfillCounts,
  backfillOwed,
  claimJudgement,
  dropBackfillJudgements,
  dropJudgement,
  openJudgement,
  overdueJudgements,
  purgeSignal,
  queueBackfillJudgements,
  queueJudgements,
  queueJudgementsStatement,
  releaseJudgement,
  abSignalMetricName,
  verdictsByLog,
  signalSeries,
  signalTotals,
  signalTotalsQuery,
  storedResult,
  storeResult,
  type Claim,
  type JudgedLogRow,
  type NewSignalResult,
  type PendingJudgement,
  type SignalTotals,
  type Verdict,
} from "./signal-results";
export { filterSignalIds, signalIdsOf, signalNamesOf } from "./signal-names";
export { checkCoverageCompiles, coverageCounts, coveredLogsPage, coverageSql, matchStatement, type HookCoverage, type HookMatch, type PageCursor } from "./signal-matching";
