// The workflows domain: workflow versions and release labels, the graph rules, and runs (the
// workflow_run job). Route folder: workflows.
// Rule: imports registry only; never datasets, tables or evaluations.
export { OPERATORS } from "./graph";
export { executionResults, giveUpExecution, runDoneMessages, runExecution, startRun } from "./runs";
export { createWorkflowVersion, getWorkflowVersion, listWorkflowLabels, listWorkflows, patchWorkflow } from "./workflows";
