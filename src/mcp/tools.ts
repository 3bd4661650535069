// The one table of MCP tools: each tool's name, description, whether it only reads, and the REST
// operation it calls. Its input schema is that operation's own (path, query and JSON body from
// /openapi.json, catalog.ts), so an MCP call is validated by the rules REST applies, by the same
// code. Adding a tool is adding an entry here (docs/mcp.md's list is generated from this table).

/** A JSON Schema, as /openapi.json and tools/list carry it. */
export type JsonSchema = Record<string, unknown>;

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface ToolSpec {
  /** The tool's name: PromptLayer's where PromptLayer's server has the tool. */
  name: string;
  description: string;
  /** The REST operation it calls, as /openapi.json spells it: "POST /rest/prompt-templates". */
  operation: `${HttpMethod} /${string}`;
  /** The tool changes nothing (MCP's readOnlyHint). */
  readOnly: boolean;
  /** Arguments named otherwise than the operation's parameter: argument → parameter. */
  rename?: Record<string, string>;
  /**
   * PromptLayer's parameters the operation does not take: listed in the schema (an agent written for
   * PromptLayer's server may send them), never sent, each saying what PromptEdge does instead.
   */
  accepted?: Record<string, { schema: JsonSchema; note: string }>;
  /** Parameters of the operation the tool leaves out (an answer that is not JSON). */
  omit?: string[];
}

const int = { type: "integer" } as const;
const bool = { type: "boolean" } as const;
const str = { type: "string" } as const;
const strMap = { type: "object", additionalProperties: { type: "string" } } as const;

