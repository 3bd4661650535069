// Privacy: the workspace's redaction policy (which detectors run, with which action, custom patterns,
// the fields it covers), saved with an admin key, and its try-out: a text run through the policy as
// edited, without saving or storing anything (POST /api/public/v2/redaction-policy/test).
import { useEffect, useState } from "preact/hooks";
import { del, get, post, put } from "../api";
import type { Bodies } from "../api.gen";
import { ErrorBox, Loading, Section, useAsync, WriteError, onText } from "../ui";

type PolicyBody = Bodies["PUT /api/public/v2/redaction-policy"];
type Detector = NonNullable<PolicyBody["detectors"]>[number];
type Custom = NonNullable<PolicyBody["custom"]>[number];
type Action = Detector["action"];

const DETECTORS: [Detector["type"], string][] = [
  ["email", "E-mail addresses"],
  ["phone", "Phone numbers"],
  ["payment_card", "Payment card numbers (Luhn-checked)"],
  ["iban", "IBANs (mod-97-checked)"],
  ["ip_address", "IP addresses"],
  ["national_id", "National ids that can be checked"],
  ["credential", "Credentials: API keys, tokens, private keys, JWTs"],
];
const FIELDS = ["messages", "outputs", "tool_calls", "parameters", "metadata", "input_variables", "error_messages", "span_attributes", "span_events", "log_bodies"] as const;
const ACTIONS: (Action | "off")[] = ["off", "mask", "hash", "drop"];

