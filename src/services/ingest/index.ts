// The ingest domain: what turns provider calls and spans into request logs, above the log store: OTLP
// and spans-bulk ingestion and trace reads, POST /track-request, and the playground's run of a prompt.
// Route folders: log-request (through logs/ directly), tracking, traces, prompt-runs.
// Rule: imports tables (a trace added to a sheet), registry and workspace; nothing imports it but routes.
export { executeRun, prepareRun } from "./prompt-runs";
export { addTraceToSheet, closeTraceOf, getTrace, ingestOtlp, ingestOtlpLogs, ingestSpansBulk, TRACE_MAX_LOG_RECORDS, TRACE_MAX_SPANS, traceRequestLogIds, type MappedLog } from "./traces";
export { trackRequest } from "./tracking-request";
