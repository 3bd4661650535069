// A/B releases: the list with the label approvals waiting, a form making a release from a template's
// versions, and a release's page: its split with a ramp, pause and resume, promote and rollback, its
// scorecard with 95 % intervals, and its events. A promote on a protected label waits for the
// approve or deny shown here.
import { useState } from "preact/hooks";
import { del, get, patch, post } from "../api";
import type { AbTestScorecard } from "../api.gen";
import { go, href } from "../router";
import { ErrorBox, fmt, ListTable, Loading, Pager, Section, Status, useAsync, onText, WriteError } from "../ui";

const pct = (n: number | null | undefined) => (n === null || n === undefined ? "–" : `${(n * 100).toFixed(2)} %`);
const interval = (ci: [number, number] | null | undefined, f: (x: number) => string) => (ci ? `[${f(ci[0])}, ${f(ci[1])}]` : "");
const num = (n: number | null | undefined, digits = 2) => (n === null || n === undefined ? "–" : n.toFixed(digits));

/** The split as text: `base 90 % · challenger 10 %`. */
const splitText = (variants: { key: string; percentage: number }[]) => variants.map((v) => `${v.key} ${v.percentage} %`).join(" · ");

function Approvals({ onDecided }: { onDecided: () => void }) {
  const pending = useAsync(() => get("/api/public/v2/label-change-requests", { status: "pending", per_page: 50 }), []);
  const [failure, setFailure] = useState<Error | null>(null);
  const decide = (id: number, verb: "approve" | "deny") =>
    (verb === "approve" ? post("/api/public/v2/label-change-requests/{change_request_id}/approve", { change_request_id: id }) : post("/api/public/v2/label-change-requests/{change_request_id}/deny", { change_request_id: id })).then(
      () => {
        setFailure(null);
        pending.reload();
        onDecided();
      },
      setFailure,
    );
  if (!pending.data?.change_requests.length) return null;
  return (
    <Section title="Label moves waiting for approval">
      <WriteError failure={failure} />
      <table class="grid approvals">
        <thead>
          <tr>
            <th>template</th>
            <th>label</th>
            <th>move</th>
            <th>asked by</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {pending.data.change_requests.map((c) => (
            <tr key={c.id} data-change-request={c.id}>
              <td>
                <a href={href("prompts", c.prompt_template_id)}>#{c.prompt_template_id}</a>
              </td>
              <td>{c.prompt_template_label}</td>
              <td>
                v{c.old_prompt_version_number} → v{c.prompt_version_number}
                {c.ab_test_id ? (
                  <>
                    {" "}
                    (<a href={href("releases", c.ab_test_id)}>release #{c.ab_test_id}</a>)
                  </>
                ) : null}
              </td>
              <td>{fmt.time(c.created_at)}</td>
              <td>
                <button type="button" class="primary" onClick={() => decide(c.id, "approve")}>
                  Approve
                </button>{" "}
                <button type="button" onClick={() => decide(c.id, "deny")}>
                  Deny
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

function NewRelease({ onMade }: { onMade: (id: number) => void }) {
  const templates = useAsync(() => get("/prompt-templates", { per_page: 100, sort_by: "updated_at" }), []);
  const [template, setTemplate] = useState("");
  const labels = useAsync(() => (template ? get("/prompt-templates/{identifier}/labels", { identifier: template }) : Promise.resolve(null)), [template]);
  const [label, setLabel] = useState("");
  const [challenger, setChallenger] = useState("");
  const [share, setShare] = useState("10");
  const [key, setKey] = useState("user_id");
  const [name, setName] = useState("");
  const [failure, setFailure] = useState<Error | null>(null);
  const chosen = templates.data?.items.find((t) => String(t.id) === template);
  const base = labels.data?.release_labels.find((l) => l.release_label === label);
  const submit = () => {
    if (!chosen || !base) return;
    const p = Number(share);
    post("/api/public/v2/ab-tests", {
      name: name.trim() || `${chosen.prompt_name} ${label} test`,
      prompt_template_id: chosen.id,
      release_label: label,
      assignment_key: key.trim() || null,
      variants: [
        { key: "base", prompt_version_number: base.prompt_version_number, percentage: 100 - p },
        { key: "challenger", prompt_version_number: Number(challenger), percentage: p },
      ],
    }).then((r) => onMade(r.ab_test.id), setFailure);
  };
  return (
    <Section title="New release">
      <div class="form-line new-release">
        <label>
          Template
          <select name="template" value={template} onChange={onText(setTemplate)}>
            <option value="">choose…</option>
            {templates.data?.items.map((t) => (
              <option key={t.id} value={t.id}>
                {t.prompt_name} (latest v{t.version})
              </option>
            ))}
          </select>
        </label>
        <label>
          Label
          <select name="label" value={label} onChange={onText(setLabel)}>
            <option value="">choose…</option>
            {labels.data?.release_labels.map((l) => (
              <option key={l.release_label_id} value={l.release_label}>
                {l.release_label} (v{l.prompt_version_number})
              </option>
            ))}
          </select>
        </label>
        <label>
          Challenger version
          <select name="challenger" value={challenger} onChange={onText(setChallenger)}>
            <option value="">choose…</option>
            {chosen
              ? Array.from({ length: chosen.version }, (_, i) => i + 1)
                  .filter((v) => v !== base?.prompt_version_number)
                  .map((v) => (
                    <option key={v} value={v}>
                      v{v}
                    </option>
                  ))
              : null}
          </select>
        </label>
        <label>
          Challenger %
          <input name="share" type="number" min="0" max="100" step="0.01" value={share} onInput={onText(setShare)} />
        </label>
        <label>
          Sticky by
          <input name="assignment_key" value={key} onInput={onText(setKey)} placeholder="metadata key (empty: random)" />
        </label>
        <label>
          Name
          <input name="name" value={name} onInput={onText(setName)} placeholder="optional" />
        </label>
        <button type="button" class="primary" disabled={!chosen || !base || !challenger} onClick={submit}>
          Start release
        </button>
      </div>
      {base ? <p class="muted">The base is v{base.prompt_version_number}, the version the label names now.</p> : null}
      <WriteError failure={failure} />
    </Section>
  );
}

export function ReleasesView() {
  const [page, setPage] = useState(1);
  const list = useAsync(() => get("/api/public/v2/ab-tests", { page, per_page: 25 }), [page]);
  return (
    <>
      <Approvals onDecided={list.reload} />
      <NewRelease onMade={(id) => go("releases", id)} />
      <Section title="A/B releases">
        <ListTable
          list={list}
          items={(d) => d.ab_tests}
          columns={[{ title: "release" }, { title: "template" }, { title: "label" }, { title: "split" }, { title: "status" }, { title: "updated" }]}
          empty="No release."
          row={(r) => (
            <tr key={r.id}>
              <td>
                <a href={href("releases", r.id)}>{r.name}</a>
              </td>
              <td>{r.prompt_name}</td>
              <td>{r.release_label}</td>
              <td>{splitText(r.variants)}</td>
              <td>
                <Status value={r.status} />
              </td>
              <td>{fmt.time(r.updated_at)}</td>
            </tr>
          )}
          footer={(d) => <Pager page={d.page} pages={d.pages} total={d.total} onPage={setPage} />}
        />
      </Section>
    </>
  );
}

function Scorecard({ card }: { card: AbTestScorecard }) {
  const scores = [...new Set(card.variants.flatMap((v) => Object.keys(v.scores)))];
  const signals = [...new Set(card.variants.flatMap((v) => Object.keys(v.signals)))];
  return (
    <div class="scroll">
      <table class="grid scorecard">
        <thead>
          <tr>
            <th>variant</th>
            <th class="num">requests</th>
            <th class="num">units</th>
            <th>error rate [95 %]</th>
            <th class="num">cost / request</th>
            <th class="num">latency p50 / p95</th>
            {scores.map((s) => (
              <th key={s}>score {s} [95 %] · Δ · p</th>
            ))}
            {signals.map((s) => (
              <th key={s}>signal {s} [95 %] · Δ · p</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {card.variants.map((v) => (
            <tr key={v.key} data-variant={v.key}>
              <td>
                {v.key} (v{v.prompt_version_number}, {v.percentage} %){v.is_base ? " · base" : ""}
              </td>
              <td class="num">{v.requests}</td>
              <td class="num">{v.units}</td>
              <td>
                {pct(v.error_rate)} {interval(v.error_rate_ci95, (x) => pct(x))}
                {v.error_rate_p_value !== null ? ` · p ${num(v.error_rate_p_value, 3)}` : ""}
              </td>
              <td class="num">{v.cost_per_request === null ? "–" : `$${v.cost_per_request.toFixed(5)}`}</td>
              <td class="num">
                {num(v.latency_ms.p50, 0)} / {num(v.latency_ms.p95, 0)} ms
              </td>
              {scores.map((s) => {
                const m = v.scores[s];
                return (
                  <td key={s} class="score-cell">
                    {m ? `${num(m.mean)} ${interval(m.ci95, (x) => num(x))}${m.delta_vs_base !== null ? ` · Δ ${num(m.delta_vs_base)}` : ""}${m.p_value !== null ? ` · p ${num(m.p_value, 3)}` : ""} (n ${m.n})` : "–"}
                  </td>
                );
              })}
              {signals.map((s) => {
                const m = v.signals[s];
                return <td key={s}>{m ? `${pct(m.true_rate)} ${interval(m.ci95, (x) => pct(x))}${m.p_value !== null ? ` · p ${num(m.p_value, 3)}` : ""}` : "–"}</td>;
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ReleaseDetail({ id }: { id: string }) {
  const release = useAsync(() => get("/api/public/v2/ab-tests/{ab_test_id}", { ab_test_id: id }), [id]);
  const card = useAsync(() => get("/api/public/v2/ab-tests/{ab_test_id}/scorecard", { ab_test_id: id }), [id]);
  const events = useAsync(() => get("/api/public/v2/ab-tests/{ab_test_id}/events", { ab_test_id: id }), [id]);
  const [ramp, setRamp] = useState("");
  const [failure, setFailure] = useState<Error | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const r = release.data?.ab_test;
  const refresh = () => {
    release.reload();
    card.reload();
    events.reload();
  };
  const act = (p: Promise<unknown>, done?: string) =>
    p.then(() => {
      setFailure(null);
      setNote(done ?? null);
      refresh();
    }, setFailure);
  const challenger = r?.variants.find((v) => !v.is_base);
  return (
    <div class="detail">
      <p>
        <a href={href("releases")}>‹ All releases</a>
      </p>
      <ErrorBox error={release.error} />
      {r ? (
        <>
          <Section
            title={`${r.name} · ${r.prompt_name} "${r.release_label}"`}
            actions={
              <>
                <Status value={r.status} /> <span class="muted">revision {r.revision}</span>
              </>
            }
          >
            <p class="release-split">
              {r.variants.map((v) => (
                <span key={v.key} class="tag">
                  {v.key}: v{v.prompt_version_number} · {v.percentage} %{v.is_base ? " (base)" : ""}
                </span>
              ))}
            </p>
            <p class="muted">
              {r.assignment_key ? `Sticky by metadata "${r.assignment_key}".` : "Random per request."}
              {r.outcome ? ` Ended: ${r.outcome}${r.promoted_variant ? ` (${r.promoted_variant})` : ""}.` : ""}
            </p>
            {r.pending_change_request_id ? (
              <p class="notice">
                Promote waits for the protected label's approval (change request #{r.pending_change_request_id}):{" "}
                <button type="button" class="primary" onClick={() => act(post("/api/public/v2/label-change-requests/{change_request_id}/approve", { change_request_id: r.pending_change_request_id! }), "Approved: the label moved.")}>
                  Approve
                </button>{" "}
                <button type="button" onClick={() => act(post("/api/public/v2/label-change-requests/{change_request_id}/deny", { change_request_id: r.pending_change_request_id! }), "Denied: the release runs on.")}>
                  Deny
                </button>
              </p>
            ) : null}
            {r.status !== "completed" ? (
              <div class="form-line release-actions">
                {challenger && r.variants.length === 2 ? (
                  <>
                    <label>
                      {challenger.key} %
                      <input name="ramp" type="number" min="0" max="100" step="0.01" value={ramp} placeholder={String(challenger.percentage)} onInput={onText(setRamp)} />
                    </label>
                    <button
                      type="button"
                      disabled={ramp === ""}
                      onClick={() =>
                        act(
                          patch("/api/public/v2/ab-tests/{ab_test_id}", { ab_test_id: r.id }, { variants: [{ key: challenger.key, percentage: Number(ramp) }, { key: r.base, percentage: 100 - Number(ramp) }] }),
                          `Ramped to ${ramp} %.`,
                        ).then(() => setRamp(""))
                      }
                    >
                      Ramp
                    </button>
                  </>
                ) : null}
                <button type="button" onClick={() => act(patch("/api/public/v2/ab-tests/{ab_test_id}", { ab_test_id: r.id }, { status: r.status === "paused" ? "running" : "paused" }))}>
                  {r.status === "paused" ? "Resume" : "Pause"}
                </button>
                {r.variants
                  .filter((v) => !v.is_base)
                  .map((v) => (
                    <button
                      key={v.key}
                      type="button"
                      class="primary"
                      disabled={r.pending_change_request_id !== null}
                      onClick={() => act(post("/api/public/v2/ab-tests/{ab_test_id}/promote", { ab_test_id: r.id }, { variant: v.key }), `Promote of ${v.key} sent.`)}
                    >
                      Promote {v.key}
                    </button>
                  ))}
                <button type="button" onClick={() => act(post("/api/public/v2/ab-tests/{ab_test_id}/rollback", { ab_test_id: r.id }), "Rolled back: the label is unchanged.")}>
                  Roll back
                </button>
                <button type="button" onClick={() => del("/api/public/v2/ab-tests/{ab_test_id}", { ab_test_id: r.id }).then(() => go("releases"), setFailure)}>
                  Delete
                </button>
              </div>
            ) : null}
            {note ? (
              <p class="muted" role="status">
                {note}
              </p>
            ) : null}
            <WriteError failure={failure} />
          </Section>
          <Section title="Scorecard" actions={<button type="button" onClick={card.reload}>Refresh</button>}>
            <ErrorBox error={card.error} />
            {card.data ? <Scorecard card={card.data} /> : <Loading />}
          </Section>
          <Section title="Events">
            {events.data ? (
              <ul class="release-events">
                {events.data.events.map((e) => (
                  <li key={e.id}>
                    {fmt.time(e.created_at)} · <strong>{e.action}</strong> by {e.actor} (r{e.revision})
                  </li>
                ))}
              </ul>
            ) : (
              <Loading />
            )}
          </Section>
        </>
      ) : release.error ? null : (
        <Loading />
      )}
    </div>
  );
}