export function PrivacyView() {
  const saved = useAsync(() => get("/api/public/v2/redaction-policy"), []);
  const [actions, setActions] = useState<Record<string, Action | "off">>({});
  const [region, setRegion] = useState("");
  const [custom, setCustom] = useState<Custom[]>([]);
  const [fields, setFields] = useState<Set<string>>(new Set(FIELDS));
  const [failure, setFailure] = useState<Error | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [text, setText] = useState("");
  const [tried, setTried] = useState<{ text?: string; redactions: Record<string, number>; source: string } | null>(null);
  const [tryFailure, setTryFailure] = useState<Error | null>(null);

  useEffect(() => {
    const p = saved.data;
    if (!p) return;
    setActions(Object.fromEntries(p.detectors.map((d) => [d.type, d.action])));
    setRegion(p.detectors.find((d) => d.type === "phone")?.region ?? "");
    setCustom(p.custom);
    setFields(new Set(p.fields.length ? p.fields : FIELDS));
  }, [saved.data]);

  const body = (): PolicyBody => ({
    detectors: DETECTORS.filter(([t]) => (actions[t] ?? "off") !== "off").map(([type]) => ({ type, action: actions[type] as Action, ...(type === "phone" && region ? { region } : {}) })),
    custom,
    fields: FIELDS.filter((f) => fields.has(f)),
  });

  const save = async () => {
    setFailure(null);
    setNotice(null);
    try {
      await put("/api/public/v2/redaction-policy", body());
      setNotice("Saved: logs written from now on are redacted by this policy.");
      saved.reload();
    } catch (err) {
      setFailure(err as Error);
    }
  };
  const turnOff = async () => {
    setFailure(null);
    try {
      await del("/api/public/v2/redaction-policy");
      setNotice("Redaction is off: logs are stored as sent.");
      saved.reload();
    } catch (err) {
      setFailure(err as Error);
    }
  };
  const tryIt = async () => {
    setTryFailure(null);
    try {
      const out = await post("/api/public/v2/redaction-policy/test", { text, policy: body() });
      setTried({ text: out.text, redactions: Object.fromEntries(Object.entries(out.redactions).map(([k, n]) => [k, n ?? 0])), source: out.source });
    } catch (err) {
      setTryFailure(err as Error);
    }
  };

  if (saved.error) return <ErrorBox error={saved.error} />;
  if (!saved.data) return <Loading />;
  return (
    <div class="privacy">
      <Section title="Redaction policy" actions={<span class={`status ${saved.data.enabled ? "status-ok" : ""}`} data-testid="policy-state">{saved.data.enabled ? "on" : "off"}</span>}>
        <p class="muted">
          Found values are replaced before a log, span or OTLP record is stored: <b>mask</b> leaves a typed placeholder ([EMAIL]), <b>hash</b> a keyed hash that is the same for the same
          value in this workspace, <b>drop</b> removes the value. Saving takes an admin key.
        </p>
        <table class="grid policy-detectors">
          <tbody>
            {DETECTORS.map(([type, label]) => (
              <tr key={type}>
                <td>{label}</td>
                <td>
                  <select aria-label={`${type} action`} data-detector={type} value={actions[type] ?? "off"} onChange={(e) => setActions({ ...actions, [type]: (e.target as HTMLSelectElement).value as Action | "off" })}>
                    {ACTIONS.map((a) => (
                      <option key={a} value={a}>
                        {a}
                      </option>
                    ))}
                  </select>
                  {type === "phone" ? <input aria-label="phone region" placeholder="region (e.g. US)" size={10} value={region} onInput={onText((v) => setRegion(v.toUpperCase()))} /> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <h3>Custom patterns</h3>
        <p class="muted">RE2 syntax (no backreferences or lookarounds): each runs in time proportional to the text.</p>
        {custom.map((c, i) => (
          <div class="row" key={i}>
            <input aria-label={`pattern ${i} name`} placeholder="name" value={c.name} onInput={onText((v) => setCustom(custom.map((x, j) => (j === i ? { ...x, name: v } : x))))} />
            <input aria-label={`pattern ${i}`} placeholder="pattern" size={40} value={c.pattern} onInput={onText((v) => setCustom(custom.map((x, j) => (j === i ? { ...x, pattern: v } : x))))} />
            <select aria-label={`pattern ${i} action`} value={c.action} onChange={(e) => setCustom(custom.map((x, j) => (j === i ? { ...x, action: (e.target as HTMLSelectElement).value as Action } : x)))}>
              {ACTIONS.slice(1).map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
            <button type="button" onClick={() => setCustom(custom.filter((_, j) => j !== i))}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" onClick={() => setCustom([...custom, { name: "", pattern: "", action: "mask" }])}>
          Add a pattern
        </button>
        <h3>Where it applies</h3>
        <div class="row fields">
          {FIELDS.map((f) => (
            <label key={f}>
              <input
                type="checkbox"
                checked={fields.has(f)}
                onChange={(e) => {
                  const next = new Set(fields);
                  if ((e.target as HTMLInputElement).checked) next.add(f);
                  else next.delete(f);
                  setFields(next);
                }}
              />{" "}
              {f.replace(/_/g, " ")}
            </label>
          ))}
        </div>
        <WriteError failure={failure} />
        {notice ? <p class="notice">{notice}</p> : null}
        <div class="row">
          <button type="button" class="primary" onClick={save}>
            Save policy
          </button>
          <button type="button" onClick={turnOff} disabled={!saved.data.enabled}>
            Turn redaction off
          </button>
        </div>
      </Section>
      <Section title="Try it">
        <p class="muted">Runs the policy above, as edited, on a text. Nothing is saved or stored.</p>
        <textarea aria-label="text to try" rows={4} value={text} onInput={onText(setText)} placeholder="Paste a message, a log line…" />
        <div class="row">
          <button type="button" onClick={tryIt} disabled={!text}>
            Try
          </button>
        </div>
        <WriteError failure={tryFailure} />
        {tried ? (
          <div data-testid="tryout">
            <pre class="tryout-result">{tried.text}</pre>
            <p class="muted">
              {Object.keys(tried.redactions).length === 0
                ? "Nothing found."
                : Object.entries(tried.redactions)
                    .map(([k, n]) => `${k}: ${n}`)
                    .join(", ")}
            </p>
          </div>
        ) : null}
      </Section>
    </div>
  );
}
