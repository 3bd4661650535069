// A column's form: a title, a type picked from a list (with a line saying what it does), and the
// type's own fields with their help (column-forms.ts), never raw JSON. A sheet adds columns with it,
// and an evaluation pipeline is built from it. The API judges what is sent: its rules show next to
// the fields they name.
import { useState } from "preact/hooks";
import { ApiFailure, get } from "../api";
import { COLUMN_TYPES, configOf, fieldOfRule, initialValues, TYPE_FORMS, type ColumnType, type FieldValue, type FormField } from "../column-forms";
import { useAsync, onText } from "../ui";

export interface ColumnDraft {
  title: string;
  type: ColumnType;
  config: Record<string, unknown>;
}

/** The API's rules at one form field (a rule of `config.source` or `columns[0].configuration.source` belongs to "source"). */
function rulesAt(failure: Error | null, type: ColumnType, path: string): string[] {
  if (!(failure instanceof ApiFailure)) return [];
  return failure.rules.filter((r) => fieldOfRule(type, r.field.replace(/^.*?(config|configuration)\./, "config.")) === path && /(config|configuration)\./.test(r.field)).map((r) => r.rule);
}

/** The rules a failure names that no field of the form shows (the title, the type, or the whole config). */
export function otherRules(failure: Error | null, type: ColumnType): string[] {
  if (!(failure instanceof ApiFailure)) return failure ? [failure.message] : [];
  const rules = failure.rules.length ? failure.rules : [{ field: "", rule: failure.message }];
  return rules.filter((r) => !(/(config|configuration)\./.test(r.field) && fieldOfRule(type, r.field.replace(/^.*?(config|configuration)\./, "config.")))).map((r) => (r.field ? `${r.field}: ${r.rule}` : r.rule));
}

let promptNames: Promise<string[]> | null = null;
const templates = () =>
  (promptNames ??= get("/prompt-templates", { per_page: 100, sort_by: "updated_at" }).then(
    (r) => r.items.map((t) => t.prompt_name),
    () => {
      promptNames = null;
      return [];
    },
  ));