/** The tools of PromptLayer's MCP server (its documented 61, plus test-execute-tool-registry), by their names. */
export const PROMPTLAYER_TOOLS: ToolSpec[] = [
  // Prompt templates
  {
    name: "get-prompt-template",
    description:
      "Get a prompt template ready to send: input variables filled, snippets expanded, provider-ready llm_kwargs. Pick the version by `version` or `label` (latest otherwise). For reading or editing a template as written, use get-prompt-template-raw.",
    operation: "POST /prompt-templates/{identifier}",
    readOnly: true,
    rename: { prompt_name: "identifier" },
  },
  {
    name: "get-prompt-template-raw",
    description: "Get a prompt template as stored (placeholders as written), for inspection or editing; `version` or `label` picks the version, latest otherwise.",
    operation: "GET /prompt-templates/{identifier}",
    readOnly: true,
    accepted: {
      resolve_snippets: { schema: bool, note: "@@@snippet@@@ references are always filled in with the snippet's latest version (listed in `snippets`)." },
      include_llm_kwargs: { schema: bool, note: "llm_kwargs is always in the answer." },
    },
  },
  {
    name: "list-prompt-templates",
    description: "List prompt templates, one page at a time (latest version each, or the version a `label` names); filter by name, tags, creator or time.",
    operation: "GET /prompt-templates",
    readOnly: true,
    accepted: { status: { schema: { type: "string", enum: ["active", "deleted", "all"] }, note: "a deleted template is gone, so every listed template is active." } },
  },
  {
    name: "publish-prompt-template",
    description:
      "Publish a new version of a prompt template (creating the template if the name is new). `prompt_version.prompt_template` is the chat or completion blueprint; `release_labels` moves labels such as prod onto the new version.",
    operation: "POST /rest/prompt-templates",
    readOnly: false,
    accepted: { snippet_overrides: { schema: strMap, note: "snippets always take the referenced template's latest version." } },
  },
  {
    name: "patch-prompt-template-version",
    description:
      "Create a new version from a base version (latest, or `version`/`label`) and a field-level patch: index-keyed objects patch messages, arrays replace them, null removes tools or functions; model_parameters merge.",
    operation: "PATCH /rest/prompt-templates/{identifier}",
    readOnly: false,
  },
  { name: "list-prompt-template-labels", description: "The release labels of a prompt template and the version each points at.", operation: "GET /prompt-templates/{identifier}/labels", readOnly: true },
  {
    name: "create-prompt-label",
    description: "Attach a new release label (prod, staging…) to a version of a template, named by the template's id and the version's number.",
    operation: "POST /prompts/{prompt_id}/label",
    readOnly: false,
    accepted: { prompt_version_id: { schema: int, note: "name the version by prompt_version_number." } },
  },
  {
    name: "move-prompt-label",
    description: "Move a release label to another version of the same template (prompt_label_id from list-prompt-template-labels).",
    operation: "PATCH /prompt-labels/{prompt_label_id}",
    readOnly: false,
    accepted: { prompt_version_id: { schema: int, note: "name the version by prompt_version_number." } },
  },
  { name: "delete-prompt-label", description: "Delete a release label.", operation: "DELETE /prompt-labels/{prompt_label_id}", readOnly: false },
  { name: "get-snippet-usage", description: "The template versions that reference a snippet (a template used as @@@name@@@).", operation: "GET /prompt-templates/{identifier}/snippet-usage", readOnly: true },

  // Request logs and analytics
  {
    name: "search-request-logs",
    description:
      "Search logged LLM requests by a structured filter group ({logic, filters: [{field, operator, value}]}) and/or free text `q`, sorted and paged. A log becomes searchable a few seconds after it is written.",
    operation: "POST /api/public/v2/requests/search",
    readOnly: true,
  },
  { name: "get-request", description: "One logged request: its prompt blueprint in and out, parameters, tokens, cost, metadata, scores and trace_id.", operation: "GET /api/public/v2/requests/{request_id}", readOnly: true },
  { name: "get-trace", description: "Every span of a trace, with the request log each LLM span made.", operation: "GET /api/public/v2/traces/{trace_id}", readOnly: true },
  {
    name: "get-request-search-suggestions",
    description: "Values that exist for a search field (models, tags, metadata keys or values…), optionally by prefix and under a filter group: what to put in a search filter.",
    operation: "GET /api/public/v2/requests/suggestions",
    readOnly: true,
  },
  { name: "get-request-analytics", description: "Aggregates over the logs a search selects: totals, time series, latency percentiles, top models and prompts.", operation: "POST /api/public/v2/requests/analytics", readOnly: true },
  {
    name: "get-request-analytics-custom-analytics",
    description: "Custom charts (bar, line, pie, histogram, heatmap…) over the logs a search selects, each a metric grouped by fields or metadata keys.",
    operation: "POST /api/public/v2/requests/analytics/custom-analytics",
    readOnly: true,
  },

  // Tracking
  { name: "log-request", description: "Log one LLM call (prompt blueprint in and out, times, tokens, tags, metadata); answers the new request id.", operation: "POST /log-request", readOnly: false },
  { name: "create-spans-bulk", description: "Write OpenTelemetry-style spans in bulk; GenAI spans become request logs linked to their trace.", operation: "POST /spans-bulk", readOnly: false },

  // Datasets
  { name: "list-datasets", description: "List dataset versions, one page at a time; filter by name, group, prompt, label or evaluation.", operation: "GET /api/public/v2/datasets", readOnly: true },
  { name: "get-dataset-rows", description: "The rows of one dataset version, paged, optionally matching text `q`.", operation: "GET /api/public/v2/datasets/{dataset_id}/rows", readOnly: true },
  { name: "create-dataset-group", description: "Create a dataset group (with its draft version) to collect rows into.", operation: "POST /api/public/v2/dataset-groups", readOnly: false },
  {
    name: "create-dataset-version-from-file",
    description: "Create a dataset version from a CSV or JSON file sent base64-encoded; built in the background (poll list-datasets).",
    operation: "POST /api/public/v2/dataset-versions/from-file",
    readOnly: false,
  },
  {
    name: "create-dataset-version-from-filter-params",
    description: "Create a dataset version from logged requests: the ids given, or every log a filter group and `q` select; built in the background.",
    operation: "POST /api/public/v2/dataset-versions/from-filter-params",
    readOnly: false,
  },
  { name: "create-draft-dataset-version", description: "Start a draft version of a dataset group, optionally copying the rows of an existing version.", operation: "POST /api/public/v2/dataset-versions/create-draft", readOnly: false },
  { name: "add-request-log-to-dataset", description: "Add one logged request as a row of a dataset group's draft.", operation: "POST /api/public/v2/dataset-versions/add-request-log", readOnly: false },
  { name: "save-draft-dataset-version", description: "Publish a dataset group's draft as its next version (in the background).", operation: "POST /api/public/v2/dataset-versions/save-draft", readOnly: false },

  // Evaluations (PromptLayer's reports)
  { name: "list-evaluations", description: "List evaluation pipelines, one page at a time, optionally with their runs.", operation: "GET /api/public/v2/evaluations", readOnly: true },
  { name: "get-evaluation-rows", description: "The rows of an evaluation: dataset cells and each evaluation column's result.", operation: "GET /api/public/v2/evaluations/{evaluation_id}/rows", readOnly: true },
  { name: "create-report", description: "Create an evaluation pipeline over a dataset group, optionally with its columns and scoring.", operation: "POST /reports", readOnly: false },
  { name: "run-report", description: "Run an evaluation pipeline (a named run), on its dataset or another one.", operation: "POST /reports/{report_id}/run", readOnly: false },
  { name: "get-report", description: "An evaluation pipeline with its columns and status.", operation: "GET /reports/{report_id}", readOnly: true },
  { name: "get-report-score", description: "An evaluation's computed score.", operation: "GET /reports/{report_id}/score", readOnly: true },
  { name: "add-report-column", description: "Add a column (an evaluation step: LLM assertion, code, comparison…) to a pipeline.", operation: "POST /report-columns", readOnly: false },
  { name: "edit-report-column", description: "Change a pipeline column's name, configuration or position.", operation: "PATCH /report-columns/{report_column_id}", readOnly: false },
  { name: "delete-report-column", description: "Delete a pipeline column.", operation: "DELETE /report-columns/{report_column_id}", readOnly: false },
  { name: "update-report-score-card", description: "Set how an evaluation is scored: the columns that count, or custom scoring code.", operation: "PATCH /reports/{report_id}/score-card", readOnly: false },
  { name: "rename-report", description: "Rename or retag an evaluation pipeline.", operation: "PATCH /reports/{report_id}/rename", readOnly: false },
  { name: "delete-report", description: "Archive an evaluation pipeline.", operation: "DELETE /reports/{report_id}", readOnly: false },
  { name: "delete-reports-by-name", description: "Archive every evaluation pipeline with this name.", operation: "DELETE /reports/name/{report_name}", readOnly: false },

  // Agents (workflows)
  { name: "list-workflows", description: "List workflows (agents), one page at a time.", operation: "GET /workflows", readOnly: true },
  { name: "get-workflow", description: "One workflow version with its nodes and edges (latest, or `version`/`label`).", operation: "GET /workflows/{workflow_id_or_name}", readOnly: true },
  { name: "get-workflow-labels", description: "The release labels of a workflow.", operation: "GET /workflows/{workflow_id_or_name}/labels", readOnly: true },
  { name: "create-workflow", description: "Create a workflow, or a new version of one (by workflow_id or workflow_name), from its nodes and edges.", operation: "POST /rest/workflows", readOnly: false },
  { name: "patch-workflow", description: "Create a new workflow version by merging node changes (by node name; null removes a node) into a base version.", operation: "PATCH /rest/workflows/{workflow_id_or_name}", readOnly: false },
  {
    name: "run-workflow",
    description: "Run a workflow by name with input variables; answers the execution id at once. Read the outputs with get-workflow-version-execution-results.",
    operation: "POST /workflows/{workflow_name}/run",
    readOnly: false,
  },
  {
    name: "get-workflow-version-execution-results",
    description: "The result of a workflow run: the output node's value, or every node's with return_all_outputs (still running: status and nothing final yet).",
    operation: "GET /workflow-version-execution-results",
    readOnly: true,
    accepted: {
      workflow_node_id: { schema: int, note: "ask for every node's result with return_all_outputs." },
      workflow_node_name: { schema: str, note: "ask for every node's result with return_all_outputs." },
    },
  },

  // Tool registry
  { name: "list-tool-registries", description: "List the tools of the tool registry.", operation: "GET /api/public/v2/tool-registry", readOnly: true },
  { name: "get-tool-registry", description: "One registry tool with its definition (latest, or `version`/`label`).", operation: "GET /api/public/v2/tool-registry/{identifier}", readOnly: true },
  { name: "create-tool-registry", description: "Create a registry tool and its first version from a function definition, optionally with code to run it.", operation: "POST /api/public/v2/tool-registry", readOnly: false },
  { name: "create-tool-version", description: "Create a new version of a registry tool.", operation: "POST /api/public/v2/tool-registry/{identifier}/versions", readOnly: false },
  {
    name: "test-execute-tool-registry",
    description: "Run a registry tool's code in the sandbox with test inputs (a stored version, or a definition and code sent here).",
    operation: "POST /api/public/v2/tool-registry/{identifier}/test-execute",
    readOnly: false,
  },

  // Skill collections
  { name: "list-skill-collections", description: "List skill collections.", operation: "GET /api/public/v2/skill-collections", readOnly: true },
  {
    name: "create-skill-collection",
    description: "Create a skill collection from files (path and text content each).",
    operation: "POST /api/public/v2/skill-collections",
    readOnly: false,
    accepted: { description: { schema: str, note: "skill collections carry no description; put it in a file (SKILL.md)." } },
  },
  {
    name: "get-skill-collection",
    description: "A skill collection with its files (path → content), latest or a `version`/`label`.",
    operation: "GET /api/public/v2/skill-collections/{identifier}",
    readOnly: true,
    omit: ["format"],
  },
  {
    name: "update-skill-collection",
    description: "Rename a skill collection.",
    operation: "PATCH /api/public/v2/skill-collections/{identifier}",
    readOnly: false,
    accepted: { description: { schema: str, note: "skill collections carry no description; put it in a file (SKILL.md)." } },
  },
  {
    name: "save-skill-collection-version",
    description: "Save a new version of a skill collection from file changes: updates, moves and deletes.",
    operation: "POST /api/public/v2/skill-collections/{identifier}/versions",
    readOnly: false,
  },

  // Folders
  { name: "create-folder", description: "Create a folder, at the root or in a parent folder.", operation: "POST /api/public/v2/folders", readOnly: false },
  { name: "edit-folder", description: "Rename a folder.", operation: "PATCH /api/public/v2/folders/{folder_id}", readOnly: false },
  {
    name: "get-folder-entities",
    description: "What a folder holds (prompts, workflows, datasets, evaluations, tools, folders…), optionally by type, by name, or flattened.",
    operation: "GET /api/public/v2/folders/entities",
    readOnly: true,
    accepted: {
      semantic_search: { schema: bool, note: "no semantic search: search_query matches names." },
      semantic_search_top_k: { schema: int, note: "no semantic search: search_query matches names." },
      semantic_search_threshold: { schema: { type: "number" }, note: "no semantic search: search_query matches names." },
      tags: { schema: { type: "array", items: str }, note: "not a filter of this list; list-prompt-templates filters by tags." },
    },
  },
  { name: "move-folder-entities", description: "Move entities (by id and type) into a folder, or to the root.", operation: "POST /api/public/v2/folders/entities", readOnly: false },
  { name: "delete-folder-entities", description: "Delete entities (by id and type); `cascade` deletes a folder's contents too. Cannot be undone.", operation: "DELETE /api/public/v2/folders/entities", readOnly: false },
  { name: "resolve-folder-id", description: "The id of the folder at a path such as `team/support`.", operation: "GET /api/public/v2/folders/resolve-id", readOnly: true },
];

