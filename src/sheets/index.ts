// The sheets module's face: the one smart-table sheet Durable Object (sheet-object.ts, the single
// writer of a sheet's columns, rows, cells and versions) and the pure limits and shapes its callers
// check requests against. From outside sheets/, everything comes through here, with one exception:
// the Worker's entry (src/index.ts) exports the class to the runtime from sheet-object.ts directly.
// The class is exported here as a type only (env.ts types the binding's stub with it): sheet-object.ts
// imports `cloudflare:workers`, and a value re-export would put that module behind every route that
// imports this face, hence behind app.ts, which the console's type generator loads in Node.
export type { SheetObject } from "./sheet-object";
export { MAX_ROW_INDEX } from "./cell-id";
export { jsonDepth, MAX_JSON_DEPTH } from "./cell-values";
export { columnLetters } from "./imports";
export { DEFAULT_FALSE_VALUES, DEFAULT_TRUE_VALUES, MAX_SCORE_COLUMNS, SCORE_RANGE_ROWS } from "./score";
export {
  AGGREGATION_METHODS,
  CHUNK_EVALUATIONS,
  KEPT_CALCULATIONS,
  MAX_EVALUATED_COLUMNS,
  MAX_STEPS,
  PRIMITIVES,
  ROW_RESULT_CALCULATIONS,
  VERDICTS,
} from "./scorecard";
export { CELL_STATUSES, MAX_COLUMNS, type Fail, type SheetAccess, type SheetStats } from "./types";
export { MAX_VERSION_CELLS } from "./versions";
