// The evaluations domain: evaluation pipelines (reports) and their runs (the evaluation_run job).
// Route folder: evaluations.
// Rule: the highest domain: imports datasets, registry and webhooks; nothing imports it but queue/ and routes.
export { addColumn, archiveReport, archiveReportsByName, createPipeline, deleteColumn, editColumn, evaluationRows, getReport, getReportScore, listEvaluations, pipelineExists, renameReport, updateScoreCard } from "./pipelines";
export { giveUpEvaluationRun, runEvaluationBatch, startEvaluationRun, WAIT_SECONDS } from "./runs";