/** Tools PromptLayer's server does not have, for what PromptEdge serves beyond it. */
export const PROMPTEDGE_TOOLS: ToolSpec[] = [
  {
    name: "search-traces",
    description: "Search traces by a structured filter group over their spans (name, service, status, duration, attributes…), newest first, paged.",
    operation: "POST /api/public/v2/traces/search",
    readOnly: true,
  },
  {
    name: "get-trace-analytics-custom-analytics",
    description: "Custom charts over traces and spans, each a metric grouped by span fields or attributes.",
    operation: "POST /api/public/v2/traces/analytics/custom-analytics",
    readOnly: true,
  },
  { name: "add-trace-to-dataset", description: "Add a trace (or one of its spans) as a row of a dataset group's draft.", operation: "POST /api/public/v2/dataset-versions/add-trace", readOnly: false },
  {
    name: "run-prompt",
    description:
      "Run a stored prompt version (or a draft) with input variables against its model, with the provider key every LLM call takes (the workspace's environment variable, else the deployment's); the run is logged like any request. Answers the reply, tokens, cost and the request id.",
    operation: "POST /api/public/v2/prompt-runs",
    readOnly: false,
    omit: ["stream"],
  },
  // A/B releases (docs/ab-releases.md) and the approvals of protected labels' moves
  { name: "list-ab-tests", description: "List A/B releases (a release label split between a template's versions), with their splits and status; filter by template, label, status, name, creator or time.", operation: "GET /api/public/v2/ab-tests", readOnly: true },
  { name: "get-ab-test", description: "Get an A/B release: its variants' versions, percentages and bucket ranges, segments, guardrails and outcome.", operation: "GET /api/public/v2/ab-tests/{ab_test_id}", readOnly: true },
  {
    name: "create-ab-test",
    description:
      "Split a release label of a prompt template between versions: fetches by that label are served the variant assigned (sticky by assignment_key, a metadata_filters key; random without it). Variants' percentages sum to 100 and one is the label's current version.",
    operation: "POST /api/public/v2/ab-tests",
    readOnly: false,
  },
  { name: "update-ab-test", description: "Ramp an A/B release's percentages (only base units move), pause or resume it, rename it or set its guardrails.", operation: "PATCH /api/public/v2/ab-tests/{ab_test_id}", readOnly: false },
  { name: "delete-ab-test", description: "Delete an A/B release: its label serves the version it names again (the label does not move).", operation: "DELETE /api/public/v2/ab-tests/{ab_test_id}", readOnly: false },
  {
    name: "promote-ab-test",
    description: "Promote a variant: the release label moves to its version and the release completes; on a protected label a change request waits for approval instead.",
    operation: "POST /api/public/v2/ab-tests/{ab_test_id}/promote",
    readOnly: false,
  },
  { name: "rollback-ab-test", description: "Roll an A/B release back: every challenger to 0 % and the release completed; the label does not move.", operation: "POST /api/public/v2/ab-tests/{ab_test_id}/rollback", readOnly: false },
  {
    name: "get-ab-test-assignment",
    description:
      "Which segment, variant, bucket and version a unit gets from an A/B release, as a template fetch with these metadata_filters (a JSON object of key → value) would; random without the assignment key's value.",
    operation: "GET /api/public/v2/ab-tests/{ab_test_id}/assignment",
    readOnly: true,
  },
  {
    name: "get-ab-test-scorecard",
    description: "An A/B release's scorecard per variant: requests, units, error rate, cost, latency p50/p95, scores' means and signals' true-rates with 95 % intervals, differences to the base and p-values.",
    operation: "GET /api/public/v2/ab-tests/{ab_test_id}/scorecard",
    readOnly: true,
  },
  { name: "get-ab-test-events", description: "An A/B release's events, newest first: who created, ramped, paused, promoted or rolled it back, and its guardrails' decisions.", operation: "GET /api/public/v2/ab-tests/{ab_test_id}/events", readOnly: true },
  {
    name: "protect-prompt-label",
    description: "Protect a release label (`protected: true`) so it moves only through an approved change request, or stop protecting it.",
    operation: "PUT /api/public/v2/prompt-labels/{prompt_label_id}/protection",
    readOnly: false,
  },
  { name: "list-label-change-requests", description: "List the requested moves of protected release labels (pending, approved or denied).", operation: "GET /api/public/v2/label-change-requests", readOnly: true },
  { name: "get-label-change-request", description: "Get a protected release label's requested move: versions from and to, status, who asked and who decided.", operation: "GET /api/public/v2/label-change-requests/{change_request_id}", readOnly: true },
  {
    name: "approve-label-change-request",
    description: "Approve a protected release label's move: the label moves (and an A/B release whose promote asked for it completes).",
    operation: "POST /api/public/v2/label-change-requests/{change_request_id}/approve",
    readOnly: false,
  },
  { name: "deny-label-change-request", description: "Deny a protected release label's move: the label stays.", operation: "POST /api/public/v2/label-change-requests/{change_request_id}/deny", readOnly: false },
  {
    name: "test-redaction-policy",
    description:
      "What a text (or a log body) would become under the workspace's redaction policy, or under a policy given to try, with how many values each detector replaced; stores nothing.",
    operation: "POST /api/public/v2/redaction-policy/test",
    readOnly: true,
  },
  { name: "get-redaction-policy", description: "The workspace's redaction policy: which detectors and custom patterns run, with which action, on which fields (off when none).", operation: "GET /api/public/v2/redaction-policy", readOnly: true },
  { name: "list-audit-log", description: "The workspace's administrative actions (keys, labels, policies, env vars by name), newest first, filtered and paged. Needs an admin key.", operation: "GET /api/public/v2/audit-log", readOnly: true },
  {
    name: "get-provider-keys",
    description:
      "Which LLM providers (openai, anthropic) the workspace's calls can reach and whose key they use: the workspace's environment variable (first) or the deployment's secret; never a key itself.",
    operation: "GET /api/public/v2/provider-keys",
    readOnly: true,
  },

  // Signals (docs/signals.md)
  { name: "list-signals", description: "List the workspace's Signals (yes/no statements an LLM judges about production logs) with their hooks and running totals: judged, true, false, errors, skipped, true-rate, cost.", operation: "GET /api/public/v2/signals", readOnly: true },
  { name: "get-signal", description: "One signal with its hooks and totals.", operation: "GET /api/public/v2/signals/{signal_id}", readOnly: true },
  {
    name: "create-signal",
    description:
      "Create a signal: a name, a yes/no statement the judge answers about each log, and hooks choosing which logs (scope all, release_label or prompt_template; filters as request search takes them; sample_rate, default 0.5). Disabled unless enabled is true: test it first.",
    operation: "POST /api/public/v2/signals",
    readOnly: false,
  },
  {
    name: "update-signal",
    description: "Change any of a signal's fields (enable it, its statement, model, include, delay, limits); a change to statement, model or include moves its revision on.",
    operation: "PATCH /api/public/v2/signals/{signal_id}",
    readOnly: false,
  },
  { name: "delete-signal", description: "Delete a signal; its results leave every log. Cannot be undone.", operation: "DELETE /api/public/v2/signals/{signal_id}", readOnly: false },
  { name: "add-signal-hook", description: "Add a hook to a signal (scope, optional A/B variant, filters, sample rate).", operation: "POST /api/public/v2/signals/{signal_id}/hooks", readOnly: false },
  { name: "update-signal-hook", description: "Change one hook of a signal.", operation: "PATCH /api/public/v2/signals/{signal_id}/hooks/{hook_id}", readOnly: false },
  { name: "delete-signal-hook", description: "Delete one hook of a signal.", operation: "DELETE /api/public/v2/signals/{signal_id}/hooks/{hook_id}", readOnly: false },
  {
    name: "test-signal",
    description: "Judge up to 20 given request logs with a statement (not saved) and answer each verdict with its reasoning and quote; nothing is stored.",
    operation: "POST /api/public/v2/signals/test",
    readOnly: false,
  },
  { name: "test-saved-signal", description: "Judge up to 20 given request logs with a saved signal; nothing is stored.", operation: "POST /api/public/v2/signals/{signal_id}/test", readOnly: false },
  { name: "estimate-signal", description: "How many logs hooks would match and sample per day, and what judging them would cost.", operation: "POST /api/public/v2/signals/estimate", readOnly: true },
  { name: "get-signal-series", description: "A signal's true-rate per day.", operation: "GET /api/public/v2/signals/{signal_id}/series", readOnly: true },
  {
    name: "create-signal-backfill",
    description: "Judge past logs of a time range (filters, sample_rate, max_logs) with a signal: a background job; get-signal-backfill follows it.",
    operation: "POST /api/public/v2/signals/{signal_id}/backfills",
    readOnly: false,
  },
  { name: "list-signal-backfills", description: "A signal's backfills, newest first, with their status and progress.", operation: "GET /api/public/v2/signals/{signal_id}/backfills", readOnly: true },
  { name: "get-signal-backfill", description: "A signal backfill's status and progress.", operation: "GET /api/public/v2/signals/{signal_id}/backfills/{backfill_id}", readOnly: true },
  { name: "cancel-signal-backfill", description: "Cancel a running signal backfill.", operation: "DELETE /api/public/v2/signals/{signal_id}/backfills/{backfill_id}", readOnly: false },
];

export const TOOLS: ToolSpec[] = [...PROMPTLAYER_TOOLS, ...PROMPTEDGE_TOOLS];
