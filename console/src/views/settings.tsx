// Settings: the workspace's provider keys and other environment variables. Every LLM call (table
// columns, evaluations, workflows, the playground) takes a provider's key from here first, then from
// the deployment's secret (GET /api/public/v2/provider-keys says which); every "no provider" message
// of the API points at this page.
import { useState } from "preact/hooks";
import { del, get, patch, post } from "../api";
import { EmptyState, ErrorBox, FieldError, fmt, Loading, Section, useAsync, onText, WriteError } from "../ui";

const SOURCE: Record<string, string> = {
  workspace: "this workspace's key",
  worker: "the deployment's key (a Worker secret)",
};

/** Which providers LLM calls can reach, and whose key they use. */
export function ProviderKeyStatus({ reloadKey = 0 }: { reloadKey?: number }) {
  const keys = useAsync(() => get("/api/public/v2/provider-keys"), [reloadKey]);
  if (!keys.data) return keys.error ? <ErrorBox error={keys.error} /> : <Loading />;
  return (
    <ul class="provider-status" data-testid="provider-status">
      {keys.data.providers.map((p) => (
        <li key={p.provider} data-provider={p.provider} data-source={p.source ?? "none"}>
          <b>{p.provider}</b>{" "}
          {p.problem ? <span class="bad">cannot be used: {p.problem}</span> : p.source ? <span>uses {SOURCE[p.source]}</span> : <span class="muted">no key: its calls are refused until {p.key_variable} is set below</span>}
        </li>
      ))}
    </ul>
  );
}

const SUGGESTED = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"];

export function SettingsView() {
  const vars = useAsync(() => get("/api/public/v2/env-vars"), []);
  const [tick, setTick] = useState(0);
  const [key, setKey] = useState("OPENAI_API_KEY");
  const [value, setValue] = useState("");
  const [failure, setFailure] = useState<Error | null>(null);
  const [replacing, setReplacing] = useState<{ id: number; key: string } | null>(null);
  const changed = () => {
    setFailure(null);
    setValue("");
    setReplacing(null);
    vars.reload();
    setTick((t) => t + 1);
  };
  const list = vars.data?.workspace_env_vars ?? [];
  const save = () => {
    const existing = list.find((v) => v.key === key.trim());
    const write = existing ? patch("/api/public/v2/env-vars/{var_id}", { var_id: existing.id }, { value }) : post("/api/public/v2/env-vars", { key: key.trim(), value });
    write.then(changed, (e: Error) => setFailure(e));
  };
  return (
    <div class="detail">
      <Section title="Provider keys">
        <p>
          Table columns, evaluations, workflows and the playground call LLM providers with this workspace's key when it has one, and with
          the deployment's otherwise.
        </p>
        <ProviderKeyStatus reloadKey={tick} />
      </Section>
      <Section title="Environment variables">
        <ErrorBox error={vars.error} />
        {!vars.data ? (
          vars.error ? null : <Loading />
        ) : list.length === 0 ? (
          <EmptyState text="This workspace has no environment variable yet: add a provider key below." />
        ) : (
          <div class="scroll-x">
            <table class="grid" data-testid="env-vars">
              <thead>
                <tr>
                  <th>name</th>
                  <th>value</th>
                  <th>updated</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {list.map((v) => (
                  <tr key={v.id} data-key={v.key}>
                    <td>
                      <code>{v.key}</code>
                    </td>
                    <td class="muted">{v.is_empty ? "empty" : v.value_suffix ? `…${v.value_suffix}` : "set"}</td>
                    <td>{fmt.time(v.updated_at)}</td>
                    <td class="actions">
                      <button
                        type="button"
                        onClick={() => {
                          setKey(v.key);
                          setReplacing({ id: v.id, key: v.key });
                        }}
                      >
                        Replace
                      </button>
                      <button type="button" onClick={() => del("/api/public/v2/env-vars/{var_id}", { var_id: v.id }).then(changed, (e: Error) => setFailure(e))}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <form
          class="form-line"
          data-testid="env-var-form"
          onSubmit={(e) => {
            e.preventDefault();
            save();
          }}
        >
          <label>
            Name
            <input aria-label="Variable name" list="suggested-vars" value={key} onInput={onText(setKey)} />
            <datalist id="suggested-vars">
              {SUGGESTED.map((k) => (
                <option key={k} value={k} />
              ))}
            </datalist>
            <FieldError failure={failure} at="key" />
          </label>
          <label>
            Value {replacing ? `(replaces ${replacing.key})` : ""}
            <input type="password" aria-label="Variable value" autocomplete="off" size={40} value={value} onInput={onText(setValue)} />
            <FieldError failure={failure} at="value" />
          </label>
          <button type="submit" class="primary" disabled={!key.trim() || !value}>
            Save
          </button>
          <span class="muted">Values are encrypted and never shown again: only their last four characters.</span>
        </form>
        <WriteError failure={failure} shown={["key", "value"]} />
      </Section>
    </div>
  );
}
