// A sheet's scorecard: steps that each judge a row (a column read as a score, or a check run by the
// shared blocks: CONTAINS, REGEX, ASSERT_VALID, COMPARE, LLM_ASSERTION; or structure and tool-call
// checks of a JSON value), combined per row into a score and a verdict (pass, warn, fail, error,
// skipped), and calculations of it over the sheet's rows. A calculation runs on the object's alarm
// once no cell is queued or running, a chunk of rows per run (CHUNK_EVALUATIONS step evaluations at
// most, EVAL_CONCURRENCY at a time), storing one result per row; a step whose inputs hash as in the
// previous calculation keeps its result without running again. Row results are kept for the latest
// ROW_RESULT_CALCULATIONS calculations, summaries for the latest KEPT_CALCULATIONS.
//
// Its parts, each importing only those before it: steps.ts (configuration checks and judging, pure),
// storage.ts (the scorecard in the object's SQLite, and its views), calculation.ts (queueing and the
// alarm's runs), calls.ts (what the sheet object's RPC methods do). This file is the face.
export {
  AGGREGATION_METHODS,
  CHUNK_EVALUATIONS,
  KEPT_CALCULATIONS,
  MAX_EVALUATED_COLUMNS,
  MAX_STEPS,
  PRIMITIVES,
  ROW_RESULT_CALCULATIONS,
  VERDICTS,
  type ScorecardInput,
  type Verdict,
} from "./steps";
export { activeScorecard } from "./storage";
export { hasScorecardWork, queueScorecardCalculation, stepScorecard } from "./calculation";
export {
  cancelScorecard,
  configureScorecard,
  deleteScorecard,
  migrateLegacyScore,
  recalculateScorecard,
  scorecardCalculationFor,
  scorecardFor,
  scorecardRowFor,
  scorecardRowsFor,
} from "./calls";
