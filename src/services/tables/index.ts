// The tables domain: smart tables and their sheets in D1, and sheet imports (the sheet_import job). A
// sheet's cells live in its Durable Object (src/sheets/), reached through sheet-engine's liveSheet.
// Route folders: tables, sheets, sheet-data.
// Rule: imports registry and webhooks; never datasets, workflows or evaluations.
export { liveSheet, unwrap } from "./sheet-engine";
export { createFileImport, createFileImportIntoSheet, createRequestLogImport, createRequestLogImportIntoSheet, failOperation, LOG_FIELDS, MAX_IMPORT_COLUMNS, MAX_IMPORT_LOGS, runImport, type SheetImport } from "./sheet-imports";
export { createBlankSheet, deleteSheet, findOperation, listSheets, operationView, requireSheet, sheetView, updateSheet } from "./sheets";
export { createTable, deleteTable, listTables, requireTable, tableDetail, updateTable } from "./tables";