function Field({ f, value, set, columns, rules }: { f: FormField; value: FieldValue; set: (v: FieldValue) => void; columns: string[]; rules: string[] }) {
  const names = useAsync(() => (f.kind === "prompt" ? templates() : Promise.resolve([] as string[])), [f.kind]);
  const id = `cf-${f.path.replace(/\W/g, "-")}`;
  let control;
  switch (f.kind) {
    case "column":
      control = (
        <select aria-label={f.label} value={String(value)} onChange={onText(set)}>
          <option value="">{f.optional ? "none" : "choose…"}</option>
          {columns.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      );
      break;
    case "columns": {
      const picked = Array.isArray(value) ? (value as string[]) : [];
      control = (
        <span class="checks" role="group" aria-label={f.label}>
          {columns.map((c) => (
            <label key={c} class="check">
              <input type="checkbox" checked={picked.includes(c)} onChange={(e) => set((e.target as HTMLInputElement).checked ? [...picked, c] : picked.filter((x) => x !== c))} />
              {c}
            </label>
          ))}
        </span>
      );
      break;
    }
    case "select":
      control = (
        <select aria-label={f.label} value={String(value)} onChange={onText(set)}>
          {(f.options ?? []).map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
      break;
    case "checkbox":
      control = <input type="checkbox" aria-label={f.label} checked={value === true} onChange={(e) => set((e.target as HTMLInputElement).checked)} />;
      break;
    case "textarea":
    case "headers":
      control = <textarea aria-label={f.label} rows={3} value={String(value)} onInput={onText(set)} />;
      break;
    case "prompt":
      control = (
        <>
          <input aria-label={f.label} list={id} value={String(value)} onInput={onText(set)} placeholder="template name" />
          <datalist id={id}>
            {(names.data ?? []).map((n) => (
              <option key={n} value={n} />
            ))}
          </datalist>
        </>
      );
      break;
    case "mapping": {
      const pairs = (Array.isArray(value) ? value : []) as [string, string][];
      control = (
        <span class="mapping">
          {pairs.map(([k, c], i) => (
            <span key={i} class="mapping-row">
              <input aria-label={`Variable ${i + 1}`} value={k} placeholder="variable" onInput={onText((nk) => set(pairs.map((p, j): [string, string] => (j === i ? [nk, p[1]] : p))))} />
              <span class="muted">from</span>
              <select aria-label={`Column of variable ${i + 1}`} value={c} onChange={onText((nc) => set(pairs.map((p, j): [string, string] => (j === i ? [p[0], nc] : p))))}>
                <option value="">choose…</option>
                {columns.map((col) => (
                  <option key={col} value={col}>
                    {col}
                  </option>
                ))}
              </select>
            </span>
          ))}
          <button type="button" onClick={() => set([...pairs, ["", ""]])}>
            + Map a variable
          </button>
        </span>
      );
      break;
    }
    default:
      control = <input aria-label={f.label} inputMode={f.kind === "number" ? "decimal" : undefined} value={String(value)} onInput={onText(set)} />;
  }
  return (
    <div class={`cf-field cf-${f.kind}`}>
      <span class="cf-label">
        {f.label}
        {f.optional ? <span class="muted"> (optional)</span> : null}
      </span>
      {control}
      {f.help ? <span class="help">{f.help}</span> : null}
      {rules.length ? (
        <span class="field-error" role="alert" data-field={`config.${f.path}`}>
          {rules.join("; ")}
        </span>
      ) : null}
    </div>
  );
}

/**
 * The form: `columns` are the names a field may read (the sheet's columns, or the dataset's and the
 * earlier evaluation columns); `submit` sends the column and answers the API's refusal, if any.
 */
export function ColumnForm(props: { columns: string[]; submitLabel: string; submit: (c: ColumnDraft) => Promise<Error | null>; testId?: string }) {
  const [title, setTitle] = useState("");
  const [type, setType] = useState<ColumnType>("COUNT");
  const [values, setValues] = useState<Record<string, FieldValue>>(() => initialValues("COUNT"));
  const [failure, setFailure] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const form = TYPE_FORMS[type];
  const config = configOf(type, values);
  return (
    <form
      class="column-form"
      data-testid={props.testId ?? "column-form"}
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        props.submit({ title, type, config }).then((err) => {
          setBusy(false);
          setFailure(err);
          if (!err) setTitle("");
        });
      }}
    >
      <div class="cf-head">
        <label>
          Column title
          <input aria-label="Column title" value={title} onInput={onText(setTitle)} placeholder="e.g. Words in the answer" />
        </label>
        <label>
          Type
          <select
            aria-label="Column type"
            value={type}
            onChange={onText((t) => {
              const next = t as ColumnType;
              setType(next);
              setValues(initialValues(next));
              setFailure(null);
            })}
          >
            {COLUMN_TYPES.map((t) => (
              <option key={t} value={t}>
                {TYPE_FORMS[t].label}
              </option>
            ))}
          </select>
        </label>
        <p class="help type-help">{form.help}</p>
      </div>
      <div class="cf-fields">
        {(form.fields as FormField[]).map((f) => (
          <Field key={`${type}-${f.path}`} f={f} value={values[f.path] ?? ""} set={(v) => setValues({ ...values, [f.path]: v })} columns={props.columns} rules={rulesAt(failure, type, f.path)} />
        ))}
      </div>
      <details class="advanced">
        <summary>The configuration this sends</summary>
        <pre class="json">{JSON.stringify({ type, config }, null, 2)}</pre>
      </details>
      {otherRules(failure, type).length ? (
        <p class="error" role="alert" data-testid="column-form-error">
          {otherRules(failure, type).join("; ")}
        </p>
      ) : null}
      <button type="submit" class="primary" disabled={busy}>
        {busy ? "Adding…" : props.submitLabel}
      </button>
    </form>
  );
}
