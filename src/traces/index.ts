// The traces module's face: OTLP exports decoded (spans in otlp.ts, log records in otlp-logs.ts, JSON
// or protobuf) and mapped onto the shapes the log store keeps (span-mapping.ts: a span to a request
// log; log-records.ts: an OTLP log record to a span event; span-tree.ts: the tree of an export's spans).
// Pure: it reads nothing and writes nothing; services/ingest stores what it maps, routes/traces
// decodes and answers. From outside traces/, everything comes through here.
export { decodeExport, encodeResponse, MAX_ATTRIBUTE_DEPTH, MAX_SPAN_BYTES, OtlpFormatError, type DecodedExport, type OtlpEncoding } from "./otlp";
export { decodeLogsExport, encodeLogsResponse, MAX_RECORD_BYTES, MAX_RECORDS_PER_EXPORT, OtlpTooManyRecords, type DecodedLogs } from "./otlp-logs";
export { recordEvent } from "./log-records";
export { spanToLog } from "./span-mapping";
export { spanTree, treeRequestLogIds } from "./span-tree";
