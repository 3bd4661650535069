// What `initialize` tells an agent about this server: how its tools, prompts and resources fit.

export function instructions(label: string): string {
  return `PromptEdge: prompt management, request logs, traces, datasets, evaluations and workflows, with PromptLayer's API and its MCP tool names.

Keys: every tool call, prompt and resource runs as a PromptEdge API key (pe_…), sent with the MCP requests as "Authorization: Bearer <key>" or "X-API-KEY: <key>", or as a tool's api_key argument (which wins). Listing the tools needs no key. A key sees only its own workspace: another workspace's ids are "not found".

Tools call the REST API in-process: the same validation, limits and errors. A failed call answers isError with the API's message, which names the argument and the rule; nothing was changed by a call that failed validation. Results are the API's JSON.

How the pieces fit:
- Prompt templates are versioned; release labels (prod, staging…) point at versions. Publish a version with publish-prompt-template (release_labels moves labels onto it) or patch-prompt-template-version; move an existing label with move-prompt-label (its id from list-prompt-template-labels). get-prompt-template fills input variables and expands @@@snippet@@@ references; get-prompt-template-raw shows a version as written.
- Request logs: log-request writes one; search-request-logs finds them (a new log is searchable a few seconds after it is written; get-request reads one by id at once); get-request-search-suggestions gives the values a filter can use; get-trace and search-traces read traces.
- Datasets: create-dataset-group, then add-request-log-to-dataset (or add-trace-to-dataset) into its draft, then save-draft-dataset-version; or build a version from a search with create-dataset-version-from-filter-params. Versions are built in the background: list-datasets shows them, get-dataset-rows reads them.
- Evaluations ("reports"): create-report on a dataset group, add-report-column for each step, run-report, then get-report-score and get-evaluation-rows.
- Workflows ("agents"): create-workflow or patch-workflow, run-workflow (answers an execution id), then get-workflow-version-execution-results until it is done.

Prompts: each prompt template is an MCP prompt whose arguments are its input variables, served at the "${label}" label (or the latest version when a template has none). Resources: promptedge://prompts/{name} (add ?label= or ?version=), promptedge://requests/{id} and promptedge://traces/{id}.`;
}
