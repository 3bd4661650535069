// The prompt editor (a version as a draft: messages, model, parameters, tools, response format;
// published as a new version through POST /rest/prompt-templates) and the playground (a version or
// the unsaved draft run with input variables through POST /api/public/v2/prompt-runs, streamed, one
// or two side by side). The API validates every write: its rules come back next to their fields.
import { useEffect, useState } from "preact/hooks";
import { ApiFailure, get, patch, post, postEvents } from "../api";
import { PRICED_MODELS } from "../../../src/converters/pricing";
import type { CreatePromptTemplate, CreatePromptTemplateResponse, GetPromptTemplateResponse, PromptRunRequest, PromptRunResult } from "../api.gen";
import { recordOf } from "../json";
import { COMMON_PARAMETERS, draftOf, draftVariables, parametersOf, parameterText, responseFormatChoice, ROLES, textOf, versionOf, withParameter, type CommonParameter, type Draft, type JsonProblems, type MessageDraft } from "../draft";
import { go, href } from "../router";
import { ErrorBox, FieldError, fmt, Loading, Section, Status, useAsync, onText, WriteError } from "../ui";

const PT = "prompt_version.prompt_template";

function MessageEditor({ m, i, failure, onChange, onRemove }: { m: MessageDraft; i: number; failure: Error | null; onChange: (m: MessageDraft) => void; onRemove: () => void }) {
  return (
    <div class="editor-message" data-testid="editor-message">
      <label>
        <select aria-label={`Role of message ${i + 1}`} value={m.role} onChange={onText((role) => onChange({ ...m, role }))}>
          {[...new Set([...ROLES, m.role])].map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <div>
        <textarea aria-label={`Text of message ${i + 1}`} rows={Math.min(12, Math.max(2, m.text.split("\n").length + 1))} value={m.text} onInput={onText((text) => onChange({ ...m, text }))} />
        <FieldError failure={failure} at={`${PT}.messages[${i}]`} />
      </div>
      <button type="button" class="icon" aria-label={`Remove message ${i + 1}`} onClick={onRemove}>
        ×
      </button>
    </div>
  );
}

/** The version a draft is based on, with its snippets filled by the API (GET …?version=N), read only. */
function Resolved({ id, version }: { id: number; version: number }) {
  const v = useAsync(() => get("/prompt-templates/{identifier}", { identifier: id }, { version }), [id, version]);
  if (v.error) return <ErrorBox error={v.error} />;
  if (!v.data) return <Loading />;
  const t = v.data.prompt_template;
  const messages = Array.isArray(t.messages) ? t.messages.map(recordOf) : [{ role: "prompt", content: t.content }];
  return (
    <div class="resolved" data-testid="resolved">
      <p class="muted">
        v{version} as it is sent, snippets filled{v.data.snippets.length ? ` (${v.data.snippets.map((s) => String(s.prompt_name)).join(", ")})` : " (it uses none)"}:
      </p>
      {messages.map((m, i) => (
        <div key={i} class="message">
          <div class="role">{String(m.role ?? "")}</div>
          <p class="text">{textOf(m.content)}</p>
        </div>
      ))}
    </div>
  );
}

/**
 * The editor of a draft. `name` is fixed for an existing template (its versions are published under
 * it) and asked for a new one; publishing calls `onPublished` with the new version.
 */
/** How each common parameter's control reads: its label, input type and hint. */
const PARAMETER_CONTROLS: Record<CommonParameter, { label: string; hint: string }> = {
  temperature: { label: "Temperature", hint: "0 to 2: lower is more predictable" },
  max_tokens: { label: "Max tokens", hint: "the longest answer" },
  top_p: { label: "Top p", hint: "0 to 1" },
  stop: { label: "Stop", hint: "texts that end the answer, comma-separated" },
};

/** Model names offered for a provider (the price table's, which free text may go beyond). */
const modelsFor = (provider: string) =>
  PRICED_MODELS.filter((m) => (provider === "anthropic" ? m.startsWith("claude") : provider === "openai" ? /^(gpt|o\d)/.test(m) : true));

export function Editor(props: {
  draft: Draft;
  setDraft: (d: Draft) => void;
  template: { id: number; name: string; version: number } | null;
  labels?: { release_label: string; release_label_id: number }[];
  onPublished: (p: CreatePromptTemplateResponse) => void;
}) {
  const { draft, setDraft, template } = props;
  const [name, setName] = useState("");
  const [commit, setCommit] = useState("");
  const [moveLabel, setMoveLabel] = useState("");
  const [failure, setFailure] = useState<Error | null>(null);
  const [problems, setProblems] = useState<JsonProblems>({});
  const [busy, setBusy] = useState(false);
  const [resolved, setResolved] = useState(false);
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const setMessage = (i: number, m: MessageDraft) => set({ messages: draft.messages.map((x, j) => (j === i ? m : x)) });

  const publish = () => {
    const v = versionOf(draft);
    setProblems(v.ok ? {} : v.problems);
    if (!v.ok) return;
    const body: CreatePromptTemplate = {
      prompt_template: { prompt_name: template ? template.name : name },
      prompt_version: { prompt_template: v.prompt_template as CreatePromptTemplate["prompt_version"]["prompt_template"], metadata: v.metadata, commit_message: commit || null },
    };
    setBusy(true);
    const label = props.labels?.find((l) => String(l.release_label_id) === moveLabel);
    post("/rest/prompt-templates", body)
      .then(async (p) => {
        // The label moves once the version exists; a refusal then says so (the version stays published).
        if (label) await patch("/prompt-labels/{prompt_label_id}", { prompt_label_id: label.release_label_id }, { prompt_version_number: p.version_number });
        return p;
      })
      .then(
      (p) => {
        setBusy(false);
        setFailure(null);
        setCommit("");
        setMoveLabel("");
        props.onPublished(p);
      },
      (e: Error) => {
        setBusy(false);
        setFailure(e);
      },
    );
  };

  return (
    <div class="editor" data-testid="prompt-editor">
      {template ? null : (
        <div class="form-line">
          <label>
            Name
            <input aria-label="Template name" value={name} onInput={onText(setName)} placeholder="support-answer" />
            <FieldError failure={failure} at="prompt_template.prompt_name" />
          </label>
        </div>
      )}
      <div class="form-line">
        <label>
          Kind
          <select aria-label="Kind" value={draft.type} onChange={onText((t) => set({ type: t === "completion" ? "completion" : "chat" }))}>
            <option value="chat">chat</option>
            <option value="completion">completion</option>
          </select>
        </label>
        <label>
          Variables written as
          <select aria-label="Variable syntax" value={draft.templateFormat} onChange={onText((f) => set({ templateFormat: f === "jinja2" ? "jinja2" : "f-string" }))}>
            <option value="f-string">{"{variable} (f-string)"}</option>
            <option value="jinja2">{"{{ variable }} (jinja2)"}</option>
          </select>
        </label>
        <span class="muted">
          Variables: {draftVariables(draft).join(", ") || "none"} · snippets: @@@name@@@
        </span>
      </div>
      {draft.type === "chat" ? (
        <>
          {draft.messages.map((m, i) => (
            <MessageEditor key={i} m={m} i={i} failure={failure} onChange={(n) => setMessage(i, n)} onRemove={() => set({ messages: draft.messages.filter((_, j) => j !== i) })} />
          ))}
          <FieldError failure={failure} at={`${PT}.messages`} />
          <button type="button" onClick={() => set({ messages: [...draft.messages, { role: draft.messages.at(-1)?.role === "user" ? "assistant" : "user", text: "", base: {} }] })}>
            + Add message
          </button>
        </>
      ) : (
        <label>
          <textarea aria-label="Prompt text" rows={6} value={draft.content} onInput={onText((content) => set({ content }))} />
          <FieldError failure={failure} at={`${PT}.content`} />
        </label>
      )}
      <div class="editor-grid">
        <label>
          Provider
          <input aria-label="Provider" value={draft.provider} onInput={onText((provider) => set({ provider }))} list="providers" />
          <datalist id="providers">
            <option value="openai" />
            <option value="anthropic" />
          </datalist>
        </label>
        <label>
          Model
          <input aria-label="Model" value={draft.model} onInput={onText((model) => set({ model }))} list="models" />
          <datalist id="models">
            {modelsFor(draft.provider).map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        </label>
        {COMMON_PARAMETERS.map((p) => (
          <label key={p}>
            {PARAMETER_CONTROLS[p].label}
            <input
              aria-label={PARAMETER_CONTROLS[p].label}
              inputMode={p === "stop" ? "text" : "decimal"}
              disabled={parametersOf(draft) === null}
              value={parameterText(draft, p)}
              placeholder={PARAMETER_CONTROLS[p].hint}
              onInput={onText((text) => {
                const next = withParameter(draft, p, text);
                if (next) setDraft(next);
              })}
            />
            <FieldError failure={failure} at={`prompt_version.metadata.model.parameters.${p}`} />
          </label>
        ))}
        <label>
          Response format
          <select
            aria-label="Response format choice"
            value={responseFormatChoice(draft)}
            onChange={onText((v) => set({ responseFormat: v === "json_object" ? '{"type": "json_object"}' : v === "" ? "" : draft.responseFormat || '{"type": "json_schema", "json_schema": {}}' }))}
          >
            <option value="">text</option>
            <option value="json_object">a JSON object</option>
            <option value="custom">a JSON schema (in the JSON view)</option>
          </select>
        </label>
      </div>
      {parametersOf(draft) === null ? <p class="field-error">The parameters' JSON does not parse: fix it in the JSON view below.</p> : null}
      <details class="advanced" open={Boolean(problems.parameters || problems.tools || problems.responseFormat)}>
        <summary>JSON view: every parameter, tools and the response format</summary>
        <div class="editor-grid">
          <label>
            Parameters (JSON)
            <textarea aria-label="Parameters" rows={4} value={draft.parameters} onInput={onText((parameters) => set({ parameters }))} />
            <FieldError failure={failure} at="prompt_version.metadata" local={problems.parameters ? `parameters ${problems.parameters}` : null} />
          </label>
          {draft.type === "chat" ? (
            <label>
              Tools (JSON list)
              <textarea aria-label="Tools" rows={4} value={draft.tools} placeholder='[{"type": "function", "function": {"name": …}}]' onInput={onText((tools) => set({ tools }))} />
              <FieldError failure={failure} at={`${PT}.tools`} local={problems.tools ? `tools ${problems.tools}` : null} />
            </label>
          ) : null}
          <label>
            Response format (JSON)
            <textarea aria-label="Response format" rows={4} value={draft.responseFormat} placeholder='{"type": "json_object"}' onInput={onText((responseFormat) => set({ responseFormat }))} />
            <FieldError failure={null} at="" local={problems.responseFormat ? `response format ${problems.responseFormat}` : null} />
          </label>
        </div>
      </details>
      <div class="form-line">
        <label>
          Commit message
          <input aria-label="Commit message" size={60} value={commit} onInput={onText(setCommit)} placeholder="what changed" />
          <FieldError failure={failure} at="prompt_version.commit_message" />
        </label>
        {template && props.labels?.length ? (
          <label>
            Then move a label to it
            <select aria-label="Move label on publish" value={moveLabel} onChange={onText(setMoveLabel)}>
              <option value="">no label</option>
              {props.labels.map((l) => (
                <option key={l.release_label_id} value={String(l.release_label_id)}>
                  {l.release_label}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <button type="button" class="primary" disabled={busy} onClick={publish}>
          {busy ? "Publishing…" : template ? "Publish as a new version" : "Create template"}
        </button>
        {template ? (
          <button type="button" onClick={() => setResolved(!resolved)}>
            {resolved ? "Hide" : "Show"} v{template.version} with snippets filled
          </button>
        ) : null}
      </div>
      <WriteError failure={failure} shown={["prompt_template.prompt_name", `${PT}.messages`, `${PT}.content`, `${PT}.tools`, "prompt_version.metadata", "prompt_version.commit_message"]} />
      {resolved && template ? <Resolved id={template.id} version={template.version} /> : null}
    </div>
  );
}

/** A new template: the editor on an empty draft; created, it opens as its own page. */
export function NewPrompt() {
  const [draft, setDraft] = useState(() => draftOf(null, null));
  return (
    <div class="detail">
      <p>
        <a href={href("prompts")}>‹ All templates</a>
      </p>
      <Section title="New prompt template">
        <Editor draft={draft} setDraft={setDraft} template={null} onPublished={(p) => go("prompts", p.id)} />
      </Section>
    </div>
  );
}

// ---- the playground ----------------------------------------------------------------------------

const KEY_VARS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/**
 * Which providers runs can reach (GET /api/public/v2/provider-keys: the workspace's key, or the
 * deployment's), and, when none, a box that sets one (a workspace environment variable).
 */
function KeyNotice({ reloadKey }: { reloadKey: number }) {
  const keys = useAsync(() => get("/api/public/v2/provider-keys"), [reloadKey]);
  const [tick, setTick] = useState(0);
  const [which, setWhich] = useState(KEY_VARS[0]);
  const [value, setValue] = useState("");
  const [failure, setFailure] = useState<Error | null>(null);
  useEffect(() => {
    if (tick) keys.reload();
  }, [tick]);
  // A key without settings:read cannot ask (403): the notice is left out, and a run still says what it lacks.
  if (!keys.data) return null;
  const usable = keys.data.providers.filter((p) => p.source && !p.problem);
  if (usable.length)
    return (
      <p class="muted" data-testid="provider-keys">
        Runs reach {usable.map((p) => `${p.provider} (${p.source === "workspace" ? "this workspace's key" : "the deployment's key"})`).join(" and ")}.{" "}
        <a href={href("settings")}>Provider keys</a>
      </p>
    );
  return (
    <div class="notice" data-testid="no-provider-key">
      No provider key is set, so runs are refused. Set one here or on the <a href={href("settings")}>Settings page</a>:
      <div class="form-line">
        <select aria-label="Key variable" value={which} onChange={onText(setWhich)}>
          {KEY_VARS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
        <input type="password" aria-label="Key value" autocomplete="off" value={value} onInput={onText(setValue)} />
        <button
          type="button"
          onClick={() =>
            post("/api/public/v2/env-vars", { key: which, value }).then(
              () => {
                setValue("");
                setFailure(null);
                setTick((t) => t + 1);
              },
              (e: Error) => setFailure(e),
            )
          }
        >
          Save key
        </button>
      </div>
      <FieldError failure={failure} at="value" />
      <WriteError failure={failure} shown={["value"]} />
    </div>
  );
}

interface PaneState {
  source: string; // "draft" or a version number
  provider: string;
  model: string;
}

interface PaneRun {
  text: string;
  result: PromptRunResult | null;
  failure: Error | null;
  running: boolean;
}

const IDLE: PaneRun = { text: "", result: null, failure: null, running: false };

function RunStats({ r }: { r: PromptRunResult }) {
  return (
    <div class="stats" data-testid="run-stats">
      <Status value={r.status} />
      <span>
        tokens <b>{r.input_tokens}</b> in · <b>{r.output_tokens}</b> out
      </span>
      <span>
        cost <b>{fmt.cost(r.price, r.model)}</b>
      </span>
      <span>
        latency <b>{fmt.ms(r.latency_ms)}</b>
      </span>
      <span>
        {r.provider} · {r.model}
      </span>
      <a href={href("requests", r.request_id)} data-testid="run-request-link">
        request #{r.request_id}
      </a>
    </div>
  );
}

function Pane(props: { i: number; pane: PaneState; setPane: (p: PaneState) => void; run: PaneRun; versions: number[]; hasDraft: boolean }) {
  const { pane, setPane, run, i } = props;
  const label = `pane ${i + 1}`;
  return (
    <div class="pane" data-testid="run-pane">
      <div class="form-line">
        <label>
          Run
          <select aria-label={`Source of ${label}`} value={pane.source} onChange={onText((source) => setPane({ ...pane, source }))}>
            {props.hasDraft ? <option value="draft">the draft</option> : null}
            {props.versions.map((v) => (
              <option key={v} value={String(v)}>
                v{v}
              </option>
            ))}
          </select>
        </label>
        <label>
          Provider
          <input aria-label={`Provider of ${label}`} size={10} placeholder="as saved" value={pane.provider} onInput={onText((provider) => setPane({ ...pane, provider }))} />
        </label>
        <label>
          Model
          <input aria-label={`Model of ${label}`} size={16} placeholder="as saved" value={pane.model} onInput={onText((model) => setPane({ ...pane, model }))} />
        </label>
      </div>
      <FieldError failure={run.failure} at="model" />
      <div class="answer" data-testid="run-answer" aria-live="polite">
        {run.text || (run.running ? "…" : "")}
      </div>
      {run.result ? <RunStats r={run.result} /> : null}
      {run.result?.error_message ? <ErrorBox error={run.result.error_message} /> : null}
      <WriteError failure={run.failure} shown={["input_variables", "model"]} />
    </div>
  );
}

/**
 * The playground: input variables (those the draft or versions use), one pane or two side by side,
 * each running a version or the draft with the saved model or another, all on the same variables.
 */
export function Playground(props: { template: { id: number; name: string } | null; versions: number[]; draft: Draft | null; latest: GetPromptTemplateResponse | null; fromRequest?: string | null }) {
  const { template, versions, draft } = props;
  const [vars, setVars] = useState<Record<string, string>>({});
  // Opened from a logged request ("Open in playground"): its input variables fill the boxes, to replay it.
  const [replaying, setReplaying] = useState<string | null>(null);
  useEffect(() => {
    if (!props.fromRequest) return;
    get("/api/public/v2/requests/{request_id}", { request_id: props.fromRequest }).then(
      (r) => {
        setVars(Object.fromEntries(Object.entries(r.prompt_input_variables ?? {}).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)])));
        setReplaying(String(r.request_id));
      },
      () => setReplaying(null),
    );
  }, [props.fromRequest]);
  const [panes, setPanes] = useState<PaneState[]>([{ source: draft ? "draft" : String(versions[0]), provider: "", model: "" }]);
  const [runs, setRuns] = useState<PaneRun[]>([IDLE]);
  const [keyTick, setKeyTick] = useState(0);
  const names = [...new Set([...(draft ? draftVariables(draft) : []), ...(props.latest ? variablesOfVersion(props.latest) : [])])];
  useEffect(() => {
    setRuns((rs) => panes.map((_, i) => rs[i] ?? IDLE));
  }, [panes.length]);

  const setRun = (i: number, f: (r: PaneRun) => PaneRun) => setRuns((rs) => rs.map((r, j) => (j === i ? f(r) : r)));
  const bodyOf = (p: PaneState): PromptRunRequest | Error => {
    const base: PromptRunRequest = { input_variables: vars, stream: true, tags: ["playground"] };
    if (p.provider.trim() || p.model.trim()) base.model = { provider: p.provider.trim() || null, name: p.model.trim() || null };
    if (p.source === "draft") {
      if (!draft) return new Error("there is no draft");
      const v = versionOf(draft);
      if (!v.ok) return new Error(`the draft's ${Object.entries(v.problems).map(([k, m]) => `${k} ${m}`).join("; ")}`);
      return { ...base, ...(template ? { prompt: { identifier: String(template.id) } } : {}), prompt_version: { prompt_template: v.prompt_template as NonNullable<PromptRunRequest["prompt_version"]>["prompt_template"], metadata: v.metadata } };
    }
    return { ...base, prompt: { identifier: String(template!.id), version: Number(p.source) } };
  };
  const runPane = (i: number) => {
    const body = bodyOf(panes[i]);
    if (body instanceof Error) return setRun(i, () => ({ ...IDLE, failure: body }));
    setRun(i, () => ({ ...IDLE, running: true }));
    postEvents("/api/public/v2/prompt-runs", body, (event, data) => {
      if (event === "delta") setRun(i, (r) => ({ ...r, text: r.text + deltaText(data) }));
      else if (event === "done") setRun(i, (r) => ({ ...r, result: data as PromptRunResult, text: (data as PromptRunResult).output_text || r.text }));
      else if (event === "error") setRun(i, (r) => ({ ...r, failure: new Error((data as { message?: string }).message ?? "the run failed") }));
    }).then(
      () => setRun(i, (r) => ({ ...r, running: false })),
      (e: Error) => {
        setRun(i, (r) => ({ ...r, running: false, failure: e }));
        if (e instanceof ApiFailure && e.code === "provider_not_configured") setKeyTick((t) => t + 1);
      },
    );
  };
  const variableFailure = runs.map((r) => r.failure).find((f): f is ApiFailure => f instanceof ApiFailure && f.at("input_variables").length > 0) ?? null;
  return (
    <div data-testid="playground">
      <KeyNotice reloadKey={keyTick} />
      {replaying ? (
        <p class="notice info" data-testid="replaying">
          The variables of <a href={href("requests", replaying)}>request #{replaying}</a>: run it again, edit the draft in the Editor tab, and publish.
        </p>
      ) : null}
      <div class="form-line">
        {names.length ? (
          names.map((n) => (
            <label key={n}>
              {n}
              <input aria-label={`Variable ${n}`} value={vars[n] ?? ""} onInput={onText((v) => setVars({ ...vars, [n]: v }))} />
            </label>
          ))
        ) : (
          <span class="muted">The prompt uses no input variable.</span>
        )}
      </div>
      <FieldError failure={variableFailure} at="input_variables" />
      <div class="panes">
        {panes.map((p, i) => (
          <Pane key={i} i={i} pane={p} setPane={(n) => setPanes(panes.map((x, j) => (j === i ? n : x)))} run={runs[i] ?? IDLE} versions={versions} hasDraft={Boolean(draft)} />
        ))}
      </div>
      <div class="form-line">
        <button type="button" class="primary" disabled={runs.some((r) => r.running)} onClick={() => panes.forEach((_, i) => runPane(i))}>
          {panes.length > 1 ? "Run both" : "Run"}
        </button>
        {panes.length === 1 ? (
          <button type="button" onClick={() => setPanes([...panes, { ...panes[0], source: versions.length ? String(versions[0]) : "draft" }])}>
            Compare side by side
          </button>
        ) : (
          <button type="button" onClick={() => setPanes(panes.slice(0, 1))}>
            One pane
          </button>
        )}
      </div>
    </div>
  );
}

/** A delta event's text (its data is {"text": …}). */
function deltaText(data: unknown): string {
  const text = recordOf(data).text;
  return typeof text === "string" ? text : "";
}

function variablesOfVersion(v: GetPromptTemplateResponse): string[] {
  return draftVariables(draftOf(v.prompt_template, v.metadata));
}
