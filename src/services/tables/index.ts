// The tables domain: smart tables and their sheets in D1, and sheet imports (the sheet_import job). A
// sheet's cells live in its Durable Object (src/sheets/), reached through sheet-engine's liveSheet.
// Route folders: tables, sheets, sheet-data.
// Rule: imports registry and webhooks; never datasets, workflows or evaluations.
export { liveSheet, unwrap } from "./sheet-engine";
export { createFileImport, createRequestLogImport } from "./import-create";
export { createFileImportIntoSheet, createRequestLogImportIntoSheet, MAX_IMPORT_LOGS, type SheetImport } from "./import-into-sheet";
export { failOperation, runImport } from "./import-run";
export { LOG_FIELDS, MAX_IMPORT_COLUMNS } from "./import-sources";
export { createBlankSheet, deleteSheet, findOperation, listSheets, operationView, requireSheet, sheetView, updateSheet } from "./sheets";
export { createTable, deleteTable, listTables, requireTable, tableDetail, updateTable } from "./tables";
